//! Cross-check of the node's taints against the rendered cluster-side
//! values: every DaemonSet that must run on the node (NFD worker, device
//! plugin, node labeller, exporters, NPD) has to tolerate each taint the
//! node registers with, or the node never gets its discovery labels,
//! device plugin or GPU capacity.
//!
//! The check reads the rendered files back (after any `--templates`
//! override), at the values path each chart or CR reads its tolerations
//! from, and applies core/v1 toleration matching: an empty key with
//! `Exists` tolerates everything; otherwise keys must be equal, the effect
//! equal or empty, and the value equal under `Equal` (the default). A
//! `PreferNoSchedule` taint keeps no pod off the node, so only `NoSchedule`
//! and `NoExecute` taints are checked.
//!
//! A site is checked where its field is rendered: the AMD driver's KMM
//! pods have no tolerations field before chart v1.3.1, so the renderer
//! writes none there and this check finds the driver untolerated — as the
//! API server would leave it (`validate` refuses that blueprint first).

use serde_json::Value;

use super::Rendered;
use crate::blueprint::value::{Taint, TaintEffect};

/// A DaemonSet's tolerations: the cluster file, what runs, the path of
/// the toleration list in that file.
pub struct Site {
    pub file: &'static str,
    pub component: &'static str,
    pub path: &'static [&'static str],
}

/// Where each rendered cluster file keeps the tolerations of a DaemonSet
/// that must run on the node.
#[rustfmt::skip]
pub const SITES: &[Site] = &[
    Site { file: "node-problem-detector-values.yaml", component: "node-problem-detector", path: &["tolerations"] },
    Site { file: "nfd-values.yaml", component: "NFD worker", path: &["worker", "tolerations"] },
    // GPU Operator: one list for every operand DaemonSet (device plugin,
    // GFD, DCGM exporter, validator, …), and the bundled NFD's worker.
    Site { file: "gpu-operator-values.yaml", component: "GPU Operator operands", path: &["daemonsets", "tolerations"] },
    Site { file: "gpu-operator-values.yaml", component: "GPU Operator's NFD worker", path: &["node-feature-discovery", "worker", "tolerations"] },
    // AMD GPU Operator: DeviceConfig fields, as a CR (chart < v1.3.0) or
    // as the chart's deviceConfig.spec (≥ v1.3.0); the bundled NFD's worker.
    Site { file: "amd-gpu-operator-values.yaml", component: "AMD GPU Operator's NFD worker", path: &["node-feature-discovery", "worker", "tolerations"] },
    Site { file: "amd-gpu-operator-values.yaml", component: "AMD device plugin", path: &["deviceConfig", "spec", "devicePlugin", "devicePluginTolerations"] },
    Site { file: "amd-gpu-operator-values.yaml", component: "AMD node labeller", path: &["deviceConfig", "spec", "devicePlugin", "nodeLabellerTolerations"] },
    Site { file: "amd-gpu-operator-values.yaml", component: "AMD metrics exporter", path: &["deviceConfig", "spec", "metricsExporter", "tolerations"] },
    Site { file: "amd-gpu-operator-values.yaml", component: "AMD driver (KMM)", path: &["deviceConfig", "spec", "driver", "tolerations"] },
    Site { file: "amd-gpu-operator-values.yaml", component: "AMD test runner", path: &["deviceConfig", "spec", "testRunner", "tolerations"] },
    Site { file: "amd-deviceconfig.yaml", component: "AMD device plugin", path: &["spec", "devicePlugin", "devicePluginTolerations"] },
    Site { file: "amd-deviceconfig.yaml", component: "AMD node labeller", path: &["spec", "devicePlugin", "nodeLabellerTolerations"] },
    Site { file: "amd-deviceconfig.yaml", component: "AMD metrics exporter", path: &["spec", "metricsExporter", "tolerations"] },
    Site { file: "amd-deviceconfig.yaml", component: "AMD driver (KMM)", path: &["spec", "driver", "tolerations"] },
    Site { file: "amd-deviceconfig.yaml", component: "AMD test runner", path: &["spec", "testRunner", "tolerations"] },
];

/// One DaemonSet that does not tolerate one of the node's taints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untolerated {
    pub file: &'static str,
    pub component: &'static str,
    pub taint: String,
}

impl std::fmt::Display for Untolerated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cluster/{}: the {} does not tolerate the node's taint `{}`, so it never runs on the node",
            self.file, self.component, self.taint
        )
    }
}

/// Whether `toleration` (a core/v1 Toleration as JSON) tolerates `taint`.
pub fn tolerates(toleration: &Value, taint: &Taint) -> bool {
    let s = |k: &str| toleration.get(k).and_then(Value::as_str).unwrap_or("");
    let (key, op, value, effect) = (s("key"), s("operator"), s("value"), s("effect"));
    if !effect.is_empty() && effect != taint.effect.to_string() {
        return false;
    }
    if key.is_empty() {
        return op == "Exists";
    }
    if key != taint.key.as_str() {
        return false;
    }
    match op {
        "Exists" => true,
        "" | "Equal" => value == taint.value.as_ref().map_or("", |v| v.as_str()),
        _ => false,
    }
}

/// Every (site, taint) pair the rendered cluster files leave untolerated.
/// A site whose file was not rendered, or whose component the file does
/// not deploy (the path's parent is absent), is not checked; a present
/// component with no toleration list tolerates nothing.
pub fn check(out: &Rendered, taints: &[Taint]) -> Vec<Untolerated> {
    let mut problems = Vec::new();
    let taints: Vec<&Taint> = taints
        .iter()
        .filter(|t| t.effect != TaintEffect::PreferNoSchedule)
        .collect();
    if taints.is_empty() {
        return problems;
    }
    for site in SITES {
        let Some(bytes) = out.cluster.file(site.file) else {
            continue;
        };
        let Ok(doc) = super::read_back::yaml(bytes) else {
            continue; // the self-check reports YAML that does not parse
        };
        let (last, parents) = site.path.split_last().expect("sites name a path");
        let Some(parent) = parents.iter().try_fold(&doc, |v, k| v.get(*k)) else {
            continue;
        };
        if !deploys(site, parent) {
            continue;
        }
        let list = parent
            .get(*last)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for taint in &taints {
            if !list.iter().any(|t| tolerates(t, taint)) {
                problems.push(Untolerated {
                    file: site.file,
                    component: site.component,
                    taint: taint.to_string(),
                });
            }
        }
    }
    problems
}

/// Whether the component at `site` is switched on where its values say so.
fn deploys(site: &Site, parent: &Value) -> bool {
    let off = |k: &str| parent.get(k).and_then(Value::as_bool) == Some(false);
    match site.path.last() {
        Some(&"devicePluginTolerations") => !off("enableDevicePlugin"),
        Some(&"nodeLabellerTolerations") => !off("enableNodeLabeller"),
        _ if site.path.first() == Some(&"node-feature-discovery") => !off("enabled"),
        _ => !off("enable") && !off("enabled"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn taint(s: &str) -> Taint {
        s.parse().unwrap()
    }

    #[test]
    fn core_v1_matching() {
        let t = taint("nvidia.com/gpu=present:NoSchedule");
        assert!(tolerates(
            &json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}),
            &t
        ));
        assert!(tolerates(
            &json!({"key": "nvidia.com/gpu", "operator": "Exists"}),
            &t
        ));
        assert!(tolerates(&json!({"operator": "Exists"}), &t));
        assert!(tolerates(
            &json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}),
            &t
        ));
        assert!(!tolerates(
            &json!({"key": "nvidia.com/gpu", "value": "absent", "effect": "NoSchedule"}),
            &t
        ));
        assert!(!tolerates(
            &json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}),
            &t
        ));
        assert!(!tolerates(
            &json!({"key": "amd.com/gpu", "operator": "Exists"}),
            &t
        ));
        assert!(!tolerates(&json!({"operator": "Equal"}), &t));
    }
}
