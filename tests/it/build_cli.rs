//! `nodeimg build` end to end: the printed digest is the one in golden/
//! (with the stand-in verifier golden uses), the image carries the running
//! executable by default, JSON carries every digest, `--check-repro`
//! passes, unchanged layers are reused, the cluster files land where asked,
//! a verifier that cannot run on the distribution is refused, and bad input
//! exits 2 without touching the output.

use std::path::{Path, PathBuf};
use std::process::Command;

use nodeimg::package::verifier::stand_in_elf;

use crate::support::{root, success_json};

fn stand_in(dir: &Path) -> PathBuf {
    let p = dir.join("stand-in-verifier");
    std::fs::write(&p, stand_in_elf()).unwrap();
    p
}

fn golden_layer(name: &str, role: &str) -> String {
    let text = std::fs::read_to_string(root().join("golden").join(name).join("image.txt")).unwrap();
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix("layer ")?;
            let (r, rest) = rest.split_once(' ')?;
            (r == role).then(|| rest.trim_start().split(' ').next().unwrap().to_string())
        })
        .unwrap()
}

use crate::support::{clean, nodeimg};

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
    let v = stand_in(dir.path());
    let o = nodeimg(&[
        "build",
        "blueprints/h100-sxm-ubuntu.yaml",
        "-o",
        out.to_str().unwrap(),
        "--verifier",
        v.to_str().unwrap(),
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
fn the_image_carries_the_running_executable_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let o = nodeimg(&[
        "build",
        "--format",
        "json",
        "blueprints/h100-sxm-ubuntu.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    let v = success_json(&o);
    let roles: Vec<&str> = v["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["overlay", "verifier", "config"]);
    // Overlay and config are golden's; the verifier layer holds this binary.
    for (i, role) in [(0, "overlay"), (2, "config")] {
        assert_eq!(
            v["layers"][i]["digest"],
            golden_layer("h100-sxm-ubuntu", role)
        );
    }
    let blob = out
        .join("blobs/sha256")
        .join(&v["layers"][1]["digest"].as_str().unwrap()[7..]);
    let tar = zstd::decode_all(std::fs::read(blob).unwrap().as_slice()).unwrap();
    let mut ar = tar::Archive::new(tar.as_slice());
    let mut found = None;
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap().to_str() == Some("usr/local/bin/nodeimg") {
            assert_eq!(e.header().mode().unwrap(), 0o755);
            let mut body = Vec::new();
            std::io::Read::read_to_end(&mut e, &mut body).unwrap();
            found = Some(body);
        }
    }
    let me = std::fs::read(crate::support::BIN).unwrap();
    assert!(
        found.as_ref() == Some(&me),
        "the verifier layer holds this nodeimg"
    );
}

#[test]
fn a_rebuild_reuses_unchanged_layers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let v = stand_in(dir.path());
    let bp = crate::support::root().join("blueprints/h100-sxm-ubuntu.yaml");
    let build = |extra: &[&str]| crate::support::build_json(&bp, &out, &v, extra);
    let first = build(&[]);
    assert_eq!(first["reused"], serde_json::json!([]));
    let second = build(&[]);
    assert_eq!(
        second["reused"],
        serde_json::json!(["overlay", "verifier", "config"])
    );
    assert_eq!(second["manifest"], first["manifest"]);
    let third = build(&["--no-cache"]);
    assert_eq!(third["reused"], serde_json::json!([]));
    assert_eq!(third["manifest"], first["manifest"]);
}

#[test]
fn a_verifier_that_cannot_run_on_the_distribution_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    // RHEL 8 ships glibc 2.28; this nodeimg was linked on a newer system.
    let text = std::fs::read_to_string(root().join("blueprints/cpu-minimal.yaml")).unwrap();
    let bp = dir.path().join("rhel8.yaml");
    std::fs::write(
        &bp,
        text.replace("distro: debian", "distro: rhel")
            .replace("version: \"12\"", "version: \"8.10\""),
    )
    .unwrap();
    let needed = nodeimg::package::elf::inspect(&std::fs::read(crate::support::BIN).unwrap())
        .unwrap()
        .glibc
        .expect("the test binary is dynamically linked");
    assert!(needed.0 > nodeimg::package::elf::GlibcVersion::new(2, 28));
    let o = nodeimg(&["build", bp.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("needs glibc {}", needed.0)) && err.contains("ships glibc 2.28"),
        "{err}"
    );
    assert!(err.contains("--verifier"), "{err}");
    assert!(!out.exists());
    // A file that is not an executable is refused too; the stand-in passes.
    let o = nodeimg(&[
        "build",
        bp.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--verifier",
        "README.md",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an ELF file"));
    let v = stand_in(dir.path());
    let o = nodeimg(&[
        "build",
        bp.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--verifier",
        v.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn json_report_check_repro_and_cluster_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let cluster = dir.path().join("cluster-side");
    let stand_in = stand_in(dir.path());
    let o = nodeimg(&[
        "build",
        "--verifier",
        stand_in.to_str().unwrap(),
        "--check-repro",
        "--format",
        "json",
        "--cluster",
        cluster.to_str().unwrap(),
        "blueprints/mi300x-rhel.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    let v = success_json(&o);
    assert_eq!(v["manifest"]["digest"], golden_manifest("mi300x-rhel"));
    assert_eq!(v["reproducible"]["identical"], true);
    assert!(
        v["layers"][2]["diffId"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(cluster.join("amd-gpu-operator-values.yaml").is_file());
    // The overlay layer holds the blueprint's overlay file; the config
    // layer everything rendered.
    assert_eq!(v["layers"][0]["role"], "overlay");
    assert!(v["layers"][2]["entries"].as_u64().unwrap() > 20);
}

#[test]
fn gzip_and_a_custom_tag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let v = stand_in(dir.path());
    let o = nodeimg(&[
        "build",
        "--verifier",
        v.to_str().unwrap(),
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
    let v = success_json(&o);
    for l in v["layers"].as_array().unwrap() {
        assert_eq!(
            l["mediaType"],
            "application/vnd.oci.image.layer.v1.tar+gzip"
        );
    }
    assert_eq!(v["tag"], "v1-gzip");
    assert_ne!(v["manifest"]["digest"], golden_manifest("cpu-minimal"));
}

#[test]
fn bad_input_exits_two_and_leaves_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let v = stand_in(dir.path());
    assert_eq!(
        nodeimg(&[
            "build",
            "--verifier",
            v.to_str().unwrap(),
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
        vec![
            "build",
            "--verifier",
            "/nonexistent/nodeimg",
            "blueprints/cpu-minimal.yaml",
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

/// Runs `nodeimg ARGS` with stderr on a pseudo-terminal (util-linux
/// `script`), returning what the terminal showed.
fn on_a_terminal(args: &str) -> String {
    let o = clean(&mut Command::new("script"))
        .args(["-qefc"])
        .arg(format!("{} {args}", crate::support::BIN))
        .arg("/dev/null")
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn progress_shows_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    // This nodeimg (tens of MiB) goes into the verifier layer: long enough
    // for the meter. With -q, or when stderr is not a terminal, nothing.
    let shown = on_a_terminal(&format!(
        "build blueprints/cpu-minimal.yaml -o {}",
        out.display()
    ));
    assert!(shown.contains("verifier layer: "), "{shown}");
    assert!(
        shown.contains(" files, ") && shown.contains("/s, "),
        "{shown}"
    );
    assert!(shown.contains("done"), "{shown}");
    let shown = on_a_terminal(&format!(
        "build --no-cache -q blueprints/cpu-minimal.yaml -o {}",
        out.display()
    ));
    assert!(!shown.contains("layer: "), "{shown}");
    let o = nodeimg(&[
        "build",
        "--no-cache",
        "blueprints/cpu-minimal.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("/s, "));
}
