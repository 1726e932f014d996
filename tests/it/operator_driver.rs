//! A driver the GPU operator owns rolls like an image: the operator values
//! bound its upgrades by the rollout's budgets (one failure domain's wave
//! budget at a time, never more than a wave) and drain each node first within
//! the rollout's drain timeout; `diff` says so.

use crate::support::*;
use nodeimg::diff::{compare, impact::Impact};
use serde_json::{Value, json};

fn operator_driver() -> Variant {
    Variant::of("h100-sxm-ubuntu")
        .set("accelerators.driver.authority", json!("operator"))
        .set(
            "accelerators.operator.manages",
            json!([
                "driver",
                "device-plugin",
                "dcgm-exporter",
                "gpu-feature-discovery"
            ]),
        )
}

fn policy(v: &Variant) -> Value {
    let values: Value = cluster_file(&rendered(&v.load()), "gpu-operator-values.yaml");
    values["driver"]["upgradePolicy"].clone()
}

#[test]
fn operator_driver_upgrades_follow_the_rollout_budgets() {
    // The example: waveBudget 1, maxWaveSize 16, drainTimeout 45m.
    let p = policy(&operator_driver());
    assert_eq!(p["autoUpgrade"], true);
    assert_eq!(p["maxParallelUpgrades"], 1);
    assert_eq!(p["maxUnavailable"], 1);
    assert_eq!(
        p["drain"],
        json!({"enable": true, "force": false, "timeoutSeconds": 2700, "deleteEmptyDir": true})
    );
    // A larger budget per domain, capped by the wave size.
    let p = policy(
        &operator_driver()
            .set("rollout.waveBudget", json!(4))
            .set("rollout.maxWaveSize", json!(3)),
    );
    assert_eq!(p["maxParallelUpgrades"], 3);
    // A share of a domain: the operator cannot see domains, so one node.
    let p = policy(&operator_driver().set("rollout.waveBudget", json!("25%")));
    assert_eq!(p["maxParallelUpgrades"], 1);
    // A preinstalled driver: the operator rolls none.
    let values: Value = cluster_file(
        &rendered(&example("h100-sxm-ubuntu")),
        "gpu-operator-values.yaml",
    );
    assert!(values["driver"].get("upgradePolicy").is_none());
}

#[test]
fn diff_names_the_policy_a_driver_bump_rolls_by() {
    let old = operator_driver().load();
    let new = operator_driver()
        .set("accelerators.driver.version", json!("580.126.09"))
        .set(
            "accelerators.interconnect.fabricManager.version",
            json!("580.126.09"),
        )
        .load();
    let r = compare(&old, &rendered(&old), &new, &rendered(&new));
    let f = r
        .fields
        .iter()
        .find(|f| f.path == "accelerators.driver.version")
        .expect("driver changed");
    assert_eq!(f.impact, Impact::Live);
    assert!(f.why.contains("driver.upgradePolicy"), "{}", f.why);
}

/// The H100 example with the operator's driver at `version`, as a blueprint file in `s`.
fn write_operator_blueprint(s: &crate::rollout::Setup, file: &str, version: &str, release: &str) {
    operator_driver()
        .set("metadata.version", json!(release))
        .set("accelerators.driver.version", json!(version))
        .set(
            "accelerators.interconnect.fabricManager.version",
            json!(version),
        )
        .write(&s.path(file));
}

/// Runs `script` with `sh`, a stand-in `kubectl` first on PATH that records its arguments;
/// the argument lists it was called with.
fn run_with_kubectl(script: &std::path::Path) -> Vec<Vec<String>> {
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("calls");
    let kubectl = bin.path().join("kubectl");
    std::fs::write(
        &kubectl,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\t' \"$a\"; done >> \"$LOG\"; echo >> \"$LOG\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let o = std::process::Command::new("sh")
        .arg(script)
        .env("PATH", path)
        .env("LOG", &log)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            l.split('\t')
                .filter(|a| !a.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[test]
fn an_operator_driver_bump_is_staged_by_the_waves_and_gated_on_the_new_driver() {
    use crate::rollout::{Setup, record, write_record};
    use nodeimg::verify::fact::Fact;
    use nodeimg::verify::report::record::RecordResult;
    let s = Setup::new(|v| v, 24);
    write_operator_blueprint(&s, "old.yaml", "580.105.08", "2026.10.1");
    write_operator_blueprint(&s, "new.yaml", "580.126.09", "2026.12.1");
    let out = s.path("out");
    let o = s.plan(&["-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("580.105.08 → 580.126.09, rolled by the GPU operator")
            && stdout(&o).contains("driver-hold.sh"),
        "{}",
        stdout(&o)
    );
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    let d = &plan["operator_driver"];
    assert_eq!(d["from"], "580.105.08");
    assert_eq!(d["to"], "580.126.09");
    assert_eq!(
        d["done"],
        "nvidia.com/gpu-driver-upgrade-state=upgrade-done"
    );
    let waves: Vec<Vec<String>> = plan["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            w["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_owned())
                .collect()
        })
        .collect();
    assert!(waves.len() > 2 && plan["waves"][0]["canary"] == true);
    // Before the values: every node of the plan held, once.
    let held: Vec<Vec<String>> = run_with_kubectl(&out.join("driver-hold.sh"));
    let mut nodes_held = Vec::new();
    for call in &held {
        assert_eq!(call[..3], ["label", "node", "--overwrite"], "{call:?}");
        assert_eq!(
            call.last().unwrap(),
            "nvidia.com/gpu-driver-upgrade.skip=true"
        );
        nodes_held.extend(call[3..call.len() - 1].iter().cloned());
    }
    let mut all: Vec<String> = waves.concat();
    all.sort();
    nodes_held.sort();
    assert_eq!(nodes_held, all, "every node held exactly once");
    // Each wave releases exactly its own nodes, the canaries first.
    for (i, wave) in waves.iter().enumerate() {
        let calls = run_with_kubectl(&out.join(format!("wave-{i:03}-driver.sh")));
        assert_eq!(calls.len(), 1);
        let call = &calls[0];
        assert_eq!(call.last().unwrap(), "nvidia.com/gpu-driver-upgrade.skip-");
        assert_eq!(&call[3..call.len() - 1], &wave[..], "wave {i}");
    }
    // The gate: the canary wave accepted on the new image and the new driver proceeds.
    let id = plan["to"]["id"].as_str().unwrap().to_owned();
    let after = s.path("after");
    let accepted = |node: &str, driver: &str| {
        let mut r = record(node, &id, RecordResult::Pass, 480.0, "2026-12-01T00:00:00Z");
        r.gpu.driver = Fact::Known(driver.to_owned());
        write_record(&after, &r);
    };
    for n in &waves[0] {
        accepted(n, "580.126.09");
    }
    let gate = || {
        nodeimg(&[
            "rollout",
            "gate",
            "--plan",
            out.join("plan.json").to_str().unwrap(),
            "--wave",
            "0",
            after.to_str().unwrap(),
        ])
    };
    let o = gate();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("wave-001-driver.sh"), "{}", stdout(&o));
    // A node the operator did not upgrade (still held): its passing record is no acceptance.
    accepted(&waves[0][0], "580.105.08");
    let o = gate();
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("driver 580.105.08, not the new 580.126.09")
            && stdout(&o).contains("nvidia.com/gpu-driver-upgrade.skip"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_driver_in_the_image_is_not_staged_through_the_operator() {
    let s = crate::rollout::Setup::new(
        |v| {
            v.set("accelerators.driver.version", json!("580.126.09"))
                .set(
                    "accelerators.interconnect.fabricManager.version",
                    json!("580.126.09"),
                )
        },
        8,
    );
    let o = s.plan(&["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(plan["impact"], "reboot");
    assert!(plan.get("operator_driver").is_none(), "{plan:#}");
}

/// One GPU operator release serves every class: `helm upgrade` bumps the driver on the
/// nodes `--selector` left out too, and `rollout plan` says which, by class, in its output
/// and in driver-hold.sh, which holds only the plan's nodes.
#[test]
fn nodes_outside_the_plan_are_named_as_unheld_by_class() {
    let s = crate::rollout::Setup::new(|v| v, 24);
    write_operator_blueprint(&s, "old.yaml", "580.105.08", "2026.10.1");
    write_operator_blueprint(&s, "new.yaml", "580.126.09", "2026.12.1");
    let mut nodes: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("nodes.json")).unwrap()).unwrap();
    for (i, n) in nodes["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        let class = match i {
            0..16 => Some("h100-sxm"),
            16..22 => Some("a100"),
            _ => None,
        };
        if let Some(class) = class {
            n["metadata"]["labels"]["platform.example.com/node-class"] = json!(class);
        }
    }
    std::fs::write(s.path("nodes.json"), nodes.to_string()).unwrap();
    let out = s.path("out");
    let o = s.plan(&[
        "--selector",
        "platform.example.com/node-class=h100-sxm",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let warning = text
        .lines()
        .find(|l| l.contains("WARNING"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        warning.contains("holds only the 16 node(s) of this plan")
            && warning.contains("platform.example.com/node-class=a100: 6")
            && warning.contains("platform.example.com/node-class unset: 2"),
        "{warning}"
    );
    let hold = std::fs::read_to_string(out.join("driver-hold.sh")).unwrap();
    assert!(hold.contains("# WARNING: one GPU operator release serves every node class"));
    let held: usize = run_with_kubectl(&out.join("driver-hold.sh"))
        .iter()
        .map(|call| call.len() - 4)
        .sum();
    assert_eq!(held, 16);
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(
        plan["operator_driver"]["unheld"],
        json!({"platform.example.com/node-class unset": 2, "platform.example.com/node-class=a100": 6})
    );
}

/// The DeviceConfig `spec.driver.upgradePolicy` the AMD chart values carry.
fn amd_policy(v: &Variant) -> Value {
    let values: Value = cluster_file(&rendered(&v.load()), "amd-gpu-operator-values.yaml");
    values["deviceConfig"]["spec"]["driver"]["upgradePolicy"].clone()
}

/// The AMD GPU Operator's driver upgrades are bounded as NVIDIA's are: one failure domain's
/// wave budget at a time (never more than a wave), as many failed nodes before it stops,
/// each drained first within the rollout's drain timeout, then rebooted; a field only where
/// the pinned chart's CRD has it.
#[test]
fn amd_operator_driver_upgrades_follow_the_rollout_budgets() {
    // The example: chart v1.5.1, waveBudget 1, drainTimeout 30m.
    let p = amd_policy(&Variant::of("mi300x-rhel"));
    assert_eq!(
        p,
        json!({
            "enable": true,
            "maxParallelUpgrades": 1,
            "maxUnavailableNodes": 1,
            "nodeDrainPolicy": {"force": false, "timeoutSeconds": 1800, "gracePeriodSeconds": -1},
            "rebootRequired": true,
        })
    );
    let p = amd_policy(
        &Variant::of("mi300x-rhel")
            .set("rollout.waveBudget", json!(4))
            .set("rollout.maxWaveSize", json!(3))
            .set("rollout.engine.drainTimeout", json!("10m")),
    );
    assert_eq!(p["maxParallelUpgrades"], 3);
    assert_eq!(p["maxUnavailableNodes"], 3);
    assert_eq!(p["nodeDrainPolicy"]["timeoutSeconds"], 600);
    let p = amd_policy(&Variant::of("mi300x-rhel").set("rollout.waveBudget", json!("25%")));
    assert_eq!(p["maxParallelUpgrades"], 1);
    // Chart v1.2.1 has the policy but no drain grace period (v1.2.2 on); its DeviceConfig
    // is its own file.
    let bp = Variant::of("mi300x-rhel")
        .set("accelerators.operator.version", json!("v1.2.1"))
        .set("kubernetes.taints", json!([]))
        .load();
    let dc: Value = cluster_file(&rendered(&bp), "amd-deviceconfig.yaml");
    let p = &dc["spec"]["driver"]["upgradePolicy"];
    assert_eq!(p["maxParallelUpgrades"], 1, "{dc}");
    assert_eq!(
        p["nodeDrainPolicy"],
        json!({"force": false, "timeoutSeconds": 1800})
    );
}

/// The AMD GPU Operator's upgrade manager holds no node back, so its driver bump cannot be
/// staged by the waves: `rollout plan` writes no hold or release scripts for it and says,
/// in its text and its plan.json, that the operator rolls it beside the waves and what the
/// site does instead; the gate does not ask for the driver.
#[test]
fn an_amd_operator_driver_bump_is_named_as_unstaged() {
    let s = crate::rollout::Setup::new(|v| v, 12);
    let write = |file: &str, version: &str, release: &str| {
        Variant::of("mi300x-rhel")
            .set("metadata.version", json!(release))
            .set("accelerators.driver.version", json!(version))
            .write(&s.path(file));
    };
    write("old.yaml", "6.2.4", "2026.10.1");
    write("new.yaml", "6.3.3", "2026.12.1");
    // The fleet as AMD's node labeller labels it.
    let mut nodes: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("nodes.json")).unwrap()).unwrap();
    for n in nodes["items"].as_array_mut().unwrap() {
        let labels = n["metadata"]["labels"].as_object_mut().unwrap();
        labels.remove("nvidia.com/gpu.product");
        labels.remove("nvidia.com/gpu.clique");
        labels.insert(
            "amd.com/gpu.product-name".into(),
            json!("AMD_Instinct_MI300X_OAM"),
        );
    }
    std::fs::write(s.path("nodes.json"), nodes.to_string()).unwrap();
    let out = s.path("out");
    let o = s.plan(&["-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("6.2.4 → 6.3.3, rolled by the GPU operator, NOT staged by these waves")
            && text.contains("holds no node back")
            && text
                .contains("kmm.node.kubernetes.io/version-module.<namespace>.<deviceconfig>=6.3.3"),
        "{text}"
    );
    assert!(!out.join("driver-hold.sh").exists());
    assert!(!out.join("wave-000-driver.sh").exists());
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    assert!(plan.get("operator_driver").is_none(), "{plan:#}");
    assert_eq!(plan["unstaged_driver"]["from"], "6.2.4");
    assert_eq!(plan["unstaged_driver"]["to"], "6.3.3");
    // The same driver on both sides: nothing to say.
    write("new.yaml", "6.2.4", "2026.12.1");
    let o = s.plan(&["--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(plan.get("unstaged_driver").is_none(), "{plan:#}");
}
