//! The NFD release that labels the node. Where nodeimg renders a standalone
//! NFD's values, the release is pinned, so every node of a class is labelled
//! by the same nfd-worker and the same rule semantics. Where the GPU
//! operator deploys NFD, its chart bundles one release (the
//! `node-feature-discovery` subchart): a pin must be that release, and an
//! operator release nodeimg does not know needs the pin. NFD before v0.14
//! denies labels outside `feature.node.kubernetes.io` unless the cluster
//! lists their namespace in `extraLabelNs` (NFD docs, "Label namespaces").

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;
use crate::blueprint::value::Version;

/// The NFD subchart each GPU Operator chart release depends on
/// (`Chart.yaml` `dependencies`, NVIDIA/gpu-operator at each tag).
const GPU_OPERATOR_NFD: &[(&str, &str)] = &[
    ("23.9.2", "0.14.2"),
    ("24.9.2", "0.16.6"),
    ("25.3.4", "0.17.3"),
    ("25.10.1", "0.18.2"),
    ("26.7.0", "0.19.0"),
];

fn numbers(v: &str) -> Vec<u64> {
    v.trim_start_matches('v')
        .split('.')
        .map(|n| n.parse().unwrap_or(0))
        .collect()
}

/// The NFD release the operator's chart deploys, when nodeimg knows it.
pub fn bundled(op: &Operator) -> Option<&'static str> {
    if op.name != OperatorName::GpuOperator {
        return None;
    }
    let want = op.version.numbers();
    GPU_OPERATOR_NFD
        .iter()
        .find(|(o, _)| numbers(o) == want)
        .map(|(_, n)| *n)
}

fn operator_name(n: OperatorName) -> &'static str {
    match n {
        OperatorName::GpuOperator => "gpu-operator",
        OperatorName::AmdGpuOperator => "amd-gpu-operator",
    }
}

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let n = &bp.kubernetes.nfd;
    let operator = bp
        .accelerators
        .as_ref()
        .and_then(|a| a.operator.as_ref())
        .filter(|o| o.manages.contains(&OperatorComponent::NodeFeatureDiscovery));
    let mut effective: Option<Vec<u64>> = n.version.as_ref().map(Version::numbers);
    match operator {
        Some(op) => {
            let bundled = bundled(op);
            match (&n.version, bundled) {
                (Some(pin), Some(b)) if pin.numbers() != numbers(b) => {
                    out.error(
                        "nfd-version",
                        &p("kubernetes.nfd.version"),
                        format!(
                            "the {} {} chart deploys NFD {b} (its node-feature-discovery subchart), not {pin}",
                            operator_name(op.name),
                            op.version
                        ),
                    )
                    .hint = Some(format!(
                        "pin {b}, or deploy NFD yourself: drop node-feature-discovery from accelerators.operator.manages"
                    ));
                }
                (None, None) => {
                    out.warning(
                        "nfd-version",
                        &p("kubernetes.nfd"),
                        format!(
                            "the operator deploys NFD, and which release {} {} bundles is not known here: pin kubernetes.nfd.version to it, so the rendered values pin its image",
                            operator_name(op.name),
                            op.version
                        ),
                    );
                }
                _ => {}
            }
            effective = effective.or(bundled.map(numbers));
        }
        None => {
            // nfd-values.yaml is rendered for a standalone NFD when sources
            // or taints are set (the render plan); only sources say the
            // user runs NFD (taints alone only give its worker tolerations).
            if !n.sources.is_empty() && n.version.is_none() {
                out.warning(
                    "nfd-version",
                    &p("kubernetes.nfd"),
                    "values for a standalone NFD are rendered, but its release is not pinned: nodes of one class could be labelled by different NFD releases; set kubernetes.nfd.version (e.g. 0.18.2)",
                );
            }
        }
    }
    let Some(v) = effective else {
        return;
    };
    if v.as_slice() >= [0, 14].as_slice() {
        return;
    }
    for (i, l) in n.platform_labels.iter().enumerate() {
        let key = l.to.as_str();
        let ns = key.split_once('/').map_or("", |(ns, _)| ns);
        let allowed = ns == "feature.node.kubernetes.io"
            || ns.ends_with(".feature.node.kubernetes.io")
            || ns == "profile.node.kubernetes.io"
            || ns.ends_with(".profile.node.kubernetes.io");
        if !allowed {
            out.error(
                "nfd-label-namespace",
                &p("kubernetes.nfd.platformLabels").index(i).key("to"),
                format!(
                    "NFD before 0.14 denies `{key}`: only feature.node.kubernetes.io and profile.node.kubernetes.io labels are set unless the cluster lists `{ns}` in extraLabelNs"
                ),
            )
            .hint = Some("run NFD 0.14 or later".into());
        }
    }
}
