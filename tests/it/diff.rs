//! `nodeimg diff` between example variants classifies each change: kernel →
//! reboot, kubelet settings → drain (with both sides' arithmetic), labels and
//! log rotation → live; identical blueprints exit 0, different ones exit 1.

use crate::support::*;
use nodeimg::blueprint::yaml_path::YamlPath;
use nodeimg::diff::{compare, impact::Impact};
use serde_json::json;

/// The H100 example, to edit.
fn h100() -> Variant {
    Variant::of("h100-sxm-ubuntu")
}

/// The H100 example against `new`.
fn diff_of(new: Variant) -> nodeimg::diff::Report {
    let old = example("h100-sxm-ubuntu");
    let new = new.load();
    compare(&old, &rendered(&old), &new, &rendered(&new))
}

#[test]
fn kernel_change_needs_a_reboot() {
    let r = diff_of(h100().set("os.kernel", json!("5.15.0-172-generic")));
    assert_eq!(r.fields.len(), 1);
    assert_eq!(r.fields[0].path, "os.kernel");
    assert_eq!(r.fields[0].impact, Impact::Reboot);
    assert_eq!(r.impact, Some(Impact::Reboot));
}

#[test]
fn kernel_argument_change_needs_a_reboot_through_its_files() {
    let v = h100();
    assert_eq!(
        v.get("boot.kernelArgs.required[1]"),
        Some(&json!("init_on_alloc=0"))
    );
    let r = diff_of(v.set("boot.kernelArgs.required[1]", json!("init_on_alloc=1")));
    let files: Vec<(&str, Impact)> = r
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.impact))
        .collect();
    assert!(
        !files.iter().any(|(p, _)| *p == "layer/etc/kernel/cmdline"),
        "no partial /etc/kernel/cmdline: {files:?}"
    );
    assert!(
        files.contains(&("layer/etc/default/grub.d/50-nodeimg.cfg", Impact::Reboot)),
        "{files:?}"
    );
    assert_eq!(r.impact, Some(Impact::Reboot));
}

#[test]
fn max_pods_drains_and_shows_both_sides_of_the_arithmetic() {
    let r = diff_of(h100().set("kubernetes.kubelet.maxPods", json!(250)));
    assert_eq!(r.impact, Some(Impact::Drain));
    let mem = r
        .computed
        .iter()
        .find(|c| c.path == "kubernetes.kubelet.kubeReserved.memory")
        .unwrap();
    assert_eq!((mem.old.as_str(), mem.new.as_str()), ("1465Mi", "3005Mi"));
    assert_eq!(
        mem.old_how,
        "policy eks: 11Mi × maxPods 110 + 255Mi = 1465Mi"
    );
    assert_eq!(
        mem.new_how,
        "policy eks: 11Mi × maxPods 250 + 255Mi = 3005Mi"
    );
    let kubelet = r
        .files
        .iter()
        .find(|f| f.path == "layer/etc/kubernetes/kubelet.conf.d/50-nodeimg.conf")
        .unwrap();
    assert_eq!(kubelet.impact, Impact::Drain);
    assert!(
        kubelet.diff.contains("-maxPods: 110") && kubelet.diff.contains("+maxPods: 250"),
        "{}",
        kubelet.diff
    );
}

#[test]
fn labels_and_log_rotation_apply_live() {
    let label = YamlPath::parse("kubernetes.labels").key("platform.example.com/node-class");
    let r = diff_of(
        h100()
            .set_at(&label, json!("h100-sxm-b"))
            .set("system.logs.rotate[0].keep", json!(14)),
    );
    assert_eq!(r.impact, Some(Impact::Live), "{:?}", r.fields);
    assert!(r.fields.iter().all(|f| f.impact == Impact::Live));
    assert!(
        r.files
            .iter()
            .any(|f| f.path == "layer/etc/logrotate.d/nodeimg")
    );
}

#[test]
fn containerd_upgrade_drains() {
    let r = diff_of(h100().set("runtime.containerd.version", json!("2.1.5")));
    assert_eq!(r.impact, Some(Impact::Drain));
    assert!(
        r.fields
            .iter()
            .any(|f| f.path == "runtime.containerd.version" && f.impact == Impact::Drain)
    );
}

#[test]
fn cli_exit_codes_and_json() {
    let same = crate::support::cmd()
        .args([
            "diff",
            "blueprints/cpu-minimal.yaml",
            "blueprints/cpu-minimal.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&same.stdout).contains("No change"));
    let other = crate::support::cmd()
        .args([
            "diff",
            "--format",
            "json",
            "blueprints/cpu-minimal.yaml",
            "blueprints/h100-sxm-ubuntu.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(v["impact"], "reboot");
    assert!(v["fields"].as_array().unwrap().len() > 20);
    let bad = crate::support::cmd()
        .args([
            "diff",
            "blueprints/cpu-minimal.yaml",
            "tests/fixtures/invalid/bad-quantity.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// The MI300X example against `new`.
fn diff_mi300x(new: Variant) -> nodeimg::diff::Report {
    let old = example("mi300x-rhel");
    let new = new.load();
    compare(&old, &rendered(&old), &new, &rendered(&new))
}

#[test]
fn every_rendered_file_has_a_declared_impact() {
    for name in EXAMPLES {
        let r = rendered(&example(name));
        let paths = r
            .layer
            .files()
            .map(|(p, _, _)| format!("layer/{p}"))
            .chain(r.cluster.files().map(|(p, _, _)| format!("cluster/{p}")));
        for p in paths {
            assert!(r.impacts.contains_key(&p), "{name}: {p} has no impact");
        }
    }
    // A file nobody declared is the most disruptive, never live.
    let r = rendered(&example("cpu-minimal"));
    assert_eq!(r.impact_of("layer/etc/new-daemon.conf").0, Impact::Reboot);
}

/// The JSON Schema node at a dotted blueprint path, following `$ref`s.
fn schema_at<'a>(root: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    let deref = |mut v: &'a serde_json::Value| {
        for _ in 0..16 {
            let Some(r) = v.get("$ref").and_then(|r| r.as_str()) else {
                break;
            };
            v = root.pointer(r.strip_prefix('#')?)?;
        }
        // Optional fields are `anyOf: [{$ref}, {type: null}]`.
        if let Some(any) = v.get("anyOf").and_then(|a| a.as_array()) {
            for alt in any {
                if alt.get("$ref").is_some() {
                    return Some(alt);
                }
            }
        }
        Some(v)
    };
    let mut cur = deref(root)?;
    for part in path.split('.') {
        cur = deref(cur)?;
        if cur.get("$ref").is_some() {
            cur = deref(cur)?;
        }
        let next = cur
            .get("properties")
            .and_then(|p| p.get(part))
            .or_else(|| {
                // A list: look into its items.
                cur.get("items")
                    .and_then(&deref)
                    .and_then(|i| i.get("properties"))
                    .and_then(|p| p.get(part))
            })?;
        cur = next;
    }
    Some(cur)
}

#[test]
fn every_field_impact_names_a_schema_path_and_every_section_has_one() {
    let schema = nodeimg::blueprint::schema::document();
    for (prefix, _, _) in nodeimg::diff::impact::FIELDS {
        assert!(
            schema_at(&schema, prefix).is_some(),
            "impact table row `{prefix}` names no blueprint field"
        );
    }
    let top = schema["properties"].as_object().unwrap();
    for section in top.keys() {
        if ["apiVersion", "kind"].contains(&section.as_str()) {
            continue;
        }
        let (_, why) = nodeimg::diff::impact::of_field(&format!("{section}.x"));
        assert_ne!(
            why, "unclassified change",
            "section `{section}` has no impact row"
        );
    }
}

#[test]
fn cpu_manager_policy_says_to_delete_the_state_file() {
    let r = diff_of(h100().set("kubernetes.kubelet.cpuManagerPolicy", json!("none")));
    assert_eq!(r.impact, Some(Impact::Drain));
    let f = r
        .fields
        .iter()
        .find(|f| f.path == "kubernetes.kubelet.cpuManagerPolicy")
        .unwrap();
    assert!(f.why.contains("cpu_manager_state"), "{}", f.why);
    assert!(
        r.reasons.iter().any(|w| w.contains("cpu_manager_state")),
        "{:?}",
        r.reasons
    );
}

#[test]
fn summary_reasons_are_actions_without_nested_wording() {
    let r = diff_of(h100().set("kubernetes.kubelet.maxPods", json!(64)));
    assert_eq!(r.impact, Some(Impact::Drain));
    for w in &r.reasons {
        assert!(!w.contains("configuration ("), "{w}");
    }
    assert!(
        r.reasons.iter().any(|w| w.starts_with("restart kubelet")),
        "{:?}",
        r.reasons
    );
}

#[test]
fn an_operator_owned_driver_bump_is_the_operators_rollout() {
    let r =
        diff_mi300x(Variant::of("mi300x-rhel").set("accelerators.driver.version", json!("6.2.5")));
    let f = r
        .fields
        .iter()
        .find(|f| f.path == "accelerators.driver.version")
        .unwrap_or_else(|| panic!("{:?}", r.fields));
    assert_eq!(f.impact, Impact::Live);
    assert!(f.why.contains("operator"), "{}", f.why);
    // The files agree: only the operator's DeviceConfig changes, live
    // (chart v1.5.1 takes it through its values' deviceConfig.spec).
    assert!(
        r.files.iter().all(|f| f.impact == Impact::Live),
        "{:?}",
        r.files
    );
    assert!(
        r.files
            .iter()
            .any(|f| f.path == "cluster/amd-gpu-operator-values.yaml")
    );
    // A preinstalled driver is still a reboot.
    let r = diff_of(
        h100()
            .set("accelerators.driver.version", json!("580.126.09"))
            .set(
                "accelerators.interconnect.fabricManager.version",
                json!("580.126.09"),
            ),
    );
    let f = r
        .fields
        .iter()
        .find(|f| f.path == "accelerators.driver.version")
        .unwrap();
    assert_eq!(f.impact, Impact::Reboot);
}

#[test]
fn id_and_lock_changes_are_shown_once_compactly() {
    let r = diff_of(h100().set("kubernetes.kubelet.maxPods", json!(64)));
    for p in [
        "layer/etc/nodeimg/blueprint.id",
        "layer/etc/nodeimg/blueprint.lock.json",
    ] {
        let f = r.files.iter().find(|f| f.path == p).unwrap();
        assert_eq!(f.diff.lines().count(), 1, "{p}: {}", f.diff);
        assert!(!f.diff.contains("@@"), "{}", f.diff);
    }
}

/// `dir/bp.yaml`: cpu-minimal (edited by `edit`) with an overlay folder
/// `ovl` holding `files` (layer path → content).
fn overlay_blueprint(
    dir: &std::path::Path,
    files: &[(&str, &str)],
    edit: impl FnOnce(Variant) -> Variant,
) {
    std::fs::create_dir_all(dir.join("ovl")).unwrap();
    edit(Variant::of("cpu-minimal").set("files.overlay", json!("ovl"))).write(&dir.join("bp.yaml"));
    for (path, content) in files {
        let p = dir.join("ovl").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

fn load_in(dir: &std::path::Path) -> nodeimg::blueprint::Blueprint {
    nodeimg::blueprint::load_file(
        &dir.join("bp.yaml"),
        &nodeimg::blueprint::compat::Matrix::builtin(),
    )
    .unwrap()
    .blueprint
}

fn diff_dirs(a: &std::path::Path, b: &std::path::Path) -> nodeimg::diff::Report {
    let (old, new) = (load_in(a), load_in(b));
    compare(&old, &rendered(&old), &new, &rendered(&new))
}

#[test]
fn overlay_content_changes_are_changes() {
    // The same overlay path with other content: it was "No change:
    // identical blueprints" (exit 0) while the images differed.
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    overlay_blueprint(&a, &[("etc/motd", "hello\n")], |v| v);
    overlay_blueprint(&b, &[("etc/motd", "hello, world\n")], |v| v);
    let o = cmd()
        .args(["diff", "--no-files"])
        .arg(a.join("bp.yaml"))
        .arg(b.join("bp.yaml"))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert!(!stdout.contains("No change"), "{stdout}");
    assert!(stdout.contains("Overlay changes:"), "{stdout}");
    assert!(
        stdout.contains("reboot /etc/motd (Changed: 6 → 13 bytes"),
        "{stdout}"
    );
    // Same name and version for different content: both images would get
    // the tag 2026.11.1.
    assert!(
        stderr.contains("warning: the content changed but metadata.version did not (2026.11.1)"),
        "{stderr}"
    );

    let r = diff_dirs(&a, &b);
    assert_ne!(r.old.id, r.new.id);
    assert_eq!(r.overlay.len(), 1, "{:?}", r.overlay);
    assert_eq!(r.overlay[0].path, "/etc/motd");
    assert_eq!(r.overlay[0].impact, Impact::Reboot);
    assert_eq!(r.impact, Some(Impact::Reboot));
    assert_eq!(r.warnings.len(), 1);
}

#[test]
fn overlay_additions_removals_modes_and_links_are_listed() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let same = ("usr/local/bin/tool", "#!/bin/sh\n");
    overlay_blueprint(&a, &[same, ("etc/old.conf", "x\n")], |v| v);
    overlay_blueprint(&b, &[same, ("etc/new/new.conf", "y\n")], |v| {
        assert_eq!(v.get("metadata.version"), Some(&json!("2026.11.1")));
        v.set("metadata.version", json!("2026.11.2"))
    });
    let exec = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(b.join("ovl/usr/local/bin/tool"), exec).unwrap();
    symlink("old.conf", a.join("ovl/etc/link")).unwrap();
    symlink("new/new.conf", b.join("ovl/etc/link")).unwrap();
    let r = diff_dirs(&a, &b);
    let got: Vec<(&str, String)> = r
        .overlay
        .iter()
        .map(|o| (o.path.as_str(), format!("{:?}: {}", o.status, o.detail)))
        .collect();
    assert_eq!(
        got,
        [
            (
                "/etc/link",
                "Changed: link old.conf → new/new.conf".to_string()
            ),
            ("/etc/new", "Added: folder".to_string()),
            (
                "/etc/new/new.conf",
                "Added: file, 2 bytes, mode 0644".to_string()
            ),
            (
                "/etc/old.conf",
                "Removed: file, 2 bytes, mode 0644".to_string()
            ),
            ("/usr/local/bin/tool", "Mode: mode 0644 → 0755".to_string()),
        ]
    );
    // A new version: no warning.
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn identical_overlays_are_no_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    overlay_blueprint(&a, &[("etc/motd", "hi\n")], |v| v);
    overlay_blueprint(&b, &[("etc/motd", "hi\n")], |v| v);
    let r = diff_dirs(&a, &b);
    assert!(!r.differs(), "{:?}", r.overlay);
    assert_eq!(r.old.id, r.new.id);
    assert!(r.warnings.is_empty());
}

/// A site repository with the H100 example (and its overlay and certificates) under
/// `site/`, committed; the working copy then raises maxPods and changes the overlay.
fn site_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let o = cmd()
        .args(["init", "--example", "h100-sxm-ubuntu", "-o"])
        .arg(site.join("bp.yaml"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let git = |args: &[&str]| {
        let mut c = std::process::Command::new("git");
        clean(&mut c);
        let o = c
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "h100"]);
    let bp = site.join("bp.yaml");
    let text = std::fs::read_to_string(&bp).unwrap();
    std::fs::write(&bp, text.replace("maxPods: 110", "maxPods: 200")).unwrap();
    std::fs::write(site.join("overlays/h100/etc/nodeimg/motd"), "changed\n").unwrap();
    dir
}

#[test]
fn a_review_diffs_the_base_revision_with_its_own_overlay() {
    let repo = site_repository();
    // REV:PATH: the base side with the overlay of that revision.
    let o = cmd()
        .current_dir(repo.path())
        .args(["diff", "--no-files", "main:site/bp.yaml", "site/bp.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("maxPods: 110 → 200"), "{out}");
    assert!(out.contains("etc/nodeimg/motd"), "{out}");
    // From a subfolder, the path is the subfolder's, as git reads it.
    let o = cmd()
        .current_dir(repo.path().join("site"))
        .args(["diff", "--no-files", "main:bp.yaml", "bp.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A revision without the file says so (exit 2).
    let o = cmd()
        .current_dir(repo.path())
        .args(["diff", "main:site/none.yaml", "site/bp.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("main:site/none.yaml"), "{}", stderr(&o));
}

#[test]
fn a_blueprint_on_standard_input_resolves_its_paths_against_base_dir() {
    let repo = site_repository();
    let base = std::process::Command::new("git")
        .args(["show", "main:site/bp.yaml"])
        .current_dir(repo.path())
        .output()
        .unwrap()
        .stdout;
    let run = |extra: &[&str]| {
        use std::io::Write;
        let mut child = cmd()
            .current_dir(repo.path())
            .arg("diff")
            .args(extra)
            .args(["--no-files", "-", "site/bp.yaml"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&base).unwrap();
        child.wait_with_output().unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing-file"), "{}", stderr(&o));
    let o = run(&["--base-dir", "site"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("maxPods: 110 → 200"), "{}", stdout(&o));
}

/// The summary's reasons for a change of `path`: exactly that field's own sentence.
fn reasons_are_the_fields_own(r: &nodeimg::diff::Report, path: &str) -> String {
    let f = r
        .fields
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} not changed: {:?}", r.fields));
    assert_eq!(r.reasons, vec![f.why.clone()], "{path}");
    f.why.clone()
}

#[test]
fn max_pods_speaks_of_the_pod_limit_not_the_cpu_manager() {
    let r = diff_of(h100().set("kubernetes.kubelet.maxPods", json!(64)));
    let why = reasons_are_the_fields_own(&r, "kubernetes.kubelet.maxPods");
    assert!(
        why.contains("pod capacity") && why.contains("OutOfpods"),
        "{why}"
    );
    assert!(
        r.reasons.iter().all(|w| !w.contains("cpu_manager_state")),
        "{:?}",
        r.reasons
    );
}

#[test]
fn cpu_manager_policy_speaks_of_its_state_file_alone() {
    let r = diff_of(h100().set("kubernetes.kubelet.cpuManagerPolicy", json!("none")));
    let why = reasons_are_the_fields_own(&r, "kubernetes.kubelet.cpuManagerPolicy");
    assert!(why.contains("cpu_manager_state"), "{why}");
    assert!(
        !why.contains("memory_manager_state") && !why.contains("labels"),
        "{why}"
    );
}

#[test]
fn a_kernel_argument_reboots_and_a_forbidden_one_changes_nothing_on_the_node() {
    let r = diff_of(h100().set("boot.kernelArgs.required[1]", json!("init_on_alloc=1")));
    assert_eq!(r.impact, Some(Impact::Reboot));
    let why = reasons_are_the_fields_own(&r, "boot.kernelArgs.required");
    assert!(why.contains("until the node reboots"), "{why}");
    // Only verify reads the forbidden list: no file changes but the id and the lock.
    let r = diff_of(h100().set("boot.kernelArgs.forbidden[1]", json!("mitigations=auto")));
    let f = &r.fields[0];
    assert_eq!(
        (f.path.as_str(), f.impact),
        ("boot.kernelArgs.forbidden", Impact::Live)
    );
    assert_eq!(r.impact, Some(Impact::Live), "{:?}", r.files);
}

#[test]
fn a_sysctl_applies_live_by_sysctl_system() {
    let path = YamlPath::parse("security.sysctls").key("vm.max_map_count");
    let r = diff_of(h100().set_at(&path, json!(2097152)));
    assert_eq!(r.impact, Some(Impact::Live));
    assert_eq!(r.fields.len(), 1, "{:?}", r.fields);
    let why = reasons_are_the_fields_own(&r, &r.fields[0].path.clone());
    assert!(
        why.contains("sysctl --system") && why.contains("nothing restarts"),
        "{why}"
    );
}

#[test]
fn a_preinstalled_driver_version_says_the_old_modules_stay_loaded() {
    let r = diff_of(
        h100()
            .set("accelerators.driver.version", json!("580.126.09"))
            .set(
                "accelerators.interconnect.fabricManager.version",
                json!("580.126.09"),
            ),
    );
    assert_eq!(r.impact, Some(Impact::Reboot));
    let f = r
        .fields
        .iter()
        .find(|f| f.path == "accelerators.driver.version")
        .unwrap();
    assert!(
        f.why.contains("loaded modules stay the old ones"),
        "{}",
        f.why
    );
    assert!(r.reasons.contains(&f.why), "{:?}", r.reasons);
}

#[test]
fn a_sharing_change_speaks_of_the_device_plugin() {
    let r = diff_of(h100().set(
        "accelerators.sharing",
        json!({"mode": "time-slicing", "replicas": 4}),
    ));
    assert_eq!(r.impact, Some(Impact::Live));
    assert!(!r.reasons.is_empty());
    assert!(
        r.reasons
            .iter()
            .all(|w| w.contains("device plugin restarts")
                && w.contains("nvidia.com/device-plugin.config label")),
        "{:?}",
        r.reasons
    );
}
