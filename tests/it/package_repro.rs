//! Same input ⇒ byte-identical OUT, whatever the umask, zstd worker count,
//! overlay creation order, working directory, time zone or locale.
//!
//! The builds run as `nodeimg build` processes, each with its own umask,
//! working directory and environment, so nothing here disturbs the tests
//! running beside it in this process. Only the layer-cache index, which
//! records machine-specific file identities by design, is left out of the
//! comparison.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use nodeimg::package::cache::INDEX_FILE;
use nodeimg::package::verifier::stand_in_elf;

use crate::support::package::tree_of;

/// The same overlay content, created in ascending or descending order
/// (different inode/directory order) and with different source modes that
/// normalise to the same layer modes.
fn make_overlay(root: &Path, reverse: bool, exec_mode: u32) {
    let mut names: Vec<String> = (0..60).map(|i| format!("d{}/f{i:03}", i % 7)).collect();
    if reverse {
        names.reverse();
    }
    for n in &names {
        let p = root.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        // Compressible and incompressible parts, bigger than one zstd job
        // for one of the files so that workers split the stream.
        let mut body = n.repeat(300).into_bytes();
        if n.ends_with("f001") {
            let mut x: u32 = 7;
            body.extend((0..9 << 20).map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            }));
        }
        std::fs::write(&p, body).unwrap();
        let mode = if n.ends_with('7') { exec_mode } else { 0o640 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

/// What a build output holds, less the layer cache's index (which records when).
fn snapshot(root: &Path) -> BTreeMap<String, (char, u32, Vec<u8>)> {
    let mut m = tree_of(root);
    m.remove(INDEX_FILE);
    m
}

/// A cpu-minimal blueprint with `ov` as its overlay, in `dir`.
fn blueprint(dir: &Path) {
    crate::support::Variant::of("cpu-minimal")
        .set("files.overlay", serde_json::json!("ov"))
        .write(&dir.join("bp.yaml"));
}

/// `nodeimg build` under `umask`, in `cwd`, with extra environment.
fn build(cwd: &Path, umask: &str, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut c = Command::new("/bin/sh");
    crate::support::clean(&mut c)
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(crate::support::BIN)
        .arg("build")
        .args(args)
        .current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn same_input_gives_identical_bytes_under_different_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir(d).unwrap();
        blueprint(d);
    }
    make_overlay(&a.join("ov"), false, 0o744);
    make_overlay(&b.join("ov"), true, 0o700);
    let verifier = dir.path().join("verifier");
    std::fs::write(&verifier, stand_in_elf()).unwrap();
    let v = verifier.to_str().unwrap();

    build(
        &a,
        "022",
        &[("TZ", "UTC")],
        &["bp.yaml", "-o", "out", "--verifier", v],
    );
    build(
        &b,
        "077",
        &[("TZ", "Asia/Kathmandu"), ("LC_ALL", "tr_TR.UTF-8")],
        &["bp.yaml", "-o", "out", "--verifier", v],
    );
    let sa = snapshot(&a.join("out"));
    assert!(sa.len() >= 9, "{:?}", sa.keys().collect::<Vec<_>>());
    assert_eq!(sa, snapshot(&b.join("out")));

    // --check-repro (1 vs several zstd workers, umask 022 vs 077) agrees,
    // and its output is the same image.
    let o = build(
        &b,
        "027",
        &[],
        &[
            "bp.yaml",
            "-o",
            "checked",
            "--verifier",
            v,
            "--check-repro",
            "--format",
            "json",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["reproducible"]["identical"], true, "{report}");
    assert_eq!(sa, snapshot(&b.join("checked")));

    // Changing one overlay byte changes the overlay layer and the image.
    std::fs::write(b.join("ov/d0/f000"), b"changed").unwrap();
    build(&b, "022", &[], &["bp.yaml", "-o", "out", "--verifier", v]);
    let changed = snapshot(&b.join("out"));
    assert_ne!(sa.get("index.json"), changed.get("index.json"));
}

#[test]
fn the_comparison_notices_a_real_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d.join("blobs/sha256")).unwrap();
        std::fs::write(d.join("oci-layout"), b"{}").unwrap();
    }
    assert!(
        nodeimg::package::repro::compare_layouts(&a, &b)
            .unwrap()
            .is_empty()
    );
    std::fs::write(b.join("index.json"), b"{}").unwrap();
    std::fs::write(b.join("oci-layout"), b"[]").unwrap();
    let diffs = nodeimg::package::repro::compare_layouts(&a, &b).unwrap();
    assert_eq!(
        diffs,
        [
            "index.json: only in the second build",
            "oci-layout: contents differ"
        ]
    );
}
