//! `accelerators.sharing` does what it says on the node and in the cluster:
//! time-slicing and MPS reach the device plugin through a sharing ConfigMap the
//! GPU Operator's values create and select (by default and by the node label
//! the kubelet registers); MIG reaches the MIG manager through the node's
//! `nvidia.com/mig.config` label; `verify --phase cluster` checks the
//! arithmetic on the Node (GPUs × replicas, GPUs × MIG instances per profile);
//! `diff` tells a device-plugin restart from a GPU reset; and a sharing mode
//! nothing would apply is refused.

use crate::support::*;
use nodeimg::diff::{compare, impact::Impact};
use serde_json::{Value, json};

const FLAGS: &str = "etc/systemd/system/kubelet.service.d/20-nodeimg-flags.conf";

fn h100() -> Variant {
    Variant::of("h100-sxm-ubuntu")
}

fn mig(profile: &str, strategy: Option<&str>) -> Variant {
    let mut sharing = json!({"mode": "mig", "migProfile": profile});
    if let Some(s) = strategy {
        sharing["migStrategy"] = json!(s);
    }
    h100().set("accelerators.sharing", sharing).set(
        "accelerators.operator.manages",
        json!([
            "device-plugin",
            "dcgm-exporter",
            "gpu-feature-discovery",
            "mig-manager"
        ]),
    )
}

/// The labels the kubelet registers the Node with (`--node-labels`).
fn node_labels(r: &nodeimg::render::Rendered) -> Vec<String> {
    let text = std::str::from_utf8(r.layer.file(FLAGS).expect("kubelet flags drop-in")).unwrap();
    text.split(|c: char| c.is_whitespace() || c == '"')
        .find_map(|a| a.strip_prefix("--node-labels="))
        .map(|l| l.split(',').map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The device plugin's configuration the values select for this node class.
fn device_plugin_config(values: &Value, class: &str) -> Value {
    let cfg = &values["devicePlugin"]["config"];
    assert_eq!(
        cfg["create"], true,
        "the chart creates the ConfigMap: {cfg}"
    );
    // Nodes of other classes carry no label and keep whole GPUs.
    assert!(cfg.get("default").is_none(), "{cfg}");
    let text = cfg["data"][class].as_str().expect("the class's key");
    serde_yaml::from_str(text).unwrap()
}

#[test]
fn time_slicing_and_mps_reach_the_device_plugin() {
    for (mode, key) in [("time-slicing", "timeSlicing"), ("mps", "mps")] {
        let bp = h100()
            .set("accelerators.sharing", json!({"mode": mode, "replicas": 4}))
            .load();
        let r = rendered(&bp);
        let values: Value = cluster_file(&r, "gpu-operator-values.yaml");
        let config = device_plugin_config(&values, "h100-sxm-ubuntu");
        assert_eq!(config["version"], "v1");
        assert_eq!(
            config["sharing"][key]["resources"],
            json!([{"name": "nvidia.com/gpu", "replicas": 4}]),
            "{mode}: {config}"
        );
        // The label that picks the key, registered by the node itself.
        assert!(
            node_labels(&r).contains(&"nvidia.com/device-plugin.config=h100-sxm-ubuntu".into()),
            "{:?}",
            node_labels(&r)
        );
        // dcgm-exporter names every pod of a shared GPU, not only one
        // (`--kubernetes-virtual-gpus`): what `smoke.mapping` reads.
        assert_eq!(
            values["dcgmExporter"]["env"],
            json!([{"name": "KUBERNETES_VIRTUAL_GPUS", "value": "true"}]),
            "{mode}"
        );
    }
    // No sharing: no configuration, no label.
    let r = rendered(&example("h100-sxm-ubuntu"));
    let values: Value = cluster_file(&r, "gpu-operator-values.yaml");
    assert!(values["devicePlugin"].get("config").is_none());
    assert!(values["dcgmExporter"].get("env").is_none());
    assert!(!node_labels(&r).iter().any(|l| l.starts_with("nvidia.com/")));
}

/// Under time-slicing and MPS the device plugin (v0.18.1) refuses a request for more
/// than one replica: MPS always, time-slicing with `failRequestsGreaterThanOne`, which
/// the values set (a request of 8 could otherwise be eight replicas of one GPU). The
/// smoke test is then GPUs × replicas Pods of one replica each: the node's whole shared
/// capacity, so every replica is handed out once.
#[test]
fn shared_gpus_are_smoke_tested_one_replica_per_pod() {
    for mode in ["time-slicing", "mps"] {
        let r = rendered(
            &h100()
                .set("accelerators.sharing", json!({"mode": mode, "replicas": 4}))
                .load(),
        );
        let values: Value = cluster_file(&r, "gpu-operator-values.yaml");
        let config = device_plugin_config(&values, "h100-sxm-ubuntu");
        let key = if mode == "mps" { "mps" } else { "timeSlicing" };
        assert_eq!(
            config["sharing"][key]["failRequestsGreaterThanOne"], true,
            "{mode}: {config}"
        );
        let list: Value = cluster_file(&r, "acceptance/smoke-pod.yaml");
        assert_eq!(list["kind"], "List", "{mode}");
        let pods = list["items"].as_array().expect("items");
        assert_eq!(pods.len(), 32, "{mode}: 8 GPUs × 4 replicas");
        let mut names = std::collections::BTreeSet::new();
        for pod in pods {
            assert_eq!(pod["kind"], "Pod");
            names.insert(pod["metadata"]["name"].as_str().unwrap().to_owned());
            let c = &pod["spec"]["containers"][0];
            assert_eq!(
                c["resources"]["limits"],
                json!({"nvidia.com/gpu": 1}),
                "{mode}"
            );
            let requested = c["env"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == "NODEIMG_REQUESTED")
                .expect("NODEIMG_REQUESTED");
            assert_eq!(requested["value"], "1");
            assert_eq!(
                pod["spec"]["nodeSelector"]["nodeimg.dev/acceptance"], "run",
                "{mode}"
            );
        }
        assert_eq!(names.len(), 32, "distinct Pod names: {names:?}");
    }
    // Whole GPUs: one Pod asks for all of them.
    let r = rendered(&example("h100-sxm-ubuntu"));
    let pod: Value = cluster_file(&r, "acceptance/smoke-pod.yaml");
    assert_eq!(pod["kind"], "Pod");
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["limits"],
        json!({"nvidia.com/gpu": 8})
    );
}

/// The shared smoke test's Pods must fit the kubelet's maxPods (110 by default):
/// 8 GPUs × 16 replicas do not, and the blueprint says so; 8 × 4 do.
#[test]
fn a_shared_smoke_test_beyond_max_pods_is_a_warning() {
    let warned = |replicas: u32| {
        let (bp, d) = h100()
            .set(
                "accelerators.sharing",
                json!({"mode": "time-slicing", "replicas": replicas}),
            )
            .diagnose_with(&nodeimg::blueprint::compat::Matrix::builtin());
        assert!(bp.is_some(), "{d:#?}");
        d.into_iter().find(|d| d.code == "smoke-pods")
    };
    let w = warned(16).expect("warned");
    assert_eq!(
        w.severity,
        nodeimg::blueprint::diagnostic::Severity::Warning
    );
    assert_eq!(w.path.to_string(), "accelerators.sharing.replicas");
    assert!(
        w.message.contains("128 Pods") && w.message.contains("maxPods 110"),
        "{}",
        w.message
    );
    assert!(warned(4).is_none());
}

/// Values files merged as Helm merges several `-f` files into one release: mappings
/// key by key, anything else (scalars, lists) the later file's.
fn helm_merge(into: &mut Value, over: &Value) {
    match (into.as_object_mut(), over.as_object()) {
        (Some(a), Some(b)) => {
            for (k, v) in b {
                match a.get_mut(k) {
                    Some(slot) if slot.is_object() && v.is_object() => helm_merge(slot, v),
                    _ => {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        _ => *into = over.clone(),
    }
}

/// A cluster runs one GPU Operator release, whose device plugin reads one sharing
/// ConfigMap. Each class's values hold its own key (the class name) and no default,
/// so the classes' values files given to one release merge into a ConfigMap with a key
/// per class, each class's node label selects its own, and a class that shares nothing
/// sets no label: the operator's config-manager falls back to the empty configuration
/// (`FALLBACK_STRATEGIES=empty`), whole GPUs, rather than to another class's sharing.
#[test]
fn several_classes_share_one_operator_release() {
    let classes = [
        (
            "h100-sliced",
            json!({"mode": "time-slicing", "replicas": 4}),
            "timeSlicing",
        ),
        ("h100-mps", json!({"mode": "mps", "replicas": 2}), "mps"),
        ("h100-sxm-ubuntu", json!({"mode": "none"}), ""),
    ];
    let mut merged = json!({});
    let mut labels = Vec::new();
    for (class, sharing, _) in &classes {
        let r = rendered(
            &h100()
                .set("metadata.name", json!(class))
                .set("accelerators.sharing", sharing.clone())
                .load(),
        );
        let values: Value = cluster_file(&r, "gpu-operator-values.yaml");
        helm_merge(&mut merged, &values);
        labels.push(node_labels(&r));
    }
    let cfg = &merged["devicePlugin"]["config"];
    assert!(cfg.get("default").is_none(), "{cfg}");
    assert_eq!(cfg["name"], "nodeimg-device-plugin-sharing");
    let data = cfg["data"].as_object().expect("data");
    assert_eq!(
        data.keys().collect::<Vec<_>>(),
        ["h100-mps", "h100-sliced", "nodeimg.whole-gpus"],
        "one key per sharing class, and the whole-GPU one they all carry"
    );
    // Every sharing class writes the same whole-GPU key: no class's merge changes it.
    for (class, sharing, _) in &classes[..2] {
        let values: Value = cluster_file(
            &rendered(
                &h100()
                    .set("metadata.name", json!(class))
                    .set("accelerators.sharing", sharing.clone())
                    .load(),
            ),
            "gpu-operator-values.yaml",
        );
        assert_eq!(
            values["devicePlugin"]["config"]["data"]["nodeimg.whole-gpus"],
            data["nodeimg.whole-gpus"],
            "{class}"
        );
    }
    for ((class, sharing, key), labels) in classes.iter().zip(&labels) {
        let selected: Vec<&str> = labels
            .iter()
            .filter_map(|l| l.strip_prefix("nvidia.com/device-plugin.config="))
            .collect();
        if key.is_empty() {
            assert!(selected.is_empty(), "{class}: {labels:?}");
            continue;
        }
        assert_eq!(selected, [*class], "{labels:?}");
        let config: Value = serde_yaml::from_str(data[*class].as_str().unwrap()).unwrap();
        assert_eq!(
            config["sharing"][key]["resources"][0]["replicas"], sharing["replicas"],
            "{class}: {config}"
        );
    }
}

#[test]
fn mig_reaches_the_mig_manager_through_the_node_label() {
    let r = rendered(&mig("all-1g.10gb", Some("mixed")).load());
    assert!(
        node_labels(&r).contains(&"nvidia.com/mig.config=all-1g.10gb".into()),
        "{:?}",
        node_labels(&r)
    );
    let values: Value = cluster_file(&r, "gpu-operator-values.yaml");
    assert_eq!(values["migManager"]["enabled"], true);
    assert_eq!(values["mig"]["strategy"], "mixed");
    assert!(values["devicePlugin"].get("config").is_none());
    // One pod per MIG device: dcgm-exporter's default mapping names it.
    assert!(values["dcgmExporter"].get("env").is_none());
}

#[test]
fn a_sharing_mode_nothing_applies_is_refused() {
    let without = |sharing: Value, manages: Value| {
        h100()
            .set("accelerators.sharing", sharing)
            .set("accelerators.operator.manages", manages)
            .try_load()
            .expect_err("refused")
    };
    let e = without(
        json!({"mode": "time-slicing", "replicas": 4}),
        json!(["dcgm-exporter"]),
    );
    let d = e.iter().find(|d| d.code == "sharing").expect("sharing");
    assert_eq!(d.path.to_string(), "accelerators.sharing.mode");
    assert!(d.message.contains("device-plugin"), "{}", d.message);
    let e = without(
        json!({"mode": "mig", "migProfile": "all-1g.10gb"}),
        json!(["device-plugin"]),
    );
    let d = e.iter().find(|d| d.code == "sharing").expect("sharing");
    assert!(d.message.contains("mig-manager"), "{}", d.message);
    // The label the sharing sets is not the blueprint's to set again.
    let e = h100()
        .set(
            "accelerators.sharing",
            json!({"mode": "time-slicing", "replicas": 2}),
        )
        .set_at(
            &nodeimg::blueprint::yaml_path::YamlPath::parse("kubernetes.labels")
                .key("nvidia.com/device-plugin.config".to_string()),
            json!("other"),
        )
        .try_load()
        .expect_err("refused");
    assert!(e.iter().any(|d| d.code == "node-label-sharing"), "{e:?}");
}

fn diff_to(new: Variant) -> nodeimg::diff::Report {
    let old = example("h100-sxm-ubuntu");
    let new = new.load();
    compare(&old, &rendered(&old), &new, &rendered(&new))
}

#[test]
fn diff_tells_a_device_plugin_restart_from_a_gpu_reset() {
    let r = diff_to(h100().set(
        "accelerators.sharing",
        json!({"mode": "time-slicing", "replicas": 4}),
    ));
    let mode = r
        .fields
        .iter()
        .find(|f| f.path == "accelerators.sharing.mode")
        .expect("mode changed");
    assert_eq!(mode.impact, Impact::Live, "{}", mode.why);
    assert!(mode.why.contains("device plugin restarts"), "{}", mode.why);
    assert!(
        r.files
            .iter()
            .any(|f| f.path == "cluster/gpu-operator-values.yaml" && f.diff.contains("timeSlicing")),
        "the sharing configuration is rendered: {:?}",
        r.files.iter().map(|f| &f.path).collect::<Vec<_>>()
    );
    assert_eq!(r.impact, Some(Impact::Live));

    let r = diff_to(mig("all-1g.10gb", None));
    let mode = r
        .fields
        .iter()
        .find(|f| f.path == "accelerators.sharing.mode")
        .expect("mode changed");
    assert_eq!(mode.impact, Impact::Drain);
    assert!(mode.why.contains("resets the GPUs"), "{}", mode.why);
}

/// A Node whose GPU resources are `resources` (capacity = allocatable) and
/// labels `labels`.
fn node(resources: &[(&str, &str)], labels: &[(&str, &str)]) -> nodeimg::k8s::Node {
    let res: serde_json::Map<String, Value> = resources
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    let mut l: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    l.insert("kubernetes.io/hostname".into(), json!("gpu-1"));
    let text = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-1", "labels": l},
        "status": {"capacity": res, "allocatable": res},
    })
    .to_string();
    nodeimg::k8s::node::parse(&text).unwrap().remove(0)
}

/// The verdicts of `id` on `subject`.
fn verdicts(
    bp: &nodeimg::blueprint::Blueprint,
    n: &nodeimg::k8s::Node,
    id: &str,
    subject: &str,
) -> Vec<String> {
    let (findings, _) = nodeimg::accept::cluster::check(bp.spec(), n, None, None, &[]);
    findings
        .iter()
        .filter(|f| f.id == id && f.subject.as_deref() == Some(subject))
        .map(|f| format!("{:?} {}", f.verdict, f.expected))
        .collect()
}

#[test]
fn cluster_phase_checks_the_sharing_arithmetic() {
    let ts = h100()
        .set(
            "accelerators.sharing",
            json!({"mode": "time-slicing", "replicas": 4}),
        )
        .load();
    let ok = verdicts(
        &ts,
        &node(&[("nvidia.com/gpu", "32")], &[]),
        "cluster.capacity.gpu",
        "nvidia.com/gpu",
    );
    assert!(ok[0].starts_with("Pass 32 (8 GPUs × 4)"), "{ok:?}");
    let whole = verdicts(
        &ts,
        &node(&[("nvidia.com/gpu", "8")], &[]),
        "cluster.capacity.gpu",
        "nvidia.com/gpu",
    );
    assert!(
        whole[0].starts_with("Fail"),
        "whole GPUs handed out: {whole:?}"
    );
    // The device plugin's sharing, as GPU feature discovery reports it.
    let labels = verdicts(
        &ts,
        &node(&[], &[("nvidia.com/gpu.replicas", "1")]),
        "cluster.label",
        "nvidia.com/gpu.replicas",
    );
    assert_eq!(labels, ["Fail 4"]);
    let sel = verdicts(
        &ts,
        &node(&[], &[]),
        "cluster.label",
        "nvidia.com/device-plugin.config",
    );
    assert_eq!(sel, ["Fail h100-sxm-ubuntu"]);

    // MIG, single strategy: 8 GPUs × 7 instances of 1g.10gb as nvidia.com/gpu.
    let single = mig("all-1g.10gb", None).load();
    let v = verdicts(
        &single,
        &node(&[("nvidia.com/gpu", "56")], &[]),
        "cluster.capacity.gpu",
        "nvidia.com/gpu",
    );
    assert!(v[0].starts_with("Pass 56"), "{v:?}");
    let v = verdicts(
        &single,
        &node(&[("nvidia.com/gpu", "8")], &[]),
        "cluster.capacity.gpu",
        "nvidia.com/gpu",
    );
    assert!(v[0].starts_with("Fail 56"), "MIG not applied: {v:?}");
    // Mixed: one resource per profile of the balanced configuration.
    let mixed = mig("all-balanced", Some("mixed")).load();
    let n = node(
        &[
            ("nvidia.com/mig-1g.10gb", "16"),
            ("nvidia.com/mig-2g.20gb", "8"),
            ("nvidia.com/mig-3g.40gb", "7"),
        ],
        &[("nvidia.com/mig.config.state", "success")],
    );
    let v = verdicts(&mixed, &n, "cluster.capacity.gpu", "nvidia.com/mig-1g.10gb");
    assert!(v[0].starts_with("Pass 16"), "{v:?}");
    let v = verdicts(&mixed, &n, "cluster.capacity.gpu", "nvidia.com/mig-3g.40gb");
    assert!(
        v[0].starts_with("Fail 8"),
        "one GPU short of 3g.40gb: {v:?}"
    );
    let v = verdicts(&mixed, &n, "cluster.label", "nvidia.com/mig.config.state");
    assert_eq!(v, ["Pass success"]);
    let v = verdicts(&mixed, &n, "cluster.label", "nvidia.com/mig.config");
    assert_eq!(v, ["Fail all-balanced"]);
}

/// The rendered keys the chart's values do not have: a key is known where the
/// chart has it; below a key whose chart value is not a non-empty mapping
/// (`data: {}`, a list, a scalar) the chart takes what it is given.
fn unknown_keys(rendered: &Value, chart: &Value, at: &str, out: &mut Vec<String>) {
    let (Some(r), Some(c)) = (rendered.as_object(), chart.as_object()) else {
        return;
    };
    if c.is_empty() {
        return;
    }
    for (k, v) in r {
        let path = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        match c.get(k) {
            None => out.push(path),
            Some(cv) => unknown_keys(v, cv, &path, out),
        }
    }
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn operator_values_are_keys_of_the_pinned_chart() {
    let variants = [
        h100().set(
            "accelerators.sharing",
            json!({"mode": "time-slicing", "replicas": 4}),
        ),
        h100().set(
            "accelerators.sharing",
            json!({"mode": "mps", "replicas": 2}),
        ),
        mig("all-balanced", Some("mixed")),
        // The operator's driver and its upgrade policy.
        h100()
            .set("accelerators.driver.authority", json!("operator"))
            .set(
                "accelerators.operator.manages",
                json!([
                    "driver",
                    "device-plugin",
                    "dcgm-exporter",
                    "gpu-feature-discovery"
                ]),
            ),
    ];
    for v in variants {
        let bp = v.load();
        let version = bp
            .spec()
            .accelerators
            .as_ref()
            .unwrap()
            .operator
            .as_ref()
            .unwrap()
            .version
            .to_string();
        let dir = root()
            .join("../shared/corpus/gpu-operator-helm")
            .join(&version);
        assert!(dir.exists(), "corpus path {} is missing", dir.display());
        let chart: Value =
            serde_yaml::from_str(&std::fs::read_to_string(dir.join("values.yaml")).unwrap())
                .unwrap();
        let mut values: Value = cluster_file(&rendered(&bp), "gpu-operator-values.yaml");
        // The NFD subchart's values have their own file.
        values
            .as_object_mut()
            .unwrap()
            .remove("node-feature-discovery");
        let mut unknown = Vec::new();
        unknown_keys(&values, &chart, "", &mut unknown);
        assert!(unknown.is_empty(), "chart {version} has no {unknown:?}");
        // The keys that carry the sharing are the chart's own, not free-form.
        if let Some(cfg) = values["devicePlugin"].get("config") {
            for k in cfg.as_object().unwrap().keys() {
                assert!(chart["devicePlugin"]["config"].get(k).is_some(), "{k}");
            }
        }
    }
}
