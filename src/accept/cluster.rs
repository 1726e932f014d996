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
//!   conditions; the runtime handlers containerd was given; the device components
//!   (device plugin or DRA driver, feature discovery, exporter, ...) running and ready.

use super::input::{Input, Output};
use crate::blueprint;
use crate::blueprint::model::{InjectionMode, OperatorComponent, SharingMode, Vendor};
use crate::blueprint::resolve;
use crate::blueprint::value::Quantity;
use crate::fault::{Action, FaultClass};
use crate::k8s::{ConditionStatus, Node, Pod};
use crate::verify::checks::Spec;
use crate::verify::checks::catalog::cluster as spec;
use crate::verify::report::record::{self, Component, Finding, Layer, Run, Verdict};
use std::collections::BTreeMap;
use std::path::Path;

/// Node memory capacity (MemTotal) may be this much below the declared size: firmware
/// reservations, the kernel image and crash kernel (typically under 2 %).
pub const MEMORY_SLACK: f64 = 0.03;
/// Ephemeral-storage capacity may be this much below the declared size: file-system
/// metadata and journals.
pub const STORAGE_SLACK: f64 = 0.05;
/// Allocatable may differ from the arithmetic by rounding to whole KiB in the API.
const ROUNDING_BYTES: i128 = 1 << 20;

/// Device components and the Pod names they run under (GPU Operator, AMD GPU Operator,
/// NFD, DRA drivers).
#[rustfmt::skip]
const COMPONENTS: &[(&str, &[&str])] = &[
    ("device-plugin", &["nvidia-device-plugin", "device-plugin"]),
    ("dra-driver", &["dra-driver", "dra-kubelet-plugin", "-dra-"]),
    ("gpu-feature-discovery", &["gpu-feature-discovery", "node-labeller"]),
    ("dcgm-exporter", &["dcgm-exporter"]),
    ("metrics-exporter", &["metrics-exporter"]),
    ("node-feature-discovery", &["nfd-worker", "node-feature-discovery-worker"]),
    ("mig-manager", &["mig-manager"]),
    ("container-toolkit", &["container-toolkit"]),
    ("driver", &["nvidia-driver-daemonset", "driver-daemonset"]),
];

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

/// Layer-2 findings and the record's Kubernetes section for one Node (and the Pods on it).
pub fn check(
    blueprint: &blueprint::Spec,
    node: &Node,
    pods: Option<&[Pod]>,
    evidence: &[String],
) -> (Vec<Finding>, record::Kubernetes) {
    let mut out = Out {
        findings: Vec::new(),
        evidence,
    };
    let k = &blueprint.kubernetes;
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
        labels(&mut out, blueprint, node);
        return (out.findings, summary(node, &[], evidence));
    };
    // Capacity.
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
    gpu_capacity(&mut out, blueprint, node);
    // Allocatable, by kubelet's arithmetic on the node's own capacity.
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
    labels(&mut out, blueprint, node);
    taints(&mut out, blueprint, node);
    conditions(&mut out, node);
    handlers(&mut out, blueprint, node);
    let components = components(&mut out, blueprint, node, pods);
    (out.findings, summary(node, &components, evidence))
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
    let (pass, expected) = if sharing.mode() == SharingMode::Mig {
        // The count depends on the MIG profile; with the mixed strategy the resources are
        // per profile (nvidia.com/mig-1g.10gb) and nvidia.com/gpu may be absent.
        let any = node.status.as_ref().is_some_and(|s| {
            s.capacity.iter().any(|(k, q)| {
                (k == &resource || k.starts_with("nvidia.com/mig-")) && q.units_ceil() > 0
            })
        });
        (
            any,
            format!("{resource} or nvidia.com/mig-* resources (MIG)"),
        )
    } else {
        let want = i128::from(acc.count) * i128::from(replicas);
        (
            have == Some(want),
            format!("{want} ({} GPUs × {replicas})", acc.count),
        )
    };
    out.push(
        &spec::CAPACITY_GPU,
        Some(&resource),
        "the device plugin advertises every GPU",
        Some(pass),
        expected,
        show(node.capacity(&resource)),
        FaultClass::DriverDaemon,
        Action::RestartDaemon,
    );
    let alloc = node.allocatable(&resource).map(Quantity::units_ceil);
    if sharing.mode() != SharingMode::Mig {
        out.push(
            &spec::ALLOCATABLE_GPU,
            Some(&resource),
            "every advertised GPU is allocatable",
            Some(alloc.is_some() && alloc == have),
            show(node.capacity(&resource)),
            show(node.allocatable(&resource)),
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
}

fn labels(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let k = &blueprint.kubernetes;
    let mut want: Vec<(String, String, &str)> = k
        .labels
        .iter()
        .map(|(key, v)| {
            (
                key.as_str().to_owned(),
                v.as_str().to_owned(),
                "blueprint label",
            )
        })
        .collect();
    want.extend(k.nfd.platform_labels.iter().map(|p| {
        (
            p.to.as_str().to_owned(),
            p.value.as_str().to_owned(),
            "NFD platform label",
        )
    }));
    if let Some(acc) = &blueprint.accelerators {
        if k.nfd
            .sources
            .contains(&crate::blueprint::model::NfdSource::Pci)
        {
            let id = acc.vendor.pci_id().trim_start_matches("0x");
            want.push((
                format!("feature.node.kubernetes.io/pci-{id}.present"),
                "true".into(),
                "NFD PCI vendor label",
            ));
        }
        let gfd = acc
            .operator
            .as_ref()
            .is_some_and(|o| o.manages.contains(&OperatorComponent::GpuFeatureDiscovery));
        if gfd && acc.vendor == Vendor::Nvidia && acc.sharing.mode() != SharingMode::Mig {
            want.push((
                "nvidia.com/gpu.count".into(),
                acc.count.to_string(),
                "GPU feature discovery",
            ));
            want.push((
                "nvidia.com/gpu.present".into(),
                "true".into(),
                "GPU feature discovery",
            ));
        }
    }
    for (key, value, what) in want {
        let have = node.labels.get(&key);
        out.push(
            &spec::LABEL,
            Some(&key),
            what,
            Some(have == Some(&value)),
            value,
            have.cloned().unwrap_or_else(|| "absent".into()),
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
}

fn taints(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let shown: Vec<String> = node.taints.iter().map(ToString::to_string).collect();
    for t in &blueprint.kubernetes.taints {
        let value = t.value.as_ref().map(|v| v.as_str().to_owned());
        let effect = format!("{:?}", t.effect);
        let found = node
            .taints
            .iter()
            .any(|n| n.key == t.key.as_str() && n.value == value && n.effect == effect);
        let want = match &value {
            Some(v) => format!("{}={v}:{effect}", t.key.as_str()),
            None => format!("{}:{effect}", t.key.as_str()),
        };
        out.push(
            &spec::TAINT,
            Some(t.key.as_str()),
            "the node carries the blueprint's taint",
            Some(found),
            want,
            if shown.is_empty() {
                "no taints".into()
            } else {
                shown.join(", ")
            },
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
    // Taints nobody declared keep workloads away; those Kubernetes sets itself for
    // cordoning, pressure or a not-ready kubelet are reported by their conditions.
    for t in &node.taints {
        let system = t.key.starts_with("node.kubernetes.io/")
            || t.key.starts_with("node.cloudprovider.kubernetes.io/");
        let declared = blueprint
            .kubernetes
            .taints
            .iter()
            .any(|d| d.key.as_str() == t.key);
        if !system && !declared && t.effect != "PreferNoSchedule" {
            out.push(
                &spec::TAINT,
                Some(&t.key),
                "no taint the blueprint does not declare",
                Some(false),
                "absent".into(),
                t.to_string(),
                FaultClass::DriverDaemon,
                Action::RestartDaemon,
            );
        }
    }
}

fn conditions(out: &mut Out<'_>, node: &Node) {
    let checks: &[(&str, ConditionStatus, bool, FaultClass)] = &[
        (
            "Ready",
            ConditionStatus::True,
            true,
            FaultClass::DriverDaemon,
        ),
        (
            "MemoryPressure",
            ConditionStatus::False,
            true,
            FaultClass::OsMemoryDisk,
        ),
        (
            "DiskPressure",
            ConditionStatus::False,
            true,
            FaultClass::OsMemoryDisk,
        ),
        (
            "PIDPressure",
            ConditionStatus::False,
            true,
            FaultClass::OsMemoryDisk,
        ),
        (
            "NetworkUnavailable",
            ConditionStatus::False,
            false,
            FaultClass::DriverDaemon,
        ),
    ];
    for (kind, want, required, fault) in checks {
        let c = node.condition(kind);
        if c.is_none() && !required {
            continue;
        }
        let observed = c.map_or_else(
            || "absent".to_owned(),
            |c| {
                format!(
                    "{:?}{}",
                    c.status,
                    c.reason
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                )
            },
        );
        out.push(
            &spec::CONDITION,
            Some(kind),
            "the node is ready and under no pressure",
            Some(c.is_some_and(|c| c.status == *want)),
            format!("{want:?}"),
            observed,
            *fault,
            Action::RestartDaemon,
        );
    }
}

fn handlers(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let mut want: Vec<&str> = Vec::new();
    if blueprint
        .accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        want.push("nvidia");
    }
    for r in &blueprint.runtime.containerd.extra_runtimes {
        want.push(match r {
            crate::blueprint::model::ExtraRuntime::Kata => "kata",
            crate::blueprint::model::ExtraRuntime::Gvisor => "runsc",
        });
    }
    let have = node.status.as_ref().map(|s| &s.runtime_handlers);
    // status.runtimeHandlers exists from Kubernetes 1.30.
    let reported = have.is_some_and(|h| !h.is_empty());
    for handler in want {
        let found = have.is_some_and(|h| h.iter().any(|x| x == handler));
        out.push(
            &spec::RUNTIME_HANDLER,
            Some(handler),
            "containerd offers the runtime handler RuntimeClasses name",
            if reported { Some(found) } else { None },
            "listed in status.runtimeHandlers".into(),
            if reported {
                have.map(|h| h.join(", ")).unwrap_or_default()
            } else {
                "status.runtimeHandlers absent (Kubernetes before 1.30?)".into()
            },
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
}

/// The components the blueprint says run on this node.
fn expected_components(blueprint: &blueprint::Spec) -> Vec<&'static str> {
    let mut want = Vec::new();
    let Some(acc) = &blueprint.accelerators else {
        return want;
    };
    match blueprint.kubernetes.device_injection.mode {
        InjectionMode::DevicePlugin => want.push("device-plugin"),
        InjectionMode::Dra => want.push("dra-driver"),
        InjectionMode::None => {}
    }
    for c in acc.operator.iter().flat_map(|o| &o.manages) {
        let name = match c {
            OperatorComponent::GpuFeatureDiscovery => "gpu-feature-discovery",
            OperatorComponent::DcgmExporter => "dcgm-exporter",
            OperatorComponent::MetricsExporter => "metrics-exporter",
            OperatorComponent::NodeFeatureDiscovery => "node-feature-discovery",
            OperatorComponent::MigManager => "mig-manager",
            OperatorComponent::Toolkit => "container-toolkit",
            OperatorComponent::Driver => "driver",
            OperatorComponent::DevicePlugin | OperatorComponent::DraDriver => continue,
        };
        want.push(name);
    }
    if !blueprint.kubernetes.nfd.sources.is_empty() && !want.contains(&"node-feature-discovery") {
        want.push("node-feature-discovery");
    }
    want.sort_unstable();
    want.dedup();
    want
}

fn components(
    out: &mut Out<'_>,
    blueprint: &blueprint::Spec,
    node: &Node,
    pods: Option<&[Pod]>,
) -> Vec<Component> {
    let want = expected_components(blueprint);
    let Some(pods) = pods else {
        if !want.is_empty() {
            out.push(
                &spec::COMPONENTS,
                None,
                "the device components run on the node and are ready",
                None,
                want.join(", "),
                "no Pod list given (--pods FILE, or read from the API)".into(),
                FaultClass::DriverDaemon,
                Action::None,
            );
        }
        return Vec::new();
    };
    let on_node: Vec<&Pod> = pods
        .iter()
        .filter(|p| p.node.as_deref().is_none_or(|n| n == node.name))
        .collect();
    let mut found = Vec::new();
    for name in want {
        let patterns = COMPONENTS
            .iter()
            .find(|(c, _)| *c == name)
            .map_or(&[][..], |(_, p)| *p);
        let pod = on_node
            .iter()
            .find(|p| patterns.iter().any(|pat| p.name.contains(pat)));
        let ready = pod.is_some_and(|p| p.ready && p.phase == "Running");
        out.push(
            &spec::COMPONENT,
            Some(name),
            "the device component runs on the node and is ready",
            Some(ready),
            "a Running, Ready Pod on the node".into(),
            match pod {
                Some(p) => format!(
                    "{}/{}: {}{}",
                    p.namespace,
                    p.name,
                    p.phase,
                    if p.ready { ", ready" } else { ", not ready" }
                ),
                None => "no Pod on the node".into(),
            },
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
        found.push(Component {
            name: name.to_owned(),
            pod: pod.map(|p| format!("{}/{}", p.namespace, p.name)),
            ready,
        });
    }
    found
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
    for input in inputs {
        match &input.output {
            Output::Nodes(n) => nodes.extend(n.iter().map(|n| (input.path.as_path(), n))),
            Output::Pods(p) => {
                pods.get_or_insert_with(Vec::new).extend(p.iter().cloned());
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
    let (found, record) = check(blueprint, node, pods.as_deref(), &evidence);
    findings.extend(found);
    Run::Done(record)
}
