//! Validation rules for what makes the node work in the cluster: operator
//! driver tags and AMD signing, topology policy against the pods the node
//! must admit, eviction thresholds and reservations against the node's
//! memory, and the labels a kubelet may set on itself.

use crate::support::*;
use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::diagnostic::Severity;
use nodeimg::blueprint::load_bytes;
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
