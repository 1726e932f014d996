//! Which health checks a blueprint's node is judged by: the rows of the `health` subset
//! that [`evaluate`](super::evaluate) produces a result for on a node of that blueprint.
//!
//! Renderers that name checks (`verify --checks …` in the node-problem-detector rules, one
//! rule per fault class) list only these. A check a node cannot have (Fabric Manager on an
//! AMD node, NVSwitches without `nvswitch: true`, NVIDIA's ECC and Xid counters on AMD)
//! selects nothing there; a rule whose list selects nothing makes verify refuse the run
//! (exit 2, NPD's Unknown), so its condition would never be judged.
//!
//! The conditions mirror the families' `evaluate`; `tests/it/health_rules.rs` holds them
//! to it on the 8×H100 and 8×MI300X fixtures.

use super::Spec;
use super::catalog::{gpu, host, network, pcie};
use crate::blueprint;
use crate::blueprint::model::{DriverAuthority, Vendor};

/// Whether `spec` (a row of the health subset) is judged on a node of `blueprint`.
/// Rows outside the health subset answer `false`: they are not for the health rules.
pub fn applies(spec: &Spec, blueprint: &blueprint::Spec) -> bool {
    if !spec.health {
        return false;
    }
    let is = |other: &Spec| std::ptr::eq(spec, other);
    let gpus = blueprint.accelerators.as_ref();
    let nvidia = gpus.is_some_and(|a| a.vendor == Vendor::Nvidia);
    let nvswitch = gpus.is_some_and(|a| a.interconnect.nvswitch);
    let nics = !blueprint.network.nics.is_empty();
    if is(&pcie::AER) {
        gpus.is_some() || nics
    } else if is(&pcie::NIC_WIDTH) || is(&pcie::NIC_SPEED) {
        nics
    } else if [
        &pcie::GPU_WIDTH,
        &pcie::GPU_MAX_SPEED,
        &pcie::GPU_UPSTREAM_WIDTH,
        &pcie::GPU_UPSTREAM_SPEED,
        &gpu::COUNT,
        &gpu::EVENT_UNKNOWN,
    ]
    .into_iter()
    .any(is)
    {
        gpus.is_some()
    } else if [
        &gpu::RENDER_NODES,
        &gpu::RAS_EVENTS,
        &gpu::RAS_ERRORS,
        &gpu::RAS_BAD_PAGES,
    ]
    .into_iter()
    .any(is)
    {
        gpus.is_some_and(|a| a.vendor == Vendor::Amd)
    } else if is(&gpu::NVSWITCH) {
        nvswitch
    } else if is(&gpu::FABRIC_STATE) {
        nvidia && nvswitch
    } else if is(&gpu::SXID) {
        // NVSwitches judged where the blueprint has them; an SXid on another node is
        // judged too, but no rule lists the check there.
        nvidia && nvswitch
    } else if is(&gpu::FABRIC_MANAGER) || is(&gpu::FABRIC_MANAGER_LOG) {
        // With an operator-owned driver Fabric Manager runs in the operator's driver
        // container: no host unit to judge; gpu.fabric.state judges the fabric.
        nvidia && nvswitch && gpus.is_some_and(|a| a.driver.authority != DriverAuthority::Operator)
    } else if [
        &gpu::ECC_UNCORRECTABLE,
        &gpu::REMAP_PENDING,
        &gpu::REMAP_FAILURE,
        &gpu::RETIRED_PAGES,
        &gpu::XID,
        &gpu::RECOVERY,
        &gpu::HW_SLOWDOWN,
        &gpu::TEMPERATURE,
    ]
    .into_iter()
    .any(is)
    {
        // nvidia-smi's counters and the NVRM kernel messages: NVIDIA only.
        nvidia
    } else if [&network::COUNT, &network::LINK_STATE, &network::SPEED]
        .into_iter()
        .any(is)
    {
        nics
    } else if is(&network::RDMA_STATE) || is(&network::RDMA_RATE) {
        blueprint.network.nics.iter().any(|g| g.rdma)
    } else if is(&host::CACHE_WATERMARK) {
        blueprint.system.cache.is_some()
    } else {
        // A health row this list does not know yet: keep it, verify decides on the node
        // (the fixture test names the row that needs a line here).
        true
    }
}

/// The health rows judged on a node of `blueprint`, in catalog order.
pub fn health_checks(blueprint: &blueprint::Spec) -> Vec<&'static Spec> {
    super::CATALOG
        .iter()
        .copied()
        .filter(|spec| applies(spec, blueprint))
        .collect()
}
