//! `nodeimg facts` and `nodeimg verify` end to end: on this CPU-only machine (facts,
//! a CPU blueprint written from its own facts, the H100 blueprint), and on the fixture
//! tree (hung vendor tool, break-glass, evidence, phases, output files, exit codes).

use crate::support::fixture_tree::Tree;
use crate::support::verify_fixture::{self, BLUEPRINT};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::nodeimg;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(bytes)))
}

fn results(report: &Value) -> Vec<Value> {
    report["results"].as_array().cloned().unwrap_or_default()
}

fn result<'a>(results: &'a [Value], id: &str) -> &'a Value {
    results
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {results:?}"))
}

fn this_machine_has_a_gpu() -> bool {
    std::fs::read_dir("/sys/bus/pci/devices").is_ok_and(|dir| {
        dir.filter_map(Result::ok).any(|e| {
            let class = std::fs::read_to_string(e.path().join("class")).unwrap_or_default();
            class.starts_with("0x03") || class.starts_with("0x12")
        })
    })
}

#[test]
fn facts_on_this_machine() {
    let out = nodeimg(&["facts", "--timeout", "10"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let facts = parse(&out.stdout);
    for key in [
        "hostname",
        "os",
        "kernel",
        "cpus",
        "pci_devices",
        "gpus",
        "nics",
        "runtime",
    ] {
        assert!(facts.get(key).is_some(), "no {key}");
    }
    if !this_machine_has_a_gpu() {
        assert_eq!(facts["gpus"]["gpus"].as_array().map(Vec::len), Some(0));
    }
    let mut expected: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    expected.sort();
    let nics: Vec<String> = facts["nics"]
        .as_array()
        .map(|n| {
            n.iter()
                .filter_map(|nic| nic["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(nics, expected);
    // Unknown values say why.
    let reason = facts["cdi_specs"]
        .get("unknown")
        .or_else(|| facts["kernel"]["release"].get("unknown"));
    if let Some(reason) = reason {
        assert!(reason.as_str().is_some_and(|r| !r.is_empty()));
    }
}

/// What this machine has installed, of what verify checks by version.
struct Installed {
    kubelet: bool,
    containerd: bool,
}

/// A CPU-only blueprint describing this machine, from its own facts.
fn own_blueprint(dir: &Path) -> (PathBuf, Installed) {
    let facts = parse(&nodeimg(&["facts", "--timeout", "10"]).stdout);
    let known = |v: &Value| v.as_str().map(str::to_owned);
    let distro = known(&facts["os"]["id"]).unwrap_or_default();
    assert!(
        ["ubuntu", "debian", "rhel", "rocky", "almalinux"].contains(&distro.as_str()),
        "this machine's distribution {distro:?} has no blueprint value"
    );
    let version = known(&facts["os"]["version_id"]).unwrap_or_default();
    let kernel = known(&facts["kernel"]["release"]).unwrap_or_default();
    let cgroup = if facts["cgroup"] == "v2" { "v2" } else { "v1" };
    let groups = facts["iommu"]["groups"].as_array().map_or(0, Vec::len);
    let iommu = match (groups, facts["iommu"]["default_domain_type"].as_str()) {
        (0, _) => "off",
        (_, Some("identity")) => "passthrough",
        _ => "on",
    };
    let has_containerd = known(&facts["runtime"]["containerd_version"]);
    let containerd = has_containerd.clone().unwrap_or_else(|| "1.7.0".to_owned());
    let cpus = facts["cpus"]["online_count"].as_u64().unwrap_or(1);
    let memory_kb = facts["memory"]["total_kb"].as_u64().unwrap_or(1);
    let kubelet = known(&facts["runtime"]["kubelet_version"]);
    let yaml = format!(
        "apiVersion: nodeimg.dev/v1alpha1\nkind: NodeBlueprint\nmetadata:\n  name: this-machine\n  version: \"1\"\nos:\n  distro: {distro}\n  version: \"{version}\"\n  patchLevel: \"2026-01-01\"\n  kernel: \"{kernel}\"\n  cgroup: {cgroup}\nboot:\n  iommu: {iommu}\nruntime:\n  containerd:\n    version: \"{containerd}\"\n  cdi:\n    enabled: false\nkubernetes:\n  version: \"{}\"\n  capacity:\n    cpu: {cpus}\n    memory: {memory_kb}Ki\n",
        kubelet.clone().unwrap_or_else(|| "1.31.4".to_owned())
    );
    let path = dir.join("this-machine.yaml");
    std::fs::write(&path, yaml).unwrap_or_else(|e| panic!("{e}"));
    (
        path,
        Installed {
            kubelet: kubelet.is_some(),
            containerd: has_containerd.is_some(),
        },
    )
}

#[test]
fn cpu_blueprint_from_own_facts_passes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (bp, installed) = own_blueprint(dir.path());
    let has_kubelet = installed.kubelet;
    let bp = bp.to_string_lossy().into_owned();
    // No kubelet is installed on a build machine: that check fails closed (see below), so
    // it is left out here and everything else must pass; so is containerd's where the
    // machine has none (CI installs it; a newcomer's machine may not). Nor was the image's
    // sysctl.d applied here, so its parameters (`os.sysctl`) are not this machine's; and
    // how full this machine's disk is (`host.fs.free-*`) is the build machine's state, not
    // something its blueprint could say.
    let mut checks = String::from("*,!os.sysctl,!host.fs.free-space,!host.fs.free-inodes");
    if !has_kubelet {
        checks.push_str(",!runtime.kubelet.version");
    }
    if !installed.containerd {
        checks.push_str(",!runtime.containerd.version");
    }
    let checks = checks.as_str();
    let junit = dir.path().join("verify.xml");
    let record = dir.path().join("record.yaml");
    let out = nodeimg(&[
        "verify",
        "--blueprint",
        &bp,
        "--phase",
        "boot",
        "--checks",
        checks,
        "--format",
        "json",
        "--timeout",
        "10",
        "--output",
        &format!("junit={}", junit.display()),
        "--record",
        &record.to_string_lossy(),
    ]);
    let report = parse(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(report["outcome"], "pass");
    assert_eq!(report["schema"], "nodeimg.dev/verify-report/v1");
    let all = results(&report);
    assert!(all.len() >= 5);
    assert_eq!(result(&all, "os.kernel.release")["verdict"], "pass");
    assert!(std::fs::read_to_string(&junit).is_ok_and(|x| x.contains("<testsuites")));
    let record: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&record).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}"));
    // Layer 1 passed; the node is accepted only after layers 2-5 (`nodeimg accept`).
    assert_eq!(
        record["layers"]["hardware_driver"]["result"],
        serde_yaml::Value::from("pass")
    );
    assert_eq!(record["result"], serde_yaml::Value::from("incomplete"));
    assert_eq!(
        record["schema"],
        serde_yaml::Value::from("nodeimg.dev/acceptance-record/v1")
    );

    if !has_kubelet {
        let out = nodeimg(&[
            "verify",
            "--blueprint",
            &bp,
            "--format",
            "json",
            "--timeout",
            "10",
        ]);
        assert_eq!(out.status.code(), Some(1));
        let report = parse(&out.stdout);
        let kubelet = result(&results(&report), "runtime.kubelet.version").clone();
        assert_eq!(kubelet["verdict"], "error");
    }
}

#[test]
fn gpu_blueprint_fails_on_this_machine_with_gpu_count_zero() {
    if this_machine_has_a_gpu() {
        return;
    }
    let out = nodeimg(&[
        "verify",
        "--blueprint",
        "blueprints/h100-sxm-ubuntu.yaml",
        "--format",
        "json",
        "--timeout",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = parse(&out.stdout);
    assert_eq!(report["outcome"], "fail");
    let count = result(&results(&report), "gpu.count").clone();
    assert_eq!(count["verdict"], "fail");
    assert_eq!(count["observed"], "0");
    assert_eq!(count["fault"], "device");
    assert_eq!(count["action"], "service");
}

#[test]
fn exit_code_never_depends_on_the_format() {
    for format in ["text", "json", "junit", "prometheus", "tap", "summary"] {
        let out = nodeimg(&[
            "verify",
            "--blueprint",
            "blueprints/h100-sxm-ubuntu.yaml",
            "--format",
            format,
            "--timeout",
            "10",
        ]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert!(!out.stdout.is_empty(), "{format}");
        // The report is on stdout only.
        assert!(!text(&out.stderr).contains("gpu.count"), "{format}");
    }
}

#[test]
fn unusable_input_exits_2() {
    let cases: [&[&str]; 9] = [
        &["verify", "--blueprint", "/nonexistent/blueprint.lock.json"],
        &["verify", "--blueprint", "Cargo.toml"],
        &[
            "verify",
            "--blueprint",
            "blueprints/cpu-minimal.yaml",
            "--checks",
            "no.such.check",
        ],
        &[
            "verify",
            "--blueprint",
            "blueprints/cpu-minimal.yaml",
            "--output",
            "xml=out.xml",
        ],
        &[
            "verify",
            "--blueprint",
            "blueprints/cpu-minimal.yaml",
            "--root",
            "/nonexistent",
        ],
        // Selecting nothing would print `PASS 0/0` without having looked at anything.
        &[
            "verify",
            "--blueprint",
            "blueprints/cpu-minimal.yaml",
            "--checks",
            "!*",
        ],
        &[
            "verify",
            "--blueprint",
            "blueprints/cpu-minimal.yaml",
            "--checks",
            "gpu.*",
        ],
        // An output that cannot be written is refused before the checks run.
        &[
            "verify",
            "--blueprint",
            "blueprints/cpu-minimal.yaml",
            "--output",
            "json=/nonexistent/folder/report.json",
        ],
        &[
            "verify",
            "--blueprint",
            "blueprints/cpu-minimal.yaml",
            "--record",
            "/nonexistent/folder/record.json",
        ],
    ];
    for args in cases {
        let out = nodeimg(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The fixture tree, its blueprint written beside it, and the nvidia-smi XML file.
struct Node {
    tree: Tree,
    dir: tempfile::TempDir,
}

impl Node {
    fn healthy() -> Node {
        let node = Node {
            tree: verify_fixture::healthy_tree(),
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
        };
        node.write("bp.yaml", BLUEPRINT);
        node.write("smi.xml", &verify_fixture::healthy_xml());
        node
    }

    fn write(&self, name: &str, content: &str) {
        std::fs::write(self.dir.path().join(name), content).unwrap_or_else(|e| panic!("{e}"));
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    fn verify(&self, extra: &[&str]) -> Output {
        let root = self.tree.root().to_string_lossy().into_owned();
        let bp = self.path("bp.yaml");
        let tools = self.tree.tool_args();
        let mut args = vec!["verify", "--blueprint", &bp, "--root", &root];
        args.extend(tools.iter().map(String::as_str));
        if !extra.contains(&"--timeout") {
            args.extend_from_slice(&["--timeout", "10"]);
        }
        args.extend_from_slice(extra);
        nodeimg(&args)
    }
}

#[test]
fn fixture_node_passes_with_every_output() {
    let node = Node::healthy();
    let xml = node.path("smi.xml");
    let (json, prom, tap, record) = (
        node.path("out.json"),
        node.path("out.prom"),
        node.path("out.tap"),
        node.path("record.json"),
    );
    let out = node.verify(&[
        "--nvidia-smi-xml",
        &xml,
        "--output",
        &format!("json={json}"),
        "--output",
        &format!("prometheus={prom}"),
        "--output",
        &format!("tap={tap}"),
        "--record",
        &record,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).starts_with("nodeimg verify: PASS"));
    let report = parse(&std::fs::read(&json).unwrap_or_default());
    assert_eq!(report["outcome"], "pass");
    assert_eq!(report["hostname"], "gpu-node-01");
    let prom = std::fs::read_to_string(&prom).unwrap_or_default();
    assert!(prom.contains("nodeimg_verify_success{blueprint=\"h100-fixture\",phase=\"all\"} 1"));
    assert!(
        std::fs::read_to_string(&tap)
            .unwrap_or_default()
            .starts_with("TAP version 14\n1..")
    );
    let record = parse(&std::fs::read(&record).unwrap_or_default());
    assert_eq!(record["gpu"]["count"], 8);
    assert_eq!(record["hardware"]["serial"], "S123456X4B01234");
    assert_eq!(record["gpu"]["devices"][0]["healthy"], true);
    assert_eq!(record["layers"]["hardware_driver"]["result"], "pass");
    assert_eq!(
        record["result"], "incomplete",
        "layers 2-5 are still to run"
    );
}

#[test]
fn hung_vendor_tool_fails_its_checks_within_the_timeout() {
    let node = Node::healthy();
    node.tree
        .script("/usr/bin/nvidia-smi", "#!/bin/sh\nsleep 60\n");
    let started = Instant::now();
    let out = node.verify(&["--format", "json", "--timeout", "1"]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "verify took {took:?}");
    assert_eq!(out.status.code(), Some(1));
    let report = parse(&out.stdout);
    let all = results(&report);
    let model = result(&all, "gpu.model");
    assert_eq!(model["verdict"], "error");
    assert!(
        model["observed"]
            .as_str()
            .is_some_and(|o| o.contains("timed out")),
        "{model}"
    );
    // Checks that do not need the tool still pass.
    assert_eq!(result(&all, "gpu.count")["verdict"], "pass");
}

#[test]
fn break_glass_lets_a_failing_node_start_with_the_reason_recorded() {
    let node = Node::healthy();
    let xml = node.path("smi.xml");
    std::fs::remove_file(node.tree.local("/sys/bus/pci/devices/0000:f3:00.0"))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = node.verify(&["--nvidia-smi-xml", &xml, "--format", "summary"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).starts_with("FAIL "),
        "{}",
        text(&out.stdout)
    );

    node.tree.file("/etc/nodeimg/break-glass", "");
    let out = node.verify(&["--nvidia-smi-xml", &xml, "--format", "summary"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "an empty break-glass file does not count"
    );

    // A reason alone (no expiry), or an expired file, does not apply.
    for (content, why) in [
        ("INC-1234 run jobs on 7 GPUs until the RMA\n", "expires"),
        (
            "reason: INC-1234 run jobs on 7 GPUs until the RMA\nexpires: 2020-01-01T00:00:00Z\n",
            "expired at 2020-01-01T00:00:00Z",
        ),
    ] {
        node.tree.file("/etc/nodeimg/break-glass", content);
        let out = node.verify(&["--nvidia-smi-xml", &xml, "--format", "summary"]);
        assert_eq!(out.status.code(), Some(1), "{content}");
        assert!(text(&out.stderr).contains(why), "{}", text(&out.stderr));
    }

    node.tree.file(
        "/etc/nodeimg/break-glass",
        "reason: INC-1234 run jobs on 7 GPUs until the RMA\nexpires: 2099-01-01T00:00:00Z\n",
    );
    let record = node.path("record.yaml");
    let out = node.verify(&[
        "--nvidia-smi-xml",
        &xml,
        "--format",
        "json",
        "--record",
        &record,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = parse(&out.stdout);
    assert_eq!(report["outcome"], "overridden");
    assert_eq!(
        report["break_glass"],
        "INC-1234 run jobs on 7 GPUs until the RMA (until 2099-01-01T00:00:00Z)"
    );
    assert!(text(&out.stderr).contains("break-glass"));
    let record = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(record.contains("result: overridden"), "{record}");
}

#[test]
fn evidence_on_fail_keeps_a_capture_that_replays_the_verdicts() {
    let node = Node::healthy();
    let xml = node.path("smi.xml");
    node.tree.attr("/sys/class/net/ibp20s0/operstate", "down");
    let evidence = node.path("evidence");
    let out = node.verify(&[
        "--nvidia-smi-xml",
        &xml,
        "--format",
        "json",
        "--evidence-on-fail",
        &evidence,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let live = parse(&out.stdout);
    let kept: Vec<PathBuf> = std::fs::read_dir(&evidence)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let name = kept[0]
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    assert!(name.is_some_and(|n| n.starts_with("nodeimg-evidence-gpu-node-01-")));
    let snapshot = kept[0].to_string_lossy().into_owned();
    let bp = node.path("bp.yaml");
    let replay = nodeimg(&[
        "verify",
        "--blueprint",
        &bp,
        "--snapshot",
        &snapshot,
        "--nvidia-smi-xml",
        &xml,
        "--format",
        "json",
    ]);
    assert_eq!(replay.status.code(), Some(1));
    assert_eq!(parse(&replay.stdout)["results"], live["results"]);

    // A passing run keeps nothing.
    node.tree.attr("/sys/class/net/ibp20s0/operstate", "up");
    let clean = node.path("clean");
    let out = node.verify(&["--nvidia-smi-xml", &xml, "--evidence-on-fail", &clean]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!Path::new(&clean).exists());
}

#[test]
fn phases_follow_the_driver_authority() {
    let node = Node::healthy();
    let xml = node.path("smi.xml");
    let ids = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["--nvidia-smi-xml", xml.as_str(), "--format", "json"];
        args.extend_from_slice(extra);
        let out = node.verify(&args);
        results(&parse(&out.stdout))
            .iter()
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect()
    };
    // Preinstalled driver: boot runs the driver checks too.
    assert!(ids(&["--phase", "boot"]).contains(&"gpu.driver.version".to_owned()));
    node.write(
        "bp.yaml",
        &BLUEPRINT
            .replace("authority: preinstalled", "authority: operator")
            .replace("generator: nvidia-ctk", "generator: operator")
            .replace("  containerToolkit: \"1.18.1\"\n", "")
            .replace(
                "  sharing:",
                "  operator:\n    name: gpu-operator\n    version: v25.3.4\n    manages: [driver, toolkit, device-plugin]\n  sharing:",
            ),
    );
    let boot = ids(&["--phase", "boot"]);
    assert!(boot.contains(&"gpu.pcie.link-width".to_owned()));
    assert!(boot.contains(&"gpu.count".to_owned()));
    assert!(
        !boot
            .iter()
            .any(|id| id == "gpu.driver.version" || id.starts_with("runtime.cdi"))
    );
    let driver = ids(&["--phase", "driver"]);
    assert!(driver.contains(&"gpu.driver.version".to_owned()));
    assert!(driver.contains(&"runtime.cdi.devices".to_owned()));
    assert!(!driver.contains(&"os.kernel.release".to_owned()));
    let health = ids(&["--phase", "health"]);
    assert!(health.contains(&"gpu.xid".to_owned()));
    assert!(health.contains(&"nic.rdma.port-state".to_owned()));
    assert!(!health.contains(&"os.kernel.release".to_owned()));
    let pcie = ids(&["--checks", "gpu.pcie.*"]);
    assert!(!pcie.is_empty() && pcie.iter().all(|id| id.starts_with("gpu.pcie.")));
}

/// The README's check reference is `verify --list-checks` as it prints today.
#[test]
fn readme_check_reference_is_the_list_checks_output() {
    let out = nodeimg(&["verify", "--list-checks"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let readme = std::fs::read_to_string(crate::support::root().join("README.md")).unwrap();
    let start = "<!-- verify-checks:start -->\n```text\n";
    let end = "```\n<!-- verify-checks:end -->";
    let a = readme
        .find(start)
        .expect("README has the verify-checks start marker")
        + start.len();
    let b = readme
        .find(end)
        .expect("README has the verify-checks end marker");
    assert_eq!(
        &readme[a..b],
        text(&out.stdout),
        "README's check reference is stale: run scripts/update-readme-reference"
    );
}

#[test]
fn list_checks_prints_every_check_with_phase_severity_and_fault() {
    let out = nodeimg(&["verify", "--list-checks"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let row = |id: &str| {
        listing
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no {id} in\n{listing}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("gpu.xid")[..4],
        ["gpu.xid", "driver,health", "critical", "device"]
    );
    assert_eq!(
        row("os.kernel.arg.implied")[..4],
        ["os.kernel.arg.implied", "boot", "warning", "os-memory-disk"]
    );
    assert_eq!(row("system.time-sync.active")[1], "boot");

    let out = nodeimg(&["verify", "--list-checks", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let list = parse(&out.stdout);
    let entries = list.as_array().cloned().unwrap_or_default();
    let xid = entries
        .iter()
        .find(|e| e["id"] == "gpu.xid")
        .unwrap_or_else(|| panic!("no gpu.xid in {list}"));
    assert_eq!(xid["phases"], serde_json::json!(["driver", "health"]));
    assert_eq!(xid["severity"], "critical");
    assert_eq!(xid["fault"], "device");
    let ids: std::collections::BTreeSet<&str> =
        entries.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids.len(), entries.len(), "ids are unique");
    // Every id the text lists is in the JSON too.
    for line in listing.lines().skip(1).take_while(|l| !l.is_empty()) {
        let id = line.split_whitespace().next().unwrap_or_default();
        assert!(ids.contains(id), "{id}");
    }

    let out = nodeimg(&["verify", "--list-checks", "--format", "junit"]);
    assert_eq!(out.status.code(), Some(2));
}

/// With `--root DIR` and no `--blueprint`, the lock is the inspected machine's: read under
/// `DIR`, and its absence says to pass `--blueprint`.
#[test]
fn the_default_lock_is_read_under_the_root() {
    let node = Node::healthy();
    let root = node.tree.root().to_string_lossy().into_owned();
    let out = nodeimg(&["verify", "--root", &root, "--timeout", "10"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let under_root = node.tree.local("/etc/nodeimg/blueprint.lock.json");
    assert!(stderr.contains(&*under_root.to_string_lossy()), "{stderr}");
    assert!(stderr.contains("--blueprint"), "{stderr}");
}

/// Strings from the machine cannot forge report lines or drive the terminal.
#[test]
fn text_reports_escape_control_characters_from_the_machine() {
    let node = Node::healthy();
    node.tree.attr(
        "/proc/sys/kernel/hostname",
        "evil\nnodeimg verify: PASS\u{1b}[2J",
    );
    node.tree
        .attr("/proc/sys/kernel/osrelease", "5.15\u{1b}]0;owned\u{7}");
    node.tree
        .file("/etc/nodeimg/break-glass", "maintenance \u{1b}[31mwindow\n");
    let xml = node.path("smi.xml");
    let out = node.verify(&["--nvidia-smi-xml", &xml]);
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(!stdout.contains('\u{7}'), "{stdout:?}");
    assert!(!stdout.contains("\nnodeimg verify: PASS"), "{stdout:?}");
    assert!(
        stdout.contains("evil\\u{a}nodeimg verify: PASS\\u{1b}[2J"),
        "{stdout}"
    );
    assert!(
        !text(&out.stderr).contains('\u{1b}'),
        "{:?}",
        text(&out.stderr)
    );
}

#[test]
fn every_check_has_a_runbook_with_a_remedy() {
    let list = parse(&nodeimg(&["verify", "--list-checks", "--format", "json"]).stdout);
    let ids: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(ids.len() > 50);
    for id in &ids {
        let out = nodeimg(&["verify", "--explain", id]);
        assert_eq!(out.status.code(), Some(0), "{id}: {}", text(&out.stderr));
        let runbook = text(&out.stdout);
        assert!(runbook.starts_with(&format!("{id}: ")), "{runbook}");
        let remedy = runbook
            .lines()
            .find_map(|l| l.trim().strip_prefix("remedy: "))
            .unwrap_or_default();
        assert!(remedy.len() > 20, "{id}: {runbook}");
    }
    // The sysctl that does not hold says how to load it, and what an absent file means.
    let sysctl = text(&nodeimg(&["verify", "--explain", "os.sysctl"]).stdout);
    assert!(sysctl.contains("sysctl --system"), "{sysctl}");
    assert!(sysctl.contains("not applied"), "{sysctl}");
    // A dependent names its root.
    let cuda = text(&nodeimg(&["verify", "--explain", "gpu.cuda.version"]).stdout);
    assert!(cuda.contains("blocked by: gpu.count"), "{cuda}");
    let out = nodeimg(&["verify", "--explain", "gpu.counts"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A failed boot verification prints where the evidence went and a break-glass command
/// that works as printed.
#[test]
fn failed_boot_verify_prints_a_working_break_glass_command() {
    if this_machine_has_a_gpu() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let glass = dir.path().join("break-glass");
    let evidence = dir.path().join("evidence");
    let args = [
        "verify",
        "--phase",
        "boot",
        "--blueprint",
        "blueprints/h100-sxm-ubuntu.yaml",
        "--timeout",
        "10",
        "--break-glass",
        glass.to_str().unwrap(),
        "--evidence-on-fail",
        evidence.to_str().unwrap(),
    ];
    let out = nodeimg(&args);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let kept = std::fs::read_dir(&evidence)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(
        err.contains(&format!("evidence: {}", kept.display())),
        "{err}"
    );
    let command = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("printf "))
        .unwrap_or_else(|| panic!("no break-glass command in {err}"));
    let (write, restart) = command.split_once(" && ").unwrap();
    assert_eq!(restart, "systemctl restart nodeimg-verify kubelet");
    let sh = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf {}", write.replace("REASON", "test")))
        .status()
        .unwrap();
    assert!(sh.success());
    let out = nodeimg(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("overrides it"),
        "{}",
        text(&out.stderr)
    );
}

/// A passing run keeps its record beside `--record` as the node's last good one; a later
/// failing run names what changed since (a BIOS downgrade) and which checks passed then, in
/// the text, the summary and the JSON, and leaves the last good record as it was.
#[test]
fn a_failing_node_names_what_changed_since_its_last_good_record() {
    let node = Node::healthy();
    let xml = node.path("smi.xml");
    let record = node.path("record.yaml");
    let out = node.verify(&["--nvidia-smi-xml", &xml, "--record", &record]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let kept = node.path("record.last-good.yaml");
    let good = std::fs::read_to_string(&kept).unwrap_or_else(|e| panic!("{kept}: {e}"));
    assert!(good.contains("1.3.2"), "{good}");

    node.tree.attr("/sys/class/dmi/id/bios_version", "1.0.7");
    let out = node.verify(&["--nvidia-smi-xml", &xml, "--record", &record]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = text(&out.stdout);
    assert!(
        report.contains(&format!("Since the last passing record ({kept}")),
        "{report}"
    );
    assert!(report.contains("changed: BIOS 1.3.2 → 1.0.7"), "{report}");
    assert!(
        report.contains("passed then: firmware.bios.version"),
        "{report}"
    );
    let out = node.verify(&[
        "--nvidia-smi-xml",
        &xml,
        "--format",
        "summary",
        "--record",
        &record,
    ]);
    let summary = text(&out.stdout);
    assert!(
        summary.contains(
            "since the last good record: BIOS 1.3.2 → 1.0.7; passed then: firmware.bios.version"
        ),
        "{summary}"
    );
    let out = node.verify(&[
        "--nvidia-smi-xml",
        &xml,
        "--format",
        "json",
        "--record",
        &record,
    ]);
    let json = parse(&out.stdout);
    let since = &json["since_last_good"];
    assert_eq!(
        since["changed"],
        serde_json::json!(["BIOS 1.3.2 → 1.0.7"]),
        "{since}"
    );
    assert_eq!(
        since["failing_since"],
        serde_json::json!(["firmware.bios.version"]),
        "{since}"
    );
    // The failing runs replaced the record, never the last good one.
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), good);
    assert!(std::fs::read_to_string(&record).unwrap().contains("1.0.7"));
}
