//! Layer 2, the device components: which the blueprint implies (device plugin or DRA
//! driver, feature discovery, exporter, NFD, MIG manager, toolkit, driver) and whether
//! each runs and is ready on the node, from the Pods on it.

use super::Out;
use crate::blueprint;
use crate::blueprint::model::{InjectionMode, OperatorComponent};
use crate::fault::{Action, FaultClass};
use crate::k8s::{Node, Pod};
use crate::verify::checks::catalog::cluster as spec;
use crate::verify::report::record::Component;

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

pub(super) fn components(
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
