//! Layer 2: the Node object against the blueprint, as `nodeimg verify --phase cluster`
//! and `nodeimg accept` see it.
//!
//! - Capacity: CPUs exactly; memory and ephemeral storage within what a kernel and a file
//!   system hold back from the declared size ([`MEMORY_SLACK`], [`STORAGE_SLACK`]) — a
//!   missing DIMM or a wrong disk falls outside; hugepage pools exactly; the GPU resource
//!   (`nvidia.com/gpu`, `amd.com/gpu`) as the device plugin must advertise it.
//! - Allocatable: kubelet's own arithmetic (capacity − kubeReserved − systemReserved −
//!   hard eviction threshold − hugepages for memory; the same without hugepages for
//!   ephemeral storage; maxPods for pods) with the reservations the blueprint resolves
//!   to, so a kubelet that did not get the rendered configuration shows.
//! - Labels: the blueprint's own, its NFD platform labels, NFD's PCI vendor label and
//!   the GPU feature discovery count; taints as declared; the Ready and pressure
//!   conditions; the runtime handlers containerd was given; the RuntimeClasses that name
//!   them, with their handler and scheduling; the device components (device plugin or DRA
//!   driver, feature discovery, exporter, ...) running and ready.
//!
//! One file each: `capacity.rs` (capacity and allocatable), `labels.rs` (labels and
//! taints), `status.rs` (conditions and runtime handlers), `runtime_classes.rs`,
//! `components.rs`; `whole_gpus.rs` tells a shared class's node left with whole GPUs
//! (the label and GPU capacity checks say so); [`check`] runs them in that order and [`judge_inputs`] finds the
//! Node, Pods and RuntimeClasses among accept's inputs.

mod capacity;
mod components;
mod labels;
pub mod mig;
mod runtime_classes;
mod status;
mod whole_gpus;

pub use capacity::{MEMORY_SLACK, STORAGE_SLACK};

use super::input::{Input, Output};
use crate::blueprint;
use crate::blueprint::value::Quantity;
use crate::fault::{Action, FaultClass};
use crate::k8s::{Node, Pod, RuntimeClass};
use crate::verify::checks::Spec;
use crate::verify::checks::catalog::cluster as spec;
use crate::verify::report::record::{self, Component, Finding, Layer, Run, Verdict};
use std::collections::BTreeMap;
use std::path::Path;

/// Writes layer-2 findings with the evidence they all rest on.
struct Out<'a> {
    findings: Vec<Finding>,
    evidence: &'a [String],
}

impl Out<'_> {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        spec: &'static Spec,
        subject: Option<&str>,
        summary: &str,
        pass: Option<bool>,
        expected: String,
        observed: String,
        fault: FaultClass,
        action: Action,
    ) {
        let verdict = match pass {
            Some(true) => Verdict::Pass,
            Some(false) => Verdict::Fail,
            None => Verdict::Incomplete,
        };
        self.findings.push(Finding {
            id: spec.id.to_owned(),
            layer: Layer::Kubernetes,
            subject: subject.map(str::to_owned),
            summary: summary.to_owned(),
            verdict,
            expected,
            observed,
            evidence: self.evidence.to_vec(),
            fault,
            action: if verdict == Verdict::Fail {
                action
            } else {
                Action::None
            },
        });
    }
}

/// Layer-2 findings and the record's Kubernetes section for one Node (and the Pods on it,
/// and the cluster's RuntimeClasses, when given).
pub fn check(
    blueprint: &blueprint::Spec,
    node: &Node,
    pods: Option<&[Pod]>,
    classes: Option<&[RuntimeClass]>,
    evidence: &[String],
) -> (Vec<Finding>, record::Kubernetes) {
    let mut out = Out {
        findings: Vec::new(),
        evidence,
    };
    let Some(status) = &node.status else {
        out.push(
            &spec::STATUS,
            None,
            "the Node object has a status (capacity, allocatable, conditions)",
            None,
            "status.capacity and status.allocatable".into(),
            "labels only (kubectl get node -o json | jq .metadata.labels?)".into(),
            FaultClass::DriverDaemon,
            Action::None,
        );
        labels::labels(&mut out, blueprint, node);
        return (out.findings, summary(node, &[], evidence));
    };
    capacity::capacity(&mut out, blueprint, node);
    capacity::allocatable(&mut out, blueprint, node, status);
    labels::labels(&mut out, blueprint, node);
    labels::taints(&mut out, blueprint, node);
    status::conditions(&mut out, node);
    status::handlers(&mut out, blueprint, node);
    runtime_classes::runtime_classes(&mut out, blueprint, node, classes);
    let components = components::components(&mut out, blueprint, node, pods);
    (out.findings, summary(node, &components, evidence))
}

fn summary(node: &Node, components: &[Component], evidence: &[String]) -> record::Kubernetes {
    let quantities = |m: Option<&BTreeMap<String, Quantity>>| {
        m.map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().to_owned()))
                .collect()
        })
        .unwrap_or_default()
    };
    let status = node.status.as_ref();
    let info = status.and_then(|s| s.node_info.as_ref());
    record::Kubernetes {
        node: node.name.clone(),
        kubelet: info
            .map(|i| i.kubelet_version.clone())
            .filter(|v| !v.is_empty()),
        container_runtime: info
            .map(|i| i.container_runtime_version.clone())
            .filter(|v| !v.is_empty()),
        capacity: quantities(status.map(|s| &s.capacity)),
        allocatable: quantities(status.map(|s| &s.allocatable)),
        taints: node.taints.iter().map(ToString::to_string).collect(),
        conditions: status
            .map(|s| {
                s.conditions
                    .iter()
                    .map(|c| (c.kind.clone(), format!("{:?}", c.status)))
                    .collect()
            })
            .unwrap_or_default(),
        runtime_handlers: status
            .map(|s| s.runtime_handlers.clone())
            .unwrap_or_default(),
        components: components.to_vec(),
        evidence: evidence.to_vec(),
    }
}

/// Layer 2 from `accept`'s inputs: the Node object (and Pods) among them.
pub fn judge_inputs(
    findings: &mut Vec<Finding>,
    inputs: &[Input],
    blueprint: &blueprint::Spec,
    node_name: Option<&str>,
    required: bool,
) -> Run<record::Kubernetes> {
    let mut nodes: Vec<(&Path, &Node)> = Vec::new();
    let mut pods: Option<Vec<Pod>> = None;
    let mut pod_files = Vec::new();
    let mut classes: Option<Vec<RuntimeClass>> = None;
    for input in inputs {
        match &input.output {
            Output::Nodes(n) => nodes.extend(n.iter().map(|n| (input.path.as_path(), n))),
            Output::Pods(p) => {
                pods.get_or_insert_with(Vec::new).extend(p.iter().cloned());
                pod_files.push(input.path.display().to_string());
            }
            Output::RuntimeClasses(r) => {
                classes
                    .get_or_insert_with(Vec::new)
                    .extend(r.iter().cloned());
                pod_files.push(input.path.display().to_string());
            }
            _ => {}
        }
    }
    let chosen = match node_name {
        Some(name) => nodes.iter().find(|(_, n)| n.name == name),
        None if nodes.len() == 1 => nodes.first(),
        None => None,
    };
    let Some((path, node)) = chosen else {
        let observed = if nodes.is_empty() {
            "none among the inputs".to_owned()
        } else {
            format!(
                "{} Node objects ({}), none named {}",
                nodes.len(),
                nodes
                    .iter()
                    .map(|(_, n)| n.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                node_name.unwrap_or("(no node name given: --node-name)")
            )
        };
        if required {
            findings.push(Finding {
                id: "kubernetes".into(),
                layer: Layer::Kubernetes,
                subject: None,
                summary: "the Node object was given (layer 2)".into(),
                verdict: Verdict::NotRun,
                expected: "the node's Node object (kubectl get node NAME -o json)".into(),
                observed,
                evidence: Vec::new(),
                fault: FaultClass::DriverDaemon,
                action: Action::None,
            });
        }
        return Run::not_run("no Node object of this node among the inputs");
    };
    let mut evidence = vec![path.display().to_string()];
    evidence.extend(pod_files);
    let (found, record) = check(
        blueprint,
        node,
        pods.as_deref(),
        classes.as_deref(),
        &evidence,
    );
    findings.extend(found);
    Run::Done(record)
}
