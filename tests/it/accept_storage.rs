//! The storage baseline: the rendered fio Job (`acceptance.storage`), fio's JSON judged
//! by `nodeimg accept` against the blueprint's thresholds and recorded. The opt-in case
//! (`cargo test -- --ignored accept_storage`) runs the installed fio with the rendered
//! Job's own arguments, on a small file, and fails when fio is missing.

use crate::support::variant::Variant;
use crate::support::verify_fixture::BLUEPRINT;
use nodeimg::render::{Templates, render};
use serde_json::{Value, json};
use std::process::Command;

/// The fixture blueprint with a storage baseline and `thresholds` (YAML flow map).
fn blueprint(thresholds: &str) -> String {
    format!(
        "{BLUEPRINT}acceptance:\n  storage:\n    path: /mnt/nvme\n    thresholds: {thresholds}\n"
    )
}

/// fio's JSON for the four workloads: (name, error, read MiB/s, write MiB/s, IOPS, p99 µs).
fn fio_json(jobs: &[(&str, i64, f64, f64, f64, f64)]) -> String {
    let dir = |mib: f64, iops: f64, p99: f64| {
        if mib == 0.0 {
            json!({"io_bytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
                   "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}})
        } else {
            let bytes = (mib * 1048576.0) as u64;
            json!({"io_bytes": bytes * 30, "bw_bytes": bytes, "bw": bytes / 1024, "iops": iops,
                   "runtime": 30000,
                   "clat_ns": {"min": 1000, "max": 900000, "mean": 5000.0, "stddev": 10.0, "N": 100,
                               "percentile": {"50.000000": 4000, "99.000000": (p99 * 1000.0) as u64}}})
        }
    };
    let jobs: Vec<Value> = jobs
        .iter()
        .map(|(name, error, r, w, iops, p99)| {
            json!({"jobname": name, "groupid": 0, "error": error,
                   "read": dir(*r, *iops, *p99), "write": dir(*w, *iops, *p99),
                   "trim": dir(0.0, 0.0, 0.0)})
        })
        .collect();
    serde_json::to_string_pretty(&json!({"fio version": "fio-3.33", "jobs": jobs})).unwrap()
}

fn healthy() -> Vec<(&'static str, i64, f64, f64, f64, f64)> {
    vec![
        ("seq-read", 0, 3200.0, 0.0, 3200.0, 9000.0),
        ("seq-write", 0, 0.0, 2100.0, 2100.0, 15000.0),
        ("rand-read", 0, 2400.0, 0.0, 614_400.0, 180.0),
        ("rand-write", 0, 0.0, 1300.0, 332_800.0, 400.0),
    ]
}

/// `accept --format json` over one fio output: (storage findings as (name, verdict),
/// the record).
fn accept(blueprint: &str, fio: &str) -> (Vec<(String, String)>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("bp.yaml");
    std::fs::write(&bp, blueprint).unwrap();
    let out_file = dir.path().join("storage.log");
    std::fs::write(&out_file, fio).unwrap();
    let out = crate::support::cmd()
        .args(["accept", "--format", "json", "--blueprint"])
        .arg(&bp)
        .arg(&out_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let record: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let findings = record["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with("storage"))
        .map(|f| {
            let id = f["id"].as_str().unwrap();
            let name = match f["subject"].as_str() {
                Some(s) => format!("{id}[{s}]"),
                None => id.to_owned(),
            };
            (name, f["verdict"].as_str().unwrap().to_owned())
        })
        .collect();
    (findings, record)
}

fn verdict<'a>(findings: &'a [(String, String)], name: &str) -> &'a str {
    findings
        .iter()
        .find(|f| f.0 == name)
        .map(|f| f.1.as_str())
        .unwrap_or_else(|| panic!("no {name}: {findings:?}"))
}

#[test]
fn thresholds_pass_and_fail_and_figures_are_recorded() {
    let bp = blueprint("{seqReadMiBps: 3000, randWriteIops: 300000, randReadP99Usec: 200}");
    let (findings, record) = accept(&bp, &fio_json(&healthy()));
    assert!(findings.iter().all(|f| f.1 == "pass"), "{findings:?}");
    assert_eq!(verdict(&findings, "storage.jobs"), "pass");
    let jobs = record["baseline"]["storage"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    assert_eq!(jobs[0]["job"], "seq-read");
    assert_eq!(jobs[0]["read_mib_s"], 3200.0);
    assert_eq!(jobs[2]["read_clat_p99_usec"], 180.0);
    assert_eq!(
        record["figures"]["storage.rand-write.write-iops"]["value"],
        332_800.0
    );
    // Slower sequential reads, fewer random-write IOPS, a slower 99th percentile: each
    // fails as a host (disk) fault.
    let mut slow = healthy();
    slow[0].2 = 2000.0;
    slow[3].4 = 100_000.0;
    slow[2].5 = 900.0;
    let (findings, record) = accept(&bp, &fio_json(&slow));
    for name in [
        "storage.seq-read[read bandwidth]",
        "storage.rand-write[write IOPS]",
        "storage.rand-read[read completion latency p99]",
    ] {
        assert_eq!(verdict(&findings, name), "fail", "{name}");
    }
    let faults: Vec<&str> = record["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["verdict"] == "fail")
        .map(|f| f["fault"].as_str().unwrap())
        .collect();
    assert_eq!(faults, ["os-memory-disk"; 3]);
}

#[test]
fn without_thresholds_figures_are_recorded_and_judged_by_regression_only() {
    let (findings, _) = accept(&blueprint("{}"), &fio_json(&healthy()));
    assert!(findings.iter().all(|f| f.1 == "pass"), "{findings:?}");
    let (_, record) = accept(&blueprint("{}"), &fio_json(&healthy()));
    let seq = record["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "storage.seq-read")
        .unwrap();
    assert!(
        seq["expected"]
            .as_str()
            .unwrap()
            .contains("no absolute threshold"),
        "{seq}"
    );
}

#[test]
fn a_missing_workload_is_incomplete_and_a_fio_error_fails() {
    let bp = blueprint("{}");
    let (findings, _) = accept(&bp, &fio_json(&healthy()[..3]));
    assert_eq!(verdict(&findings, "storage.jobs"), "incomplete");
    let mut broken = healthy();
    broken[1].1 = 5; // EIO
    let (findings, _) = accept(&bp, &fio_json(&broken));
    assert_eq!(verdict(&findings, "storage.jobs"), "fail");
    // Declared, and no fio output among the inputs: not run, never a pass.
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("x.json");
    std::fs::write(&topo, "{\"kind\": \"PodList\", \"items\": []}").unwrap();
    let bp_file = dir.path().join("bp.yaml");
    std::fs::write(&bp_file, &bp).unwrap();
    let out = crate::support::cmd()
        .args(["accept", "--format", "json", "--blueprint"])
        .arg(&bp_file)
        .arg(&topo)
        .output()
        .unwrap();
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        record["baseline"]["storage"]["not_run"],
        "no fio output among the inputs"
    );
    assert!(
        record["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["id"] == "storage.jobs" && f["verdict"] == "not-run"),
        "{}",
        record["findings"]
    );
}

#[test]
fn the_example_renders_the_storage_job_pinned_on_the_declared_folder() {
    let bp = Variant::of("h100-sxm-ubuntu").load();
    let rendered = render(&bp, &Templates::embedded()).unwrap_or_else(|e| panic!("{e}"));
    let job = storage_job(&rendered);
    let spec = &job["spec"]["template"]["spec"];
    assert_eq!(
        spec["volumes"][0]["hostPath"]["path"],
        "/var/lib/containerd"
    );
    let image = spec["containers"][0]["image"].as_str().unwrap();
    assert!(image.contains("@sha256:"), "{image}");
    let args = command(&job);
    assert!(
        args.contains(&"--output-format=json".to_owned()),
        "{args:?}"
    );
    assert_eq!(args.iter().filter(|a| a.starts_with("--name=")).count(), 4);
    // Without a storage section, or without the image, no Job.
    for v in [
        Variant::of("h100-sxm-ubuntu").remove("acceptance.storage"),
        Variant::of("h100-sxm-ubuntu").remove("acceptance.images.fio"),
    ] {
        let rendered = render(&v.load(), &Templates::embedded()).unwrap();
        assert!(
            !rendered
                .cluster
                .files()
                .any(|(p, _, _)| p.ends_with("storage-job.yaml"))
        );
    }
}

fn storage_job(rendered: &nodeimg::render::Rendered) -> Value {
    let (_, _, bytes) = rendered
        .cluster
        .files()
        .find(|(p, _, _)| *p == "acceptance/storage-job.yaml")
        .expect("the storage Job renders");
    serde_yaml::from_slice(bytes).unwrap()
}

fn command(job: &Value) -> Vec<String> {
    job["spec"]["template"]["spec"]["containers"][0]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect()
}

#[test]
#[ignore = "opt-in suite `real tools`: runs fio (cargo test -- --ignored)"]
fn real_fio_output_of_the_rendered_workloads_is_judged() {
    let bp = Variant::of("h100-sxm-ubuntu").load();
    let rendered = render(&bp, &Templates::embedded()).unwrap();
    let args = command(&storage_job(&rendered));
    assert_eq!(args[0], "fio");
    // The rendered arguments, on a small file in a folder on disk (direct I/O needs a
    // file system that has it; tmpfs does not), for a second per workload.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let args: Vec<String> = args[1..]
        .iter()
        .map(|a| {
            if a.starts_with("--directory=") {
                format!("--directory={}", dir.path().display())
            } else if a.starts_with("--size=") {
                "--size=16M".to_owned()
            } else if a.starts_with("--runtime=") {
                "--runtime=1".to_owned()
            } else {
                a.clone()
            }
        })
        .collect();
    let out = Command::new("fio")
        .args(&args)
        .output()
        .unwrap_or_else(|e| panic!("fio runs the storage workloads (install fio): {e}"));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "fio failed: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "the last workload removes the test file"
    );
    // The independent read: fio's own figures from its document.
    let start = text.find("{\n").unwrap_or(0);
    let doc: Value = serde_json::from_str(&text[start..]).unwrap();
    let bw =
        |job: usize, dir: &str| doc["jobs"][job][dir]["bw_bytes"].as_f64().unwrap() / 1048576.0;
    let (findings, record) = accept(&blueprint("{}"), &text);
    assert_eq!(verdict(&findings, "storage.jobs"), "pass", "{findings:?}");
    let jobs = record["baseline"]["storage"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(names, ["seq-read", "seq-write", "rand-read", "rand-write"]);
    assert_eq!(jobs[0]["read_mib_s"].as_f64().unwrap(), bw(0, "read"));
    assert_eq!(jobs[1]["write_mib_s"].as_f64().unwrap(), bw(1, "write"));
    assert!(bw(0, "read") > 0.0 && bw(3, "write") > 0.0);
    assert_eq!(
        jobs[2]["read_iops"].as_f64().unwrap(),
        doc["jobs"][2]["read"]["iops"].as_f64().unwrap()
    );
    assert_eq!(jobs[0]["fio"], doc["fio version"]);
    // A threshold above what was measured fails.
    let above = bw(0, "read") * 100.0 + 1.0;
    let (findings, _) = accept(&blueprint(&format!("{{seqReadMiBps: {above}}}")), &text);
    assert_eq!(
        verdict(&findings, "storage.seq-read[read bandwidth]"),
        "fail"
    );
}
