//! Root causes: which checks cannot pass while another has failed, so that a node with
//! its GPUs gone reports `gpu.count` and "blocked by gpu.count" on the twenty checks that
//! had nothing to look at, instead of thirty failures of equal weight.
//!
//! [`DEPENDS`] is the table: a root check and the checks that read what it vouches for
//! (the GPUs on the bus, the loaded driver, the NICs of a group). After a run, a result
//! that did not pass is marked [`CheckResult::blocked_by`] the root when the root did not
//! pass either and the result is one the root explains: unreadable (nothing to check, a
//! tool that would not start), node-wide, or about the same subject as the failed root
//! (the same NIC group). A failure of its own on a device that is there (an ECC error on
//! one of seven GPUs) stays a root. Chains resolve to the first root (`gpu.count` before
//! `gpu.driver.version`).
//!
//! A blocked result keeps its verdict: the node fails as before (fail closed, same exit
//! code, same record); reports lead with the roots and name the root on each dependent.

use super::catalog::{gpu, gpudirect, image, network, os, pcie, runtime};
use super::{CheckResult, Spec, Verdict};

/// The checks that read back a file the image renders (or a setting only it makes):
/// while the image's files are absent (`image.applied`), their failures are its.
pub static IMAGE_FILE_READERS: &[&Spec] = &[
    &os::ARG_REQUIRED,
    &os::ARG_IMPLIED,
    &os::HUGEPAGES,
    &os::SYSCTL,
    &runtime::MEMLOCK,
];

/// Roots whose failure explains every dependent, whatever its subject: an absent image
/// explains each kernel parameter that does not hold.
static WHOLE: &[&Spec] = &[&image::APPLIED];

/// (root, what cannot be judged while it fails). Order matters where rows chain: a root
/// that is itself a dependent of an earlier row resolves to that row's root.
pub static DEPENDS: &[(&Spec, &[&Spec])] = &[
    (&image::APPLIED, IMAGE_FILE_READERS),
    (
        &gpu::COUNT,
        &[
            &gpu::MODEL,
            &gpu::DRIVER,
            &gpu::KERNEL_MODULE,
            &gpu::CUDA,
            &gpu::VBIOS,
            &gpu::VBIOS_IDENTICAL,
            &gpu::ECC_MODE,
            &gpu::ECC_UNCORRECTABLE,
            &gpu::REMAP_PENDING,
            &gpu::REMAP_FAILURE,
            &gpu::RETIRED_PAGES,
            &gpu::RECOVERY,
            &gpu::HW_SLOWDOWN,
            &gpu::TEMPERATURE,
            &gpu::RAS_ERRORS,
            &gpu::RAS_BAD_PAGES,
            &gpu::PERSISTENCE,
            &gpu::MIG,
            &gpu::FABRIC_MANAGER,
            &gpu::FABRIC_STATE,
            &gpu::FABRIC_MANAGER_LOG,
            &gpu::RENDER_NODES,
            &pcie::GPU_WIDTH,
            &pcie::GPU_MAX_SPEED,
            &pcie::GPU_UPSTREAM_WIDTH,
            &pcie::GPU_UPSTREAM_SPEED,
            &network::GPU_NIC_NUMA,
            &network::GPU_NIC_SWITCH,
            &gpudirect::DMA_BUF_DRIVER,
            &runtime::CDI_SPEC,
            &runtime::CDI_DEVICES,
            &runtime::CDI_NODES,
            &runtime::CDI_DRIVER,
            &runtime::CDI_MANAGEMENT,
        ],
    ),
    (
        &gpu::DRIVER,
        &[
            &gpu::MODEL,
            &gpu::KERNEL_MODULE,
            &gpu::CUDA,
            &gpu::VBIOS,
            &gpu::VBIOS_IDENTICAL,
            &gpu::ECC_MODE,
            &gpu::ECC_UNCORRECTABLE,
            &gpu::REMAP_PENDING,
            &gpu::REMAP_FAILURE,
            &gpu::RETIRED_PAGES,
            &gpu::RECOVERY,
            &gpu::HW_SLOWDOWN,
            &gpu::TEMPERATURE,
            &gpu::PERSISTENCE,
            &gpu::MIG,
            &gpu::FABRIC_MANAGER,
            &gpu::FABRIC_STATE,
            &gpudirect::DMA_BUF_DRIVER,
            &runtime::CDI_SPEC,
            &runtime::CDI_DEVICES,
            &runtime::CDI_NODES,
            &runtime::CDI_DRIVER,
            &runtime::CDI_MANAGEMENT,
        ],
    ),
    (
        &network::COUNT,
        &[
            &network::MODEL,
            &network::LINK_STATE,
            &network::SPEED,
            &network::MTU,
            &network::RDMA_STATE,
            &network::RDMA_RATE,
            &network::FIRMWARE,
            &network::FIRMWARE_IDENTICAL,
            &pcie::NIC_WIDTH,
            &pcie::NIC_SPEED,
            &network::GPU_NIC_NUMA,
            &network::GPU_NIC_SWITCH,
        ],
    ),
];

/// Marks each result the table explains by a failed root (see the module text).
pub fn mark(results: &mut [CheckResult]) {
    for i in 0..results.len() {
        if results[i].verdict == Verdict::Pass {
            continue;
        }
        let root = DEPENDS.iter().find_map(|(root, dependents)| {
            if !dependents.iter().any(|d| std::ptr::eq(*d, results[i].spec)) {
                return None;
            }
            results
                .iter()
                .find(|r| {
                    std::ptr::eq(r.spec, *root)
                        && r.verdict != Verdict::Pass
                        && explains(r, &results[i])
                })
                .map(|r| r.blocked_by.unwrap_or(r.spec.id))
        });
        results[i].blocked_by = root;
    }
    // A root marked after its dependents (report order) resolves here: follow the chain.
    for i in 0..results.len() {
        let mut guard = 0;
        while let Some(by) = results[i].blocked_by
            && let Some(next) = results
                .iter()
                .find(|r| r.spec.id == by && r.blocked_by.is_some())
                .and_then(|r| r.blocked_by)
            && guard < DEPENDS.len()
        {
            results[i].blocked_by = Some(next);
            guard += 1;
        }
    }
}

/// Whether a failed `root` explains `dependent`'s not passing.
fn explains(root: &CheckResult, dependent: &CheckResult) -> bool {
    WHOLE.iter().any(|w| std::ptr::eq(*w, root.spec))
        || dependent.verdict == Verdict::Error
        || dependent.subject.is_none()
        || (root.subject.is_some() && root.subject == dependent.subject)
}

/// The results no other explains (the roots), in report order.
pub fn roots(results: &[CheckResult]) -> impl Iterator<Item = &CheckResult> {
    results
        .iter()
        .filter(|r| r.blocks() && r.blocked_by.is_none())
}

/// How many blocking results `root_id` explains.
pub fn blocked_by_count(results: &[CheckResult], root_id: &str) -> usize {
    results
        .iter()
        .filter(|r| r.blocks() && r.blocked_by == Some(root_id))
        .count()
}
