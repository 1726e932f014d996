//! Shared test helpers: the example blueprints and their renders, blueprint variants
//! edited as data, the `nodeimg` binary with a clean environment, package fixtures,
//! synthetic machine trees, a host that injects read errors, and the healthy verify
//! fixture with its blueprint.
#![allow(dead_code)]

// The binary exists only for the test binary (examples include this module too).
pub mod accept_fixture;
#[cfg(test)]
pub mod boot_root;
#[cfg(test)]
mod cli;
pub mod fault_host;
pub mod fixture_tree;
pub mod import_graph;
pub mod k8s_schema;
pub mod keys;
pub mod nvidia_smi;
pub mod oci;
pub mod package;
pub mod registry;
pub mod unit_root;
pub mod variant;
pub mod verify_fixture;

pub use variant::Variant;

use std::path::{Path, PathBuf};

use nodeimg::blueprint::{Blueprint, compat::Matrix, load_file};
use nodeimg::render::{Rendered, Templates, render};

#[cfg(test)]
pub use cli::*;

/// The crate root (where `blueprints/`, `golden/` and `tests/fixtures/` are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target folder these tests were built in (`CARGO_TARGET_DIR` or `target/`): where
/// scripts/build-verifier, the SBOM validators and the interop client are built.
pub fn target_dir() -> PathBuf {
    // Cargo gives integration tests their target folder's `tmp`; the examples that
    // share this module look where cargo would.
    match option_env!("CARGO_TARGET_TMPDIR") {
        Some(tmp) => Path::new(tmp)
            .parent()
            .expect("CARGO_TARGET_TMPDIR is target/tmp")
            .to_path_buf(),
        None => std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root().join("target")),
    }
}

/// The example blueprints.
pub const EXAMPLES: &[&str] = &["h100-sxm-ubuntu", "mi300x-rhel", "cpu-minimal"];

/// The example `blueprints/<name>.yaml`, loaded.
pub fn example(name: &str) -> Blueprint {
    load_file(
        &root().join("blueprints").join(format!("{name}.yaml")),
        &Matrix::builtin(),
    )
    .unwrap_or_else(|d| panic!("{name}: {d:?}"))
    .blueprint
}

/// `bp` rendered with the built-in templates.
pub fn rendered(bp: &Blueprint) -> Rendered {
    render(bp, &Templates::embedded()).unwrap_or_else(|e| panic!("{}: {e}", bp.name()))
}

/// A rendered cluster-side file (`cluster/<path>`), read as YAML.
pub fn cluster_file<T: serde::de::DeserializeOwned>(r: &Rendered, path: &str) -> T {
    serde_yaml::from_slice(
        r.cluster
            .file(path)
            .unwrap_or_else(|| panic!("cluster/{path} not rendered")),
    )
    .unwrap_or_else(|e| panic!("cluster/{path}: {e}"))
}

/// The H100 example pinned to containerd 1.7 (config version 2), its extraConfig key
/// moved to the 1.x plugin id.
pub fn containerd_1_7() -> Blueprint {
    use nodeimg::blueprint::yaml_path::YamlPath;
    let extra = YamlPath::parse("runtime.containerd.extraConfig");
    let v = Variant::of("h100-sxm-ubuntu");
    let key = "plugins.\"io.containerd.transfer.v1.local\".max_concurrent_downloads";
    let downloads = v
        .get("runtime.containerd.extraConfig")
        .and_then(|e| e.get(key))
        .cloned()
        .unwrap_or_else(|| panic!("the H100 example has no extraConfig `{key}`"));
    v.set("runtime.containerd.version", serde_json::json!("1.7.22"))
        .remove_at(&extra.key(key))
        .set_at(
            &extra.key("plugins.\"io.containerd.grpc.v1.cri\".max_concurrent_downloads"),
            downloads,
        )
        .load()
}

/// Writes one rendered layer file to `dir` and returns its path.
pub fn write_file(dir: &Path, r: &Rendered, path: &str) -> PathBuf {
    let bytes = r
        .layer
        .file(path)
        .unwrap_or_else(|| panic!("{path} not rendered"));
    let out = dir.join(path.replace('/', "_"));
    std::fs::write(&out, bytes).unwrap();
    out
}

/// The custom plugin monitor nodeimg renders into the node-problem-detector Helm values
/// (`settings.custom_monitor_definitions["nodeimg-health.json"]`), parsed.
pub fn npd_health_monitor(values_yaml: &str) -> serde_json::Value {
    let values: serde_yaml::Value = serde_yaml::from_str(values_yaml).expect("NPD values");
    serde_json::from_str(
        values["settings"]["custom_monitor_definitions"]["nodeimg-health.json"]
            .as_str()
            .expect("the nodeimg-health.json monitor"),
    )
    .expect("the monitor is JSON")
}

/// The static verifier with registry access (`scripts/build-verifier`), which the image
/// needs to apply itself: `NODEIMG_STATIC_VERIFIER`, or where that script leaves it.
pub fn static_verifier() -> PathBuf {
    let path = std::env::var_os("NODEIMG_STATIC_VERIFIER")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("static/x86_64-unknown-linux-gnu/release/nodeimg"));
    assert!(
        path.is_file(),
        "{} is missing: run scripts/build-verifier (or set NODEIMG_STATIC_VERIFIER)",
        path.display()
    );
    path
}
