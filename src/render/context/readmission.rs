//! Re-admission after a remediation: which acceptance workloads exercise the part a
//! device or link fault pointed at, rendered to run on the remediated node itself
//! (`cluster/remediation/readmission-*.yaml`), so that `nodeimg accept` writes the record
//! `nodeimg rollout readmit` judges only after that part passed under load.
//!
//! One table, [`PARTS`]: the failed part, the health checks whose failure points at it,
//! and the workloads that load it — DCGM diagnostics (level 3 by default) and the
//! single-node collective for a GPU (the operator's test runner with its RVS recipe, and
//! RCCL, on AMD, which has no DCGM), nvbandwidth (rocm-bandwidth-test on AMD)
//! and single-node NCCL for NVLink and NVSwitch (RCCL over xGMI on AMD), nvbandwidth's
//! host copies and DCGM for a PCIe link, `ib_write_bw` (the RDMA pair) for a rail. The workloads are
//! the acceptance ones (`cluster/acceptance/`, the same images and judges), placed on the
//! nodes that carry [`LABEL`]`=`[`VALUE`] and tolerating the cordon the remediation left
//! (`node.kubernetes.io/unschedulable`), which the acceptance workloads never do: a
//! remediated node is re-admitted while it is still out of service. On a class whose GPUs
//! the device plugin shares, those asking for the node's GPUs also select the whole-GPU
//! configuration (`acceptance::WholeGpus`), as the acceptance ones do, and run through
//! the same window (`acceptance/whole-gpus.sh -f`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::acceptance::{Acceptance, Toleration};

/// The label that sends a remediated node to its re-admission workloads.
pub const LABEL: &str = "nodeimg.dev/readmission";
pub const VALUE: &str = "run";

/// A failed part and what re-admits it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Part {
    pub part: &'static str,
    /// Health checks (id prefixes end in `.`) whose failure points at the part.
    pub checks: &'static [&'static str],
    /// The workloads that load it (`readmission-<workload>.yaml`).
    pub workloads: &'static [&'static str],
}

#[rustfmt::skip]
pub const PARTS: &[Part] = &[
    Part { part: "gpu",       checks: &["gpu.xid", "gpu.ecc.", "gpu.row-remap.", "gpu.retired-pages", "gpu.recovery", "gpu.count", "gpu.clocks.", "gpu.temperature.", "gpu.ras.", "gpu.render-nodes", "gpu.event.unknown"], workloads: &["dcgm", "test-runner", "nccl"] },
    Part { part: "gpu-links", checks: &["gpu.sxid", "gpu.fabric.", "gpu.fabric-manager.", "gpu.nvswitch."], workloads: &["nvbandwidth", "rocm-bandwidth", "nccl"] },
    Part { part: "pcie",   checks: &["gpu.pcie.", "pcie.aer."], workloads: &["nvbandwidth", "rocm-bandwidth", "dcgm"] },
    Part { part: "rail",   checks: &["nic.", "gpu.nic."], workloads: &["rdma"] },
];

#[derive(Debug, Clone, Serialize)]
pub struct Readmission<'a> {
    pub label: &'static str,
    pub value: &'static str,
    /// The blueprint's labels and `nodeimg.dev/readmission`.
    pub node_selector: BTreeMap<&'a str, &'a str>,
    /// The acceptance tolerations and the cordon's.
    pub tolerations: Vec<Toleration<'a>>,
    /// The parts whose workloads render for this blueprint.
    pub parts: Vec<PartRow>,
}

/// A part with the workloads that render for the blueprint.
#[derive(Debug, Clone, Serialize)]
pub struct PartRow {
    pub part: &'static str,
    pub checks: &'static [&'static str],
    pub workloads: Vec<&'static str>,
    /// The rendered files of the workloads, under `cluster/`.
    pub files: Vec<String>,
}

/// The re-admission of a blueprint with acceptance workloads and remediation.
pub fn of<'a>(acceptance: Option<&Acceptance<'a>>, remediation: bool) -> Option<Readmission<'a>> {
    let a = acceptance?;
    if !remediation {
        return None;
    }
    let renders = |w: &str| match w {
        "dcgm" => a.runs.dcgm,
        "nvbandwidth" => a.runs.nvbandwidth,
        "test-runner" => a.runs.test_runner,
        "rocm-bandwidth" => a.runs.rocm_bandwidth,
        "nccl" => a.runs.nccl,
        "rdma" => a.runs.rdma,
        _ => false,
    };
    let parts: Vec<PartRow> = PARTS
        .iter()
        .map(|p| {
            let workloads: Vec<&'static str> =
                p.workloads.iter().copied().filter(|w| renders(w)).collect();
            PartRow {
                part: p.part,
                checks: p.checks,
                files: workloads
                    .iter()
                    .map(|w| format!("remediation/readmission-{w}.yaml"))
                    .collect(),
                workloads,
            }
        })
        .filter(|p| !p.workloads.is_empty())
        .collect();
    if parts.is_empty() {
        return None;
    }
    let mut node_selector = a.node_selector.clone();
    node_selector.remove(a.gate_label);
    node_selector.insert(LABEL, VALUE);
    let mut tolerations = a.tolerations.clone();
    tolerations.push(Toleration {
        key: "node.kubernetes.io/unschedulable",
        operator: "Exists",
        value: None,
        effect: "NoSchedule",
    });
    Some(Readmission {
        label: LABEL,
        value: VALUE,
        node_selector,
        tolerations,
        parts,
    })
}

impl Readmission<'_> {
    /// Whether a workload renders for re-admission.
    pub fn runs(&self, workload: &str) -> bool {
        self.parts.iter().any(|p| p.workloads.contains(&workload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_names_workloads_the_acceptance_renders() {
        for p in PARTS {
            assert!(
                !p.workloads.is_empty() && !p.checks.is_empty(),
                "{}",
                p.part
            );
            for w in p.workloads {
                assert!(
                    [
                        "dcgm",
                        "test-runner",
                        "nvbandwidth",
                        "rocm-bandwidth",
                        "nccl",
                        "rdma"
                    ]
                    .contains(w),
                    "{}: {w}",
                    p.part
                );
            }
        }
    }
}
