//! Enablement without a boot: every unit an example's image renders under
//! etc/systemd/system with an `[Install]` section is enabled by the layer
//! itself (a `<target>.wants/` link for each `WantedBy=`) and named by its
//! preset, so no rendered unit waits for a `systemctl enable` nobody runs.

use std::path::{Path, PathBuf};

use nodeimg::blueprint::{compat::Matrix, load_file};
use nodeimg::render::{Templates, render};
use nodeimg::tree::Node;

use crate::support::npd_health_monitor;

#[test]
fn every_rendered_unit_with_an_install_section_is_enabled_by_the_layer() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let bp = load_file(&path, &Matrix::builtin()).unwrap().blueprint;
        let r = render(&bp, &Templates::embedded()).unwrap();
        let entries: Vec<(String, Node)> = r.layer.entries();
        let link = |p: &str| {
            entries.iter().find_map(|(q, n)| match n {
                Node::Symlink { target } if q == p => Some(target.clone()),
                _ => None,
            })
        };
        let preset = entries
            .iter()
            .find_map(|(q, n)| match n {
                Node::File { bytes, .. }
                    if q == "usr/lib/systemd/system-preset/50-nodeimg.preset" =>
                {
                    Some(String::from_utf8(bytes.clone()).unwrap())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}: no preset", bp.name()));
        for (p, n) in &entries {
            let Some(unit) = p.strip_prefix("etc/systemd/system/") else {
                continue;
            };
            let Node::File { bytes, .. } = n else {
                continue;
            };
            if unit.contains('/') {
                continue;
            }
            let text = String::from_utf8_lossy(bytes);
            let wanted_by: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("WantedBy="))
                .flat_map(str::split_whitespace)
                .collect();
            if !text.contains("[Install]") {
                continue;
            }
            assert!(
                !wanted_by.is_empty(),
                "{}: {unit} has no WantedBy=",
                bp.name()
            );
            for target in wanted_by {
                assert_eq!(
                    link(&format!("etc/systemd/system/{target}.wants/{unit}")),
                    Some(format!("/etc/systemd/system/{unit}")),
                    "{}: {unit} is not enabled for {target}",
                    bp.name()
                );
            }
            assert!(
                preset.lines().any(|l| l == format!("enable {unit}")),
                "{}: {unit} is not in the preset:\n{preset}",
                bp.name()
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} units checked");
}

/// The rendered files of a blueprint, as (path, text): `layer/…` and `cluster/…`.
fn rendered(path: &Path) -> Vec<(String, String)> {
    let bp = load_file(path, &Matrix::builtin()).unwrap().blueprint;
    let r = render(&bp, &Templates::embedded()).unwrap();
    let mut files = Vec::new();
    for (side, tree) in [("layer", &r.layer), ("cluster", &r.cluster)] {
        for (p, n) in tree.entries() {
            let text = match n {
                Node::File { bytes, .. } => String::from_utf8_lossy(&bytes).into_owned(),
                Node::Symlink { target } => format!("-> {target}"),
                _ => continue,
            };
            files.push((format!("{side}/{p}"), text));
        }
    }
    files
}

fn example(name: &str) -> Vec<(String, String)> {
    rendered(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("blueprints/{name}.yaml")))
}

/// The Debian H100 example with the driver left to NVIDIA's GPU operator.
fn nvidia_operator_driver() -> Vec<(String, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("blueprints/h100-sxm-debian.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace("authority: preinstalled", "authority: operator").replace(
        "  cuda: \"13.0\"\n",
        "  cuda: \"13.0\"\n  operator:\n    name: gpu-operator\n    version: v25.10.1\n    manages: [driver, device-plugin]\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let variant = dir.path().join("h100-operator.yaml");
    std::fs::write(&variant, text).unwrap();
    rendered(&variant)
}

fn file<'a>(files: &'a [(String, String)], path: &str) -> Option<&'a str> {
    files
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, t)| t.as_str())
}

fn values<'a>(unit: &'a str, key: &str) -> Vec<&'a str> {
    unit.lines()
        .filter_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .flat_map(str::split_whitespace)
        .collect()
}

const DRIVER_UNIT: &str = "layer/etc/systemd/system/nodeimg-verify-driver.service";
const NPD: &str = "cluster/node-problem-detector-values.yaml";

/// The driver-phase rule of the rendered NPD values, if any.
fn npd_driver_rule(files: &[(String, String)]) -> Option<serde_json::Value> {
    let monitor = npd_health_monitor(file(files, NPD)?);
    let rule = monitor["rules"]
        .as_array()?
        .iter()
        .find(|r| r["condition"] == "NodeimgDriverPhaseProblem")?
        .clone();
    assert!(
        monitor["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "NodeimgDriverPhaseProblem"),
        "a rule without its condition's default: {monitor}"
    );
    Some(rule)
}

/// An operator installs the driver after kubelet started: the boot phase cannot check
/// it, so a unit of its own (after kubelet, only when the boot phase passed) waits,
/// bounded, for the module, and runs the driver phase; node-problem-detector turns the
/// unit's verdict into a node condition.
#[test]
fn an_operator_owned_driver_is_checked_after_it_loads_and_the_node_says_so() {
    for (name, files, module) in [
        ("mi300x-rhel", example("mi300x-rhel"), "amdgpu"),
        ("h100 operator", nvidia_operator_driver(), "nvidia"),
    ] {
        let unit = file(&files, DRIVER_UNIT)
            .unwrap_or_else(|| panic!("{name}: no driver-phase unit for an operator-owned driver"));
        assert!(values(unit, "After").contains(&"kubelet.service"), "{unit}");
        assert!(
            values(unit, "Requires").contains(&"nodeimg-verify.service"),
            "{unit}"
        );
        let exec = unit.lines().find(|l| l.starts_with("ExecStart=")).unwrap();
        assert!(
            exec.contains(" verify --phase driver --attempts "),
            "{exec}"
        );
        assert!(exec.contains("--evidence-on-fail "), "{exec}");
        assert!(
            exec.contains("--output summary=/run/nodeimg-driver/summary.txt"),
            "{exec}"
        );
        // The wait for the operator's module is bounded, and the start timeout covers it.
        let wait = unit
            .lines()
            .find(|l| l.starts_with("ExecStartPre="))
            .unwrap();
        assert!(
            wait.contains(&format!("/sys/module/{module}/initstate"))
                && wait.contains("$$NODEIMG_DRIVER_WAIT_S"),
            "{wait}"
        );
        let waited: u64 = unit
            .lines()
            .find_map(|l| l.strip_prefix("Environment=NODEIMG_DRIVER_WAIT_S="))
            .unwrap()
            .parse()
            .unwrap();
        let timeout: u64 = unit
            .lines()
            .find_map(|l| l.strip_prefix("TimeoutStartSec="))
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            timeout > waited + 3 * 240,
            "{timeout} <= {waited} + verify's retries"
        );
        assert_eq!(
            file(
                &files,
                "layer/etc/systemd/system/multi-user.target.wants/nodeimg-verify-driver.service"
            ),
            Some("-> /etc/systemd/system/nodeimg-verify-driver.service")
        );
        let rule = npd_driver_rule(&files).expect("no node condition for the driver phase");
        let script = rule["args"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_str()
            .unwrap();
        assert!(
            script.contains("nodeimg-verify-driver.service")
                && script.contains("/run/nodeimg-driver/summary.txt"),
            "{script}"
        );
    }

    // NVIDIA with node-side CDI: the device nodes and the spec need the driver, so
    // they leave the boot order and the driver phase makes them once it loaded.
    let files = nvidia_operator_driver();
    let unit = file(&files, DRIVER_UNIT).unwrap();
    assert!(
        unit.contains(
            "ExecStartPre=-/usr/bin/systemctl restart nodeimg-device-nodes.service nodeimg-cdi-generate.service"
        ),
        "{unit}"
    );
    let verify = file(&files, "layer/etc/systemd/system/nodeimg-verify.service").unwrap();
    for u in [
        "nodeimg-device-nodes.service",
        "nodeimg-cdi-generate.service",
    ] {
        assert!(!values(verify, "Wants").contains(&u), "{verify}");
        assert!(
            file(
                &files,
                &format!("layer/etc/systemd/system/multi-user.target.wants/{u}")
            )
            .is_none(),
            "{u} starts at boot, before any driver"
        );
        let text = file(&files, &format!("layer/etc/systemd/system/{u}")).unwrap();
        assert!(!text.contains("[Install]"), "{text}");
    }

    // A preinstalled driver is checked at boot, before kubelet: no second phase.
    let nvidia = example("h100-sxm-ubuntu");
    assert!(file(&nvidia, DRIVER_UNIT).is_none());
    assert!(npd_driver_rule(&nvidia).is_none());
}

/// The rule's script sets the condition from the unit's state, by NPD's exit codes: run
/// with a `systemctl` that reports each state.
#[test]
fn the_driver_phase_condition_follows_the_unit_state() {
    let rule = npd_driver_rule(&example("mi300x-rhel")).unwrap();
    let script = rule["args"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let systemctl = dir.path().join("systemctl");
    std::fs::write(&systemctl, "#!/bin/sh\necho \"$STATE\"\n").unwrap();
    std::fs::set_permissions(
        &systemctl,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap()
    );
    for (state, code, says) in [
        ("active", 0, "driver phase passed"),
        ("failed", 1, "driver phase failed"),
        (
            "activating",
            2,
            "not judged yet (nodeimg-verify-driver.service is activating)",
        ),
        ("inactive", 2, "not judged yet"),
    ] {
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .env("PATH", &path)
            .env("STATE", state)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(code), "{state}: {text}");
        assert!(text.contains(says), "{state}: {text}");
    }
}

/// Every rule of the rendered NPD values but the driver phase's own: the program NPD
/// runs in the host's namespaces (what follows nsenter's `--`), by condition.
fn npd_health_rules(files: &[(String, String)]) -> Vec<(String, Vec<String>)> {
    let monitor = npd_health_monitor(file(files, NPD).unwrap());
    monitor["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["condition"] != "NodeimgDriverPhaseProblem")
        .map(|r| {
            let args: Vec<String> = r["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            let program = args.iter().position(|a| a == "--").unwrap() + 1;
            (
                r["condition"].as_str().unwrap().to_string(),
                args[program..].to_vec(),
            )
        })
        .collect()
}

/// With an operator-owned driver, the health conditions (GPUProblem and one per fault
/// class, which remediation acts on when True) are not judged until the driver phase
/// passed: while the operator still installs the driver they read Unknown, so no
/// NodeHealthCheck reboots a node that is only waiting. Each rendered rule runs on a node
/// state given by a stand-in `systemctl` (the driver unit's state) and a stand-in
/// verifier that fails (no driver yet) and notes that it ran.
#[test]
fn health_rules_wait_for_an_operator_owned_driver() {
    for (name, files) in [
        ("mi300x-rhel", example("mi300x-rhel")),
        ("h100 operator", nvidia_operator_driver()),
    ] {
        let rules = npd_health_rules(&files);
        assert!(
            rules.len() >= 2 && rules.iter().any(|(c, _)| c == "GPUProblem"),
            "{name}: {rules:?}"
        );
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let exe = |path: &Path, text: &str| {
            std::fs::write(path, text).unwrap();
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        };
        exe(&bin.join("systemctl"), "#!/bin/sh\necho \"$STATE\"\n");
        let ran = dir.path().join("verify-ran");
        let verifier = dir.path().join("nodeimg");
        exe(
            &verifier,
            &format!(
                "#!/bin/sh\necho run >> '{}'\necho 'gpu.driver.loaded: FAIL'\nexit 1\n",
                ran.display()
            ),
        );
        let evidence = dir.path().join("evidence");
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        for (condition, program) in &rules {
            // The node's verifier and evidence folder are the stand-ins'.
            let program: Vec<String> = program
                .iter()
                .map(|a| {
                    a.replace("/usr/local/bin/nodeimg", verifier.to_str().unwrap())
                        .replace("/var/lib/nodeimg/evidence", evidence.to_str().unwrap())
                })
                .collect();
            assert!(
                program.iter().all(|a| !a.contains("/var/lib/nodeimg")),
                "{program:?}"
            );
            for (state, code, says, runs) in [
                ("activating", 2, "not judged yet", false),
                ("inactive", 2, "not judged yet", false),
                ("failed", 2, "not judged yet", false),
                ("active", 1, "gpu.driver.loaded: FAIL", true),
            ] {
                let _ = std::fs::remove_file(&ran);
                let out = std::process::Command::new(&program[0])
                    .args(&program[1..])
                    .env("PATH", &path)
                    .env("STATE", state)
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                assert_eq!(
                    out.status.code(),
                    Some(code),
                    "{name} {condition} with the driver unit {state}: {text}"
                );
                assert!(text.contains(says), "{name} {condition} {state}: {text}");
                assert_eq!(ran.exists(), runs, "{name} {condition} {state}: verify ran");
            }
        }
    }

    // A preinstalled driver was checked at boot, before kubelet: the rules run at once.
    for (condition, program) in npd_health_rules(&example("h100-sxm-ubuntu")) {
        assert!(
            program.iter().all(|a| !a.contains("nodeimg-verify-driver")),
            "{condition}: {program:?}"
        );
    }
}
