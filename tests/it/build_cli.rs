//! `nodeimg build` end to end: the printed digest is the one in golden/,
//! JSON carries every digest, `--check-repro` passes, the cluster files land
//! where asked, and bad input exits 2 without touching the output.

use std::process::{Command, Output};

use crate::common::root;

fn nodeimg(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nodeimg"))
        .args(args)
        .current_dir(root())
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap()
}

fn golden_manifest(name: &str) -> String {
    let text = std::fs::read_to_string(root().join("golden").join(name).join("image.txt")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("manifest "))
        .unwrap()
        .to_string()
}

#[test]
fn build_prints_the_golden_manifest_digest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let o = nodeimg(&[
        "build",
        "blueprints/h100-sxm-ubuntu.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        golden_manifest("h100-sxm-ubuntu")
    );
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    assert_eq!(
        index["manifests"][0]["digest"],
        golden_manifest("h100-sxm-ubuntu")
    );
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        "2026.11.1"
    );
}

#[test]
fn json_report_check_repro_and_cluster_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let cluster = dir.path().join("cluster-side");
    let o = nodeimg(&[
        "build",
        "--check-repro",
        "--format",
        "json",
        "--cluster",
        cluster.to_str().unwrap(),
        "blueprints/mi300x-rhel.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["manifest"]["digest"], golden_manifest("mi300x-rhel"));
    assert_eq!(v["reproducible"]["identical"], true);
    assert!(
        v["layer"]["diffId"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(cluster.join("amd-gpu-operator-values.yaml").is_file());
    // The layer holds the blueprint's overlay file.
    assert!(v["layer"]["entries"].as_u64().unwrap() > 20);
}

#[test]
fn gzip_and_a_custom_tag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let o = nodeimg(&[
        "build",
        "--compression",
        "gzip",
        "--tag",
        "v1-gzip",
        "--format",
        "json",
        "blueprints/cpu-minimal.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["layer"]["mediaType"],
        "application/vnd.oci.image.layer.v1.tar+gzip"
    );
    assert_eq!(v["tag"], "v1-gzip");
    assert_ne!(v["manifest"]["digest"], golden_manifest("cpu-minimal"));
}

#[test]
fn bad_input_exits_two_and_leaves_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    assert_eq!(
        nodeimg(&[
            "build",
            "blueprints/cpu-minimal.yaml",
            "-o",
            out.to_str().unwrap()
        ])
        .status
        .code(),
        Some(0)
    );
    let before = std::fs::read(out.join("index.json")).unwrap();
    for args in [
        vec![
            "build",
            "tests/fixtures/invalid/bad-quantity.yaml",
            "-o",
            out.to_str().unwrap(),
        ],
        vec![
            "build",
            "--compression",
            "lz4",
            "blueprints/h100-sxm-ubuntu.yaml",
            "-o",
            out.to_str().unwrap(),
        ],
        vec![
            "build",
            "--tag",
            "bad tag!",
            "blueprints/h100-sxm-ubuntu.yaml",
            "-o",
            out.to_str().unwrap(),
        ],
    ] {
        let o = nodeimg(&args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty());
    }
    assert_eq!(
        std::fs::read(out.join("index.json")).unwrap(),
        before,
        "the earlier output is untouched"
    );
}
