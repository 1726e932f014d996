//! GPU faults judged by the vendors' catalogs, on kernel-log lines as the drivers print them
//! (`tests/fixtures/kernel-log/events.txt`): every Xid bucket, every SXid table and the
//! amdgpu RAS messages give the class and action the catalogs say; every catalog row
//! classifies to its table's action; AMD's RAS counters and retired pages; a site
//! override; and the health phase's memory across runs and reboots (judged once, repeats
//! escalate, a storm is one finding, the reboot limit sends the node to service).

use std::collections::BTreeMap;
use std::process::Output;

use crate::support::fixture_tree::{self, Tree};
use crate::support::nodeimg;
use crate::support::verify_fixture::{self, BLUEPRINT};
use crate::support::{self, Variant};
use nodeimg::blueprint::compat::Matrix;
use nodeimg::fault::amd_ras;
use nodeimg::fault::{Action, FaultClass, Severity, sxid, xid};
use nodeimg::verify::checks::{self, CheckResult, Selection, Verdict};
use nodeimg::verify::facts::kernel_log::{self, KernelEventKind};
use nodeimg::verify::report::record::AcceptanceRecord;
use nodeimg::verify::report::{BlueprintRef, Report};
use serde_json::Value;

const GPU1: &str = "0000:33:00.0";
const SWITCH0: &str = "0000:05:00.0";
const AMD0: &str = "0000:0b:00.0";

/// `(class, action)` or `None` for an unknown code, and the line, of each fixture line.
fn fixture_lines() -> Vec<(Option<(FaultClass, Action)>, String)> {
    let text =
        std::fs::read_to_string(support::root().join("tests/fixtures/kernel-log/events.txt"))
            .unwrap_or_else(|e| panic!("{e}"));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (expect, line) = l.split_once(" | ").unwrap_or_else(|| panic!("{l}"));
            let expect = match expect.split_whitespace().collect::<Vec<_>>()[..] {
                ["unknown"] => None,
                [class, action] => Some((
                    class
                        .parse::<FaultClass>()
                        .unwrap_or_else(|_| panic!("{class}")),
                    action
                        .parse::<Action>()
                        .unwrap_or_else(|_| panic!("{action}")),
                )),
                _ => panic!("{l}"),
            };
            (expect, line.to_owned())
        })
        .collect()
}

fn kmsg(tree: &Tree, lines: &[&str]) {
    let mut text = String::from("6,1,0,-;Linux version 5.15.0-122-generic\n");
    for (i, line) in lines.iter().enumerate() {
        text.push_str(&format!("4,{},{},-;{line}\n", i + 2, 5_000_000 + i * 1000));
    }
    tree.file("/dev/kmsg", &text);
}

fn find<'a>(results: &'a [CheckResult], id: &str, subject: &str) -> &'a CheckResult {
    results
        .iter()
        .find(|r| r.id() == id && r.subject.as_deref() == Some(subject))
        .unwrap_or_else(|| panic!("no {id}[{subject}]"))
}

fn h100_results(tree: &Tree) -> Vec<CheckResult> {
    verify_fixture::results(tree, &verify_fixture::healthy_xml(), BLUEPRINT)
}

fn mi300x_results(tree: &Tree, matrix: &Matrix) -> Vec<CheckResult> {
    let bp = Variant::of("mi300x-rhel")
        .set("network.nics", serde_json::json!([]))
        .remove("network.affinity")
        .remove("acceptance")
        .load();
    let facts = fixture_tree::mi300x_facts(tree);
    checks::evaluate(bp.spec(), &facts, matrix, &Selection::default())
}

/// One line at a time on the fixture nodes: the result of its device carries the class
/// and the action the fixture names; an unknown code passes its catalog check and warns
/// in `gpu.event.unknown`, naming the code.
#[test]
fn every_bucket_and_table_gives_the_catalogs_action() {
    let h100 = verify_fixture::healthy_tree();
    let mi300x = fixture_tree::mi300x_node();
    for (expect, line) in fixture_lines() {
        let (results, id, subject) = if line.starts_with("amdgpu") {
            kmsg(&mi300x, &[&line]);
            (
                mi300x_results(&mi300x, &Matrix::builtin()),
                "gpu.ras.events",
                AMD0,
            )
        } else if line.contains("SXid") {
            kmsg(&h100, &[&line]);
            (h100_results(&h100), "gpu.sxid", SWITCH0)
        } else {
            kmsg(&h100, &[&line]);
            (h100_results(&h100), "gpu.xid", GPU1)
        };
        let result = find(&results, id, subject);
        let unknown = results
            .iter()
            .find(|r| r.id() == "gpu.event.unknown" && r.subject.as_deref() == Some(subject));
        match expect {
            Some((class, action)) => {
                assert_eq!(result.verdict, Verdict::Fail, "{line}");
                assert_eq!((result.fault, result.action), (class, action), "{line}");
                let severity = match &kernel_log::parse(&line).events[0].kind {
                    // amdgpu's reset and throttle reports are the driver's own doing: the
                    // table's severity, not the action's.
                    KernelEventKind::AmdRas { signal, .. } => amd_ras::judge(*signal).severity,
                    // Xid 45 alone: Fabric Manager's restart, as a warning.
                    KernelEventKind::Xid { code: 45, .. } => Severity::Warning,
                    _ => action.severity(),
                };
                assert_eq!(result.severity, severity, "{line}");
                assert!(unknown.is_none_or(|u| u.verdict == Verdict::Pass), "{line}");
            }
            None => {
                assert_eq!(result.verdict, Verdict::Pass, "{line}: {}", result.observed);
                let unknown = unknown.unwrap_or_else(|| panic!("{line}: no gpu.event.unknown"));
                assert_eq!(
                    (unknown.verdict, unknown.severity, unknown.action),
                    (Verdict::Fail, Severity::Warning, Action::None),
                    "{line}"
                );
                let code = line
                    .split("): ")
                    .nth(1)
                    .and_then(|r| r.split(',').next())
                    .unwrap_or_default();
                assert!(
                    unknown.observed.contains(code),
                    "{line}: {}",
                    unknown.observed
                );
            }
        }
    }
}

/// Every row of every catalog: a line in the driver's format with the row's code reads
/// back as that code, and is judged as the row's action says (the immediate bucket for
/// Xids, read here from the table's own words, independently of the bucket module).
#[test]
fn every_catalog_row_classifies_to_its_tables_action() {
    let bucket_action: BTreeMap<&str, Option<Action>> = [
        ("IGNORE", Some(Action::Ignore)),
        ("RESTART_APP", Some(Action::RestartApp)),
        ("RESET_GPU", Some(Action::ResetGpu)),
        ("RESTART_BM", Some(Action::RebootNode)),
        ("RESTART_VM", Some(Action::RebootNode)),
        ("CONTACT_SUPPORT", Some(Action::Service)),
        ("CHECK_MECHANICALS", Some(Action::CheckCoolingPower)),
        ("UPDATE_SWFW", Some(Action::Service)),
        ("CHECK_UVM", Some(Action::ResetGpu)),
        ("WORKFLOW_XID_48", Some(Action::ResetGpu)),
        ("WORKFLOW_NVLINK_ERR", Some(Action::ResetGpu)),
        // Read from the message: these lines carry nothing to read.
        ("WORKFLOW_XID_45", Some(Action::RestartDaemon)),
        ("XID_154", None),
        ("WORKFLOW_NVLINK5_ERR", None),
        ("", None),
    ]
    .into_iter()
    .collect();
    let catalog = xid::catalog();
    assert_eq!(catalog.rows().count(), 172);
    for row in catalog.rows() {
        let line = format!(
            "NVRM: Xid (PCI:0000:33:00): {}, pid=1, name=python3, {}",
            row.code, row.description
        );
        let log = kernel_log::parse(&line);
        assert!(
            matches!(log.events[0].kind, KernelEventKind::Xid { code, .. } if code == row.code),
            "{line}"
        );
        let expected = bucket_action
            .get(row.immediate.as_str())
            .unwrap_or_else(|| panic!("Xid {}: bucket {}", row.code, row.immediate));
        match (xid::judge(row.code, &log.events[0].message, true), expected) {
            (xid::Verdict::Judged(j), Some(action)) => {
                assert_eq!(j.action, *action, "Xid {}", row.code);
                assert_eq!(j.fault, row.class, "Xid {}", row.code);
            }
            (xid::Verdict::Unknown(_), None) => {}
            (got, want) => panic!(
                "Xid {} ({}): {got:?}, expected {want:?}",
                row.code, row.immediate
            ),
        }
    }
    for row in sxid::catalog().rows() {
        let fatal = if row.kind == sxid::Kind::NonFatal {
            "Non-fatal"
        } else {
            "Fatal"
        };
        let line = format!(
            "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): {}, {fatal}, Link 9 {}",
            row.code, row.name
        );
        let log = kernel_log::parse(&line);
        assert!(
            matches!(log.events[0].kind, KernelEventKind::Sxid { code, switch: Some(2), link: Some(9), .. } if code == row.code),
            "{line}"
        );
        let j = sxid::judge(row.code).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (j.fault, j.action),
            (FaultClass::Link, row.action),
            "SXid {}",
            row.code
        );
    }
    for row in amd_ras::catalog().rows() {
        assert_eq!(amd_ras::judge(row.signal), row.judgement, "{}", row.signal);
    }
}

fn ras(tree: &Tree, gpu: &str, file: &str, content: &str) {
    tree.file(&format!("/sys/bus/pci/devices/{gpu}/ras/{file}"), content);
}

/// AMD's RAS state in sysfs: an uncorrectable error asks for a reset (the driver's own
/// recovery), a page the driver could not reserve sends the GPU to service, corrected
/// errors and reserved pages block nothing.
#[test]
fn amd_ras_counts_and_bad_pages() {
    let tree = fixture_tree::mi300x_node();
    for gpu in 0..8u8 {
        let address = format!("0000:{:02x}:00.0", 0x08 + gpu * 0x20 + 3);
        ras(&tree, &address, "umc_err_count", "ue: 0\nce: 0\n");
        ras(&tree, &address, "gfx_err_count", "ue: 0\nce: 0\n");
        ras(&tree, &address, "gpu_vram_bad_pages", "");
    }
    kmsg(&tree, &[]);
    let results = mi300x_results(&tree, &Matrix::builtin());
    for id in ["gpu.ras.errors", "gpu.ras.bad-pages", "gpu.ras.events"] {
        let r = find(&results, id, AMD0);
        assert_eq!(r.verdict, Verdict::Pass, "{id}: {}", r.observed);
    }
    ras(&tree, AMD0, "umc_err_count", "ue: 2\nce: 7\n");
    ras(
        &tree,
        AMD0,
        "gpu_vram_bad_pages",
        "0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : F\n",
    );
    let results = mi300x_results(&tree, &Matrix::builtin());
    let errors = find(&results, "gpu.ras.errors", AMD0);
    assert_eq!(
        (errors.verdict, errors.action, errors.severity),
        (Verdict::Fail, Action::ResetGpu, Severity::Critical)
    );
    assert!(errors.observed.contains("umc ue +2"), "{}", errors.observed);
    let pages = find(&results, "gpu.ras.bad-pages", AMD0);
    assert_eq!(
        (pages.verdict, pages.action),
        (Verdict::Fail, Action::Service)
    );
    ras(&tree, AMD0, "umc_err_count", "ue: 0\nce: 7\n");
    ras(
        &tree,
        AMD0,
        "gpu_vram_bad_pages",
        "0x00000001 : 0x00001000 : R\n",
    );
    let results = mi300x_results(&tree, &Matrix::builtin());
    let errors = find(&results, "gpu.ras.errors", AMD0);
    assert_eq!(
        (errors.verdict, errors.action, errors.severity),
        (Verdict::Fail, Action::Ignore, Severity::Warning),
        "{}",
        errors.observed
    );
    ras(&tree, AMD0, "umc_err_count", "ue: x\n");
    let results = mi300x_results(&tree, &Matrix::builtin());
    assert_eq!(
        find(&results, "gpu.ras.errors", AMD0).verdict,
        Verdict::Error
    );
}

/// A site override of one code, from a `--matrix` file: it decides the action, says so in
/// the result, and `explain` lists it.
#[test]
fn a_site_override_decides_and_is_shown() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let matrix_path = dir.path().join("site.yaml");
    std::fs::write(
        &matrix_path,
        "schemaVersion: 1\nfaults:\n  - {catalog: nvidia-xid, code: 94, action: reset-gpu, source: \"site qualification QA-1234\"}\n  - {catalog: nvidia-xid, code: 999, action: service, class: device, source: \"vendor advisory 7\"}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut matrix = Matrix::builtin();
    matrix
        .extend_from_file(&matrix_path)
        .unwrap_or_else(|e| panic!("{e}"));
    let bp = Variant::parse("bp.yaml", BLUEPRINT).load_with(&matrix);
    // The blueprint's own matrix entries carry the overrides into the image.
    assert_eq!(bp.identity().matrix().faults.len(), 2);
    let tree = verify_fixture::healthy_tree();
    kmsg(
        &tree,
        &[
            "NVRM: Xid (PCI:0000:33:00): 94, pid=2130, name=python, Contained: SM (0x1). RST: No, D-RST: No",
            "NVRM: Xid (PCI:0000:13:00): 999, pid=1, name=python3, a code of a newer driver",
        ],
    );
    let facts = verify_fixture::facts(&tree, &verify_fixture::healthy_xml());
    let results = checks::evaluate(
        bp.spec(),
        &facts,
        bp.identity().matrix(),
        &Selection::default(),
    );
    let r = find(&results, "gpu.xid", GPU1);
    assert_eq!(
        (r.action, r.severity),
        (Action::ResetGpu, Severity::Critical)
    );
    assert!(
        r.observed
            .contains("site override: site qualification QA-1234"),
        "{}",
        r.observed
    );
    let r = find(&results, "gpu.xid", "0000:13:00.0");
    assert_eq!(
        (r.action, r.verdict),
        (Action::Service, Verdict::Fail),
        "{}",
        r.observed
    );
    assert_eq!(
        find(&results, "gpu.event.unknown", "0000:13:00.0").verdict,
        Verdict::Pass
    );
    // The record keeps each check's action and the override that decided it.
    let report = Report::new(
        BlueprintRef {
            name: bp.name().to_owned(),
            version: bp.spec().metadata.version.to_string(),
            id: bp.id().to_owned(),
            file: "bp.yaml".to_owned(),
        },
        "gpu-node-01".to_owned(),
        "all",
        Vec::new(),
        0,
        1,
        None,
        results,
    );
    let record = AcceptanceRecord::new(bp.spec(), &facts, &report, None);
    let entry = record
        .diagnostics
        .actions
        .iter()
        .find(|a| a.check == format!("gpu.xid[{GPU1}]"))
        .unwrap_or_else(|| panic!("{:?}", record.diagnostics.actions));
    assert_eq!(entry.action, Action::ResetGpu);
    assert!(
        entry
            .observed
            .contains("site override: site qualification QA-1234"),
        "{}",
        entry.observed
    );

    let bp_path = dir.path().join("bp.yaml");
    std::fs::write(&bp_path, BLUEPRINT).unwrap_or_else(|e| panic!("{e}"));
    let out = nodeimg(&[
        "explain",
        bp_path.to_str().unwrap_or_default(),
        "--matrix",
        matrix_path.to_str().unwrap_or_default(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("nvidia-xid 94") && text.contains("reset-gpu"),
        "{text}"
    );
    // A code that is not an Xid number is refused with where it is.
    std::fs::write(
        &matrix_path,
        "schemaVersion: 1\nfaults:\n  - {catalog: nvidia-xid, code: x94, action: reset-gpu, source: s}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = Matrix::builtin()
        .extend_from_file(&matrix_path)
        .expect_err("refused");
    assert!(e.to_string().contains("faults[0].code"), "{e}");
}

/// The fixture node for runs of the `nodeimg verify` program: the tree, the blueprint and
/// nvidia-smi's output beside it.
struct Node {
    tree: Tree,
    dir: tempfile::TempDir,
    blueprint: String,
}

impl Node {
    fn new(blueprint: &str) -> Node {
        let node = Node {
            tree: verify_fixture::healthy_tree(),
            dir: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
            blueprint: blueprint.to_owned(),
        };
        node.write("bp.yaml", &node.blueprint);
        node.write("smi.xml", &verify_fixture::healthy_xml());
        node.boot("boot-1");
        kmsg(&node.tree, &[]);
        node
    }

    fn write(&self, name: &str, content: &str) {
        std::fs::write(self.dir.path().join(name), content).unwrap_or_else(|e| panic!("{e}"));
    }

    fn boot(&self, id: &str) {
        self.tree
            .file("/proc/sys/kernel/random/boot_id", &format!("{id}\n"));
    }

    /// `verify --phase health --checks CHECKS --format json`, the report parsed.
    fn health(&self, checks: &str) -> (Output, Value) {
        let (out, report, _) = self.health_measured(checks);
        (out, report)
    }

    /// [`Node::health`], and the program's peak resident set in KiB.
    fn health_measured(&self, checks: &str) -> (Output, Value, i64) {
        let root = self.tree.root().to_string_lossy().into_owned();
        let bp = self.dir.path().join("bp.yaml");
        let xml = self.dir.path().join("smi.xml");
        let mut args: Vec<String> = [
            "verify",
            "--phase",
            "health",
            "--checks",
            checks,
            "--blueprint",
            bp.to_str().unwrap_or_default(),
            "--root",
            &root,
            "--nvidia-smi-xml",
            xml.to_str().unwrap_or_default(),
            "--format",
            "json",
            "--timeout",
            "10",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(self.tree.tool_args());
        let (out, peak) = measured(&args);
        let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, report, peak)
    }

    fn history(&self) -> Value {
        let text = std::fs::read_to_string(self.tree.local("/var/lib/nodeimg/health-history.json"))
            .unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"))
    }
}

fn result_of<'a>(report: &'a Value, id: &str, subject: &str) -> &'a Value {
    report["results"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == id && r["subject"] == subject))
        .unwrap_or_else(|| panic!("no {id}[{subject}] in {report}"))
}

fn lines(n: usize, start_seq: usize, line: &str) -> String {
    (0..n)
        .map(|i| {
            format!(
                "4,{},{},-;{line}\n",
                start_seq + i,
                5_000_000 + (start_seq + i) * 10
            )
        })
        .collect()
}

/// The health phase judges an event once: an application's Xid warns in the run that
/// reads it and not in the next; its third occurrence within a day asks for a GPU reset
/// (the repeat rule); a storm of 100,000 lines is one occurrence, one short finding with a
/// count, read within a bounded memory.
#[test]
fn the_health_phase_judges_events_once_and_repeats_escalate() {
    let node = Node::new(BLUEPRINT);
    let xid13 = "NVRM: Xid (PCI:0000:33:00): 13, pid=2918, name=python3, Graphics SM Warp Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address";
    let mut log = String::from("6,1,0,-;Linux version 5.15.0-122-generic\n");
    log.push_str(&lines(100_000, 2, xid13));
    node.tree.file("/dev/kmsg", &log);
    let (out, report, peak_kib) = node.health_measured("gpu.xid");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = result_of(&report, "gpu.xid", GPU1);
    assert_eq!(
        (r["verdict"].as_str(), r["action"].as_str()),
        (Some("fail"), Some("restart-app"))
    );
    let observed = r["observed"].as_str().unwrap_or_default();
    assert!(
        observed.contains("×100000") && observed.len() < 200,
        "{observed}"
    );
    // Memory stays bounded: the program's peak resident set, as the kernel counted it
    // (the 15 MiB log is read whole, its 100,000 lines are one event).
    assert!(
        peak_kib < 256 * 1024,
        "verify peaked at {peak_kib} KiB on a 100k-line storm"
    );

    // Nothing new: judged already.
    let (_, report) = node.health("gpu.xid");
    assert_eq!(result_of(&report, "gpu.xid", GPU1)["verdict"], "pass");
    // A second and a third occurrence later in the same boot.
    log.push_str(&lines(1, 200_000, xid13));
    node.tree.file("/dev/kmsg", &log);
    let (_, report) = node.health("gpu.xid");
    assert_eq!(result_of(&report, "gpu.xid", GPU1)["action"], "restart-app");
    log.push_str(&lines(1, 200_001, xid13));
    node.tree.file("/dev/kmsg", &log);
    let (out, report) = node.health("gpu.xid");
    let r = result_of(&report, "gpu.xid", GPU1);
    assert_eq!(r["action"], "reset-gpu", "{r}");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        r["observed"]
            .as_str()
            .unwrap_or_default()
            .contains("3 times within 24 h"),
        "{r}"
    );
    // Each health rule keeps its own cursor.
    let history = node.history();
    assert!(history["rules"]["health:gpu.xid"]["cursor"]["seq"].as_u64() >= Some(200_001));
}

/// A finding that needs a reset stays until the node reboots; a reboot while it stands is
/// an attempt of the ladder, and once the node had `maxReboots` of them within the window
/// a fault that keeps coming back asks for service instead of another reboot.
#[test]
fn a_reset_stays_until_the_reboot_and_the_ladder_ends_in_service() {
    let bp = Variant::parse("bp.yaml", BLUEPRINT)
        .set(
            "rollout",
            serde_json::json!({"remediation": {"maxReboots": 1}}),
        )
        .text();
    let node = Node::new(&bp);
    let xid95 = "NVRM: Xid (PCI:0000:33:00): 95, pid=2130, name=python, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No";
    kmsg(&node.tree, &[xid95]);
    for _ in 0..2 {
        let (out, report) = node.health("gpu.xid");
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(result_of(&report, "gpu.xid", GPU1)["action"], "reset-gpu");
    }
    // The node reboots; the new boot's log has the fault again.
    node.boot("boot-2");
    let (out, report) = node.health("gpu.xid");
    assert_eq!(out.status.code(), Some(1));
    let r = result_of(&report, "gpu.xid", GPU1);
    assert_eq!(r["action"], "service", "{r}");
    assert!(
        r["observed"]
            .as_str()
            .unwrap_or_default()
            .contains("1 reboot(s)"),
        "{r}"
    );
    assert_eq!(
        node.history()["attempts"]["reboots"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    // A clean boot: the fault is gone, nothing fails.
    node.boot("boot-3");
    kmsg(&node.tree, &[]);
    let (out, _) = node.health("gpu.xid");
    assert_eq!(out.status.code(), Some(0));
}

/// The hardware throttle counters: growth between two health runs is a finding, the
/// counter itself (time since the driver loaded) is not.
#[test]
fn throttle_counters_growing_between_runs_are_a_finding() {
    let node = Node::new(BLUEPRINT);
    let mut smi = crate::support::nvidia_smi::SmiLog::h100_healthy();
    smi.gpu(1).hw_therm_slowdown_us = 5_000_000;
    node.write("smi.xml", &smi.xml());
    let (out, report) = node.health("gpu.clocks.hw-slowdown");
    assert_eq!(out.status.code(), Some(0), "{report}");
    smi.gpu(1).hw_therm_slowdown_us = 9_500_000;
    node.write("smi.xml", &smi.xml());
    let (out, report) = node.health("gpu.clocks.hw-slowdown");
    assert_eq!(out.status.code(), Some(1));
    let r = result_of(&report, "gpu.clocks.hw-slowdown", GPU1);
    assert_eq!(r["action"], "check-cooling-power");
    assert!(
        r["observed"]
            .as_str()
            .unwrap_or_default()
            .contains("hw_therm_slowdown +4.5 s"),
        "{r}"
    );
}

/// Runs `nodeimg ARGS` and returns its output and the peak resident set (KiB) of the
/// nodeimg process alone. A small parent (python3) starts it and reads its rusage: the
/// child of a vfork (as std spawns) inherits the spawning process's high-water mark at
/// exec, so measured from this many-threaded test process it would count the tests'
/// memory too.
fn measured(args: &[String]) -> (Output, i64) {
    const PARENT: &str = "import os, resource, subprocess, sys\n\
        code = subprocess.call(sys.argv[2:])\n\
        open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
        sys.exit(code)\n";
    let rss = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    let mut c = std::process::Command::new("python3");
    crate::support::clean(&mut c)
        .current_dir(crate::support::root())
        .stdin(std::process::Stdio::null())
        .arg("-c")
        .arg(PARENT)
        .arg(rss.path())
        .arg(crate::support::BIN)
        .args(args);
    let output = c
        .output()
        .unwrap_or_else(|e| panic!("python3 (runs the measured nodeimg): {e}"));
    let text = std::fs::read_to_string(rss.path()).unwrap_or_default();
    let peak = text.trim().parse().unwrap_or_else(|e| {
        panic!(
            "peak RSS {text:?}: {e}; {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, peak)
}

/// The clock-event reasons, their counters and the temperature limits of every real
/// `nvidia-smi -q -x` capture in the corpus read as the file says (a text scan, not the
/// parser), so that the throttle and temperature checks judge what the driver reported.
#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn throttle_and_temperature_facts_of_the_corpus_captures() {
    use nodeimg::verify::fact::Fact;
    use nodeimg::verify::facts::nvidia_smi;
    let dir = support::root().join("../shared/corpus/nvidia-smi-xml");
    assert!(dir.is_dir(), "corpus folder {} is missing", dir.display());
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&dir) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).into_path();
        if path.extension().is_some_and(|e| e == "xml") {
            files.push(path);
        }
    }
    assert!(files.len() >= 20, "{} captures", files.len());
    let (mut counters, mut tlimits) = (0, 0);
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let log = nvidia_smi::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let chunks: Vec<&str> = text.split("<gpu id=\"").skip(1).collect();
        for (gpu, chunk) in log.gpus.iter().zip(chunks) {
            let element = |tag: &str| {
                let open = format!("<{tag}>");
                let start = chunk.find(&open)? + open.len();
                let end = chunk[start..].find(&format!("</{tag}>"))? + start;
                Some(chunk[start..end].trim().to_owned())
            };
            for reason in [
                "hw_slowdown",
                "hw_thermal_slowdown",
                "hw_power_brake_slowdown",
            ] {
                let raw = element(&format!("clocks_event_reason_{reason}"))
                    .or_else(|| element(&format!("clocks_throttle_reason_{reason}")));
                let parsed = gpu
                    .clock_event_reasons
                    .known()
                    .and_then(|r| r.get(reason).copied());
                assert_eq!(parsed, raw.map(|r| r == "Active"), "{name}: {reason}");
            }
            let raw = element("clocks_event_reasons_counters_hw_therm_slowdown");
            let parsed = gpu
                .clock_event_counters_us
                .known()
                .and_then(|c| c.get("hw_therm_slowdown").copied());
            assert_eq!(
                parsed,
                raw.and_then(|r| r.strip_suffix(" us").and_then(|n| n.parse().ok())),
                "{name}: hw_therm_slowdown"
            );
            counters += usize::from(parsed.is_some());
            let raw = element("gpu_temp_tlimit")
                .and_then(|r| r.strip_suffix(" C").and_then(|n| n.parse::<f64>().ok()));
            match (&gpu.temperature_limits.tlimit_margin_c, raw) {
                (Fact::Known(v), Some(r)) => {
                    assert_eq!(*v, r, "{name}");
                    tlimits += 1;
                }
                (Fact::Unknown { .. }, None) => {}
                (got, want) => panic!("{name}: gpu_temp_tlimit {got:?}, the file says {want:?}"),
            }
        }
    }
    assert!(
        counters > 0 && tlimits > 0,
        "counters in {counters}, T.Limit in {tlimits} GPUs"
    );
}

/// `accelerators.eccRequired` on Instinct GPUs: VRAM ECC is amdgpu RAS on the UMC block
/// (`ras/umc_err_count` exists only for enabled blocks); no RAS folder, or RAS without
/// UMC, fails `gpu.ecc.mode` for that GPU.
#[test]
fn amd_ecc_is_judged_by_the_umc_ras_block() {
    let tree = fixture_tree::mi300x_node();
    kmsg(&tree, &[]);
    let results = mi300x_results(&tree, &Matrix::builtin());
    let ecc = find(&results, "gpu.ecc.mode", AMD0);
    assert_eq!(ecc.verdict, Verdict::Pass, "{}", ecc.observed);
    std::fs::remove_file(tree.local(&format!("/sys/bus/pci/devices/{AMD0}/ras/umc_err_count")))
        .unwrap();
    let results = mi300x_results(&tree, &Matrix::builtin());
    let ecc = find(&results, "gpu.ecc.mode", AMD0);
    assert_eq!(
        (ecc.verdict, ecc.fault),
        (Verdict::Fail, FaultClass::Device),
        "{}",
        ecc.observed
    );
    assert!(ecc.observed.contains("not for umc"), "{}", ecc.observed);
    std::fs::remove_dir_all(tree.local(&format!("/sys/bus/pci/devices/{AMD0}/ras"))).unwrap();
    let results = mi300x_results(&tree, &Matrix::builtin());
    let ecc = find(&results, "gpu.ecc.mode", AMD0);
    assert_eq!(ecc.verdict, Verdict::Fail);
    assert!(ecc.observed.contains("no ras folder"), "{}", ecc.observed);
}
