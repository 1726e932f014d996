//! `nodeimg verify --phase cluster` (acceptance layer 2) end to end: the fixture node's
//! Node object, Pods and the cluster's RuntimeClasses (made by this project,
//! `support::accept_fixture`) from files and from a Kubernetes API stand-in — a loopback
//! HTTP server that answers the three requests the API server answers (`GET
//! /api/v1/nodes/NAME`, `GET /api/v1/pods?fieldSelector=…`, `GET
//! /apis/node.k8s.io/v1/runtimeclasses`) with recorded responses — checked against the
//! fixture blueprint.

use crate::support::accept_fixture::{self as fixture, NODE};
use crate::support::stdout_json;
use crate::support::verify_fixture::BLUEPRINT;
use std::path::PathBuf;
use std::process::Output;

/// `nodeimg ARGS` in the clean test environment: no `$NODE_NAME`, `$KUBECONFIG` or
/// `$HOME`, so only what a test gives reaches the API client.
fn nodeimg(args: &[&str]) -> Output {
    crate::support::nodeimg(args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new(node: &str, pods: &str) -> Files {
        let files = Files {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(files.path("bp.yaml"), BLUEPRINT).unwrap();
        std::fs::write(files.path("node.json"), node).unwrap();
        std::fs::write(files.path("pods.json"), pods).unwrap();
        std::fs::write(files.path("rc.json"), fixture::runtime_classes_json()).unwrap();
        files
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn arg(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }

    /// `verify --phase cluster` with `extra`; where the Pods are given, the RuntimeClasses
    /// (`rc.json`) are too, as both come from the cluster.
    fn verify(&self, extra: &[&str]) -> Output {
        let bp = self.arg("bp.yaml");
        let rc = self.arg("rc.json");
        let mut args = vec!["verify", "--phase", "cluster", "--blueprint", &bp];
        args.extend_from_slice(extra);
        if extra.contains(&"--pods") {
            args.extend_from_slice(&["--runtime-classes", &rc]);
        }
        nodeimg(&args)
    }
}

/// `(id[subject], verdict, fault)` of each finding that did not pass.
fn not_passed(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["verdict"] != "pass")
        .map(fixture::finding_key)
        .collect()
}

#[test]
fn node_and_pods_from_files_pass() {
    let f = Files::new(&fixture::node_json(), &fixture::pods_json());
    let (node, pods) = (f.arg("node.json"), f.arg("pods.json"));
    let out = f.verify(&["--node", &node, "--pods", &pods, "--format", "json"]);
    let report = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(not_passed(&report), vec![]);
    assert_eq!(report["node"], NODE);
    assert_eq!(report["result"], "pass");
    assert_eq!(report["kubernetes"]["capacity"]["nvidia.com/gpu"], "8");
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    for id in [
        "cluster.capacity.cpu",
        "cluster.capacity.memory",
        "cluster.capacity.gpu",
        "cluster.allocatable.memory",
        "cluster.allocatable.ephemeral-storage",
        "cluster.condition",
        "cluster.component",
    ] {
        assert!(ids.contains(&id), "{id} not checked: {ids:?}");
    }
    // The text report says the same.
    let out = f.verify(&["--node", &node, "--pods", &pods]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains("result: pass"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_missing_gpu_and_a_wrong_reservation_fail_with_their_fault_class() {
    let node = fixture::node_json()
        .replace(r#""nvidia.com/gpu": "8""#, r#""nvidia.com/gpu": "7""#)
        .replace(r#""cpu": "222870m""#, r#""cpu": "223000m""#);
    let f = Files::new(&node, &fixture::pods_json());
    let (node, pods) = (f.arg("node.json"), f.arg("pods.json"));
    let out = f.verify(&["--node", &node, "--pods", &pods, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = not_passed(&stdout_json(&out));
    let name = |n: &str| failed.iter().find(|(x, _, _)| x == n).cloned();
    assert_eq!(
        name("cluster.capacity.gpu[nvidia.com/gpu]"),
        Some((
            "cluster.capacity.gpu[nvidia.com/gpu]".into(),
            "fail".into(),
            "driver-daemon".into()
        )),
        "{failed:?}"
    );
    assert!(name("cluster.allocatable.cpu").is_some(), "{failed:?}");
}

#[test]
fn a_node_off_its_blueprint_fails_each_check_with_its_fault_class() {
    // A hugepage pool short by one page, a taint nobody declared, containerd without the
    // nvidia handler RuntimeClasses name, not Ready.
    let node = fixture::node_json()
        // The first is capacity, the second allocatable.
        .replacen(
            r#""hugepages-1Gi": "16Gi""#,
            r#""hugepages-1Gi": "15Gi""#,
            1,
        )
        .replace(
            r#""spec": {}"#,
            r#""spec": {"taints": [{"key": "example.com/maintenance", "effect": "NoSchedule"}]}"#,
        )
        .replace(r#"{"name": "nvidia"}, "#, "")
        .replace(
            r#"{"type": "Ready", "status": "True""#,
            r#"{"type": "Ready", "status": "False""#,
        );
    assert_ne!(node, fixture::node_json());
    let f = Files::new(&node, &fixture::pods_json());
    let (node, pods) = (f.arg("node.json"), f.arg("pods.json"));
    let out = f.verify(&["--node", &node, "--pods", &pods, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = not_passed(&stdout_json(&out));
    for (id, fault) in [
        (
            "cluster.capacity.hugepages[hugepages-1Gi]",
            "os-memory-disk",
        ),
        ("cluster.taint[example.com/maintenance]", "driver-daemon"),
        ("cluster.runtime-handler[nvidia]", "driver-daemon"),
        ("cluster.condition[Ready]", "driver-daemon"),
    ] {
        assert!(
            failed.contains(&(id.to_owned(), "fail".to_owned(), fault.to_owned())),
            "{id} does not fail as {fault}: {failed:?}"
        );
    }
}

#[test]
fn without_the_pods_the_components_are_incomplete_not_passed() {
    let f = Files::new(&fixture::node_json(), &fixture::pods_json());
    let (node, rc) = (f.arg("node.json"), f.arg("rc.json"));
    let out = f.verify(&[
        "--node",
        &node,
        "--runtime-classes",
        &rc,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = stdout_json(&out);
    assert_eq!(report["result"], "incomplete");
    assert_eq!(
        not_passed(&report),
        vec![(
            "cluster.components".to_owned(),
            "incomplete".to_owned(),
            "driver-daemon".to_owned()
        )]
    );
}

/// The class's RuntimeClass: absent, naming another handler, or selecting nodes this one
/// is not fails (`driver-daemon`, no automatic action: apply the rendered object); without
/// the list it is incomplete, not passed.
#[test]
fn the_class_runtime_class_is_checked_in_the_cluster() {
    let f = Files::new(&fixture::node_json(), &fixture::pods_json());
    let (node, pods, rc) = (f.arg("node.json"), f.arg("pods.json"), f.arg("rc.json"));
    let bp = f.arg("bp.yaml");
    let run = |classes: &str| {
        std::fs::write(f.path("rc.json"), classes).unwrap();
        let out = f.verify(&["--node", &node, "--pods", &pods, "--format", "json"]);
        let report = stdout_json(&out);
        (out.status.code(), not_passed(&report), report)
    };
    let (code, failed, report) = run(&fixture::runtime_classes_json());
    assert_eq!((code, failed), (Some(0), vec![]));
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "cluster.runtime-class")
        .expect("checked");
    assert_eq!(finding["subject"], "nvidia-h100-fixture");
    assert_eq!(finding["verdict"], "pass");

    let key = |verdict: &str| {
        vec![(
            "cluster.runtime-class[nvidia-h100-fixture]".to_owned(),
            verdict.to_owned(),
            "driver-daemon".to_owned(),
        )]
    };
    // Only the operator's own `nvidia`: ours was never applied.
    let operator_only = fixture::runtime_classes_json().replace("nvidia-h100-fixture", "other");
    let (code, failed, report) = run(&operator_only);
    assert_eq!((code, failed), (Some(1), key("fail")));
    let observed = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["verdict"] == "fail")
        .unwrap()["observed"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(observed.contains("absent"), "{observed}");
    // Ours with another handler, or a selector this node does not satisfy.
    let wrong = fixture::runtime_classes_json().replace(
        r#""h100-fixture"}}, "handler": "nvidia""#,
        r#""h100-fixture"}}, "handler": "runc""#,
    );
    assert_ne!(wrong, fixture::runtime_classes_json());
    assert_eq!(run(&wrong).1, key("fail"));
    let elsewhere = fixture::runtime_classes_json().replace(
        r#""h100-fixture"}}, "handler": "nvidia""#,
        r#""h100-fixture"}}, "handler": "nvidia", "scheduling": {"nodeSelector": {"pool": "a100"}}"#,
    );
    assert_ne!(elsewhere, fixture::runtime_classes_json());
    let (_, failed, report) = run(&elsewhere);
    assert_eq!(failed, key("fail"));
    assert!(report.to_string().contains("pool=a100"));

    // Without the list: incomplete.
    let out = nodeimg(&[
        "verify",
        "--phase",
        "cluster",
        "--blueprint",
        &bp,
        "--node",
        &node,
        "--pods",
        &pods,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        not_passed(&stdout_json(&out)),
        vec![(
            "cluster.runtime-classes".to_owned(),
            "incomplete".to_owned(),
            "driver-daemon".to_owned()
        )]
    );
    // A damaged list is unusable input, named.
    std::fs::write(f.path("rc.json"), "{\"kind\": \"List\", \"items\": [{").unwrap();
    let out = nodeimg(&[
        "verify",
        "--phase",
        "cluster",
        "--blueprint",
        &bp,
        "--node",
        &node,
        "--runtime-classes",
        &rc,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(&rc), "{}", text(&out.stderr));
}

#[test]
fn a_truncated_node_is_refused_with_file_and_line() {
    let whole = fixture::node_json();
    let f = Files::new(&whole[..whole.len() / 2], &fixture::pods_json());
    let node = f.arg("node.json");
    let out = f.verify(&["--node", &node]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&node) && err.contains("line "), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn node_side_options_are_refused_not_ignored() {
    let f = Files::new(&fixture::node_json(), &fixture::pods_json());
    let node = f.arg("node.json");
    for extra in [
        vec!["--record", "-"],
        vec!["--root", "/"],
        vec!["--format", "junit"],
    ] {
        let mut args = vec!["--node", node.as_str()];
        args.extend(extra.iter().copied());
        let out = f.verify(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{extra:?}: {}",
            text(&out.stderr)
        );
    }
    assert!(!f.path("rec.json").exists());
}

/// The node's record as `verify --phase boot --record` wrote it at boot, for the fixture
/// node of the same name (layer 1 passed; layers 2-5 not run yet).
fn layer1_record(f: &Files, name: &str) {
    let tree = crate::support::verify_fixture::healthy_tree();
    let xml = f.path("smi.xml");
    std::fs::write(&xml, crate::support::verify_fixture::healthy_xml()).unwrap();
    let root = tree.root().to_string_lossy().into_owned();
    let (bp, xml, record) = (f.arg("bp.yaml"), f.arg("smi.xml"), f.arg(name));
    let tools = tree.tool_args();
    let mut args = vec![
        "verify",
        "--blueprint",
        &bp,
        "--root",
        &root,
        "--timeout",
        "10",
    ];
    args.extend(tools.iter().map(String::as_str));
    args.extend_from_slice(&["--nvidia-smi-xml", &xml, "--record", &record]);
    let out = nodeimg(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

fn read_record(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    if path.extension().is_some_and(|e| e == "yaml") {
        serde_yaml::from_str(&text).unwrap()
    } else {
        serde_json::from_str(&text).unwrap()
    }
}

/// `--record FILE` writes layer 2 into the node's record, keeping layer 1; the node is not
/// accepted until layers 3-5 ran, and a failing layer 2 fails the record.
#[test]
fn the_cluster_phase_writes_layer_2_into_the_node_record() {
    let f = Files::new(&fixture::node_json(), &fixture::pods_json());
    let (node, pods) = (f.arg("node.json"), f.arg("pods.json"));
    for name in ["record.json", "record.yaml"] {
        layer1_record(&f, name);
        let before = read_record(&f.path(name));
        assert!(before["layers"]["kubernetes"]["not_run"].is_string());
        let rec = f.arg(name);
        let out = f.verify(&["--node", &node, "--pods", &pods, "--record", &rec]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("result: pass"));
        let after = read_record(&f.path(name));
        assert_eq!(
            after["layers"]["hardware_driver"],
            before["layers"]["hardware_driver"]
        );
        assert_eq!(after["diagnostics"], before["diagnostics"]);
        assert_eq!(after["layers"]["kubernetes"]["result"], "pass", "{name}");
        assert_eq!(after["kubernetes"]["node"], NODE);
        assert_eq!(after["kubernetes"]["capacity"]["nvidia.com/gpu"], "8");
        let findings = after["findings"].as_array().unwrap();
        assert!(!findings.is_empty());
        assert!(findings.iter().all(|f| f["layer"] == "kubernetes"));
        // Layers 3-5 are still to run: not accepted yet.
        assert_eq!(after["result"], "incomplete");
        assert!(after["layers"]["device_container"]["not_run"].is_string());
    }

    // Run again on a node that lost a GPU: layer 2's findings are replaced, not added to,
    // and the record fails.
    let lost = fixture::node_json().replace(r#""nvidia.com/gpu": "8""#, r#""nvidia.com/gpu": "7""#);
    std::fs::write(f.path("node.json"), lost).unwrap();
    let count = read_record(&f.path("record.json"))["findings"]
        .as_array()
        .unwrap()
        .len();
    let rec = f.arg("record.json");
    let out = f.verify(&["--node", &node, "--pods", &pods, "--record", &rec]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let after = read_record(&f.path("record.json"));
    assert_eq!(after["findings"].as_array().unwrap().len(), count);
    assert_eq!(after["layers"]["kubernetes"]["result"], "fail");
    assert_eq!(after["result"], "fail");
}

/// Without a record yet, a new one holds layer 2 and says layer 1 did not run; a record of
/// another blueprint or another node is refused and left as it was.
#[test]
fn the_cluster_phase_refuses_a_record_of_another_node_or_image() {
    let f = Files::new(&fixture::node_json(), &fixture::pods_json());
    let (node, pods) = (f.arg("node.json"), f.arg("pods.json"));
    let fresh = f.arg("fresh.json");
    let out = f.verify(&["--node", &node, "--pods", &pods, "--record", &fresh]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let record = read_record(&f.path("fresh.json"));
    assert_eq!(record["layers"]["kubernetes"]["result"], "pass");
    assert!(record["layers"]["hardware_driver"]["not_run"].is_string());
    assert_eq!(record["result"], "incomplete");
    assert_eq!(record["hostname"], NODE);

    layer1_record(&f, "record.json");
    let original = std::fs::read_to_string(f.path("record.json")).unwrap();
    let rec = f.arg("record.json");
    let other_host = original.replace(
        &format!("\"hostname\": \"{NODE}\""),
        "\"hostname\": \"gpu-node-02\"",
    );
    assert_ne!(other_host, original);
    std::fs::write(f.path("record.json"), &other_host).unwrap();
    let out = f.verify(&["--node", &node, "--pods", &pods, "--record", &rec]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("gpu-node-02"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(f.path("record.json")).unwrap(),
        other_host
    );

    let other_bp = BLUEPRINT.replace("version: \"2026.11.1\"", "version: \"2026.11.2\"");
    assert_ne!(other_bp, BLUEPRINT);
    std::fs::write(f.path("record.json"), &original).unwrap();
    std::fs::write(f.path("bp.yaml"), other_bp).unwrap();
    let out = f.verify(&["--node", &node, "--pods", &pods, "--record", &rec]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("another image"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(f.path("record.json")).unwrap(),
        original
    );
}

/// A Kubernetes API stand-in on a loopback port: answers the recorded Node, Pod list and
/// RuntimeClass list and 404 (a `Status` object, as the API server does) to anything else; keeps the
/// request lines and authorization headers it saw.
#[cfg(feature = "kube")]
mod api {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    pub struct Server {
        pub url: String,
        pub seen: Arc<Mutex<Vec<String>>>,
    }

    pub fn serve(node: String, pods: String) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    continue;
                }
                let mut auth = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if line.to_ascii_lowercase().starts_with("authorization:") {
                        auth = line.trim().to_owned();
                    }
                }
                let target = request.split(' ').nth(1).unwrap_or("").to_owned();
                log.lock().unwrap().push(format!("{target} {auth}"));
                let (status, body) = if target == "/api/v1/nodes/gpu-node-01" {
                    ("200 OK", node.clone())
                } else if target.starts_with("/api/v1/pods?")
                    && target.contains("fieldSelector=spec.nodeName%3Dgpu-node-01")
                {
                    ("200 OK", pods.clone())
                } else if target.starts_with("/apis/node.k8s.io/v1/runtimeclasses") {
                    (
                        "200 OK",
                        super::fixture::runtime_classes_json().replacen(
                            r#""kind": "List""#,
                            r#""kind": "RuntimeClassList""#,
                            1,
                        ),
                    )
                } else {
                    (
                        "404 Not Found",
                        r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nodes \"x\" not found","reason":"NotFound","code":404}"#.to_owned(),
                    )
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Server { url, seen }
    }

    pub fn kubeconfig(server: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: loop\n  cluster:\n    server: {server}\ncontexts:\n- name: loop\n  context:\n    cluster: loop\n    user: probe\ncurrent-context: loop\nusers:\n- name: probe\n  user:\n    token: recorded-token\n"
        )
    }
}

/// The Pod list the API server returns (`kind: PodList`), from the fixture's List.
#[cfg(feature = "kube")]
fn pod_list() -> String {
    fixture::pods_json().replacen(r#""kind": "List""#, r#""kind": "PodList""#, 1)
}

#[cfg(feature = "kube")]
#[test]
fn node_and_pods_from_the_api() {
    assert_eq!(NODE, "gpu-node-01");
    let server = api::serve(fixture::node_json(), pod_list());
    let f = Files::new("", "");
    std::fs::write(f.path("kubeconfig"), api::kubeconfig(&server.url)).unwrap();
    let kc = f.arg("kubeconfig");
    let out = f.verify(&[
        "--kubeconfig",
        &kc,
        "--node-name",
        NODE,
        "--format",
        "json",
        "--timeout",
        "20",
    ]);
    let report = stdout_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(not_passed(&report), vec![]);
    assert_eq!(
        report["source"],
        format!("{}/api/v1/nodes/{NODE}", server.url)
    );
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[2].starts_with("/apis/node.k8s.io/v1/runtimeclasses"),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .all(|s| s.ends_with("Bearer recorded-token") || s.ends_with("bearer recorded-token")),
        "{seen:?}"
    );
    // The same node degraded on the server fails the same way as from a file.
    let degraded = fixture::node_json().replace(
        r#""nvidia.com/gpu": "8", "pods""#,
        r#""nvidia.com/gpu": "7", "pods""#,
    );
    let server = api::serve(degraded, pod_list());
    std::fs::write(f.path("kubeconfig"), api::kubeconfig(&server.url)).unwrap();
    let out = f.verify(&["--kubeconfig", &kc, "--node-name", NODE, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        not_passed(&stdout_json(&out))
            .iter()
            .any(|(n, v, _)| n == "cluster.capacity.gpu[nvidia.com/gpu]" && v == "fail")
    );
}

#[cfg(feature = "kube")]
#[test]
fn an_unknown_node_or_an_unreachable_api_is_unusable() {
    let server = api::serve(fixture::node_json(), pod_list());
    let f = Files::new("", "");
    std::fs::write(f.path("kubeconfig"), api::kubeconfig(&server.url)).unwrap();
    let kc = f.arg("kubeconfig");
    let out = f.verify(&["--kubeconfig", &kc, "--node-name", "gpu-node-99"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("gpu-node-99"), "{err}");
    // Nothing listens on the port any more once the listener is dropped: take a free
    // port and close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        f.path("kubeconfig"),
        api::kubeconfig(&format!("http://127.0.0.1:{port}")),
    )
    .unwrap();
    let out = f.verify(&["--kubeconfig", &kc, "--node-name", NODE, "--timeout", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&port.to_string()),
        "{}",
        text(&out.stderr)
    );
    // No name and no file: say what to give.
    let out = f.verify(&["--kubeconfig", &kc]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--node-name"),
        "{}",
        text(&out.stderr)
    );
}
