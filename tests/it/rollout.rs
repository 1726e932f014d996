//! `nodeimg rollout plan|gate|simulate` and `nodeimg accept compare` through the binary:
//! waves within the failure-domain budget with canaries per SKU, live changes without
//! drain, the manifests (golden in `golden/rollout/`), gates on acceptance records, fleet
//! baselines; and, in the opt-in corpus suite, the rendered system-upgrade-controller
//! Plans and NodeHealthChecks against the CRDs of those engines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::k8s_schema::{self, crd_validator, errors};
use crate::support::{Variant, nodeimg, root, stderr, stdout};
use nodeimg::accept::complete::without_layer1;
use nodeimg::verify::fact::Fact;
use nodeimg::verify::report::record::{
    AcceptanceRecord, BlueprintIdentity, FigureValue, RecordResult,
};
use serde_json::{Value, json};

pub fn digest(c: char) -> String {
    std::iter::repeat_n(c, 64).collect()
}

pub fn image(c: char) -> String {
    format!(
        "registry.gpu.example.com/nodes/h100-sxm-ubuntu@sha256:{}",
        digest(c)
    )
}

/// `n` Nodes in racks of 4, racks over 3 zones, the last quarter another SKU.
pub fn nodes_json(n: usize) -> String {
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let rack = i / 4;
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {
                "name": format!("gpu-{i:03}"),
                "labels": {
                    "kubernetes.io/hostname": format!("gpu-{i:03}"),
                    "topology.kubernetes.io/zone": format!("zone-{}", rack % 3),
                    "platform.example.com/rack": format!("rack-{rack:02}"),
                    "nvidia.com/gpu.clique": format!("clique-{}", rack / 2),
                    "nvidia.com/gpu.product": if i < n * 3 / 4 { "NVIDIA-H100-80GB-HBM3" } else { "NVIDIA-H100-SXM5-80GB" },
                }}})
        })
        .collect();
    serde_json::to_string_pretty(&json!({"apiVersion": "v1", "kind": "List", "items": items}))
        .unwrap()
}

/// A copy of `blueprints/` with `old.yaml` (the H100 example one kernel back, as
/// 2026.10.1) and `new.yaml` (`edit` applied to the example), and `nodes.json`.
pub struct Setup {
    pub dir: tempfile::TempDir,
}

impl Setup {
    pub fn new(edit: impl Fn(Variant) -> Variant, nodes: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&root().join("blueprints"), dir.path());
        let old = Variant::parse(
            dir.path().join("h100-sxm-ubuntu.yaml"),
            &std::fs::read_to_string(root().join("blueprints/h100-sxm-ubuntu.yaml")).unwrap(),
        );
        old.clone()
            .set("metadata.version", json!("2026.10.1"))
            .set("os.kernel", json!("5.15.0-170-generic"))
            .write(&dir.path().join("old.yaml"));
        edit(old).write(&dir.path().join("new.yaml"));
        std::fs::write(dir.path().join("nodes.json"), nodes_json(nodes)).unwrap();
        Setup { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn plan(&self, extra: &[&str]) -> std::process::Output {
        let (old, new, nodes) = (
            self.path("old.yaml"),
            self.path("new.yaml"),
            self.path("nodes.json"),
        );
        let mut args: Vec<String> = vec![
            "rollout".into(),
            "plan".into(),
            old.display().to_string(),
            new.display().to_string(),
            "--nodes".into(),
            nodes.display().to_string(),
            "--old-image".into(),
            image('a'),
            "--new-image".into(),
            image('b'),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        nodeimg(&args)
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn plan_json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).unwrap()
}

#[test]
fn waves_keep_the_budget_in_every_failure_domain_and_canaries_go_first() {
    let s = Setup::new(|v| v, 48);
    let plan = plan_json(&s.plan(&["--format", "json"]));
    assert_eq!(plan["impact"], "reboot", "a kernel change reboots");
    assert_eq!(
        plan["steps"],
        json!({"cordon": true, "drain": true, "reboot": true})
    );
    let waves = plan["waves"].as_array().unwrap();
    let nodes: BTreeMap<String, Value> =
        serde_json::from_str::<Value>(&nodes_json(48)).unwrap()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (
                    n["metadata"]["name"].as_str().unwrap().to_owned(),
                    n["metadata"]["labels"].clone(),
                )
            })
            .collect();
    // The canary wave: one node per SKU.
    assert_eq!(waves[0]["canary"], true);
    assert_eq!(
        waves[0]["skus"],
        json!({"NVIDIA-H100-80GB-HBM3": 1, "NVIDIA-H100-SXM5-80GB": 1})
    );
    let mut seen = Vec::new();
    for w in waves {
        let names: Vec<&str> = w["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(names.len() <= 16, "maxWaveSize");
        for key in [
            "topology.kubernetes.io/zone",
            "platform.example.com/rack",
            "nvidia.com/gpu.clique",
        ] {
            let mut per: BTreeMap<&str, usize> = BTreeMap::new();
            for n in &names {
                *per.entry(nodes[*n][key].as_str().unwrap()).or_default() += 1;
            }
            assert!(
                per.values().all(|c| *c <= 1),
                "wave {} takes 2 from one {key}: {per:?}",
                w["index"]
            );
        }
        seen.extend(names);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 48, "every node in exactly one wave");
    assert_eq!(plan["rollback"]["image"], image('a'));
}

#[test]
fn a_live_only_change_skips_cordon_and_drain() {
    let s = Setup::new(
        |v| {
            v.set("metadata.version", json!("2026.10.1"))
                .set("os.kernel", json!("5.15.0-170-generic"))
                .set("acceptance.regressionTolerancePercent", json!(3))
        },
        12,
    );
    let out = s.path("out");
    let plan = plan_json(&s.plan(&["--format", "json", "-o", out.to_str().unwrap()]));
    assert_eq!(plan["impact"], "live");
    assert_eq!(plan["tolerance_percent"], 3.0);
    let wave: Value = serde_yaml::from_str(
        std::fs::read_to_string(out.join("wave-001.yaml"))
            .unwrap()
            .as_str(),
    )
    .unwrap();
    assert_eq!(wave["spec"]["cordon"], false);
    assert!(wave["spec"].get("drain").is_none(), "{wave:#?}");
    let envs = &wave["spec"]["upgrade"]["envs"];
    assert_eq!(envs[2], json!({"name": "NODEIMG_IMPACT", "value": "live"}));
}

#[test]
fn no_change_plans_no_wave_and_bad_inputs_are_refused() {
    let s = Setup::new(
        |v| {
            v.set("metadata.version", json!("2026.10.1"))
                .set("os.kernel", json!("5.15.0-170-generic"))
        },
        4,
    );
    let plan = plan_json(&s.plan(&["--format", "json"]));
    assert!(plan["waves"].as_array().unwrap().is_empty());
    assert!(plan["impact"].is_null());
    // An image not pinned by digest.
    let o = nodeimg(&[
        "rollout",
        "plan",
        s.path("old.yaml").to_str().unwrap(),
        s.path("new.yaml").to_str().unwrap(),
        "--nodes",
        s.path("nodes.json").to_str().unwrap(),
        "--old-image",
        "reg/x:latest",
        "--new-image",
        &image('b'),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--old-image"), "{}", stderr(&o));
    // A damaged Node list is located.
    std::fs::write(s.path("nodes.json"), "{\"kind\": \"List\",\n \"items\": [}").unwrap();
    let o = s.plan(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
}

#[test]
fn the_nodes_can_come_from_standard_input() {
    let s = Setup::new(|v| v.set("os.kernel", json!("5.15.0-171-generic")), 24);
    let from_file = plan_json(&s.plan(&["--format", "json"]));
    let (old, new) = (s.path("old.yaml"), s.path("new.yaml"));
    let args = [
        "rollout",
        "plan",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        "--nodes",
        "-",
        "--old-image",
        &image('a'),
        "--new-image",
        &image('b'),
        "--format",
        "json",
    ];
    let nodes = std::fs::read(s.path("nodes.json")).unwrap();
    let o = crate::support::nodeimg_stdin(&args, &nodes);
    assert_eq!(plan_json(&o), from_file, "the same plan as from the file");
    assert_eq!(
        plan_json(&o)["waves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["nodes"].as_array().unwrap().len())
            .sum::<usize>(),
        24
    );
    // A damaged list on standard input is located as such.
    let o = crate::support::nodeimg_stdin(&args, b"{\"kind\": \"List\",\n \"items\": [}");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--nodes <stdin>"), "{}", stderr(&o));
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
    // Only one input can be standard input.
    let mut two = args;
    two[2] = "-";
    let o = crate::support::nodeimg_stdin(&two, &nodes);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("only one of"), "{}", stderr(&o));
}

#[test]
fn without_a_site_applier_the_node_image_applies_itself() {
    let s = Setup::new(
        |v| {
            v.remove("rollout.engine.applier")
                .set("rollout.engine.args", json!(["--skip", "boot-loader"]))
                .set("rollout.engine.pullSecret", json!("node-images"))
        },
        8,
    );
    let out = s.path("out");
    let o = s.plan(&["-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |name: &str| -> Value {
        serde_yaml::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap()
    };
    for (file, image) in [("wave-000.yaml", image('b')), ("rollback.yaml", image('a'))] {
        let plan = read(file);
        let up = &plan["spec"]["upgrade"];
        assert_eq!(
            up["image"],
            image.as_str(),
            "{file}: the image installs itself"
        );
        assert_eq!(up["command"], json!(["/usr/local/bin/nodeimg"]), "{file}");
        assert_eq!(
            up["args"],
            json!([
                "apply",
                "--in-place",
                "--root",
                "/host",
                image,
                "--skip",
                "boot-loader"
            ]),
            "{file}"
        );
        // The private registry: the kubelet pulls with the Secret, nodeimg reads it.
        assert_eq!(
            plan["spec"]["imagePullSecrets"],
            json!([{"name": "node-images"}]),
            "{file}"
        );
        assert_eq!(
            plan["spec"]["secrets"],
            json!([{"name": "node-images", "path": "/run/nodeimg/pull-secret"}]),
            "{file}"
        );
        assert!(
            up["envs"].as_array().unwrap().contains(&json!({
                "name": "REGISTRY_AUTH_FILE",
                "value": "/run/nodeimg/pull-secret/.dockerconfigjson"
            })),
            "{file}: {}",
            up["envs"]
        );
    }

    // A Secret name that is not one is refused when the blueprint loads.
    let s = Setup::new(
        |v| v.set("rollout.engine.pullSecret", json!("Not_A_Name")),
        8,
    );
    let o = s.plan(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rollout.engine.pullSecret"),
        "{}",
        stderr(&o)
    );
}

// ---- golden ------------------------------------------------------------------------

/// The example fleet in `golden/rollout/`: what `rollout plan -o` writes for the H100
/// example, from the previous kernel, over `nodes.json` there.
#[test]
fn rollout_manifests_match_golden() {
    let golden = root().join("golden/rollout/h100-sxm-ubuntu");
    let s = Setup::new(|v| v, 0);
    std::fs::copy(golden.join("nodes.json"), s.path("nodes.json")).unwrap();
    let out = s.path("out");
    let o = s.plan(&["-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut want: BTreeMap<String, String> = BTreeMap::new();
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if !name.starts_with('.') {
            let text = std::fs::read_to_string(&p).unwrap();
            // The temporary folder's path is not part of the golden file.
            want.insert(name, text.replace(s.dir.path().to_str().unwrap(), "<dir>"));
        }
    }
    want.insert("plan.txt".into(), stdout(&o));
    if std::env::var_os("NODEIMG_UPDATE_GOLDEN").is_some() {
        for e in std::fs::read_dir(&golden).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap() != "nodes.json" {
                std::fs::remove_file(p).unwrap();
            }
        }
        for (name, text) in &want {
            std::fs::write(golden.join(name), text).unwrap();
        }
        return;
    }
    let mut problems = Vec::new();
    for (name, text) in &want {
        match std::fs::read_to_string(golden.join(name)) {
            Ok(have) if &have == text => {}
            Ok(have) => problems.push(format!(
                "{name} differs:\n{}",
                similar::TextDiff::from_lines(&have, text)
                    .unified_diff()
                    .header("golden", "rendered")
            )),
            Err(_) => problems.push(format!("{name} is rendered but not in golden/rollout/")),
        }
    }
    assert!(
        problems.is_empty(),
        "run scripts/update-golden if intended:\n{}",
        problems.join("\n")
    );
}

// ---- gates -------------------------------------------------------------------------

pub fn record(
    host: &str,
    bp_id: &str,
    result: RecordResult,
    busbw: f64,
    at: &str,
) -> AcceptanceRecord {
    let mut r = without_layer1(
        BlueprintIdentity {
            name: "h100-sxm-ubuntu".into(),
            version: "x".into(),
            id: bp_id.into(),
            file: "bp.yaml".into(),
        },
        Some(host),
        at,
    );
    r.result = result;
    r.hardware.product = Fact::Known("DGX H100".into());
    r.figures.insert(
        "nccl.all_reduce.busbw".into(),
        FigureValue {
            value: busbw,
            unit: "GB/s".into(),
            higher_is_better: true,
            evidence: format!("{host}/nccl.log:40"),
        },
    );
    r
}

pub fn write_record(dir: &Path, r: &AcceptanceRecord) {
    std::fs::create_dir_all(dir).unwrap();
    let host = r.hostname.known().unwrap();
    let path = dir.join(format!("{host}.json"));
    std::fs::write(&path, r.render_for(&path).unwrap()).unwrap();
}

fn gate(s: &Setup, wave: usize, previous: bool) -> std::process::Output {
    let mut args = vec![
        "rollout".to_owned(),
        "gate".into(),
        "--plan".into(),
        s.path("out/plan.json").display().to_string(),
        "--wave".into(),
        wave.to_string(),
        s.path("after").display().to_string(),
    ];
    if previous {
        args.extend(["--previous".into(), s.path("before").display().to_string()]);
    }
    nodeimg(&args)
}

#[test]
fn a_gate_proceeds_only_on_accepted_records_without_regression() {
    let s = Setup::new(|v| v, 24);
    let out = s.path("out");
    assert!(s.plan(&["-o", out.to_str().unwrap()]).status.success());
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    let new_id = plan["to"]["id"].as_str().unwrap().to_owned();
    let old_id = plan["from"]["id"].as_str().unwrap().to_owned();
    let wave1: Vec<String> = plan["waves"][1]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect();
    for n in &wave1 {
        write_record(
            &s.path("before"),
            &record(
                n,
                &old_id,
                RecordResult::Pass,
                480.0,
                "2026-11-01T00:00:00Z",
            ),
        );
        write_record(
            &s.path("after"),
            &record(
                n,
                &new_id,
                RecordResult::Pass,
                478.0,
                "2026-12-01T00:00:00Z",
            ),
        );
    }
    let o = gate(&s, 1, true);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("PROCEED"));
    assert!(stdout(&o).contains("wave-002.yaml"), "{}", stdout(&o));

    // One node 10 % slower than its own previous record: halt, naming the rollback.
    write_record(
        &s.path("after"),
        &record(
            &wave1[0],
            &new_id,
            RecordResult::Pass,
            430.0,
            "2026-12-01T01:00:00Z",
        ),
    );
    let o = gate(&s, 1, true);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("HALT") && text.contains(&wave1[0]) && text.contains("regression"),
        "{text}"
    );
    assert!(
        text.contains(&image('a')),
        "the rollback image is named: {text}"
    );

    // A record of the old blueprint, a failed record, a missing record.
    write_record(
        &s.path("after"),
        &record(
            &wave1[0],
            &old_id,
            RecordResult::Pass,
            480.0,
            "2026-12-01T02:00:00Z",
        ),
    );
    write_record(
        &s.path("after"),
        &record(
            &wave1[1],
            &new_id,
            RecordResult::Fail,
            480.0,
            "2026-12-01T02:00:00Z",
        ),
    );
    std::fs::remove_file(s.path("after").join(format!("{}.json", wave1[2]))).unwrap();
    let o = gate(&s, 1, false);
    let g: Value = {
        let o = nodeimg(&[
            "rollout",
            "gate",
            "--format",
            "json",
            "--plan",
            out.join("plan.json").to_str().unwrap(),
            "--wave",
            "1",
            s.path("after").to_str().unwrap(),
        ]);
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(g["decision"], "halt");
    let reasons: Vec<String> = g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["reasons"].to_string())
        .collect();
    assert!(reasons[0].contains("not of the new image"), "{reasons:?}");
    assert!(reasons[1].contains("result fail"), "{reasons:?}");
    assert!(reasons[2].contains("no acceptance record"), "{reasons:?}");
    // A wave the plan does not have.
    let o = gate(&s, 99, false);
    assert_eq!(o.status.code(), Some(2));
}

// ---- fleet baselines -----------------------------------------------------------------

#[test]
fn accept_compare_flags_the_slow_node_of_a_sku() {
    let dir = tempfile::tempdir().unwrap();
    for (i, bw) in [480.0, 482.0, 479.0, 481.0, 440.0].iter().enumerate() {
        write_record(
            dir.path(),
            &record(
                &format!("gpu-{i:02}"),
                "sha256:x",
                RecordResult::Pass,
                *bw,
                "2026-12-01T00:00:00Z",
            ),
        );
    }
    let o = nodeimg(&["accept", "compare", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("gpu-04  nccl.all_reduce.busbw: 440 GB/s (median 480 GB/s"),
        "{text}"
    );
    assert!(!text.contains("gpu-00  "), "{text}");
    let o = nodeimg(&[
        "accept",
        "compare",
        "--tolerance",
        "10",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "8.3 % is within 10 %: {}",
        stdout(&o)
    );
    // `accept` itself still needs its blueprint.
    let o = nodeimg(&["accept", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

// ---- simulate --------------------------------------------------------------------------

#[test]
fn simulate_is_deterministic_and_reports_where_it_halted() {
    let run = |seed: &str| {
        nodeimg(&[
            "rollout",
            "simulate",
            "--nodes",
            "500",
            "--zones",
            "3",
            "--rack-size",
            "8",
            "--skus",
            "2",
            "--budget",
            "2",
            "--accept-failure",
            "0.01",
            "--seed",
            seed,
            "--format",
            "json",
        ])
    };
    let (a, b) = (run("3"), run("3"));
    assert_eq!(stdout(&a), stdout(&b));
    let r: Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert!(r["over_budget"].as_array().unwrap().is_empty());
    assert_eq!(
        r["accepted_new"].as_u64().unwrap() + r["old"].as_u64().unwrap(),
        500,
        "every node on the accepted new image or the old one"
    );
    let o = nodeimg(&["rollout", "simulate", "--nodes", "100", "--canary-fails"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("Halted at wave 0 (canary)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn simulate_reports_remediation_by_fault_class() {
    let args = |extra: &[&str]| {
        let mut a = vec![
            "rollout",
            "simulate",
            "--nodes",
            "400",
            "--zones",
            "2",
            "--rack-size",
            "8",
            "--budget",
            "2",
            "--seed",
            "11",
            "--fault",
            "transient=0.2",
            "--fault",
            "driver-daemon=0.05",
            "--fault",
            "device=0.01",
            "--fault",
            "link=0.01",
        ];
        a.extend_from_slice(extra);
        nodeimg(&a)
    };
    let o = args(&["--format", "json", "--max-unhealthy", "5%"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let m = &r["remediation"];
    assert_eq!(m["max_unhealthy"], 20, "5 % of 400 nodes");
    let classes: BTreeMap<String, &Value> = m["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["class"].as_str().unwrap().to_owned(), c))
        .collect();
    assert_eq!(
        classes.keys().map(String::as_str).collect::<Vec<_>>(),
        ["device", "driver-daemon", "link", "transient"]
    );
    let t = classes["transient"];
    assert_eq!(
        t["pod_restarts"], t["faults"],
        "a transient fault only restarts the Pod"
    );
    for hw in ["device", "link"] {
        let c = classes[hw];
        let faults = c["faults"].as_u64().unwrap();
        // The ladder: at most maxReboots (2) reboots a fault, then repair.
        assert!(
            c["reboots"].as_u64().unwrap() <= 2 * faults,
            "{hw}: bounded reboots"
        );
        assert!(c["to_repair"].as_u64().unwrap() <= faults, "{hw}");
        assert_eq!(
            c["back_in_service"].as_u64().unwrap() + c["off_to_repair"].as_u64().unwrap(),
            faults,
            "{hw}: every fault ends"
        );
    }
    let d = classes["driver-daemon"];
    assert_eq!(
        d["daemon_restarts"].as_u64().unwrap() + d["reboots"].as_u64().unwrap(),
        d["faults"].as_u64().unwrap()
    );
    assert!(r["over_budget"].as_array().unwrap().is_empty());
    assert!(m["settled_seconds"].as_f64().unwrap() >= r["total_seconds"].as_f64().unwrap());
    // The default maxUnhealthy is a share (5 %), so it grows with the fleet: 20 of 400.
    let o = args(&[]);
    let text = stdout(&o);
    assert!(text.contains("Remediation (maxUnhealthy 20"), "{text}");
    assert!(text.contains("device: "), "{text}");
    // A count of 1 holds remediation back once two nodes are unhealthy at once.
    let o = args(&["--max-unhealthy", "1"]);
    let text = stdout(&o);
    assert!(text.contains("Remediation (maxUnhealthy 1"), "{text}");
    assert!(text.contains("held back by maxUnhealthy"), "{text}");
    let o = args(&["--fault", "disk=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a fault class"), "{}", stderr(&o));
    let o = args(&["--max-unhealthy", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_completed_simulation_says_which_nodes_stay_on_the_previous_image() {
    let run = |max_unhealthy: &str| {
        let args = [
            "rollout",
            "simulate",
            "--nodes",
            "2000",
            "--seed",
            "7",
            "--fault",
            "device=0.002",
            "--fault",
            "link=0.002",
            "--max-unhealthy",
            max_unhealthy,
        ];
        let o = nodeimg(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let json = nodeimg(&[&args[..], &["--format", "json"]].concat());
        let r: Value = serde_json::from_str(&stdout(&json)).unwrap();
        (stdout(&o), r)
    };
    // maxUnhealthy 1: nodes in repair keep counting, later broken nodes are never
    // remediated and never upgraded; the text must not claim every node was accepted.
    let (text, r) = run("1");
    let old = r["old"].as_u64().unwrap();
    assert!(r["halted"].is_null(), "{text}");
    assert!(old > 0, "{text}");
    assert!(!text.contains("every node accepted"), "{text}");
    let line = text.lines().find(|l| l.starts_with("Completed:")).unwrap();
    assert!(
        line.contains(&format!("{} of 2000 node(s) accepted", r["accepted_new"]))
            && line.contains(&format!("{old} left on the previous image")),
        "{line}"
    );
    // The default share, 5 %: every node remediated, upgraded and accepted.
    let (text, r) = run("5%");
    assert_eq!(r["remediation"]["held_back"], 0, "{text}");
    assert_eq!(r["old"], 0, "{text}");
    if r["off_to_repair"] == 0 {
        assert!(
            text.contains("Completed: every node accepted on the new image."),
            "{text}"
        );
    }
}

/// The health plugin's config (custom-plugin JSON) from the rendered
/// node-problem-detector values of the H100 example.
fn health_plugin_config() -> Value {
    let r = crate::support::rendered(&crate::support::example("h100-sxm-ubuntu"));
    let values: Value = crate::support::cluster_file(&r, "node-problem-detector-values.yaml");
    let text = values["settings"]["custom_monitor_definitions"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .as_str()
        .unwrap();
    serde_json::from_str(text).unwrap()
}

/// The health plugin's script from the rendered node-problem-detector values of the H100
/// example, for the rule that sets `condition`.
fn health_script(condition: &str) -> String {
    let config = health_plugin_config();
    let rule = config["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["condition"] == condition)
        .unwrap();
    let args = rule["args"].as_array().unwrap();
    assert_eq!(
        args[args.len() - 3..args.len() - 1],
        [json!("/bin/sh"), json!("-c")]
    );
    args.last().unwrap().as_str().unwrap().to_owned()
}

#[test]
fn the_health_plugin_names_the_evidence_of_its_own_failure_and_keeps_the_first_ones() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A stand-in for `nodeimg verify` on a GPU node (this machine has none): it writes the
    // record, a capture when given --evidence-on-fail, a summary line, and exits with the
    // code in `rc`.
    let stand_in = d.join("nodeimg");
    std::fs::write(
        &stand_in,
        r#"#!/bin/sh
rec=; ev=
while [ $# -gt 0 ]; do
  case "$1" in --record) rec=$2; shift ;; --evidence-on-fail) ev=$2; shift ;; esac
  shift
done
run=$(( $(cat "$STATE/run" 2>/dev/null || echo 0) + 1 )); echo $run > "$STATE/run"
rc=$(cat "$STATE/rc")
echo "{\"run\": $run}" > "$rec"
if [ "$rc" -eq 1 ] && [ -n "$ev" ]; then : > "$ev/nodeimg-evidence-gpu-01-$run.tar.zst"; fi
echo "FAIL 1 of 8 (run $run)"
exit "$rc"
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    let evidence = d.join("evidence");
    let script = health_script("NodeimgDeviceProblem")
        .replace("/usr/local/bin/nodeimg", stand_in.to_str().unwrap())
        .replace("/var/lib/nodeimg/evidence", evidence.to_str().unwrap());
    assert!(!script.contains("/var/lib/nodeimg"), "{script}");
    let run = |rc: i32| {
        std::fs::write(d.join("rc"), rc.to_string()).unwrap();
        let o = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .env("STATE", d)
            .output()
            .unwrap();
        (o.status.code(), stdout(&o).trim_end().to_owned())
    };
    let dev = evidence.join("device");
    let captures = || {
        let mut v: Vec<String> = std::fs::read_dir(&dev)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tar.zst"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(run(0), (Some(0), "FAIL 1 of 8 (run 1)".to_owned()));
    assert!(captures().is_empty());
    let cap = |n: u32| dev.join(format!("nodeimg-evidence-gpu-01-{n}"));
    let (code, out) = run(1);
    assert_eq!(code, Some(1));
    assert_eq!(
        out,
        format!(
            "evidence {}.tar.zst and {}.record.json: FAIL 1 of 8 (run 2)",
            cap(2).display(),
            cap(2).display()
        )
    );
    let record = |n: u32| std::fs::read_to_string(format!("{}.record.json", cap(n).display()));
    assert_eq!(record(2).unwrap().trim(), r#"{"run": 2}"#);
    for n in 3..=6 {
        assert!(
            run(1)
                .1
                .starts_with(&format!("evidence {}.tar.zst", cap(n).display()))
        );
    }
    assert_eq!(captures().len(), 5);
    // The limit is reached: no new capture, and the kept ones stay as they were — the
    // message names none of them as this verdict's.
    let (code, out) = run(1);
    assert_eq!(code, Some(1));
    assert_eq!(
        out,
        format!(
            "evidence: 5 captures already kept in {}: FAIL 1 of 8 (run 7)",
            dev.display()
        )
    );
    assert_eq!(captures().len(), 5);
    assert_eq!(record(6).unwrap().trim(), r#"{"run": 6}"#);
    assert_eq!(run(2).0, Some(2), "verify's unknown stays unknown");
}

/// The recovery ladder in the rendered remediation: device and link faults get the
/// reboot rung (bounded on the node by `maxReboots`), failures that need a person the
/// repair template; without a repair template no NodeHealthCheck acts on those, while
/// node-problem-detector still sets the condition and keeps the evidence (and the NFD taint
/// takes the node out, `default_isolation`). The class rules judge only what automation acts on, the
/// service rule only what needs a person: no failure is acted on twice.
#[test]
fn the_ladder_reboots_a_bounded_number_of_times_then_repair() {
    let files = |v: Variant| -> BTreeMap<String, Vec<u8>> {
        crate::support::rendered(&v.load())
            .cluster
            .files()
            .map(|(p, _, b)| (p.to_string(), b.to_vec()))
            .collect()
    };
    let with = files(Variant::of("h100-sxm-ubuntu"));
    let without = files(Variant::of("h100-sxm-ubuntu").remove("rollout.remediation.repair"));
    let nhc = |f: &BTreeMap<String, Vec<u8>>| -> Vec<String> {
        f.keys()
            .filter(|p| p.starts_with("remediation/nodehealthcheck-"))
            .cloned()
            .collect()
    };
    assert_eq!(
        nhc(&with),
        [
            "remediation/nodehealthcheck-device-link.yaml",
            "remediation/nodehealthcheck-driver-daemon.yaml",
            "remediation/nodehealthcheck-service.yaml"
        ]
    );
    assert_eq!(
        nhc(&without),
        [
            "remediation/nodehealthcheck-device-link.yaml",
            "remediation/nodehealthcheck-driver-daemon.yaml"
        ]
    );
    let doc = |f: &BTreeMap<String, Vec<u8>>, name: &str| -> Value {
        serde_yaml::from_slice(&f[&format!("remediation/nodehealthcheck-{name}.yaml")]).unwrap()
    };
    let conditions = |v: &Value| -> Vec<String> {
        v["spec"]["unhealthyConditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap().to_owned())
            .collect()
    };
    let device = doc(&with, "device-link");
    assert_eq!(
        conditions(&device),
        ["NodeimgDeviceProblem", "NodeimgLinkProblem"]
    );
    assert_eq!(
        device["spec"]["remediationTemplate"]["kind"], "SelfNodeRemediationTemplate",
        "the reboot rung"
    );
    let service = doc(&with, "service");
    assert_eq!(conditions(&service), ["NodeimgServiceRequired"]);
    assert_eq!(
        service["spec"]["remediationTemplate"]["kind"], "RepairQueueRemediationTemplate",
        "never a reboot for what needs a person"
    );
    let npd = String::from_utf8(without["node-problem-detector-values.yaml"].clone()).unwrap();
    for class in ["device", "link", "service"] {
        assert!(
            npd.contains("--evidence-on-fail $dir")
                && npd.contains(&format!("/var/lib/nodeimg/evidence/{class}")),
            "{class}: evidence kept without a repair template"
        );
    }
    assert!(npd.contains("--actions restart-daemon,reset-gpu,reset-fabric,reboot-node"));
    assert!(npd.contains("--actions check-cooling-power,service"));
    assert!(npd.contains("\"NodeimgServiceRequired\""));
    assert_eq!(
        npd,
        String::from_utf8(with["node-problem-detector-values.yaml"].clone()).unwrap()
    );
}

#[test]
fn a_remediated_node_returns_only_on_a_passing_acceptance_record() {
    let s = Setup::new(|v| v, 4);
    let plan = plan_json(&s.plan(&["--format", "json"]));
    let id = plan["to"]["id"].as_str().unwrap().to_owned();
    let at = "2026-12-01T10:00:00Z";
    let dir = s.path("recovered");
    write_record(&dir, &record("gpu-000", &id, RecordResult::Pass, 460.0, at));
    write_record(&dir, &record("gpu-001", &id, RecordResult::Fail, 460.0, at));
    write_record(
        &dir,
        &record("gpu-002", "0123456789abcdef", RecordResult::Pass, 460.0, at),
    );
    write_record(
        &dir,
        &record("gpu-003", &id, RecordResult::Overridden, 460.0, at),
    );
    let new = s.path("new.yaml");
    let readmit = |extra: &[&str]| {
        let mut a = vec![
            "rollout",
            "readmit",
            "--blueprint",
            new.to_str().unwrap(),
            dir.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        nodeimg(&a)
    };
    let o = readmit(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let commands: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        commands,
        [format!(
            "kubectl annotate node gpu-000 remediation.medik8s.io/manually-confirmed-healthy={at} --overwrite"
        )],
        "only the node accepted again: {text}"
    );
    assert!(text.contains("# 1/4 node(s) accepted again"), "{text}");
    assert!(text.contains("gpu-001: result fail"), "{text}");
    assert!(
        text.contains("gpu-002: the record is of blueprint"),
        "{text}"
    );
    assert!(
        text.contains("gpu-003: accepted only by break-glass override"),
        "{text}"
    );
    // The passing node alone: exit 0.
    let o = readmit(&["--node", "gpu-000"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A node without a record stays out.
    let o = readmit(&["--node", "gpu-000", "--node", "gpu-009", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["nodes"][1]["node"], "gpu-009");
    assert_eq!(r["nodes"][1]["reasons"][0], "no acceptance record");
    assert_eq!(r["commands"].as_array().unwrap().len(), 1);
    // The rendered NodeHealthChecks wait for exactly that annotation.
    let rendered = crate::support::rendered(&crate::support::example("h100-sxm-ubuntu"));
    let mut n = 0;
    for (path, _, bytes) in rendered.cluster.files() {
        if path.starts_with("remediation/nodehealthcheck-") {
            let doc: Value = serde_yaml::from_slice(bytes).unwrap();
            assert_eq!(doc["spec"]["healthyDelay"], "-1s", "{path}");
            let text = std::str::from_utf8(bytes).unwrap();
            assert!(
                text.contains(nodeimg::rollout::readmit::CONFIRMED),
                "{path}"
            );
            n += 1;
        }
    }
    assert_eq!(n, 3, "driver-daemon, device-link and service");
}

// ---- the opt-in schema suite -----------------------------------------------------------

const SUC: &str = "crds/system-upgrade-controller/v0.20.1/upgrade.cattle.io_plans.yaml";
const NHC: &str =
    "crds/node-healthcheck-operator/v0.12.0/remediation.medik8s.io_nodehealthchecks.yaml";

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn rollout_plans_validate_against_the_system_upgrade_controller_crd() {
    let v = crd_validator(SUC, "Plan");
    // The validator itself: the upstream sample passes, a misspelled field fails.
    let sample = std::fs::read_to_string(
        k8s_schema::dir()
            .join("crds/system-upgrade-controller/v0.20.1/samples/examples__k3s-upgrade.yaml"),
    )
    .unwrap();
    for doc in serde_yaml::Deserializer::from_str(&sample) {
        let doc = Value::deserialize(doc).unwrap();
        assert!(errors(&v, &doc).is_empty(), "{:?}", errors(&v, &doc));
    }
    let mut files = Vec::new();
    for (live, own_applier) in [(false, true), (true, true), (false, false)] {
        let s = Setup::new(
            |v| {
                let v = if live {
                    v.set("metadata.version", json!("2026.10.1"))
                        .set("os.kernel", json!("5.15.0-170-generic"))
                        .set("acceptance.dcgm.level", json!(2))
                } else {
                    v
                };
                if own_applier {
                    v
                } else {
                    v.remove("rollout.engine.applier")
                        .set("rollout.engine.pullSecret", json!("node-images"))
                }
            },
            24,
        );
        let out = s.path("out");
        assert!(s.plan(&["-o", out.to_str().unwrap()]).status.success());
        for e in std::fs::read_dir(&out).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                files.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    assert!(files.len() > 4);
    for (p, text) in &files {
        let doc: Value = serde_yaml::from_str(text).unwrap();
        assert_eq!(doc["kind"], "Plan");
        let e = errors(&v, &doc);
        assert!(e.is_empty(), "{}: {e:?}", p.display());
        let mut bad = doc.clone();
        bad["spec"]["concurrencyy"] = json!(1);
        assert!(!errors(&v, &bad).is_empty(), "a misspelled field must fail");
    }
}

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn remediation_manifests_validate_against_the_node_healthcheck_crd() {
    let v = crd_validator(NHC, "NodeHealthCheck");
    let mut n = 0;
    for name in crate::support::EXAMPLES {
        let r = crate::support::rendered(&crate::support::example(name));
        for (path, _, bytes) in r.cluster.files() {
            if !path.starts_with("remediation/nodehealthcheck-") {
                continue;
            }
            let doc: Value = serde_yaml::from_slice(bytes).unwrap();
            let e = errors(&v, &doc);
            assert!(e.is_empty(), "{name}: {path}: {e:?}");
            n += 1;
        }
    }
    // H100: driver-daemon, device-link and service; MI300X: device-link (its health checks
    // select no driver-daemon check, and it names no repair template).
    assert_eq!(n, 4, "H100: 3, MI300X: 1");
}

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn the_health_plugin_config_has_the_shape_of_the_upstream_custom_plugin_configs() {
    let upstream: Value = serde_json::from_str(
        &std::fs::read_to_string(
            k8s_schema::dir()
                .join("node-problem-detector/v1.36.0/config/health-checker-kubelet.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    let ours = health_plugin_config();
    assert_eq!(keys(&ours), keys(&upstream));
    // pluginConfig keys: those of every upstream custom-plugin config.
    let mut known = Vec::new();
    for e in
        std::fs::read_dir(k8s_schema::dir().join("node-problem-detector/v1.36.0/config")).unwrap()
    {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
        if v["plugin"] == "custom" {
            known.extend(keys(&v["pluginConfig"]));
        }
    }
    for k in keys(&ours["pluginConfig"]) {
        assert!(
            known.contains(&k),
            "pluginConfig.{k} is not an upstream key"
        );
    }
    let conditions: Vec<&str> = ours["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    for rule in ours["rules"].as_array().unwrap() {
        assert_eq!(keys(rule), keys(&upstream["rules"][0]), "{rule}");
        assert!(conditions.contains(&rule["condition"].as_str().unwrap()));
    }
    assert_eq!(
        conditions,
        [
            "GPUProblem",
            "NodeimgDeviceProblem",
            "NodeimgLinkProblem",
            "NodeimgDriverDaemonProblem",
            "NodeimgOsMemoryDiskProblem",
            "NodeimgServiceRequired"
        ]
    );
}

use serde::Deserialize;

/// After a remediation, the acceptance workloads of the failed part re-admit the node:
/// rendered to run on the remediated node (the re-admission label) through its cordon,
/// one table naming them by part, every file it names rendered.
#[test]
fn readmission_workloads_run_on_the_remediated_node_through_its_cordon() {
    let r = crate::support::rendered(&crate::support::example("h100-sxm-ubuntu"));
    let table: Value = serde_yaml::from_slice(
        r.cluster
            .file("remediation/readmission.yaml")
            .expect("the re-admission table"),
    )
    .unwrap();
    let parts: BTreeMap<String, Value> = table["data"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                serde_yaml::from_str(v.as_str().unwrap()).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        parts.keys().map(String::as_str).collect::<Vec<_>>(),
        ["gpu", "gpu-links", "pcie", "rail"]
    );
    assert_eq!(
        parts["gpu"]["workloads"][0], "remediation/readmission-dcgm.yaml",
        "DCGM diagnostics for a GPU"
    );
    assert_eq!(
        parts["rail"]["workloads"][0],
        "remediation/readmission-rdma.yaml"
    );
    for part in parts.values() {
        for file in part["workloads"].as_array().unwrap() {
            let path = file.as_str().unwrap();
            let doc: Value = serde_yaml::from_slice(
                r.cluster
                    .file(path)
                    .unwrap_or_else(|| panic!("{path} not rendered")),
            )
            .unwrap();
            let text = serde_json::to_string(&doc).unwrap();
            assert!(
                doc["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("nodeimg-readmission-"),
                "{path}"
            );
            assert!(
                text.contains("\"nodeimg.dev/readmission\":\"run\""),
                "{path}"
            );
            assert!(text.contains("node.kubernetes.io/unschedulable"), "{path}");
            assert!(
                !text.contains("\"nodeimg.dev/acceptance\":\"run\""),
                "{path}"
            );
        }
    }
    // The acceptance workloads themselves never tolerate a cordon.
    let dcgm =
        std::str::from_utf8(r.cluster.file("acceptance/dcgm-diag-job.yaml").unwrap()).unwrap();
    assert!(!dcgm.contains("unschedulable") && dcgm.contains("name: nodeimg-acceptance-dcgm"));
}

/// An H100 blueprint's plan refuses Node objects that GPU feature discovery labels as
/// another GPU or another count, naming each; narrowed with --selector, it plans.
#[test]
fn a_plan_refuses_nodes_of_other_hardware() {
    let s = Setup::new(|v| v.set("os.kernel", json!("5.15.0-171-generic")), 8);
    let mut nodes: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("nodes.json")).unwrap()).unwrap();
    let items = nodes["items"].as_array_mut().unwrap();
    items[6]["metadata"]["labels"]["nvidia.com/gpu.product"] = json!("NVIDIA-H200");
    items[7]["metadata"]["labels"]["nvidia.com/gpu.count"] = json!("4");
    std::fs::write(s.path("nodes.json"), nodes.to_string()).unwrap();
    let o = s.plan(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("gpu-006: nvidia.com/gpu.product=NVIDIA-H200"),
        "{err}"
    );
    assert!(err.contains("gpu-007: nvidia.com/gpu.count=4"), "{err}");
    assert!(err.contains("2 node(s)"), "{err}");
    assert!(stdout(&o).is_empty());
    // The H100 nodes alone plan.
    let o = s.plan(&[
        "--format",
        "json",
        "--selector",
        "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3",
    ]);
    let items = nodes["items"].as_array().unwrap();
    let h100 = items
        .iter()
        .filter(|n| n["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3")
        .count();
    assert!(h100 < 8);
    let plan = plan_json(&o);
    let planned: usize = plan["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["nodes"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(planned, h100, "{plan}");
}

/// The product label must be the blueprint model's own as GPU feature discovery writes it:
/// `H100 SXM` is not an H100 NVL or PCIe card, though all three say H100.
#[test]
fn a_plan_matches_the_gpu_product_exactly() {
    let s = Setup::new(|v| v.set("os.kernel", json!("5.15.0-171-generic")), 8);
    let mut nodes: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("nodes.json")).unwrap()).unwrap();
    let items = nodes["items"].as_array_mut().unwrap();
    items[4]["metadata"]["labels"]["nvidia.com/gpu.product"] = json!("NVIDIA-H100-NVL");
    items[5]["metadata"]["labels"]["nvidia.com/gpu.product"] = json!("NVIDIA-H100-PCIe");
    // The same product shared by time-slicing is still the product.
    items[1]["metadata"]["labels"]["nvidia.com/gpu.product"] =
        json!("NVIDIA-H100-80GB-HBM3-SHARED");
    std::fs::write(s.path("nodes.json"), nodes.to_string()).unwrap();
    let o = s.plan(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("gpu-004: nvidia.com/gpu.product=NVIDIA-H100-NVL, the blueprint declares nvidia H100 SXM (NVIDIA-H100-80GB-HBM3 or NVIDIA-H100-SXM5-80GB)"),
        "{err}"
    );
    assert!(
        err.contains("gpu-005: nvidia.com/gpu.product=NVIDIA-H100-PCIe"),
        "{err}"
    );
    assert!(!err.contains("gpu-001"), "{err}");
    assert!(err.contains("2 node(s)"), "{err}");
}

/// AMD's node labeller: an MI300X blueprint accepts `AMD_Instinct_MI300X_OAM` / `74a1`
/// and refuses another Instinct, and an H100 blueprint refuses any AMD-labelled node.
#[test]
fn amd_node_labels_are_read_too() {
    use nodeimg::blueprint::compat::Matrix;
    use nodeimg::rollout::hardware::contradictions;
    let node = |name: &str, labels: Value| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}});
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        node("mi300x", json!({"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM", "amd.com/gpu.device-id": "74a1"})),
        node("mi325x", json!({"amd.com/gpu.product-name": "AMD_Instinct_MI325X_OAM", "amd.com/gpu.device-id": "74a5"})),
        node("mixed", json!({"amd.com/gpu.device-id.74a1": "4", "amd.com/gpu.device-id.74a5": "4"})),
        node("unlabelled", json!({})),
    ]});
    let nodes = nodeimg::k8s::node::parse(&list.to_string()).unwrap();
    let matrix = Matrix::builtin();
    let mi300x = crate::support::example("mi300x-rhel");
    let found: Vec<String> = contradictions(&nodes, mi300x.spec(), &matrix)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "mi325x: amd.com/gpu.product-name=AMD_Instinct_MI325X_OAM, the blueprint declares amd MI300X (AMD_Instinct_MI300X_OAM)",
            "mi325x: amd.com/gpu.device-id=74a5, the blueprint declares amd MI300X (74a1)",
            "mixed: amd.com/gpu.device-id.74a5=74a5, the blueprint declares amd MI300X (74a1)",
        ],
        "{found:#?}"
    );
    let h100 = crate::support::example("h100-sxm-ubuntu");
    let found = contradictions(&nodes, h100.spec(), &matrix);
    let names: std::collections::BTreeSet<&str> = found.iter().map(|c| c.node.as_str()).collect();
    assert_eq!(names, ["mi300x", "mi325x", "mixed"].into_iter().collect());
}
