//! Layer 2, capacity and allocatable: CPUs exactly; memory and ephemeral storage within
//! what a kernel and a file system hold back from the declared size ([`MEMORY_SLACK`],
//! [`STORAGE_SLACK`]) — a missing DIMM or a wrong disk falls outside; hugepage pools
//! exactly; the GPU resource as the device plugin must advertise it. Allocatable by
//! kubelet's own arithmetic with the reservations the blueprint resolves to, so a
//! kubelet that did not get the rendered configuration shows.

use super::Out;
use crate::blueprint;
use crate::blueprint::model::{InjectionMode, MigStrategy, Sharing, SharingMode, Vendor};
use crate::blueprint::resolve;
use crate::blueprint::value::Quantity;
use crate::fault::{Action, FaultClass};
use crate::k8s::{Node, NodeStatus};
use crate::verify::checks::catalog::cluster as spec;

/// Node memory capacity (MemTotal) may be this much below the declared size: firmware
/// reservations, the kernel image and crash kernel (typically under 2 %).
pub const MEMORY_SLACK: f64 = 0.03;
/// Ephemeral-storage capacity may be this much below the declared size: file-system
/// metadata and journals.
pub const STORAGE_SLACK: f64 = 0.05;
/// Allocatable may differ from the arithmetic by rounding to whole KiB in the API.
const ROUNDING_BYTES: i128 = 1 << 20;

/// The node's capacity against the blueprint.
pub(super) fn capacity(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let k = &blueprint.kubernetes;
    let cpu = node.capacity("cpu");
    out.push(
        &spec::CAPACITY_CPU,
        None,
        "the node has the blueprint's logical CPUs",
        cpu.map(|c| c.millis_ceil() == i128::from(k.capacity.cpu) * 1000)
            .or(Some(false)),
        format!("{}", k.capacity.cpu),
        show(cpu),
        FaultClass::OsMemoryDisk,
        Action::Service,
    );
    let declared = k.capacity.memory.units_ceil();
    let memory = bytes(node.capacity("memory"));
    out.push(
        &spec::CAPACITY_MEMORY,
        None,
        "the node has the blueprint's memory",
        Some(memory.is_some_and(|m| within(m, declared, MEMORY_SLACK))),
        format!(
            "{} less up to {} %",
            k.capacity.memory.as_str(),
            MEMORY_SLACK * 100.0
        ),
        show(node.capacity("memory")),
        FaultClass::OsMemoryDisk,
        Action::Service,
    );
    if let Some(eph) = &k.capacity.ephemeral_storage {
        let have = bytes(node.capacity("ephemeral-storage"));
        out.push(
            &spec::CAPACITY_STORAGE,
            None,
            "the node's kubelet file system has the blueprint's size",
            Some(have.is_some_and(|h| within(h, eph.units_ceil(), STORAGE_SLACK))),
            format!("{} less up to {} %", eph.as_str(), STORAGE_SLACK * 100.0),
            show(node.capacity("ephemeral-storage")),
            FaultClass::OsMemoryDisk,
            Action::Service,
        );
    }
    for pool in &blueprint.boot.hugepages {
        let resource = format!("hugepages-{}", pool.size.as_str());
        let want = pool.size.units_ceil() * i128::from(pool.count);
        let have = bytes(node.capacity(&resource));
        out.push(
            &spec::CAPACITY_HUGEPAGES,
            Some(&resource),
            "the boot-time hugepage pool is advertised",
            Some(have == Some(want)),
            format!(
                "{} × {} = {}",
                pool.count,
                pool.size.as_str(),
                Quantity::from_bytes(want).as_str()
            ),
            show(node.capacity(&resource)),
            FaultClass::OsMemoryDisk,
            Action::RebootNode,
        );
    }
    gpu_capacity(out, blueprint, node);
}

/// Allocatable against kubelet's arithmetic on the node's own capacity.
pub(super) fn allocatable(
    out: &mut Out<'_>,
    blueprint: &blueprint::Spec,
    node: &Node,
    status: &NodeStatus,
) {
    let cpu = node.capacity("cpu");
    let memory = bytes(node.capacity("memory"));
    let r = resolve::kubelet(blueprint);
    let millis = |e: &Option<crate::blueprint::reservation::Explained>| {
        e.as_ref().map_or(0, |x| x.value.millis_ceil())
    };
    let units = |e: &Option<crate::blueprint::reservation::Explained>| {
        e.as_ref().map_or(0, |x| x.value.units_ceil())
    };
    if let Some(cap) = cpu {
        let want =
            cap.millis_ceil() - millis(&r.kube_reserved.cpu) - millis(&r.system_reserved.cpu);
        let have = node.allocatable("cpu").map(Quantity::millis_ceil);
        out.push(
            &spec::ALLOCATABLE_CPU,
            None,
            "allocatable CPU is capacity minus the blueprint's reservations",
            Some(have == Some(want)),
            format!(
                "{}m = capacity {}m − kubeReserved {}m − systemReserved {}m",
                want,
                cap.millis_ceil(),
                millis(&r.kube_reserved.cpu),
                millis(&r.system_reserved.cpu)
            ),
            show(node.allocatable("cpu")),
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
    let threshold = |signal: crate::blueprint::model::EvictionSignal, capacity: i128| {
        r.eviction_hard
            .iter()
            .find(|(s, _, _)| *s == signal)
            .map_or(0, |(_, t, _)| resolve::memory_threshold_bytes(t, capacity))
    };
    if let Some(cap) = memory {
        let hugepages: i128 = status
            .capacity
            .iter()
            .filter(|(k, _)| k.starts_with("hugepages-"))
            .map(|(_, q)| q.units_ceil())
            .sum();
        let eviction = threshold(
            crate::blueprint::model::EvictionSignal::MemoryAvailable,
            cap,
        );
        let want = cap
            - units(&r.kube_reserved.memory)
            - units(&r.system_reserved.memory)
            - eviction
            - hugepages;
        let have = bytes(node.allocatable("memory"));
        out.push(
            &spec::ALLOCATABLE_MEMORY,
            None,
            "allocatable memory is capacity minus reservations, eviction threshold and hugepages",
            Some(have.is_some_and(|h| (h - want).abs() <= ROUNDING_BYTES)),
            format!(
                "{} = capacity {} − kubeReserved {} − systemReserved {} − eviction {} − hugepages {}",
                mib(want),
                mib(cap),
                mib(units(&r.kube_reserved.memory)),
                mib(units(&r.system_reserved.memory)),
                mib(eviction),
                mib(hugepages)
            ),
            show(node.allocatable("memory")),
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
    if let Some(cap) = bytes(node.capacity("ephemeral-storage")) {
        let eviction = threshold(
            crate::blueprint::model::EvictionSignal::NodefsAvailable,
            cap,
        );
        let want = cap
            - units(&r.kube_reserved.ephemeral_storage)
            - units(&r.system_reserved.ephemeral_storage)
            - eviction;
        let have = bytes(node.allocatable("ephemeral-storage"));
        out.push(
            &spec::ALLOCATABLE_STORAGE,
            None,
            "allocatable ephemeral storage is capacity minus reservations and the nodefs eviction threshold",
            Some(have.is_some_and(|h| (h - want).abs() <= ROUNDING_BYTES)),
            format!(
                "{} = capacity {} − kubeReserved {} − systemReserved {} − eviction {}",
                mib(want),
                mib(cap),
                mib(units(&r.kube_reserved.ephemeral_storage)),
                mib(units(&r.system_reserved.ephemeral_storage)),
                mib(eviction)
            ),
            show(node.allocatable("ephemeral-storage")),
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
    let pods_alloc = node.allocatable("pods").map(Quantity::units_ceil);
    out.push(
        &spec::ALLOCATABLE_PODS,
        None,
        "allocatable pods is the blueprint's maxPods",
        Some(pods_alloc == Some(i128::from(r.max_pods))),
        format!("{} ({})", r.max_pods, r.max_pods_how),
        show(node.allocatable("pods")),
        FaultClass::DriverDaemon,
        Action::RestartDaemon,
    );
}

/// The GPU resource name the node advertises for this vendor.
fn gpu_resource(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Nvidia => "nvidia.com/gpu",
        Vendor::Amd => "amd.com/gpu",
    }
}

fn bytes(q: Option<&Quantity>) -> Option<i128> {
    q.map(Quantity::units_ceil)
}

fn show(q: Option<&Quantity>) -> String {
    q.map_or_else(|| "absent".to_owned(), |q| q.as_str().to_owned())
}

fn within(have: i128, declared: i128, slack: f64) -> bool {
    let low = (declared as f64 * (1.0 - slack)) as i128;
    // A little above the declared size is rounding of the declaration (2Ti vs 2.01 TB).
    let high = (declared as f64 * 1.01) as i128;
    (low..=high).contains(&have)
}

fn mib(b: i128) -> String {
    format!("{}Mi", b.div_euclid(1 << 20))
}

fn gpu_capacity(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let Some(acc) = &blueprint.accelerators else {
        return;
    };
    let mode = blueprint.kubernetes.device_injection.mode;
    if mode != InjectionMode::DevicePlugin || acc.vfio_passthrough {
        // DRA publishes devices as ResourceSlices, not as node capacity.
        return;
    }
    let mut resource = gpu_resource(acc.vendor).to_owned();
    // Kubernetes before 1.10 advertised NVIDIA GPUs as alpha.kubernetes.io/nvidia-gpu.
    if node.capacity(&resource).is_none()
        && node.capacity("alpha.kubernetes.io/nvidia-gpu").is_some()
    {
        resource = "alpha.kubernetes.io/nvidia-gpu".to_owned();
    }
    let sharing = &acc.sharing;
    let replicas = sharing.replicas().unwrap_or(1);
    let have = node.capacity(&resource).map(Quantity::units_ceil);
    let mig = match sharing {
        Sharing::Mig {
            mig_profile,
            mig_strategy,
        } => Some((mig_profile, *mig_strategy)),
        _ => None,
    };
    let known = mig.and_then(|(profile, _)| super::mig::table().devices(&acc.model, profile));
    if let (Some((profile, strategy)), Some(devices)) = (mig, known) {
        // The MIG profile table's arithmetic: every instance of every GPU, as
        // nvidia.com/gpu (single strategy, the operator's default) or one
        // resource per profile (mixed).
        mig_capacity(out, node, acc.count, profile.as_str(), strategy, devices);
        return;
    }
    let (pass, expected) = if let Some((profile, _)) = mig {
        // A configuration the profile table does not list: some MIG resource at all.
        let any = node.status.as_ref().is_some_and(|s| {
            s.capacity.iter().any(|(k, q)| {
                (k == &resource || k.starts_with("nvidia.com/mig-")) && q.units_ceil() > 0
            })
        });
        (
            any,
            format!(
                "{resource} or nvidia.com/mig-* resources (MIG `{profile}`, not in {} for {})",
                super::mig::table().meta.name,
                acc.model.as_str()
            ),
        )
    } else {
        let want = i128::from(acc.count) * i128::from(replicas);
        (
            have == Some(want),
            format!("{want} ({} GPUs × {replicas})", acc.count),
        )
    };
    let window = super::whole_gpus::left_whole(blueprint, node).filter(|_| !pass);
    out.push(
        &spec::CAPACITY_GPU,
        Some(&resource),
        window
            .as_deref()
            .unwrap_or("the device plugin advertises every GPU"),
        Some(pass),
        expected,
        show(node.capacity(&resource)),
        FaultClass::DriverDaemon,
        Action::RestartDaemon,
    );
    if sharing.mode() != SharingMode::Mig {
        device_allocatable(out, node, &resource, "every advertised GPU is allocatable");
    }
}

/// Allocatable against capacity for one device resource. The device plugin reports each
/// device's health to the kubelet, which keeps an `Unhealthy` one in capacity and takes
/// it out of allocatable: fewer allocatable than advertised is per-device isolation at
/// work (the bad GPU leaves allocation, its neighbours stay in service), a device fault;
/// no allocatable at all, or more than advertised, is the plugin's or the kubelet's.
fn device_allocatable(out: &mut Out<'_>, node: &Node, resource: &str, summary: &str) {
    let (have, alloc) = (node.capacity(resource), node.allocatable(resource));
    let (n_have, n_alloc) = (
        have.map(Quantity::units_ceil),
        alloc.map(Quantity::units_ceil),
    );
    let (observed, fault, action) = match (n_have, n_alloc) {
        (Some(h), Some(a)) if a < h => (
            format!(
                "{a} of {h}: the device plugin reports {} device(s) unhealthy and the kubelet took them out of allocation (the others stay in service)",
                h - a
            ),
            FaultClass::Device,
            Action::ResetGpu,
        ),
        _ => (show(alloc), FaultClass::DriverDaemon, Action::RestartDaemon),
    };
    out.push(
        &spec::ALLOCATABLE_GPU,
        Some(resource),
        summary,
        Some(n_alloc.is_some() && n_alloc == n_have),
        show(have),
        observed,
        fault,
        action,
    );
}

/// MIG capacity by the profile table: `count` GPUs × the instances `config`
/// creates on each, under the resource names the strategy gives them.
fn mig_capacity(
    out: &mut Out<'_>,
    node: &Node,
    count: u32,
    config: &str,
    strategy: Option<MigStrategy>,
    devices: &std::collections::BTreeMap<String, u32>,
) {
    let want: Vec<(String, i128, String)> = match strategy.unwrap_or(MigStrategy::Single) {
        MigStrategy::Single => {
            let per: u32 = devices.values().sum();
            vec![(
                "nvidia.com/gpu".to_owned(),
                i128::from(count) * i128::from(per),
                format!("{count} GPUs × {per} MIG instances ({config}, single strategy)"),
            )]
        }
        MigStrategy::Mixed => devices
            .iter()
            .map(|(profile, n)| {
                (
                    format!("nvidia.com/mig-{profile}"),
                    i128::from(count) * i128::from(*n),
                    format!("{count} GPUs × {n} ({config}, mixed strategy)"),
                )
            })
            .collect(),
    };
    for (resource, n, how) in want {
        let have = node.capacity(&resource);
        out.push(
            &spec::CAPACITY_GPU,
            Some(&resource),
            "the device plugin advertises every MIG instance",
            Some(have.map(Quantity::units_ceil) == Some(n)),
            format!("{n} ({how})"),
            show(have),
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
        device_allocatable(
            out,
            node,
            &resource,
            "every advertised MIG instance is allocatable",
        );
    }
}
