//! `nodeimg apply` on folders: the layers land by the OCI layer rules,
//! nothing lands outside the root, what stood before is saved and comes
//! back byte for byte on `--rollback`, a kill at every step is completed
//! by the next run, re-applying changes nothing, pins are judged from the
//! root's dpkg database, and in place the impact is the one `diff` gives.
//! The post-apply steps run for real in the boot suite's Debian root
//! (`boot::`); here they are skipped, as a pipeline does before its root
//! has the programs.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nodeimg::package::verifier::stand_in_elf;

use crate::support::oci::{self, E};
use crate::support::{cmd, stderr, stdout};

const SKIP_STEPS: [&str; 8] = [
    "--skip",
    "trust-store",
    "--skip",
    "units",
    "--skip",
    "initramfs",
    "--skip",
    "boot-loader",
];

/// Everything under `root` but apply's own state: kind, mode, owner, size,
/// content digest or link target, and a file's mtime (folder times change
/// whenever an entry is added and are not part of "byte for byte").
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).min_depth(1) {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.starts_with("var/lib/nodeimg/apply") {
            continue;
        }
        let m = e.path().symlink_metadata().unwrap();
        let what = if m.is_dir() {
            "dir".to_string()
        } else if m.file_type().is_symlink() {
            format!("link {}", std::fs::read_link(e.path()).unwrap().display())
        } else {
            format!(
                "file {} {} mtime {}",
                m.len(),
                crate::support::package::sha256(&std::fs::read(e.path()).unwrap()),
                m.mtime_nsec() + m.mtime() * 1_000_000_000
            )
        };
        out.insert(
            rel,
            format!(
                "{what} mode {:o} {}:{}",
                m.mode() & 0o7777,
                m.uid(),
                m.gid()
            ),
        );
    }
    out
}

/// A root as a node has it before the image: a merged /usr link, a file
/// the image replaces (with an old mtime), one it leaves alone.
fn base_root(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    for d in ["etc/containerd", "usr/lib", "var"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::os::unix::fs::symlink("usr/lib", root.join("lib")).unwrap();
    std::fs::write(
        root.join("etc/containerd/config.toml"),
        "# the package's own\n",
    )
    .unwrap();
    let old = std::fs::FileTimes::new()
        .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000));
    std::fs::File::options()
        .write(true)
        .open(root.join("etc/containerd/config.toml"))
        .unwrap()
        .set_times(old)
        .unwrap();
    std::fs::write(root.join("etc/hostname"), "node-a\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(root.join("etc/hostname"))
        .unwrap()
        .set_times(old)
        .unwrap();
    // What the debian12-cpu example's kernel package and util-linux put there, for the
    // static check of the root (the pinned kernel, the programs of the units it enables).
    std::fs::create_dir_all(root.join("usr/lib/modules/6.1.0-50-amd64")).unwrap();
    std::fs::create_dir_all(root.join("boot")).unwrap();
    std::fs::write(root.join("boot/vmlinuz-6.1.0-50-amd64"), "kernel\n").unwrap();
    std::fs::create_dir_all(root.join("usr/sbin")).unwrap();
    std::fs::write(root.join("usr/sbin/swapoff"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        root.join("usr/sbin/swapoff"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    for p in ["boot/vmlinuz-6.1.0-50-amd64", "usr/sbin/swapoff"] {
        std::fs::File::options()
            .write(true)
            .open(root.join(p))
            .unwrap()
            .set_times(old)
            .unwrap();
    }
    root
}

/// `nodeimg build` of an example (or an edited copy) with the stand-in verifier.
fn build(dir: &Path, name: &str, blueprint: &Path) -> PathBuf {
    let verifier = dir.join("verifier");
    if !verifier.exists() {
        std::fs::write(&verifier, stand_in_elf()).unwrap();
    }
    let out = dir.join(name);
    let o = cmd()
        .arg("build")
        .arg(blueprint)
        .arg("-o")
        .arg(&out)
        .arg("--verifier")
        .arg(&verifier)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn apply(args: &[&str]) -> std::process::Output {
    cmd().arg("apply").args(args).output().unwrap()
}

/// `apply IMAGE --root R --in-place --print-actions` without the root's steps; its JSON
/// report, the run asserted to pass.
fn in_place(image: &Path, root: &str) -> serde_json::Value {
    let mut args = vec![
        image.to_str().unwrap(),
        "--root",
        root,
        "--in-place",
        "--print-actions",
        "--format",
        "json",
    ];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    let report = json(&o);
    assert!(o.status.success(), "{report}");
    report
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)))
}

fn example(name: &str) -> PathBuf {
    crate::support::root()
        .join("blueprints")
        .join(format!("{name}.yaml"))
}

/// An edited copy of an example, written into `dir`.
fn edited(dir: &Path, name: &str, from: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let text = std::fs::read_to_string(example(from)).unwrap();
    let mut v: serde_json::Value = serde_yaml::from_str(&text).unwrap();
    edit(&mut v);
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(&p, serde_yaml::to_string(&v).unwrap()).unwrap();
    // (debian12-cpu names no overlay or certificate paths to keep relative.)
    p
}

#[test]
fn an_image_lands_whole_and_rollback_returns_the_root_byte_for_byte() {
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    let before = snapshot(&root);
    let image = build(t.path(), "img", &example("debian12-cpu"));
    let r = root.to_str().unwrap();

    let mut args = vec![image.to_str().unwrap(), "--root", r, "--format", "json"];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    let report = json(&o);
    // No dpkg database in this root: the pins fail, and say so.
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        report["packages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["ok"] == false)
    );
    let after = snapshot(&root);
    // The layers' files are there, with the layer's modes, through the root's /lib link.
    let lock = std::fs::read_to_string(root.join("etc/nodeimg/blueprint.lock.json")).unwrap();
    assert!(lock.contains("debian12-cpu"));
    assert!(
        after["usr/local/bin/nodeimg"].contains("mode 755"),
        "{}",
        after["usr/local/bin/nodeimg"]
    );
    assert!(after["etc/containerd/config.toml"].contains("mode 644"));
    assert_ne!(
        before["etc/containerd/config.toml"],
        after["etc/containerd/config.toml"]
    );
    assert_eq!(
        before["etc/hostname"], after["etc/hostname"],
        "a file the image does not name is left alone"
    );
    assert_eq!(
        report["saved"], 1,
        "only the replaced package file is saved: {report}"
    );
    // Every file of every layer, as tar lists them, is in the root.
    for rel in report["put"].as_array().unwrap() {
        let rel = rel.as_str().unwrap().trim_start_matches('/');
        assert!(after.contains_key(rel), "{rel} missing");
    }

    let o = apply(&[
        "--rollback",
        "--root",
        r,
        "--skip",
        "trust-store",
        "--skip",
        "units",
        "--skip",
        "initramfs",
        "--skip",
        "boot-loader",
    ]);
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "{}",
        stderr(&o)
    );
    let mut back = snapshot(&root);
    // apply's own state folder's parents are apply's.
    back.remove("var/lib");
    back.remove("var/lib/nodeimg");
    assert_eq!(
        before, back,
        "rollback is byte for byte, with modes, owners and mtimes"
    );
    let o = apply(&["--rollback", "--root", r]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "nothing left to roll back: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("no previous state"), "{}", stderr(&o));
}

/// A Debian root's dpkg database with what the debian12-cpu example pins
/// (a stand-in for a root built with those packages).
fn dpkg_status(root: &Path, containerd: &str) {
    std::fs::create_dir_all(root.join("var/lib/dpkg")).unwrap();
    let mut s = String::new();
    for (p, v) in [
        ("linux-image-6.1.0-50-amd64", "6.1.158-1"),
        ("containerd", containerd),
        ("kubelet", "1.31.4-1.1"),
    ] {
        s.push_str(&format!(
            "Package: {p}\nStatus: install ok installed\nVersion: {v}\n\n"
        ));
    }
    std::fs::write(root.join("var/lib/dpkg/status"), s).unwrap();
}

#[test]
fn pinned_packages_are_judged_from_the_roots_own_database() {
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    dpkg_status(&root, "1.7.24~ds1-6+b4");
    let image = build(t.path(), "img", &example("debian12-cpu"));
    let mut args = vec![image.to_str().unwrap(), "--root", root.to_str().unwrap()];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    // No policy given and none on the root: said, not silently passed over.
    assert!(
        stdout(&o).contains("signature not checked"),
        "{}",
        stdout(&o)
    );

    // Another containerd: the pin names it and the blueprint field.
    let t2 = tempfile::tempdir().unwrap();
    let root2 = base_root(t2.path());
    dpkg_status(&root2, "2.1.4-1");
    let mut args = vec![image.to_str().unwrap(), "--root", root2.to_str().unwrap()];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("runtime.containerd.version") && out.contains("containerd 2.1.4-1"),
        "{out}"
    );
}

#[test]
fn the_applied_root_is_checked_for_its_kernel_and_the_programs_its_units_run() {
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    dpkg_status(&root, "1.7.24~ds1-6+b4");
    std::fs::remove_file(root.join("usr/sbin/swapoff")).unwrap();
    std::fs::remove_dir(root.join("usr/lib/modules/6.1.0-50-amd64")).unwrap();
    let image = build(t.path(), "img", &example("debian12-cpu"));
    let mut args = vec![
        image.to_str().unwrap(),
        "--root",
        root.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert_eq!(o.status.code(), Some(1));
    let report = json(&o);
    let checks: BTreeMap<String, (String, String, String)> = report["root_checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                (
                    c["status"].as_str().unwrap().to_string(),
                    c["field"].as_str().unwrap().to_string(),
                    c["detail"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect();
    let (status, field, detail) = &checks["kernel.installed"];
    assert_eq!((status.as_str(), field.as_str()), ("fail", "os.kernel"));
    assert!(
        detail.contains("/lib/modules/6.1.0-50-amd64") && !detail.contains("vmlinuz"),
        "{detail}"
    );
    let (status, _, detail) = &checks["units.programs"];
    assert_eq!(status, "fail");
    assert!(
        detail.contains("/usr/sbin/swapoff (run by /etc/systemd/system/nodeimg-swapoff.service)"),
        "{detail}"
    );
    // Skipped steps leave their checks unjudged, never passed.
    assert_eq!(checks["boot.entries-carry-args"].0, "not-judged");
    // With them back, the check passes.
    std::fs::create_dir(root.join("usr/lib/modules/6.1.0-50-amd64")).unwrap();
    std::fs::write(root.join("usr/sbin/swapoff"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        root.join("usr/sbin/swapoff"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let o = apply(&args);
    assert!(o.status.success(), "{}", stdout(&o));
}

#[test]
fn applying_the_current_image_again_changes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    dpkg_status(&root, "1.7.24~ds1-6+b4");
    let image = build(t.path(), "img", &example("debian12-cpu"));
    let mut args = vec![image.to_str().unwrap(), "--root", root.to_str().unwrap()];
    args.extend(SKIP_STEPS);
    assert!(apply(&args).status.success());
    let state = root.join("var/lib/nodeimg/apply");
    let first = snapshot(&root);
    let undo = std::fs::read(state.join("previous/undo.json")).unwrap();
    let current_mtime = std::fs::metadata(state.join("current.json"))
        .unwrap()
        .modified()
        .unwrap();
    let o = apply(&args);
    assert!(o.status.success());
    assert!(stdout(&o).contains("already applied"), "{}", stdout(&o));
    assert_eq!(first, snapshot(&root));
    assert_eq!(
        undo,
        std::fs::read(state.join("previous/undo.json")).unwrap(),
        "the way back is kept"
    );
    assert_eq!(
        current_mtime,
        std::fs::metadata(state.join("current.json"))
            .unwrap()
            .modified()
            .unwrap()
    );

    // Drift: an owned file edited by hand is put back, the edit saved.
    std::fs::write(root.join("etc/sysctl.d/90-nodeimg.conf"), "edited\n").unwrap();
    let o = apply(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(first, snapshot(&root));
    let drift = std::fs::read_to_string(state.join("drift/undo.json")).unwrap();
    assert!(drift.contains("etc/sysctl.d/90-nodeimg.conf"), "{drift}");
    // Rollback still goes to the root before the image.
    let o = apply(&[
        "--rollback",
        "--root",
        root.to_str().unwrap(),
        "--only-steps",
        "trust-store",
        "--skip",
        "trust-store",
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(!root.join("etc/sysctl.d/90-nodeimg.conf").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("etc/containerd/config.toml")).unwrap(),
        "# the package's own\n"
    );
}

/// A Debian root holding the debian12-cpu image (`a`, applied as a pipeline does),
/// and the image of an edited copy (`b`) to apply next.
fn on_a_with_next(t: &Path, edit: impl Fn(&mut serde_json::Value)) -> (PathBuf, PathBuf, PathBuf) {
    let root = base_root(t);
    dpkg_status(&root, "1.7.24~ds1-6+b4");
    let a = build(t, "a", &example("debian12-cpu"));
    let b = build(t, "b", &edited(t, "b", "debian12-cpu", edit));
    let mut args = vec![a.to_str().unwrap(), "--root", root.to_str().unwrap()];
    args.extend(SKIP_STEPS);
    assert!(apply(&args).status.success());
    (root, a, b)
}

#[test]
fn a_second_image_in_place_and_back_with_the_impact_diff_gives() {
    let t = tempfile::tempdir().unwrap();
    let edit = |v: &mut serde_json::Value| {
        v["metadata"]["version"] = "2026.12.2".into();
        v["security"]["sysctls"]["kernel.panic"] = 30.into();
    };
    let (root, _, b) = on_a_with_next(t.path(), edit);
    let bp_b = t.path().join("b.yaml");
    let r = root.to_str().unwrap();
    let on_a = snapshot(&root);

    let report = in_place(&b, r);
    let d = cmd()
        .args(["diff", "--format", "json", "--no-files"])
        .arg(example("debian12-cpu"))
        .arg(&bp_b)
        .output()
        .unwrap();
    let diff: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    assert_eq!(
        report["impact"], diff["impact"],
        "apply and diff read one impact class"
    );
    assert_eq!(report["impact"], "live");
    let commands: Vec<&str> = report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        ["systemctl daemon-reload", "sysctl --system"],
        "{report}"
    );
    assert!(
        std::fs::read_to_string(root.join("etc/sysctl.d/90-nodeimg.conf"))
            .unwrap()
            .contains("kernel.panic = 30")
    );

    let o = apply(&[
        "--rollback",
        "--root",
        r,
        "--in-place",
        "--print-actions",
        "--format",
        "json",
        "--skip",
        "trust-store",
        "--skip",
        "units",
        "--skip",
        "initramfs",
        "--skip",
        "boot-loader",
    ]);
    let report = json(&o);
    assert!(o.status.success(), "{report}");
    assert_eq!(on_a, snapshot(&root), "back on image a, byte for byte");
    assert_eq!(report["impact"], "live");
}

#[test]
fn a_reboot_change_is_on_trial_and_goes_back_by_itself_after_its_attempts() {
    let t = tempfile::tempdir().unwrap();
    let (root, _, b) = on_a_with_next(t.path(), |v| {
        v["metadata"]["version"] = "2026.12.3".into();
        v["boot"]["kernelArgs"]["required"]
            .as_array_mut()
            .unwrap()
            .push("nowatchdog".into());
        v["rollout"] = serde_json::json!({"bootAttempts": 2});
    });
    let r = root.to_str().unwrap();
    let on_a = snapshot(&root);
    let report = in_place(&b, r);
    assert_eq!(report["impact"], "reboot");
    assert_eq!(report["trial"]["attempts"], 2);
    assert_eq!(
        report["actions"].as_array().unwrap().last().unwrap()["command"],
        "systemctl --no-block reboot"
    );
    let on_b = snapshot(&root);

    let trial = |extra: &[&str]| {
        let mut a = vec!["--root", r, "--print-actions"];
        a.extend(extra);
        a.extend(SKIP_STEPS);
        apply(&a)
    };
    // Two boots whose verify fails: each reboots for the next attempt.
    for boot in 1..=2 {
        let o = trial(&["--boot-trial"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("\"boot\":{boot}")),
            "{}",
            stderr(&o)
        );
        let o = trial(&["--boot-failed"]);
        assert!(stderr(&o).contains("reboot"), "{}", stderr(&o));
        assert_eq!(on_b, snapshot(&root), "still on b during its attempts");
    }
    // The third boot: attempts spent, back to a and a reboot into it.
    let o = trial(&["--boot-trial", "--format", "json"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("exhausted"), "{}", stderr(&o));
    assert_eq!(on_a, snapshot(&root), "back on a, byte for byte");
    let failed: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("var/lib/nodeimg/apply/trial-failed.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(failed["boots"], 2);
    assert!(failed["image"].as_str().unwrap().starts_with("sha256:"));
    // The next boot of a has no trial: verify failing does not reboot.
    let o = trial(&["--boot-failed"]);
    assert!(stderr(&o).contains("no image on trial"), "{}", stderr(&o));
}

#[test]
fn a_good_boot_blesses_the_image() {
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    let r = root.to_str().unwrap();
    let layout = t.path().join("img");
    oci::layout(&layout, &[oci::layer(&[E::File("etc/x", 0o644, b"x\n")])]);
    let o = apply(&[layout.to_str().unwrap(), "--root", r]);
    assert!(o.status.success(), "{}", stderr(&o));
    let state = root.join("var/lib/nodeimg/apply");
    std::fs::write(
        state.join("trial.json"),
        r#"{"image":"sha256:x","attempts":3,"boots":1}"#,
    )
    .unwrap();
    let o = apply(&["--bless", "--root", r]);
    assert!(stderr(&o).contains("boot good"), "{}", stderr(&o));
    assert!(!state.join("trial.json").exists());
}

#[test]
fn layers_follow_the_oci_rules_whiteouts_opaque_folders_and_links() {
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    std::fs::create_dir_all(root.join("opt/vendor/sub")).unwrap();
    std::fs::write(root.join("opt/vendor/old.conf"), "old\n").unwrap();
    std::fs::write(root.join("opt/vendor/sub/deep"), "deep\n").unwrap();
    std::fs::write(root.join("etc/motd"), "welcome\n").unwrap();
    let before = snapshot(&root);
    let layout = t.path().join("img");
    oci::layout(
        &layout,
        &[
            oci::layer(&[
                E::Dir("etc/", 0o755),
                E::File("etc/a", 0o600, b"a1\n"),
                E::File("etc/b", 0o644, b"b\n"),
                E::Dir("srv/", 0o755),
                E::File("srv/gone", 0o644, b"g\n"),
            ]),
            oci::layer(&[
                E::File("etc/a", 0o640, b"a2\n"),
                E::File("etc/.wh.b", 0o644, b""),
                E::File("etc/.wh.motd", 0o644, b""),
                E::File("srv/.wh.gone", 0o644, b""),
                E::Dir("opt/vendor/", 0o755),
                E::File("opt/vendor/.wh..wh..opq", 0o644, b""),
                E::File("opt/vendor/new.conf", 0o644, b"new\n"),
                E::Hard("etc/a-again", "etc/a"),
                E::Link("etc/alink", "/etc/a"),
            ]),
        ],
    );
    let r = root.to_str().unwrap();
    let o = apply(&[layout.to_str().unwrap(), "--root", r]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let after = snapshot(&root);
    assert!(
        after["etc/a"].contains("mode 640"),
        "upper layer wins: {}",
        after["etc/a"]
    );
    assert_eq!(std::fs::read(root.join("etc/a")).unwrap(), b"a2\n");
    assert_eq!(
        std::fs::read(root.join("etc/a-again")).unwrap(),
        b"a2\n",
        "a hard link is a copy of its file"
    );
    assert!(!root.join("etc/b").exists(), "whited out in the image");
    assert!(
        !root.join("etc/motd").exists(),
        "a whiteout removes the root's own file"
    );
    assert!(!root.join("srv/gone").exists());
    assert!(
        !root.join("opt/vendor/old.conf").exists() && !root.join("opt/vendor/sub").exists(),
        "opaque: the root's content is hidden"
    );
    assert_eq!(
        std::fs::read(root.join("opt/vendor/new.conf")).unwrap(),
        b"new\n"
    );
    assert_eq!(
        std::fs::read_link(root.join("etc/alink")).unwrap(),
        Path::new("/etc/a")
    );
    // Rollback brings back what the whiteouts and the opaque folder removed.
    let o = apply(&["--rollback", "--root", r]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut back = snapshot(&root);
    back.remove("var/lib");
    back.remove("var/lib/nodeimg");
    assert_eq!(before, back);
}

#[test]
fn an_image_that_would_land_outside_the_root_or_is_tampered_is_refused_untouched() {
    let cases: Vec<(&str, Vec<Vec<u8>>, &str)> = vec![
        (
            "climbs",
            vec![oci::layer(&[E::RawFile("../escape", b"x")])],
            "climbs out",
        ),
        (
            "link parent",
            vec![oci::layer(&[
                E::Link("etc/evil", "/tmp"),
                E::File("etc/evil/owned", 0o644, b"x"),
            ])],
            "symbolic link",
        ),
        (
            "link parent, two layers",
            vec![
                oci::layer(&[E::Link("etc/evil", "../../")]),
                oci::layer(&[E::File("etc/evil/owned", 0o644, b"x")]),
            ],
            "symbolic link",
        ),
        (
            "device",
            vec![oci::layer(&[E::Char("dev/mem2")])],
            "device nodes",
        ),
        (
            "state",
            vec![oci::layer(&[E::File(
                "var/lib/nodeimg/apply/current.json",
                0o644,
                b"{}",
            )])],
            "own state",
        ),
    ];
    for (name, layers, expect) in cases {
        let t = tempfile::tempdir().unwrap();
        let root = base_root(t.path());
        let before = snapshot(&root);
        let layout = t.path().join("img");
        oci::layout(&layout, &layers);
        let o = apply(&[layout.to_str().unwrap(), "--root", root.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(expect), "{name}: {}", stderr(&o));
        let mut after = snapshot(&root);
        after.remove("var/lib");
        after.remove("var/lib/nodeimg");
        assert_eq!(before, after, "{name}: the root is untouched");
        assert!(!t.path().join("escape").exists() && !Path::new("/tmp/owned").exists());
    }
    // A blob altered after the build: refused, nothing applied.
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    let before = snapshot(&root);
    let layout = t.path().join("img");
    let layer = oci::layer(&[E::File("etc/x", 0o644, b"good\n")]);
    oci::layout(&layout, std::slice::from_ref(&layer));
    let hex = crate::support::package::sha256(&layer);
    let blob = layout
        .join("blobs/sha256")
        .join(hex.strip_prefix("sha256:").unwrap());
    let mut bytes = std::fs::read(&blob).unwrap();
    let at = bytes.windows(5).position(|w| w == b"good\n").unwrap();
    bytes[at] = b'e';
    std::fs::write(&blob, bytes).unwrap();
    let o = apply(&[layout.to_str().unwrap(), "--root", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("does not match its descriptor"),
        "{}",
        stderr(&o)
    );
    let mut after = snapshot(&root);
    after.remove("var/lib");
    after.remove("var/lib/nodeimg");
    assert_eq!(before, after);
}

#[test]
fn a_kill_at_every_step_is_completed_by_the_next_run() {
    let t = tempfile::tempdir().unwrap();
    let image = build(t.path(), "img", &example("debian12-cpu"));
    // The tree a clean apply leaves, and the one a clean rollback leaves.
    let clean = {
        let d = t.path().join("clean");
        std::fs::create_dir(&d).unwrap();
        let root = base_root(&d);
        let mut args = vec![image.to_str().unwrap(), "--root", root.to_str().unwrap()];
        args.extend(SKIP_STEPS);
        apply(&args);
        snapshot(&root)
    };
    let points = [
        "staged",
        "saved",
        "installing:1",
        "installing:20",
        "installing:40",
        "installed",
        "committing",
    ];
    for point in points {
        let d = t.path().join(point.replace(':', "-"));
        std::fs::create_dir(&d).unwrap();
        let root = base_root(&d);
        let before = snapshot(&root);
        let mut args = vec![image.to_str().unwrap(), "--root", root.to_str().unwrap()];
        args.extend(SKIP_STEPS);
        let o = cmd()
            .arg("apply")
            .args(&args)
            .env("NODEIMG_APPLY_KILL_AT", point)
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            o.status.signal(),
            Some(9),
            "{point}: killed there ({})",
            stderr(&o)
        );
        let o = apply(&args);
        assert_eq!(o.status.code(), Some(1), "{point}: {}", stderr(&o)); // the pins, as in the clean run
        assert_eq!(
            clean,
            snapshot(&root),
            "{point}: the rerun leaves the tree a clean apply leaves"
        );
        assert!(
            !root.join("var/lib/nodeimg/apply/staging").exists()
                && !root.join("var/lib/nodeimg/apply/next").exists()
        );
        // And a kill in the rollback, completed by `--recover`.
        let o = cmd()
            .args(["apply", "--rollback", "--root", root.to_str().unwrap()])
            .env("NODEIMG_APPLY_KILL_AT", "restored")
            .output()
            .unwrap();
        assert_eq!(o.status.signal(), Some(9));
        let o = apply(&["--recover", "--root", root.to_str().unwrap()]);
        assert!(
            stdout(&o).contains("interrupted Rollback"),
            "{}",
            stdout(&o)
        );
        let mut back = snapshot(&root);
        back.remove("var/lib");
        back.remove("var/lib/nodeimg");
        assert_eq!(before, back, "{point}: rolled back whole after a kill");
    }
}

#[test]
fn a_rerun_after_a_failed_pin_keeps_the_impact_of_the_change() {
    let t = tempfile::tempdir().unwrap();
    let (root, _, b) = on_a_with_next(t.path(), |v| {
        v["metadata"]["version"] = "2026.12.4".into();
        v["boot"]["kernelArgs"]["required"]
            .as_array_mut()
            .unwrap()
            .push("nowatchdog".into());
    });
    let r = root.to_str().unwrap();
    // containerd at another version: the pin fails, nothing is armed or rebooted.
    dpkg_status(&root, "2.1.4-1");
    let mut args = vec![
        b.to_str().unwrap(),
        "--root",
        r,
        "--in-place",
        "--print-actions",
        "--format",
        "json",
    ];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    let report = json(&o);
    assert_eq!(o.status.code(), Some(1), "{report}");
    assert_eq!(report["impact"], "reboot");
    assert!(
        report["trial"].is_null() && report["actions"].as_array().unwrap().is_empty(),
        "{report}"
    );
    // Fixed: the rerun applies the same image, and still knows it needs a reboot.
    dpkg_status(&root, "1.7.24~ds1-6+b4");
    let o = apply(&args);
    let report = json(&o);
    assert!(o.status.success(), "{report}");
    assert_eq!(report["impact"], "reboot", "{report}");
    assert_eq!(report["trial"]["attempts"], 3, "{report}");
    assert!(!root.join("var/lib/nodeimg/apply/impact.json").exists());
    // And once done, the same image again changes and arms nothing.
    let o = apply(&args);
    let report = json(&o);
    assert!(
        o.status.success() && report["unchanged"] == true && report["trial"].is_null(),
        "{report}"
    );
}

/// The receipt (`var/lib/nodeimg/image/`) of the image applied to `root`: its index
/// and which blobs it holds.
fn receipt(root: &Path) -> (serde_json::Value, Vec<String>) {
    let dir = root.join("var/lib/nodeimg/image");
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
    let mut blobs: Vec<String> = std::fs::read_dir(dir.join("blobs/sha256"))
        .unwrap()
        .map(|e| format!("sha256:{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    blobs.sort();
    (index, blobs)
}

#[test]
fn the_node_keeps_a_receipt_of_its_image_and_applying_the_image_before_is_the_rollback() {
    let t = tempfile::tempdir().unwrap();
    let (root, a, b) = on_a_with_next(t.path(), |v| {
        v["metadata"]["version"] = "2026.12.2".into();
        v["security"]["sysctls"]["kernel.panic"] = 30.into();
    });
    let r = root.to_str().unwrap();
    let on_a = snapshot(&root);

    // The receipt names image a and holds its manifest, config and configuration
    // layer (the one with the lock), each with the digest its name gives, and not the
    // verifier's layer.
    let manifest_of = |layout: &Path| crate::support::oci::image_manifest(layout).0;
    let (index, blobs) = receipt(&root);
    assert_eq!(index["manifests"][0]["digest"], manifest_of(&a).as_str());
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            a.join("blobs/sha256")
                .join(manifest_of(&a).trim_start_matches("sha256:")),
        )
        .unwrap(),
    )
    .unwrap();
    let roles: Vec<(&str, &str)> = manifest["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["annotations"]["dev.nodeimg.layer.role"].as_str().unwrap(),
                l["digest"].as_str().unwrap(),
            )
        })
        .collect();
    let mut want: Vec<String> = vec![
        manifest_of(&a),
        manifest["config"]["digest"].as_str().unwrap().to_owned(),
    ];
    want.extend(
        roles
            .iter()
            .filter(|(role, _)| *role == "config")
            .map(|(_, d)| d.to_string()),
    );
    // And what is about the image (its SBOMs): each manifest and its blobs.
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("index.json")).unwrap()).unwrap();
    for entry in index["manifests"].as_array().unwrap() {
        let d = entry["digest"].as_str().unwrap();
        if d == manifest_of(&a) {
            continue;
        }
        want.push(d.to_owned());
        let m: serde_json::Value = serde_json::from_slice(
            &std::fs::read(a.join("blobs/sha256").join(d.trim_start_matches("sha256:"))).unwrap(),
        )
        .unwrap();
        want.push(m["config"]["digest"].as_str().unwrap().to_owned());
        for l in m["layers"].as_array().unwrap() {
            want.push(l["digest"].as_str().unwrap().to_owned());
        }
    }
    want.sort();
    want.dedup();
    assert_eq!(blobs, want, "{roles:?}");
    for d in &blobs {
        let bytes = std::fs::read(
            root.join("var/lib/nodeimg/image/blobs/sha256")
                .join(d.trim_start_matches("sha256:")),
        )
        .unwrap();
        assert_eq!(&crate::support::package::sha256(&bytes), d);
    }

    // Image b in place: the receipt is b's.
    let mut args = vec![
        b.to_str().unwrap(),
        "--root",
        r,
        "--in-place",
        "--print-actions",
    ];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        receipt(&root).0["manifests"][0]["digest"],
        manifest_of(&b).as_str()
    );

    // Image a again (what a rollback Plan runs): the exact rollback, a's receipt back.
    let report = in_place(&a, r);
    assert_eq!(report["op"], "rollback", "{report}");
    assert!(
        report["reasons"][0]
            .as_str()
            .unwrap()
            .contains("the exact rollback"),
        "{report}"
    );
    assert_eq!(on_a, snapshot(&root), "back on image a, byte for byte");
}

#[cfg(feature = "push")]
#[test]
#[ignore = "opt-in suite `real-tools`: runs docker-registry (cargo test -- --ignored)"]
fn an_image_is_applied_from_a_registry_by_digest_and_a_tag_alone_is_refused() {
    let reg = crate::support::registry::Registry::start(None);
    let t = tempfile::tempdir().unwrap();
    let root = base_root(t.path());
    let a = build(t.path(), "a", &example("debian12-cpu"));
    let name = format!("{}/nodes/debian12-cpu", reg.host());
    let o = cmd()
        .args(["push", "--insecure", "--format", "json"])
        .arg(&a)
        .arg(format!("{name}:v1"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let digest = json(&o)["digest"].as_str().unwrap().to_owned();
    let r = root.to_str().unwrap();

    // By tag alone: refused before any request, the root untouched.
    let before = snapshot(&root);
    let by_tag = format!("{name}:v1");
    let mut args = vec![
        by_tag.as_str(),
        "--root",
        r,
        "--insecure",
        "--no-package-check",
    ];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--allow-tag"), "{}", stderr(&o));
    assert_eq!(before, snapshot(&root));

    // By digest with a key the registry holds no signature of: refused, untouched.
    let key = crate::support::keys::pair(t.path(), "site", 7);
    let by_digest = format!("docker://{name}@{digest}");
    let key_pub = key.public.to_str().unwrap();
    let mut args = vec![
        by_digest.as_str(),
        "--root",
        r,
        "--insecure",
        "--no-package-check",
        "--key",
        key_pub,
        "--format",
        "json",
    ];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refused by --key"), "{}", stderr(&o));
    assert_eq!(before, snapshot(&root));

    // Signed in the registry (cosign's `sha256-<hex>.sig` tag), then pulled by digest
    // (docker:// as skopeo writes it): the signature comes along, names this repository,
    // and the image is applied.
    let o = cmd()
        .args(["sign", "--insecure", "--key"])
        .arg(&key.private)
        .arg(format!("{name}@{digest}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = apply(&args);
    let report = json(&o);
    assert!(o.status.success(), "{report}\n{}", stderr(&o));
    assert_eq!(report["signature"]["signature"], "verified", "{report}");
    assert_eq!(report["image"], digest.as_str());
    assert_eq!(receipt(&root).0["manifests"][0]["digest"], digest.as_str());
    assert!(
        std::fs::read_to_string(root.join("etc/nodeimg/blueprint.lock.json")).is_ok(),
        "the lock landed"
    );
    // Nothing of the pull is left in the temporary folder.
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let o = cmd()
        .arg("apply")
        .args(&args)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);

    // A registry that is not there: exit 1, nothing changed.
    let gone = format!(
        "127.0.0.1:{}/nodes/x@{digest}",
        crate::support::registry::free_port()
    );
    let after = snapshot(&root);
    let mut args = vec![
        gone.as_str(),
        "--root",
        r,
        "--insecure",
        "--no-package-check",
    ];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(after, snapshot(&root));
}

/// A bind mount, undone when dropped.
#[cfg(feature = "push")]
struct Bind(PathBuf);

#[cfg(feature = "push")]
impl Drop for Bind {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[cfg(feature = "push")]
#[test]
#[ignore = "opt-in suite `real-tools`: runs docker-registry, chroot and mount as root, needs scripts/build-verifier (cargo test -- --ignored)"]
fn the_node_image_applies_itself_from_its_own_container() {
    let reg = crate::support::registry::Registry::start(None);
    let t = tempfile::tempdir().unwrap();
    let host = base_root(t.path());
    let out = t.path().join("image");
    let o = cmd()
        .arg("build")
        .arg(example("debian12-cpu"))
        .arg("-o")
        .arg(&out)
        .arg("--verifier")
        .arg(crate::support::static_verifier())
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let name = format!("{}/nodes/debian12-cpu", reg.host());
    let o = cmd()
        .args(["push", "--insecure", "--format", "json"])
        .arg(&out)
        .arg(format!("{name}:v1"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let digest = json(&o)["digest"].as_str().unwrap().to_owned();

    // The container a Plan starts: the image's layers unpacked as a runtime unpacks them
    // (GNU tar, in manifest order), the host's root at /host. It holds no libc.
    let container = t.path().join("container");
    std::fs::create_dir(&container).unwrap();
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            out.join("blobs/sha256")
                .join(digest.trim_start_matches("sha256:")),
        )
        .unwrap(),
    )
    .unwrap();
    for layer in manifest["layers"].as_array().unwrap() {
        let blob = out.join("blobs/sha256").join(
            layer["digest"]
                .as_str()
                .unwrap()
                .trim_start_matches("sha256:"),
        );
        let st = std::process::Command::new("tar")
            .args(["--zstd", "-xf"])
            .arg(&blob)
            .arg("-C")
            .arg(&container)
            .status()
            .expect("GNU tar");
        assert!(st.success());
    }
    assert!(
        walkdir::WalkDir::new(&container)
            .into_iter()
            .filter_map(Result::ok)
            .all(|e| !e.file_name().to_string_lossy().starts_with("libc.so")),
        "the image holds no libc: the applier must need none"
    );
    // What every runtime gives a container (/dev with urandom, /proc), and the host's
    // root at /host as system-upgrade-controller mounts it.
    let mut binds = Vec::new();
    for (from, to) in [
        (Path::new("/dev"), "dev"),
        (Path::new("/proc"), "proc"),
        (host.as_path(), "host"),
    ] {
        std::fs::create_dir_all(container.join(to)).unwrap();
        let st = std::process::Command::new("mount")
            .arg("--bind")
            .arg(from)
            .arg(container.join(to))
            .status()
            .unwrap();
        assert!(st.success(), "mount --bind {} (needs root)", from.display());
        binds.push(Bind(container.join(to)));
    }

    // What the Plan runs: the image's own nodeimg, the image by digest.
    let reference = format!("{name}@{digest}");
    let run = || {
        let mut c = std::process::Command::new("/usr/sbin/chroot");
        c.arg(&container)
            .args([
                "/usr/local/bin/nodeimg",
                "apply",
                "--in-place",
                "--root",
                "/host",
            ])
            .arg(&reference)
            .args([
                "--insecure",
                "--print-actions",
                "--no-package-check",
                "--format",
                "json",
            ])
            .args(SKIP_STEPS)
            .env_clear()
            .env("PATH", "/usr/local/bin")
            .env("TMPDIR", "/host/var/tmp");
        c.output().expect("chroot")
    };
    std::fs::create_dir_all(host.join("var/tmp")).unwrap();
    let o = run();
    let report = json(&o);
    assert!(o.status.success(), "{report}\n{}", stderr(&o));
    assert_eq!(report["image"], digest.as_str());
    assert_eq!(receipt(&host).0["manifests"][0]["digest"], digest.as_str());
    assert!(host.join("etc/nodeimg/blueprint.lock.json").is_file());
    assert_eq!(
        std::fs::read(host.join("usr/local/bin/nodeimg")).unwrap(),
        std::fs::read(crate::support::static_verifier()).unwrap(),
        "the image's nodeimg is on the host now"
    );
    assert_eq!(std::fs::read_dir(host.join("var/tmp")).unwrap().count(), 0);

    // The Job run again (a retried Pod): nothing changes.
    let o = run();
    let report = json(&o);
    assert!(o.status.success(), "{report}");
    assert_eq!(report["unchanged"], true, "{report}");
}

/// `nodeimg sign LAYOUT --key KEY`, asserted to pass.
fn sign(layout: &Path, key: &Path) {
    let o = cmd()
        .arg("sign")
        .arg(layout)
        .arg("--key")
        .arg(key)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn an_image_is_applied_only_when_the_trust_policy_trusts_its_signature() {
    use crate::support::keys::pair;
    let t = tempfile::tempdir().unwrap();
    let site = pair(t.path(), "site", 1);
    let other = pair(t.path(), "other", 2);
    let trusting = |v: &mut serde_json::Value| {
        v["security"]["imageTrust"] =
            serde_json::json!({"keys": [{"name": "site", "file": "site.pub"}], "require": true});
    };
    let bp_a = edited(t.path(), "a", "debian12-cpu", trusting);
    let a = build(t.path(), "a", &bp_a);
    let root = base_root(t.path());
    dpkg_status(&root, "1.7.24~ds1-6+b4");
    let r = root.to_str().unwrap();

    // A first apply onto a root without a policy takes the pipeline's: unsigned, refused,
    // and nothing of the root changed.
    let before = snapshot(&root);
    let site_pub = site.public.to_str().unwrap();
    let mut args = vec![a.to_str().unwrap(), "--root", r, "--key", site_pub];
    args.extend(SKIP_STEPS);
    let o = apply(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refused by --key"), "{}", stderr(&o));
    assert_eq!(before, snapshot(&root), "the root is untouched");
    sign(&a, &site.private);
    args.extend(["--format", "json"]);
    let o = apply(&args);
    let report = json(&o);
    assert!(o.status.success(), "{report}\n{}", stderr(&o));
    assert_eq!(report["signature"]["signature"], "verified", "{report}");
    assert!(
        report["signature"]["signed_by"]
            .as_str()
            .unwrap()
            .contains(&site.id),
        "{report}"
    );

    // The next image is judged by the policy the root now runs (its lock and the key
    // it put under /etc/nodeimg/trust), not by keys the new image brings.
    let b = build(
        t.path(),
        "b",
        &edited(t.path(), "b", "debian12-cpu", |v| {
            trusting(v);
            v["metadata"]["version"] = "2026.12.5".into();
            v["security"]["sysctls"]["kernel.panic"] = 30.into();
        }),
    );
    let on_a = snapshot(&root);
    for (case, key) in [("unsigned", None), ("signed by another key", Some(&other))] {
        if let Some(k) = key {
            sign(&b, &k.private);
        }
        let mut args = vec![
            b.to_str().unwrap(),
            "--root",
            r,
            "--in-place",
            "--print-actions",
        ];
        args.extend(SKIP_STEPS);
        let o = apply(&args);
        assert_eq!(o.status.code(), Some(2), "{case}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("refused by this root's trust policy"),
            "{case}: {}",
            stderr(&o)
        );
        assert_eq!(on_a, snapshot(&root), "{case}: the root is untouched");
    }
    sign(&b, &site.private);
    let report = in_place(&b, r);
    assert_eq!(report["signature"]["signature"], "verified", "{report}");
    assert!(
        std::fs::read_to_string(root.join("etc/sysctl.d/90-nodeimg.conf"))
            .unwrap()
            .contains("kernel.panic = 30")
    );
}
