//! Layer 2 labels: `verify --phase cluster` with the labelled fixture blueprint
//! (`tests/fixtures/cluster/h100-labelled.yaml`) passes on a Node carrying every label it
//! implies — NFD platform labels, NFD's PCI vendor label, GPU feature discovery's, the
//! blueprint's own — and fails, with fault class `driver-daemon`, on each one missing or
//! of another value. The cluster holds the RuntimeClass the blueprint renders, whose node
//! selector is the blueprint's own labels: a node without one of them is off it too.

use crate::support::accept_fixture as fixture;
use std::path::Path;
use std::process::Output;

const LABELS: &[(&str, &str)] = &[
    // NFD platform labels (kubernetes.nfd.platformLabels).
    ("platform.example.com/accelerator", "nvidia-h100-sxm"),
    ("platform.example.com/fabric", "ndr-400"),
    // NFD's own label for the pci source and the GPU vendor.
    ("feature.node.kubernetes.io/pci-10de.present", "true"),
    // GPU feature discovery (the operator manages it).
    ("nvidia.com/gpu.count", "8"),
    ("nvidia.com/gpu.present", "true"),
    // The blueprint's own (kubernetes.labels).
    ("platform.example.com/node-class", "h100-sxm"),
    ("example.com/pool", "training"),
];

fn blueprint_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cluster/h100-labelled.yaml")
}

fn blueprint() -> String {
    let p = blueprint_path();
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The RuntimeClasses render writes for the blueprint, as `kubectl get runtimeclasses -o
/// json` lists them once applied.
fn runtime_classes() -> String {
    let bp = nodeimg::blueprint::load_file(
        &blueprint_path(),
        &nodeimg::blueprint::compat::Matrix::builtin(),
    )
    .unwrap_or_else(|d| panic!("{d:?}"))
    .blueprint;
    let r = crate::support::rendered(&bp);
    let items: Vec<serde_json::Value> = r
        .cluster
        .files()
        .filter(|(p, _, _)| p.starts_with("runtime-classes/"))
        .map(|(_, _, bytes)| serde_yaml::from_slice(bytes).unwrap())
        .collect();
    assert_eq!(items.len(), 1, "the nvidia handler's");
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

/// The fixture Node with `labels` in place of its own.
fn node(labels: &[(&str, &str)]) -> String {
    let mut value: serde_json::Value = serde_json::from_str(&fixture::node_json()).unwrap();
    let map = value["metadata"]["labels"].as_object_mut().unwrap();
    map.retain(|k, _| k == "kubernetes.io/hostname");
    for (k, v) in labels {
        map.insert((*k).to_owned(), (*v).into());
    }
    serde_json::to_string_pretty(&value).unwrap()
}

/// The device plugin, GPU feature discovery and the NFD worker, running and ready on
/// the node.
fn pods() -> String {
    let mut value: serde_json::Value = serde_json::from_str(&fixture::pods_json()).unwrap();
    let items = value["items"].as_array_mut().unwrap();
    let mut gfd = items[0].clone();
    gfd["metadata"]["name"] = "gpu-feature-discovery-q8w2n".into();
    gfd["metadata"]["namespace"] = "gpu-operator".into();
    gfd["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/k8s-device-plugin:v0.17.1".into();
    let mut nfd = items[0].clone();
    nfd["metadata"]["name"] = "nfd-worker-5kq7d".into();
    nfd["metadata"]["namespace"] = "node-feature-discovery".into();
    nfd["spec"]["containers"][0]["image"] =
        "registry.k8s.io/nfd/node-feature-discovery:v0.18.2".into();
    items.push(gfd);
    items.push(nfd);
    serde_json::to_string(&value).unwrap()
}

fn verify(node: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let (bp, node, pods, classes) = (
        w("bp.yaml", &blueprint()),
        w("node.json", node),
        w("pods.json", &pods()),
        w("rc.json", &runtime_classes()),
    );
    crate::support::cmd()
        .args([
            "verify",
            "--phase",
            "cluster",
            "--blueprint",
            &bp,
            "--node",
            &node,
            "--pods",
            &pods,
            "--runtime-classes",
            &classes,
            "--format",
            "json",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// `(subject, verdict, fault, observed)` of a label finding.
type LabelFinding = (String, String, String, String);

/// Every label finding, and the other findings that did not pass.
fn labels(out: &Output) -> (Vec<LabelFinding>, Vec<String>) {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut found = Vec::new();
    let mut others = Vec::new();
    for f in report["findings"].as_array().unwrap() {
        let s = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
        if s("id") == "cluster.label" {
            found.push((s("subject"), s("verdict"), s("fault"), s("observed")));
        } else if s("verdict") != "pass" {
            others.push(format!("{}[{}] {}", s("id"), s("subject"), s("verdict")));
        }
    }
    (found, others)
}

#[test]
fn every_label_the_blueprint_implies_is_checked_and_passes() {
    let out = verify(&node(LABELS));
    let (found, others) = labels(&out);
    assert!(others.is_empty(), "{others:?}");
    assert_eq!(out.status.code(), Some(0), "{found:?}");
    let mut subjects: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    subjects.sort_unstable();
    let mut want: Vec<&str> = LABELS.iter().map(|l| l.0).collect();
    want.sort_unstable();
    assert_eq!(subjects, want);
    assert!(found.iter().all(|f| f.1 == "pass"), "{found:?}");
}

#[test]
fn a_missing_label_fails_each_one_alone() {
    for (missing, _) in LABELS {
        let rest: Vec<(&str, &str)> = LABELS.iter().copied().filter(|l| l.0 != *missing).collect();
        let out = verify(&node(&rest));
        assert_eq!(out.status.code(), Some(1), "{missing}");
        let (found, others) = labels(&out);
        // The blueprint's own labels are the RuntimeClass's node selector as well.
        let own = ["platform.example.com/node-class", "example.com/pool"].contains(missing);
        let want: Vec<String> = if own {
            vec!["cluster.runtime-class[nvidia-h100-labelled] fail".to_owned()]
        } else {
            Vec::new()
        };
        assert_eq!(others, want, "{missing}");
        let failed: Vec<_> = found.iter().filter(|f| f.1 != "pass").collect();
        assert_eq!(
            failed,
            [&(
                (*missing).to_owned(),
                "fail".to_owned(),
                "driver-daemon".to_owned(),
                "absent".to_owned()
            )],
            "{missing}"
        );
    }
}

#[test]
fn a_label_of_another_value_fails() {
    for (key, wrong) in [
        ("platform.example.com/accelerator", "nvidia-a100-sxm"),
        ("nvidia.com/gpu.count", "7"),
        ("example.com/pool", "inference"),
        ("feature.node.kubernetes.io/pci-10de.present", "false"),
    ] {
        let edited: Vec<(&str, &str)> = LABELS
            .iter()
            .map(|(k, v)| if *k == key { (*k, wrong) } else { (*k, *v) })
            .collect();
        let out = verify(&node(&edited));
        assert_eq!(out.status.code(), Some(1), "{key}");
        let (found, _) = labels(&out);
        let failed: Vec<_> = found.iter().filter(|f| f.1 != "pass").collect();
        assert_eq!(
            failed,
            [&(
                key.to_owned(),
                "fail".to_owned(),
                "driver-daemon".to_owned(),
                wrong.to_owned()
            )],
            "{key}"
        );
    }
}
