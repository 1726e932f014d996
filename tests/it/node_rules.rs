//! Validation rules for what makes the node work in the cluster: operator
//! driver tags and AMD signing, topology policy against the pods the node
//! must admit, eviction thresholds and reservations against the node's
//! memory, and the labels a kubelet may set on itself.

use crate::support::*;
use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::diagnostic::Severity;
use nodeimg::blueprint::load_bytes;
use nodeimg::blueprint::yaml_path::YamlPath;
use serde_json::json;

/// Every (severity, code, path) the variant reports, errors or warnings.
pub fn findings(v: &Variant) -> Vec<(Severity, String, String)> {
    let file = root().join("blueprints/x.yaml");
    let d = match load_bytes(
        v.text().as_bytes(),
        &file,
        Some(&root().join("blueprints")),
        &Matrix::builtin(),
    ) {
        Ok(l) => l.warnings,
        Err(d) => d,
    };
    d.into_iter()
        .map(|d| (d.severity, d.code, d.path.to_string()))
        .collect()
}

fn has(v: &Variant, sev: Severity, code: &str) -> bool {
    findings(v).iter().any(|(s, c, _)| *s == sev && c == code)
}

#[test]
fn the_examples_are_clean() {
    for name in EXAMPLES {
        let f = findings(&Variant::of(name));
        assert!(f.is_empty(), "{name}: {f:?}");
    }
}

#[test]
fn an_operator_driver_is_an_exact_version() {
    let v = Variant::of("mi300x-rhel").set("accelerators.driver.version", json!(">=6.2, <6.3"));
    assert!(
        has(&v, Severity::Error, "operator-driver-version"),
        "{:?}",
        findings(&v)
    );
}

#[test]
fn amd_operator_driver_under_enforced_signing_needs_its_secrets() {
    let v = Variant::of("mi300x-rhel");
    let text = v.text();
    let mut j: serde_json::Value = serde_json::from_str(&text).unwrap();
    j["accelerators"]["operator"]
        .as_object_mut()
        .unwrap()
        .remove("moduleSigning");
    let v = Variant::parse(root().join("blueprints/mi300x-rhel.yaml"), &j.to_string());
    assert!(
        has(&v, Severity::Error, "module-signing"),
        "{:?}",
        findings(&v)
    );
    let v = v.set("firmware.bios.moduleSigning", json!("permissive"));
    assert!(!has(&v, Severity::Error, "module-signing"));
}

#[test]
fn single_numa_node_refuses_pods_wider_than_a_numa_node() {
    let v = Variant::of("h100-sxm-ubuntu").set(
        "kubernetes.kubelet.topologyManagerPolicy",
        json!("single-numa-node"),
    );
    // 8 GPUs on 2 NUMA nodes: a full-node pod would be rejected.
    assert!(
        has(&v, Severity::Error, "topology-single-numa"),
        "{:?}",
        findings(&v)
    );
    // Unknown NUMA layout: refused too, with the field to set.
    let mut j: serde_json::Value = serde_json::from_str(&v.text()).unwrap();
    j["kubernetes"]["capacity"]
        .as_object_mut()
        .unwrap()
        .remove("numaNodes");
    let unknown = Variant::parse(
        root().join("blueprints/h100-sxm-ubuntu.yaml"),
        &j.to_string(),
    );
    assert!(has(&unknown, Severity::Error, "topology-single-numa"));
    // One NUMA node holds everything.
    let one = v.clone().set("kubernetes.capacity.numaNodes", json!(1));
    assert!(!has(&one, Severity::Error, "topology-single-numa"));
    // The policies that admit full-node pods pass.
    for policy in ["restricted", "best-effort"] {
        let ok = Variant::of("h100-sxm-ubuntu")
            .set("kubernetes.kubelet.topologyManagerPolicy", json!(policy));
        assert!(
            !has(&ok, Severity::Error, "topology-single-numa"),
            "{policy}"
        );
    }
}

#[test]
fn negligible_memory_eviction_on_a_large_node_warns() {
    let v = Variant::of("h100-sxm-ubuntu").set_at(
        &YamlPath::parse("kubernetes.kubelet.evictionHard").key("memory.available"),
        json!("1Gi"),
    );
    assert!(
        has(&v, Severity::Warning, "eviction-memory"),
        "{:?}",
        findings(&v)
    );
    let ok = Variant::of("h100-sxm-ubuntu").set_at(
        &YamlPath::parse("kubernetes.kubelet.evictionHard").key("memory.available"),
        json!("2%"),
    );
    assert!(!has(&ok, Severity::Warning, "eviction-memory"));
    // A small node keeps kubelet's 100Mi default without a warning.
    assert!(!has(
        &Variant::of("cpu-minimal"),
        Severity::Warning,
        "eviction-memory"
    ));
}

#[test]
fn a_large_node_without_a_reservation_policy_warns() {
    let v = Variant::of("h100-sxm-ubuntu").set(
        "kubernetes.kubelet.kubeReserved",
        json!({"cpu": "1", "memory": "8Gi"}),
    );
    assert!(
        has(&v, Severity::Warning, "reservation-policy"),
        "{:?}",
        findings(&v)
    );
}

#[test]
fn labels_the_kubelet_may_not_set_are_refused() {
    for key in [
        "node-role.kubernetes.io/gpu",
        "node-restriction.kubernetes.io/pool",
        "example.k8s.io/x",
    ] {
        let v = Variant::of("h100-sxm-ubuntu").set("kubernetes.labels", json!({key: "true"}));
        assert!(
            has(&v, Severity::Error, "node-label-namespace"),
            "{key}: {:?}",
            findings(&v)
        );
    }
    let v = Variant::of("h100-sxm-ubuntu").set(
        "kubernetes.labels",
        json!({"node.kubernetes.io/pool": "gpu"}),
    );
    assert!(!has(&v, Severity::Error, "node-label-namespace"));
}

#[test]
fn the_nfd_release_is_pinned_and_is_the_operators_own() {
    let with_nfd = json!([
        "device-plugin",
        "dcgm-exporter",
        "gpu-feature-discovery",
        "node-feature-discovery"
    ]);
    // Standalone NFD values without a release.
    let v = Variant::of("h100-sxm-ubuntu").remove("kubernetes.nfd.version");
    assert!(
        has(&v, Severity::Warning, "nfd-version"),
        "{:?}",
        findings(&v)
    );
    // GPU Operator v25.10.1 bundles NFD 0.18.2: another pin is refused.
    let v = Variant::of("h100-sxm-ubuntu")
        .set("accelerators.operator.manages", with_nfd.clone())
        .set("kubernetes.nfd.version", json!("0.17.3"));
    assert!(
        findings(&v).iter().any(|(s, c, p)| *s == Severity::Error
            && c == "nfd-version"
            && p == "kubernetes.nfd.version"),
        "{:?}",
        findings(&v)
    );
    // Its own release, or no pin (nodeimg knows the bundle), is fine.
    for v in [
        Variant::of("h100-sxm-ubuntu").set("accelerators.operator.manages", with_nfd.clone()),
        Variant::of("h100-sxm-ubuntu")
            .set("accelerators.operator.manages", with_nfd.clone())
            .remove("kubernetes.nfd.version"),
    ] {
        assert!(
            !has(&v, Severity::Error, "nfd-version"),
            "{:?}",
            findings(&v)
        );
        assert!(
            !has(&v, Severity::Warning, "nfd-version"),
            "{:?}",
            findings(&v)
        );
    }
    // An operator release whose bundle is unknown needs the pin.
    let v = Variant::of("h100-sxm-ubuntu")
        .set("accelerators.operator.manages", with_nfd)
        .set("accelerators.operator.version", json!("v25.10.9"))
        .remove("kubernetes.nfd.version");
    assert!(
        has(&v, Severity::Warning, "nfd-version"),
        "{:?}",
        findings(&v)
    );
    // NFD before 0.14 denies the example's platform.example.com labels.
    let v = Variant::of("h100-sxm-ubuntu").set("kubernetes.nfd.version", json!("0.13.4"));
    assert!(
        has(&v, Severity::Error, "nfd-label-namespace"),
        "{:?}",
        findings(&v)
    );
}

#[test]
fn amd_ctk_needs_the_amd_container_toolkit_in_the_image() {
    let v = Variant::of("mi300x-rhel").set("runtime.cdi.generator", json!("amd-ctk"));
    assert!(
        findings(&v).iter().any(|(s, c, p)| *s == Severity::Error
            && c == "cdi-generator"
            && p == "accelerators.containerToolkit"),
        "{:?}",
        findings(&v)
    );
    let v = v.set("accelerators.containerToolkit", json!("1.2.0"));
    assert!(
        !has(&v, Severity::Error, "cdi-generator"),
        "{:?}",
        findings(&v)
    );
}

#[test]
fn warnings_speak_only_of_what_the_file_says() {
    // Kubelet's own memory.available default on a 2 TiB node: nodeimg's
    // default, not the user's choice, so no warning at a line they never wrote.
    let v = Variant::of("h100-sxm-ubuntu").remove("kubernetes.kubelet.evictionHard");
    assert!(
        !has(&v, Severity::Warning, "eviction-memory"),
        "{:?}",
        findings(&v)
    );
    // Taints alone: nobody asked for NFD, so its unpinned release is no warning.
    let v = Variant::of("h100-sxm-ubuntu").remove("kubernetes.nfd");
    assert!(
        !has(&v, Severity::Warning, "nfd-version"),
        "{:?}",
        findings(&v)
    );
    // NFD sources written without a release: the warning stays.
    let v = Variant::of("h100-sxm-ubuntu").remove("kubernetes.nfd.version");
    assert!(has(&v, Severity::Warning, "nfd-version"));
}
