//! Acceptance on a node whose GPUs the device plugin shares (time-slicing, MPS). The
//! plugin refuses a request for more than one replica, so every layer-4/5 workload that
//! asks for the node's GPUs renders into `acceptance/whole-gpus/` and selects the
//! plugin's configuration without sharing (`nodeimg.whole-gpus`, a second key of the
//! sharing ConfigMap); `kubectl apply -f acceptance/` applies only what a shared node
//! admits; `acceptance/whole-gpus.sh` switches the nodes, applies, waits and always
//! restores the class's key (run here with a stand-in kubectl that records its calls);
//! `verify --phase cluster` tells a node left in that window; the re-admission
//! workloads select the whole key too.

use crate::support::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const LABEL: &str = "nvidia.com/device-plugin.config";
const WHOLE: &str = "nodeimg.whole-gpus";
const CLASS: &str = "h100-sxm-ubuntu";

fn shared(mode: &str) -> Variant {
    Variant::of(CLASS).set("accelerators.sharing", json!({"mode": mode, "replicas": 4}))
}

/// Every Pod spec in a manifest (a Pod, a List's items, the templates of a Job, MPIJob
/// or JobSet): any mapping with `containers`, by where it was found.
fn pod_specs(v: &Value, at: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            if m.get("containers").is_some_and(Value::is_array) {
                out.push((at.to_owned(), v.clone()));
            }
            for (k, x) in m {
                pod_specs(x, &format!("{at}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pod_specs(x, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The `nvidia.com/gpu` a Pod spec's containers ask for together.
fn gpus_asked(spec: &Value) -> u64 {
    spec["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["resources"]["limits"]["nvidia.com/gpu"].as_u64())
        .sum()
}

/// The rendered manifests under `prefix` (YAML only), each Pod spec in them.
fn specs_under(r: &nodeimg::render::Rendered, keep: impl Fn(&str) -> bool) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (path, _, bytes) in r.cluster.files() {
        if !keep(path) || !path.ends_with(".yaml") {
            continue;
        }
        let doc: Value = serde_yaml::from_slice(bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
        pod_specs(&doc, path, &mut out);
    }
    out
}

/// `kubectl apply -f acceptance/` is not recursive: what it applies must be admissible
/// on a node that shares its GPUs (one replica per Pod at most), and everything asking
/// for the node's GPUs — acceptance and re-admission alike — must wait for whole GPUs.
#[test]
fn on_shared_gpus_the_workloads_asking_for_every_gpu_wait_for_whole_ones() {
    for mode in ["time-slicing", "mps"] {
        let r = rendered(&shared(mode).load());
        let top = specs_under(&r, |p| {
            p.strip_prefix("acceptance/")
                .is_some_and(|n| !n.contains('/'))
        });
        assert!(!top.is_empty(), "{mode}: the smoke List");
        for (at, spec) in &top {
            assert!(
                gpus_asked(spec) <= 1,
                "{mode}: {at} asks for {} GPUs on a node whose device plugin refuses more than one replica",
                gpus_asked(spec)
            );
            if gpus_asked(spec) == 1 {
                // The shared phase runs only where the node still shares.
                assert_eq!(spec["nodeSelector"][LABEL], CLASS, "{mode}: {at}");
            }
        }
        let whole = specs_under(&r, |p| {
            p.starts_with("acceptance/whole-gpus/") || (p.starts_with("remediation/readmission-"))
        });
        let mut files: Vec<&str> = whole
            .iter()
            .filter(|(at, _)| at.starts_with("acceptance/"))
            .map(|(at, _)| at.split('.').next().unwrap())
            .collect();
        files.dedup();
        assert_eq!(
            files,
            [
                "acceptance/whole-gpus/dcgm-diag-job",
                "acceptance/whole-gpus/framework-job",
                "acceptance/whole-gpus/framework-multinode",
                "acceptance/whole-gpus/nccl-job",
                "acceptance/whole-gpus/nccl-multinode",
                "acceptance/whole-gpus/nvbandwidth-job",
                "acceptance/whole-gpus/rdma-pair",
            ],
            "{mode}"
        );
        let mut asking = 0;
        for (at, spec) in &whole {
            if gpus_asked(spec) == 0 {
                continue; // an MPI launcher
            }
            asking += 1;
            assert_eq!(gpus_asked(spec), 8, "{mode}: {at}");
            assert_eq!(spec["nodeSelector"][LABEL], WHOLE, "{mode}: {at}");
        }
        assert!(asking >= 10, "{mode}: {asking} Pod specs asking for GPUs");
        // The re-admission table says how to run them.
        let table =
            std::str::from_utf8(r.cluster.file("remediation/readmission.yaml").unwrap()).unwrap();
        assert!(
            table.contains("acceptance/whole-gpus.sh -f remediation/readmission-"),
            "{table}"
        );
        // The device plugin's configuration without sharing, beside the class's.
        let values: Value = cluster_file(&r, "gpu-operator-values.yaml");
        let data = &values["devicePlugin"]["config"]["data"];
        let config: Value = serde_yaml::from_str(data[WHOLE].as_str().expect("whole key")).unwrap();
        assert_eq!(config, json!({"version": "v1"}), "{mode}");
        assert!(data[CLASS].as_str().unwrap().contains("replicas: 4"));
        let (_, script_mode, _) = r
            .cluster
            .files()
            .find(|(p, _, _)| *p == "acceptance/whole-gpus.sh")
            .expect("the window's script");
        assert_eq!(script_mode, 0o755);
    }
    // Whole GPUs already: one folder, no switch, no selector on the plugin's configuration.
    let r = rendered(&example(CLASS));
    assert!(
        !r.cluster.files().any(|(p, _, _)| p.contains("whole-gpus")),
        "nothing to switch"
    );
    for (at, spec) in specs_under(&r, |p| p.starts_with("acceptance/")) {
        assert!(spec["nodeSelector"].get(LABEL).is_none(), "{at}");
    }
}

/// The acceptance folder of the time-sliced H100, written out with its modes.
fn written() -> tempfile::TempDir {
    let r = rendered(&shared("time-slicing").load());
    let dir = tempfile::tempdir().unwrap();
    for (path, mode, bytes) in r.cluster.files() {
        if !(path.starts_with("acceptance/") || path.starts_with("remediation/")) {
            continue;
        }
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    dir
}

/// A stand-in kubectl first on PATH: records each call's arguments in `$LOG`; `apply`
/// prints `$APPLIED`; `get OBJ` prints the true conditions a finished object of OBJ's
/// kind has (`Failed` for `$FAILED`, none for `$RUNNING`); a call with an argument equal
/// to `$FAIL` fails.
const KUBECTL: &str = r#"#!/bin/sh
for a in "$@"; do printf '%s\t' "$a"; done >> "$LOG"; echo >> "$LOG"
for a in "$@"; do [ -n "${FAIL-}" ] && [ "$a" = "$FAIL" ] && exit 1; done
case $1 in
  apply) printf '%s\n' $APPLIED ;;
  get)
    if [ "$2" = "${RUNNING-}" ]; then exit 0; fi
    if [ "$2" = "${FAILED-}" ]; then printf 'FailureTarget Failed '; exit 0; fi
    case $2 in
      job.batch/*) printf 'SuccessCriteriaMet Complete ' ;;
      mpijob.kubeflow.org/*) printf 'Created Running Succeeded ' ;;
      jobset.jobset.x-k8s.io/*) printf 'Completed ' ;;
    esac ;;
esac
"#;

const APPLIED: &str = "configmap/nodeimg-acceptance-scripts job.batch/nodeimg-acceptance-dcgm mpijob.kubeflow.org/nodeimg-acceptance-nccl-multinode jobset.jobset.x-k8s.io/nodeimg-acceptance-rdma";

struct Window {
    dir: tempfile::TempDir,
    bin: tempfile::TempDir,
}

impl Window {
    fn new() -> Window {
        let bin = tempfile::tempdir().unwrap();
        let kubectl = bin.path().join("kubectl");
        std::fs::write(&kubectl, KUBECTL).unwrap();
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
        Window {
            dir: written(),
            bin,
        }
    }

    fn script(&self) -> PathBuf {
        self.dir.path().join("acceptance/whole-gpus.sh")
    }

    fn command(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Command {
        let path = format!(
            "{}:{}",
            self.bin.path().display(),
            std::env::var("PATH").unwrap()
        );
        let mut c = std::process::Command::new(self.script());
        c.args(args)
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("LOG", self.bin.path().join("calls"))
            .env("APPLIED", APPLIED)
            .env("NODEIMG_POLL_SECONDS", "0.05")
            .envs(env.iter().copied());
        c
    }

    /// Runs the script: its exit code and kubectl's calls.
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Vec<String>) {
        let o = self.command(args, env).output().unwrap();
        (o.status.code(), self.calls())
    }

    /// kubectl's calls so far, each as its arguments joined by spaces.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.bin.path().join("calls"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim_end_matches('\t').replace('\t', " "))
            .collect()
    }
}

fn label(node: &str, value: &str) -> String {
    format!("label node {node} {LABEL}={value} --overwrite")
}

fn allocatable(node: &str, n: u32) -> String {
    format!(
        "wait node/{node} --for=jsonpath={{.status.allocatable.nvidia\\.com/gpu}}={n} --timeout=10m"
    )
}

fn get(obj: &str) -> String {
    format!(
        "get {obj} -n nodeimg-acceptance -o jsonpath={{range .status.conditions[?(@.status==\"True\")]}}{{.type}}{{\" \"}}{{end}}"
    )
}

fn restored(nodes: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = nodes.iter().map(|n| label(n, CLASS)).collect();
    v.extend(nodes.iter().map(|n| allocatable(n, 32)));
    v
}

#[test]
fn the_window_switches_waits_applies_and_restores() {
    let w = Window::new();
    let (code, calls) = w.run(&["gpu-1", "gpu-2"], &[]);
    let folder = w.dir.path().join("acceptance/whole-gpus/");
    let mut want = vec![
        label("gpu-1", WHOLE),
        label("gpu-2", WHOLE),
        allocatable("gpu-1", 8),
        allocatable("gpu-2", 8),
        format!("apply -f {} -o name", folder.display()),
        get("job.batch/nodeimg-acceptance-dcgm"),
        get("mpijob.kubeflow.org/nodeimg-acceptance-nccl-multinode"),
        get("jobset.jobset.x-k8s.io/nodeimg-acceptance-rdma"),
    ];
    want.extend(restored(&["gpu-1", "gpu-2"]));
    assert_eq!(calls, want);
    assert_eq!(code, Some(0));

    // Re-admission: the files given, not the folder.
    let w = Window::new();
    let (code, calls) = w.run(
        &[
            "-f",
            "remediation/readmission-dcgm.yaml",
            "-f",
            "remediation/readmission-nccl.yaml",
            "gpu-3",
        ],
        &[],
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        calls[2],
        "apply -f remediation/readmission-dcgm.yaml -f remediation/readmission-nccl.yaml -o name"
    );
    assert_eq!(calls[calls.len() - 2..], restored(&["gpu-3"]));

    // No node: usage, and nothing touched.
    let w = Window::new();
    let (code, calls) = w.run(&[], &[]);
    assert_eq!(code, Some(2));
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn the_window_restores_the_class_key_when_a_step_fails() {
    // The device plugin never shows whole GPUs on gpu-2: nothing is applied.
    let w = Window::new();
    let (code, calls) = w.run(&["gpu-1", "gpu-2"], &[("FAIL", "node/gpu-2")]);
    assert_ne!(code, Some(0));
    assert!(!calls.iter().any(|c| c.starts_with("apply")), "{calls:?}");
    assert_eq!(calls[calls.len() - 4..], restored(&["gpu-1", "gpu-2"]));

    // apply refused.
    let w = Window::new();
    let (code, calls) = w.run(&["gpu-1"], &[("FAIL", "apply")]);
    assert_ne!(code, Some(0));
    assert_eq!(calls[calls.len() - 2..], restored(&["gpu-1"]));

    // A failed Job: the others are still waited for, then the nodes restored; exit 1.
    let w = Window::new();
    let (code, calls) = w.run(
        &["gpu-1"],
        &[("FAILED", "job.batch/nodeimg-acceptance-dcgm")],
    );
    assert_eq!(code, Some(1));
    assert!(
        calls.contains(&get("jobset.jobset.x-k8s.io/nodeimg-acceptance-rdma")),
        "{calls:?}"
    );
    assert_eq!(calls[calls.len() - 2..], restored(&["gpu-1"]));

    // A workload that never finishes within the bound.
    let w = Window::new();
    let (code, calls) = w.run(
        &["gpu-1"],
        &[
            ("RUNNING", "job.batch/nodeimg-acceptance-dcgm"),
            ("NODEIMG_WORKLOAD_TIMEOUT", "1"),
        ],
    );
    assert_eq!(code, Some(1));
    assert_eq!(calls[calls.len() - 2..], restored(&["gpu-1"]));
}

#[test]
fn the_window_restores_the_class_key_when_interrupted() {
    let w = Window::new();
    let mut child = w
        .command(
            &["gpu-1"],
            &[("RUNNING", "job.batch/nodeimg-acceptance-dcgm")],
        )
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !w.calls().iter().any(|c| c.starts_with("get")) {
        assert!(start.elapsed().as_secs() < 30, "{:?}", w.calls());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let calls = w.calls();
    assert_eq!(calls[calls.len() - 2..], restored(&["gpu-1"]));
}

#[test]
fn the_window_script_parses() {
    let w = Window::new();
    let o = std::process::Command::new("bash")
        .arg("-n")
        .arg(w.script())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs shellcheck (cargo test -- --ignored)"]
fn the_window_script_is_shellcheck_clean() {
    let w = Window::new();
    let o = std::process::Command::new("shellcheck")
        .arg(w.script())
        .output()
        .expect("shellcheck (Debian package shellcheck)");
    assert!(o.status.success(), "{}", stdout(&o));
}

/// A Node of the time-sliced class: `gpus` advertised and allocatable, the device
/// plugin's configuration label `config`.
fn node_json(gpus: u32, config: &str) -> String {
    let res = json!({"nvidia.com/gpu": gpus.to_string()});
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-1", "labels": {"kubernetes.io/hostname": "gpu-1", LABEL: config}},
        "status": {"capacity": res, "allocatable": res},
    })
    .to_string()
}

/// `verify --phase cluster` of the time-sliced class on a Node: the GPU label and
/// capacity findings, as `verdict: summary`.
fn sharing_findings(dir: &Path, node: &str) -> (String, String) {
    std::fs::write(dir.join("node.json"), node).unwrap();
    let o = nodeimg(&[
        "verify",
        "--phase",
        "cluster",
        "--blueprint",
        dir.join("ts.yaml").to_str().unwrap(),
        "--node",
        dir.join("node.json").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let report = stdout_json(&o);
    let find = |id: &str, subject: &str| {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id && f["subject"] == subject)
            .map(|f| {
                format!(
                    "{}: {}",
                    f["verdict"].as_str().unwrap(),
                    f["summary"].as_str().unwrap()
                )
            })
            .unwrap_or_else(|| panic!("{id}[{subject}]: {report:#}"))
    };
    (
        find("cluster.label", LABEL),
        find("cluster.capacity.gpu", "nvidia.com/gpu"),
    )
}

#[test]
fn a_node_left_with_whole_gpus_is_told_how_to_restore_it() {
    let dir = tempfile::tempdir().unwrap();
    crate::rollout::copy_dir(&root().join("blueprints"), dir.path());
    Variant::parse(
        dir.path().join("h100-sxm-ubuntu.yaml"),
        &std::fs::read_to_string(root().join("blueprints/h100-sxm-ubuntu.yaml")).unwrap(),
    )
    .set(
        "accelerators.sharing",
        json!({"mode": "time-slicing", "replicas": 4}),
    )
    .write(&dir.path().join("ts.yaml"));
    let restore = format!("kubectl label node gpu-1 {LABEL}={CLASS} --overwrite");

    let (label, capacity) = sharing_findings(dir.path(), &node_json(8, WHOLE));
    for f in [&label, &capacity] {
        assert!(
            f.starts_with("fail: the node was left in the whole-GPU acceptance configuration")
                && f.contains(&restore),
            "{f}"
        );
    }
    // Shared again: both pass, with their usual words.
    let (label, capacity) = sharing_findings(dir.path(), &node_json(32, CLASS));
    assert!(label.starts_with("pass: sharing selector"), "{label}");
    assert_eq!(capacity, "pass: the device plugin advertises every GPU");
    // Whole GPUs under the class's own key is another fault: no window to speak of.
    let (label, capacity) = sharing_findings(dir.path(), &node_json(8, CLASS));
    assert!(label.starts_with("pass"), "{label}");
    assert_eq!(capacity, "fail: the device plugin advertises every GPU");
}
