//! Values that pass validation render files their real consumers accept,
//! with the meaning the blueprint gave them: for every blueprint field that
//! reaches a line-based format, hostile text is either refused when the
//! blueprint is read (with a located diagnostic), or rendered into a file
//! that sshd, logrotate, systemd-tmpfiles, chronyd and systemd-analyze
//! accept and read back as the same value.
//!
//! An opt-in suite (`cargo test -- --ignored injection`; .ci/run installs
//! the programs); a missing program fails it.

use std::process::{Command, Output};

use nodeimg::blueprint::Blueprint;
use nodeimg::render::{Rendered, Templates, render};
use serde_json::json;

use crate::support::unit_root::unit_root;
use crate::support::{Variant, write_file};

/// Text each field is tried with, around a plain stem: quoting, comment,
/// specifier, variable and block syntax of the formats involved, escapes,
/// blanks, globs, and characters that are harmless everywhere.
const PAYLOADS: &[&str] = &[
    "\"", "'", "\\", " ", "\t", "#", "%m", "%%", "${X}", "$X", "}", "{", ";", "\\x20", "*", "?",
    "[", "]", "!", ",", "=", "@", "~", "+", ":", "-", "_", ".", "é", "\u{202e}", "\n", "\r",
];

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("`{program}` must be installed for the real-tools tests: {e}"))
}

fn show(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Loads the variant. Returns the blueprint, or asserts that the refusal
/// is located at `field` and returns `None`.
fn load(v: Variant, field: &str, value: &str) -> Option<Blueprint> {
    match v.try_load() {
        Ok(bp) => Some(bp),
        Err(d) => {
            assert!(
                d.iter()
                    .any(|d| d.path.to_string() == field && d.line.is_some()),
                "{value:?} at {field}: refused, but not located there: {d:#?}"
            );
            None
        }
    }
}

fn rendered(bp: &Blueprint, value: &str) -> Rendered {
    render(bp, &Templates::embedded())
        .unwrap_or_else(|e| panic!("{value:?} validated but did not render: {e}"))
}

/// Runs `check` on every payload inside `stem` and returns how many were
/// accepted, so a test cannot pass by refusing everything.
fn each_payload(stem: impl Fn(&str) -> String, mut check: impl FnMut(&str) -> bool) -> usize {
    PAYLOADS
        .iter()
        .map(|p| stem(p))
        .filter(|v| check(v))
        .count()
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs sshd (cargo test -- --ignored)"]
fn sshd_reads_allowed_users_and_groups_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("host_ed25519");
    let o = run(
        "ssh-keygen",
        &["-q", "-t", "ed25519", "-N", "", "-f", key.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", show(&o));
    std::fs::create_dir_all("/run/sshd").expect("the real-tools tests run as root");
    for (field, keyword) in [("allowUsers", "allowusers"), ("allowGroups", "allowgroups")] {
        let accepted = each_payload(
            |p| format!("gpu{p}ops"),
            |v| {
                let variant = Variant::of("cpu-minimal")
                    .set(&format!("security.ssh.{field}"), json!(["ops", v]));
                let Some(bp) = load(variant, &format!("security.ssh.{field}[1]"), v) else {
                    return false;
                };
                let r = rendered(&bp, v);
                let f = write_file(dir.path(), &r, "etc/ssh/sshd_config.d/00-nodeimg.conf");
                let (f, k) = (f.to_str().unwrap(), key.to_str().unwrap());
                let o = run("/usr/sbin/sshd", &["-t", "-f", f, "-h", k]);
                assert!(o.status.success(), "{v:?}: sshd -t: {}", show(&o));
                let o = run("/usr/sbin/sshd", &["-T", "-f", f, "-h", k]);
                assert!(o.status.success(), "{v:?}: sshd -T: {}", show(&o));
                // sshd prints one line per entry; the value comes back as written.
                let printed = show(&o);
                assert!(
                    printed.lines().any(|l| l == format!("{keyword} {v}")),
                    "{v:?}: sshd read something else:\n{printed}"
                );
                true
            },
        );
        assert!(accepted >= 5, "{field}: only {accepted} payloads accepted");
    }
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs logrotate (cargo test -- --ignored)"]
fn logrotate_reads_rotation_paths_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let accepted = each_payload(
        |p| format!("/var/log/app{p}x.log"),
        |v| {
            let variant = Variant::of("cpu-minimal").set(
                "system.logs.rotate",
                json!([{"name": "app", "path": v, "frequency": "daily", "keep": 3, "maxSize": "100Mi"}]),
            );
            let Some(bp) = load(variant, "system.logs.rotate[0].path", v) else {
                return false;
            };
            let r = rendered(&bp, v);
            let f = write_file(dir.path(), &r, "etc/logrotate.d/app");
            let o = run(
                "logrotate",
                &["-d", "-s", state.to_str().unwrap(), f.to_str().unwrap()],
            );
            let out = show(&o);
            assert!(o.status.success() && !out.contains("error"), "{v:?}: {out}");
            assert!(
                out.contains(&format!("considering log {v}\n")),
                "{v:?}: logrotate read another path:\n{out}"
            );
            true
        },
    );
    assert!(accepted >= 5, "only {accepted} payloads accepted");
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs systemd-tmpfiles (cargo test -- --ignored)"]
fn systemd_tmpfiles_creates_the_cache_folder_that_was_named() {
    let accepted = each_payload(
        |p| format!("/var/cache/models{p}x"),
        |v| {
            let variant = Variant::of("cpu-minimal").set(
                "system.cache",
                json!({"path": v, "highWatermark": "85%", "lowWatermark": "70%"}),
            );
            let Some(bp) = load(variant, "system.cache.path", v) else {
                return false;
            };
            let r = rendered(&bp, v);
            let dir = tempfile::tempdir().unwrap();
            let f = write_file(dir.path(), &r, "etc/tmpfiles.d/nodeimg.conf");
            let root_dir = dir.path().join("root");
            std::fs::create_dir(&root_dir).unwrap();
            let root_arg = format!("--root={}", root_dir.display());
            let o = run(
                "systemd-tmpfiles",
                &["--create", &root_arg, f.to_str().unwrap()],
            );
            assert!(o.status.success(), "{v:?}: {}", show(&o));
            let made = root_dir.join(v.trim_start_matches('/'));
            assert!(made.is_dir(), "{v:?}: {} was not created", made.display());
            true
        },
    );
    assert!(accepted >= 5, "only {accepted} payloads accepted");
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs chronyd (cargo test -- --ignored)"]
fn chronyd_reads_the_servers_that_were_named() {
    let dir = tempfile::tempdir().unwrap();
    let accepted = each_payload(
        |p| format!("time{p}1.example.com"),
        |v| {
            let variant = Variant::of("cpu-minimal").set(
                "system.timeSync",
                json!({"servers": [v], "pools": ["pool.example.com"]}),
            );
            let Some(bp) = load(variant, "system.timeSync.servers[0]", v) else {
                return false;
            };
            let r = rendered(&bp, v);
            let f = write_file(dir.path(), &r, "etc/chrony/chrony.conf");
            let o = run("chronyd", &["-p", "-f", f.to_str().unwrap()]);
            assert!(o.status.success(), "{v:?}: {}", show(&o));
            assert!(
                show(&o).contains(&format!("server {v} iburst")),
                "{v:?}: {}",
                show(&o)
            );
            true
        },
    );
    assert!(accepted >= 3, "only {accepted} payloads accepted");
}

/// systemd-analyze verify on the rendered units whose names start with
/// `unit_prefix`; stderr must be empty.
fn analyze(r: &Rendered, unit_prefix: &str, v: &str) {
    let dir = tempfile::tempdir().unwrap();
    unit_root(r, dir.path());
    let units: Vec<String> = r
        .layer
        .files()
        .filter_map(|(p, _, _)| p.strip_prefix("etc/systemd/system/"))
        .filter(|p| !p.contains('/') && p.starts_with(unit_prefix))
        .map(str::to_string)
        .collect();
    assert!(!units.is_empty(), "{v:?}: no {unit_prefix}* unit rendered");
    let root_arg = format!("--root={}", dir.path().display());
    let mut args = vec!["verify", root_arg.as_str(), "--man=no", "--generators=no"];
    args.extend(units.iter().map(String::as_str));
    let o = run("systemd-analyze", &args);
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{v:?}: {}",
        show(&o)
    );
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs systemd-analyze (cargo test -- --ignored)"]
fn systemd_accepts_the_mount_units_of_the_partitions_named() {
    // A partition's mount point: the mount unit's name is the escaped path
    // (systemd-analyze refuses a Where= that does not match it).
    let accepted = each_payload(
        |p| format!("/var/lib/data{p}x"),
        |v| {
            let variant = Variant::of("cpu-minimal").set(
                "system.partitions",
                json!([{"label": "data", "mountPoint": v, "filesystem": "xfs", "size": "10Gi"}]),
            );
            let Some(bp) = load(variant, "system.partitions[0].mountPoint", v) else {
                return false;
            };
            let r = rendered(&bp, v);
            // The unit is named as systemd itself names the path.
            let o = run("systemd-escape", &["--path", "--suffix=mount", v]);
            assert!(o.status.success(), "{v:?}: {}", show(&o));
            let name = String::from_utf8(o.stdout).unwrap();
            let name = name.trim_end();
            assert!(
                r.layer
                    .file(&format!("etc/systemd/system/{name}"))
                    .is_some(),
                "{v:?}: no unit named {name}"
            );
            // systemd-analyze 252 cannot open a unit file whose name holds
            // `:` ("Couldn't process aliases"), though systemd names such
            // mounts so: the name was checked above.
            if !name.contains(':') {
                analyze(&r, "var-lib-data", v);
            }
            true
        },
    );
    assert!(accepted >= 5, "only {accepted} payloads accepted");
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs systemd-analyze (cargo test -- --ignored)"]
fn systemd_exec_lines_carry_the_cdi_folder_named() {
    // A CDI spec folder is an argument of the generator's ExecStart lines,
    // where `%` and `$` would expand.
    let h100 = Variant::of("h100-sxm-ubuntu");
    assert_eq!(
        h100.get("runtime.cdi.specDirs"),
        Some(&json!(["/etc/cdi", "/var/run/cdi"]))
    );
    let accepted = each_payload(
        |p| format!("/run/cdi{p}x"),
        |v| {
            let variant = h100.clone().set("runtime.cdi.specDirs", json!([v]));
            let Some(bp) = load(variant, "runtime.cdi.specDirs[0]", v) else {
                return false;
            };
            let r = rendered(&bp, v);
            analyze(&r, "nodeimg-cdi-generate", v);
            let unit = String::from_utf8(
                r.layer
                    .file("etc/systemd/system/nodeimg-cdi-generate.service")
                    .unwrap()
                    .to_vec(),
            )
            .unwrap();
            // systemd reads `%%` as `%` and `$$` as `$`.
            let written = v.replace('%', "%%").replace('$', "$$");
            assert!(
                unit.contains(&format!("--output={written}/nvidia.yaml")),
                "{v:?}: {unit}"
            );
            true
        },
    );
    assert!(accepted >= 5, "only {accepted} payloads accepted");
}

/// `system.shmSize` reaches pods, not a host unit: the rendered Kyverno policy's
/// memory-backed emptyDir carries it as a quantity of the same size; sizes that do
/// not fit are refused at the field.
#[test]
fn the_shm_size_reaches_the_pod_policy_as_the_same_quantity() {
    for (size, bytes) in [
        ("64Gi", Some(64u128 << 30)),
        ("1.5Gi", Some(3u128 << 29)),
        ("-1Gi", None),
        ("16Ei", None),
        ("99999999999999999999Ki", None),
    ] {
        let variant = Variant::of("cpu-minimal").set("system.shmSize", json!(size));
        let Some(bp) = load(variant, "system.shmSize", size) else {
            assert!(bytes.is_none(), "{size} refused");
            continue;
        };
        let want = bytes.unwrap_or_else(|| panic!("{size} accepted"));
        let r = rendered(&bp, size);
        let policy = r
            .cluster
            .file("shm-policy.yaml")
            .unwrap_or_else(|| panic!("{size}: no shm-policy.yaml rendered"));
        let doc: serde_yaml::Value = serde_yaml::from_slice(policy).unwrap();
        let limit = doc["spec"]["rules"][0]["mutate"]["patchStrategicMerge"]["spec"]["volumes"][0]
            ["emptyDir"]["sizeLimit"]
            .as_str()
            .unwrap_or_else(|| panic!("{size}: no sizeLimit in {doc:?}"));
        assert_eq!(
            quantity_bytes(limit),
            Some(want),
            "{size} rendered as {limit:?}"
        );
    }
}

/// A Kubernetes binary-suffixed quantity in bytes (`1.5Gi`, `1536Mi`, `1024`).
fn quantity_bytes(q: &str) -> Option<u128> {
    let (num, shift) = [
        ("Ki", 10),
        ("Mi", 20),
        ("Gi", 30),
        ("Ti", 40),
        ("Pi", 50),
        ("Ei", 60),
    ]
    .iter()
    .find_map(|(s, n)| q.strip_suffix(s).map(|num| (num, *n)))
    .unwrap_or((q, 0));
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let scale = 10u128.pow(frac.len() as u32);
    let value: u128 = format!("{int}{frac}").parse().ok()?;
    let total = value << shift;
    total.is_multiple_of(scale).then_some(total / scale)
}
