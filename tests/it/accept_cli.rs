//! `nodeimg accept` end to end: the fixture node is verified for real (layer 1, the
//! record `verify` writes), then its layer 2–5 outputs — made by this project in each
//! tool's format (`support::accept_fixture`) — are judged into the complete record.
//! Degraded outputs flip the verdict with the fault class automation acts on.

use crate::support::accept_fixture::{self as fixture, Knobs, NODE};
use crate::support::verify_fixture::{self, BLUEPRINT};
use nodeimg::fault::FaultClass;
use nodeimg::verify::report::record::{AcceptanceRecord, RecordResult, Verdict};
use std::path::{Path, PathBuf};
use std::process::Output;

fn nodeimg(args: &[&str]) -> Output {
    crate::support::cmd()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A verified fixture node and a folder for its acceptance outputs.
struct Bench {
    dir: tempfile::TempDir,
}

impl Bench {
    /// Verifies the fixture node (layer 1) and writes its layer 2–5 outputs.
    fn new(knobs: &Knobs) -> Bench {
        Bench::of(BLUEPRINT, knobs)
    }

    /// The same for the fixture node under `blueprint`.
    fn of(blueprint: &str, knobs: &Knobs) -> Bench {
        Bench::verified(blueprint, knobs, &[0])
    }

    /// The same, where layer 1 may find the fixture host short of what `blueprint` asks
    /// of it (exit 1: MIG mode, the operator's CDI spec): for the layers above it.
    fn of_any_host(blueprint: &str) -> Bench {
        Bench::verified(blueprint, &Knobs::default(), &[0, 1])
    }

    fn verified(blueprint: &str, knobs: &Knobs, exits: &[i32]) -> Bench {
        let bench = Bench {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(bench.path("bp.yaml"), blueprint).unwrap();
        std::fs::write(bench.path("smi.xml"), verify_fixture::healthy_xml()).unwrap();
        let tree = verify_fixture::healthy_tree();
        // The fixture's stand-in programs are named: nothing runs from an inspected root.
        let tools = tree.tool_args();
        let mut args = vec![
            "verify".to_owned(),
            "--blueprint".to_owned(),
            bench.arg("bp.yaml"),
            "--root".to_owned(),
            tree.root().to_string_lossy().into_owned(),
            "--nvidia-smi-xml".to_owned(),
            bench.arg("smi.xml"),
            "--timeout".to_owned(),
            "10".to_owned(),
            "--format".to_owned(),
            "summary".to_owned(),
            "--record".to_owned(),
            bench.arg("layer1.json"),
        ];
        args.extend(tools);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = nodeimg(&args);
        assert!(
            out.status.code().is_some_and(|c| exits.contains(&c)),
            "verify: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        std::fs::create_dir(bench.path("outputs")).unwrap();
        fixture::write_all(&bench.path("outputs"), knobs);
        bench
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn arg(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }

    fn accept(&self, record: &str, extra: &[&str]) -> Output {
        let (bp, layer1, rec, outputs) = (
            self.arg("bp.yaml"),
            self.arg("layer1.json"),
            self.arg(record),
            self.arg("outputs"),
        );
        let mut args = vec![
            "accept",
            "--blueprint",
            &bp,
            "--node-record",
            &layer1,
            "--record",
            &rec,
        ];
        args.extend_from_slice(extra);
        args.push(&outputs);
        nodeimg(&args)
    }

    fn record(&self, name: &str) -> AcceptanceRecord {
        let path = self.path(name);
        AcceptanceRecord::parse(&std::fs::read_to_string(&path).unwrap(), &path)
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

fn failed<'a>(
    record: &'a AcceptanceRecord,
    id: &str,
) -> Vec<&'a nodeimg::verify::report::record::Finding> {
    record
        .findings
        .iter()
        .filter(|f| f.id == id && f.verdict == Verdict::Fail)
        .collect()
}

#[test]
fn healthy_node_is_accepted_through_the_record() {
    let bench = Bench::new(&Knobs::default());
    let out = bench.accept(
        "accepted.json",
        &[
            "--record",
            &bench.arg("accepted.yaml"),
            "--evidence",
            "s3://acceptance/gpu-node-01/",
        ],
    );
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}{}", text(&out.stderr));
    assert!(report.contains("result: pass"), "{report}");
    let record = bench.record("accepted.json");
    assert_eq!(record.result, RecordResult::Pass);
    // Layer 1 comes through from verify's record unchanged.
    let layer1 = bench.record("layer1.json");
    assert_eq!(
        layer1.result,
        RecordResult::Incomplete,
        "layer 1 alone never accepts a node"
    );
    assert_eq!(record.hardware, layer1.hardware);
    assert_eq!(record.hostname.known().map(String::as_str), Some(NODE));
    for (n, layer) in [
        ("1", &record.layers.hardware_driver),
        ("2", &record.layers.kubernetes),
        ("3", &record.layers.device_container),
        ("4", &record.layers.interconnect),
        ("5", &record.layers.framework),
    ] {
        assert_eq!(
            layer.done().map(|l| l.result),
            Some(Verdict::Pass),
            "layer {n}"
        );
    }
    // Every section is filled; only storage has no benchmark in this set.
    assert!(record.kubernetes.done().is_some());
    assert_eq!(record.device_container.done().unwrap().received.len(), 8);
    assert_eq!(record.dcgm.done().unwrap().level, 3);
    assert_eq!(record.baseline.rdma.done().unwrap().len(), 8);
    assert!(record.training.done().is_some() && record.inference.done().is_some());
    assert!(
        record
            .interconnect
            .nvlink
            .known()
            .is_some_and(|s| s.contains("370.9"))
    );
    // 482 GB/s × 2^34 / (2^34 + 2^26) at 16 GiB.
    assert_eq!(record.figures["nccl.all_reduce.busbw"].value, 480.12);
    assert_eq!(
        record.evidence.as_deref(),
        Some("s3://acceptance/gpu-node-01/")
    );
    // The YAML copy says the same.
    assert_eq!(bench.record("accepted.yaml"), record);
}

#[test]
fn degraded_outputs_fail_with_their_fault_class() {
    // Bus bandwidth 20 % down: below the 460 GB/s of an 8× H100 NVSwitch board.
    let bench = Bench::new(&Knobs {
        busbw: 482.0 * 0.8,
        ..Knobs::default()
    });
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = bench.record("r.json");
    assert_eq!(r.result, RecordResult::Fail);
    let f = failed(&r, "nccl.all-reduce.busbw");
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert_eq!(f[0].fault, FaultClass::Link);
    assert!(f[0].expected.contains("460"), "{}", f[0].expected);

    // One GPU missing: 7 ranks, 7 GPUs diagnosed, 7 devices in the Pod.
    let bench = Bench::new(&Knobs {
        gpus: 7,
        ..Knobs::default()
    });
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    assert_eq!(r.result, RecordResult::Fail);
    for id in ["nccl.all-reduce.ranks", "dcgm.gpus", "nvbandwidth.gpus"] {
        let f = failed(&r, id);
        assert_eq!(f.len(), 1, "{id}");
        assert_eq!(f[0].fault, FaultClass::Device, "{id}");
    }
    // The Pod asked for 8 and got 7: the device plugin's business.
    assert_eq!(
        failed(&r, "smoke.devices")[0].fault,
        FaultClass::DriverDaemon
    );

    // A DCGM memory failure on GPU 3.
    let bench = Bench::new(&Knobs {
        dcgm_failure: Some("GPU Memory"),
        ..Knobs::default()
    });
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    assert_eq!(r.result, RecordResult::Fail);
    let f = failed(&r, "dcgm.memory");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].fault, FaultClass::Device);
    assert!(f[0].observed.contains("GPU 3"), "{}", f[0].observed);
    let dcgm = r.dcgm.done().unwrap();
    assert_eq!(
        dcgm.tests
            .iter()
            .find(|t| t.plugin == "memory")
            .unwrap()
            .failed_gpus,
        [3]
    );
}

#[test]
fn a_regression_fails_even_above_the_threshold() {
    let before = Bench::new(&Knobs {
        busbw: 520.0,
        ..Knobs::default()
    });
    assert_eq!(before.accept("previous.json", &[]).status.code(), Some(0));
    // 7.3 % slower all-reduce (still above 460 GB/s) and a 20 % slower tensor step.
    let after = Bench::new(&Knobs {
        tensor_seconds: 2.4,
        ..Knobs::default()
    });
    let previous = before.arg("previous.json");
    let out = after.accept("now.json", &["--previous", &previous]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = after.record("now.json");
    let regressions: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.id == "regression" && f.verdict == Verdict::Fail)
        .collect();
    let busbw = regressions
        .iter()
        .find(|f| f.subject.as_deref() == Some("nccl.all_reduce.busbw"))
        .expect("busbw regression");
    assert_eq!(
        busbw.fault,
        FaultClass::Link,
        "same software: the hardware is the suspect"
    );
    let threshold = r
        .findings
        .iter()
        .find(|f| f.id == "nccl.all-reduce.busbw")
        .unwrap();
    assert_eq!(
        threshold.verdict,
        Verdict::Pass,
        "above the absolute threshold"
    );
    let tensor = regressions
        .iter()
        .find(|f| f.subject.as_deref() == Some("framework.tensor.seconds"))
        .expect("step time regression");
    assert_eq!(tensor.fault, FaultClass::TransientApplication);
    // Figures within the tolerance pass.
    assert!(
        r.findings
            .iter()
            .any(|f| f.id == "regression" && f.verdict == Verdict::Pass)
    );
}

/// The framework Job's power samples: a GPU that cannot reach 75 % of its power limit
/// under the matmul load, or whose hardware thermal slowdown engages, fails as `device`
/// with the cooling and power action; the figures go into the record and a GPU drawing
/// less than in the previous record regresses.
#[test]
fn power_and_clocks_under_load_are_judged_and_recorded() {
    let healthy = Bench::new(&Knobs::default());
    assert_eq!(healthy.accept("ok.json", &[]).status.code(), Some(0));
    let r = healthy.record("ok.json");
    let passed = |id: &str| {
        r.findings
            .iter()
            .filter(|f| f.id == id && f.verdict == Verdict::Pass)
            .count()
    };
    assert_eq!(
        (
            passed("power.samples"),
            passed("power.peak"),
            passed("power.slowdown")
        ),
        (1, 8, 8)
    );
    let peak = &r.figures["power.gpu3.peak_w"];
    assert_eq!((peak.value, peak.unit.as_str()), (688.4, "W"));
    assert_eq!(r.figures["power.gpu3.limit_w"].value, 700.0);
    assert!(
        peak.evidence.contains("framework.log:"),
        "{}",
        peak.evidence
    );

    // 480 W of 700 (69 %) and GPU 5 in hardware thermal slowdown.
    let weak = Bench::new(&Knobs {
        peak_watts: 480.0,
        thermal_slowdown: Some(5),
        ..Knobs::default()
    });
    let previous = healthy.arg("ok.json");
    let out = weak.accept("weak.json", &["--previous", &previous]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = weak.record("weak.json");
    let peak = failed(&r, "power.peak");
    assert_eq!(peak.len(), 8, "{:#?}", r.findings);
    assert_eq!(peak[0].fault, FaultClass::Device);
    assert_eq!(peak[0].action, nodeimg::fault::Action::CheckCoolingPower);
    assert!(peak[0].expected.contains("525 W"), "{}", peak[0].expected);
    let slow = failed(&r, "power.slowdown");
    assert_eq!(slow.len(), 1);
    assert_eq!(slow[0].subject.as_deref(), Some("GPU 5"));
    assert!(
        slow[0].observed.contains("hw_thermal_slowdown") && slow[0].observed.contains("91 °C"),
        "{}",
        slow[0].observed
    );
    let regressed = r
        .findings
        .iter()
        .find(|f| {
            f.id == "regression"
                && f.subject.as_deref() == Some("power.gpu0.peak_w")
                && f.verdict == Verdict::Fail
        })
        .expect("peak power regression");
    assert_eq!(regressed.fault, FaultClass::Device);

    // Samples after an nccl-tests table (the sampler around all_reduce_perf) are read
    // with the run: slowdown is judged under any load, the power limit's share only under
    // the matmul load.
    let nccl = Bench::new(&Knobs::default());
    let log = nccl.path("outputs/all-reduce.log");
    let mut text_all = std::fs::read_to_string(&log).unwrap();
    text_all.push_str(&fixture::power_samples(480.0, Some(2)));
    std::fs::write(&log, text_all).unwrap();
    let inputs = nodeimg::accept::input::load_with_samples(&log).unwrap();
    assert!(matches!(
        &inputs[..],
        [
            nodeimg::accept::input::Input {
                output: nodeimg::accept::input::Output::Nccl(_),
                ..
            },
            nodeimg::accept::input::Input {
                output: nodeimg::accept::input::Output::Power(p),
                ..
            }
        ] if p.load == nodeimg::accept::power::Load::Nccl
    ));
    assert_eq!(nccl.accept("n.json", &[]).status.code(), Some(1));
    let r = nccl.record("n.json");
    let slow = failed(&r, "power.slowdown");
    assert_eq!(slow.len(), 1);
    assert!(
        slow[0].evidence[0].contains("all-reduce.log"),
        "{:?}",
        slow[0].evidence
    );
    assert!(
        failed(&r, "power.peak").is_empty(),
        "480 W under NCCL is not judged"
    );

    // amd-smi's JSON in the section (the AMD sampler) is judged alike: the cap from
    // `static --limit`, the peak against it, a socket thermal violation on GPU 2 fails.
    let amd = Bench::new(&Knobs::default());
    let log = amd.path("outputs/framework.log");
    let text_all = std::fs::read_to_string(&log).unwrap();
    let mut probe_only = text_all[..text_all.find("# nodeimg power samples").unwrap()].to_owned();
    probe_only.push_str("# nodeimg power samples\n[\n");
    let gpus: Vec<String> = (0..8)
        .map(|i| {
            format!(r#"{{"gpu": {i}, "limit": {{"socket_power": {{"value": 750, "unit": "W"}}}}}}"#)
        })
        .collect();
    probe_only.push_str(&gpus.join(",\n"));
    probe_only.push_str("\n]\n[\n");
    let gpus: Vec<String> = (0..8)
        .map(|i| {
            let thermal = if i == 2 { "ACTIVE" } else { "NOT ACTIVE" };
            format!(
                r#"{{"gpu": {i}, "power": {{"socket_power": {{"value": 741, "unit": "W"}}, "throttle_status": "THROTTLED"}}, "clock": {{"gfx_0": {{"clk": {{"value": 2000, "unit": "MHz"}}, "max_clk": {{"value": 2100, "unit": "MHz"}}}}}}, "temperature": {{"hotspot": {{"value": 88, "unit": "C"}}}}, "throttle": {{"ppt_violation_status": "ACTIVE", "socket_thermal_violation_status": "{thermal}"}}}}"#
            )
        })
        .collect();
    probe_only.push_str(&gpus.join(",\n"));
    probe_only.push_str("\n]\n");
    std::fs::write(&log, probe_only).unwrap();
    assert_eq!(amd.accept("a.json", &[]).status.code(), Some(1));
    let r = amd.record("a.json");
    assert!(failed(&r, "power.peak").is_empty(), "741 W of a 750 W cap");
    assert_eq!(r.figures["power.gpu0.limit_w"].value, 750.0);
    let slow = failed(&r, "power.slowdown");
    assert_eq!(slow.len(), 1, "{slow:#?}");
    assert_eq!(slow[0].subject.as_deref(), Some("GPU 2"));
    assert!(
        slow[0].observed.contains("amd.socket_thermal") && slow[0].observed.contains("88 °C"),
        "{}",
        slow[0].observed
    );

    // Without the samples (a framework log of an older probe): incomplete, never a pass.
    let bench = Bench::new(&Knobs::default());
    let log = bench.path("outputs/framework.log");
    let text_all = std::fs::read_to_string(&log).unwrap();
    let probe_only = &text_all[..text_all.find("# nodeimg power samples").unwrap()];
    std::fs::write(&log, probe_only).unwrap();
    assert_eq!(bench.accept("r.json", &[]).status.code(), Some(1));
    let r = bench.record("r.json");
    assert_eq!(
        r.findings
            .iter()
            .find(|f| f.id == "power.samples")
            .map(|f| f.verdict),
        Some(Verdict::Incomplete)
    );
}

/// A multi-node run's log holds a section of power samples per node, each named: this
/// node's GPUs are judged from its own (slowdown; the peak only under the single-node matmul
/// load), another node's throttling is left to that node's acceptance.
#[test]
fn a_multinode_log_is_judged_per_node() {
    let log = |this: Option<usize>, other: Option<usize>| {
        let step = "{\"nodeimg\": \"probe/v1\", \"suite\": \"framework\", \"step\": \"multinode\", \"status\": \"pass\", \"seconds\": 41.0, \"rank\": 0, \"world_size\": 16, \"metrics\": {\"step_seconds\": 0.82}}\n";
        let section = |node: &str, watts: f64, hot: Option<usize>| {
            fixture::power_samples(watts, hot).replacen(
                "# nodeimg power samples",
                &format!("# nodeimg power samples node={node}"),
                1,
            )
        };
        format!(
            "{step}{}{}",
            section(NODE, 300.0, this),
            section("gpu-node-17", 690.0, other)
        )
    };
    // The other node's GPU 5 in thermal slowdown: not this node's fault. 300 W under the
    // training run is not judged against the limit.
    let bench = Bench::new(&Knobs::default());
    std::fs::write(
        bench.path("outputs/framework-multinode.log"),
        log(None, Some(5)),
    )
    .unwrap();
    let out = bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    assert_eq!(out.status.code(), Some(0), "{:#?}", r.findings);
    assert!(failed(&r, "power.slowdown").is_empty());
    assert!(failed(&r, "power.peak").is_empty());
    let samples: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.id == "power.samples")
        .collect();
    assert_eq!(samples.len(), 1, "{samples:#?}");
    assert_eq!(samples[0].verdict, Verdict::Pass);
    assert!(
        samples[0].observed.contains("gpu-node-17"),
        "{}",
        samples[0].observed
    );
    // The peak stays the matmul load's (the framework Job's 688.4 W), not the training run's.
    assert_eq!(r.figures["power.gpu5.peak_w"].value, 688.4);

    // This node's GPU 2 in thermal slowdown during the multi-node run fails it.
    let bench = Bench::new(&Knobs::default());
    std::fs::write(
        bench.path("outputs/framework-multinode.log"),
        log(Some(2), None),
    )
    .unwrap();
    assert_eq!(bench.accept("r.json", &[]).status.code(), Some(1));
    let r = bench.record("r.json");
    let slow = failed(&r, "power.slowdown");
    assert_eq!(slow.len(), 1, "{slow:#?}");
    assert_eq!(slow[0].subject.as_deref(), Some("GPU 2"));
    assert!(
        slow[0].observed.contains("framework-multinode.log:")
            && slow[0].observed.contains("hw_thermal_slowdown"),
        "{}",
        slow[0].observed
    );
    assert!(failed(&r, "power.peak").is_empty());

    // Without the node being accepted (no layer-1 record, no Node), each node's GPUs are
    // judged under its name.
    std::fs::write(bench.path("alone.log"), log(None, Some(5))).unwrap();
    let (bp, rec, alone) = (
        bench.arg("bp.yaml"),
        bench.arg("alone.json"),
        bench.arg("alone.log"),
    );
    let out = nodeimg(&["accept", "--blueprint", &bp, "--record", &rec, &alone]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let r = bench.record("alone.json");
    let slow = failed(&r, "power.slowdown");
    assert_eq!(slow.len(), 1, "{slow:#?}");
    assert_eq!(slow[0].subject.as_deref(), Some("GPU 5 on gpu-node-17"));
    assert!(r.figures.contains_key(&format!("power.{NODE}.gpu0.peak_w")));
    assert_eq!(r.figures["power.gpu-node-17.gpu0.peak_w"].value, 690.0);
}

/// The peak power rule's share of the limit is the blueprint's where it sets one: the same
/// record (every GPU at 665 W of 700, 95 %) passes at DCGM's 0.75 and fails at 0.96.
#[test]
fn the_peak_power_share_is_the_blueprints_threshold() {
    let knobs = Knobs {
        peak_watts: 665.0,
        ..Knobs::default()
    };
    let share = |fraction: Option<&str>| {
        let blueprint = match fraction {
            Some(f) => format!(
                "{BLUEPRINT}acceptance:\n  thresholds:\n    powerPeakFractionOfLimit: {f}\n"
            ),
            None => BLUEPRINT.to_owned(),
        };
        let bench = Bench::of(&blueprint, &knobs);
        let out = bench.accept("r.json", &[]);
        let r = bench.record("r.json");
        let peaks: Vec<nodeimg::verify::report::record::Finding> = r
            .findings
            .into_iter()
            .filter(|f| f.id == "power.peak")
            .collect();
        (out.status.code(), peaks)
    };
    let (code, peaks) = share(None);
    assert_eq!(code, Some(0));
    assert_eq!(peaks.len(), 8);
    assert!(peaks.iter().all(|f| f.verdict == Verdict::Pass));
    assert!(
        peaks[0].expected.contains(">= 525 W")
            && peaks[0].expected.contains("target_power_min_ratio"),
        "{}",
        peaks[0].expected
    );
    let (code, peaks) = share(Some("0.75"));
    assert_eq!(code, Some(0));
    assert!(peaks.iter().all(|f| f.verdict == Verdict::Pass));
    let (code, peaks) = share(Some("0.96"));
    assert_eq!(code, Some(1));
    assert_eq!(peaks.len(), 8);
    assert!(peaks.iter().all(|f| f.verdict == Verdict::Fail));
    assert!(
        peaks[0].expected.contains(">= 672 W")
            && peaks[0].expected.contains("powerPeakFractionOfLimit"),
        "{}",
        peaks[0].expected
    );
    assert!(peaks[0].observed.contains("95 %"), "{}", peaks[0].observed);
}

/// JAX and the inference engine, where the blueprint names their images: each JAX step
/// and the engine's serve step pass or fail like the PyTorch steps (`transient-application`,
/// restart it), the engine's rate and time to first token are judged against the
/// blueprint's thresholds and, as figures, against the node's previous record; a required
/// one without output is not run.
#[test]
fn jax_and_the_inference_engine_are_judged_like_the_framework() {
    let digest = "b".repeat(64);
    let blueprint = format!(
        "{BLUEPRINT}acceptance:\n  images:\n    jax: registry.example.com/jax:25.10@sha256:{digest}\n    inference: registry.example.com/vllm-openai:v0.11.0@sha256:{digest}\n  inference:\n    model: /models/Qwen2.5-0.5B-Instruct\n  thresholds:\n    inferenceTokensPerSecond: 150\n    inferenceTtftMs: 250\n"
    );
    let write = |bench: &Bench, tps: f64, ttft: f64| {
        let out = bench.path("outputs");
        std::fs::write(out.join("jax.log"), fixture::jax()).unwrap();
        std::fs::write(out.join("inference.log"), fixture::inference(tps, ttft)).unwrap();
    };
    let healthy = Bench::of(&blueprint, &Knobs::default());
    write(&healthy, 412.7, 84.2);
    let out = healthy.accept("ok.json", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let r = healthy.record("ok.json");
    for id in [
        "jax.devices",
        "jax.tensor",
        "jax.collective",
        "inference.serve",
        "inference.tokens-per-second",
        "inference.ttft",
    ] {
        let f = r
            .findings
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("{id}"));
        assert_eq!(f.verdict, Verdict::Pass, "{id}");
    }
    assert_eq!(r.figures["inference.serve.tokens_per_second"].value, 412.7);
    assert!(!r.figures["inference.serve.ttft_ms"].higher_is_better);
    assert_eq!(r.figures["jax.tensor.tflops"].value, 612.3);

    // A slow engine: below 150 tokens/s and over 250 ms to the first token.
    let slow = Bench::of(&blueprint, &Knobs::default());
    write(&slow, 90.0, 900.0);
    let previous = healthy.arg("ok.json");
    let out = slow.accept("slow.json", &["--previous", &previous]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = slow.record("slow.json");
    for id in ["inference.tokens-per-second", "inference.ttft"] {
        let f = failed(&r, id);
        assert_eq!(f.len(), 1, "{id}: {:#?}", r.findings);
        assert_eq!(f[0].fault, FaultClass::TransientApplication);
    }
    assert!(r.findings.iter().any(|f| f.id == "regression"
        && f.subject.as_deref() == Some("inference.serve.ttft_ms")
        && f.verdict == Verdict::Fail));

    // A failed JAX step, and no inference output: fail and not run.
    let broken = Bench::of(&blueprint, &Knobs::default());
    write(&broken, 412.7, 84.2);
    let jax = fixture::jax().replace(
        r#""step": "collective", "status": "pass""#,
        r#""step": "collective", "status": "fail", "error": "XlaRuntimeError: INTERNAL: NCCL operation ncclAllReduce failed""#,
    );
    assert_ne!(jax, fixture::jax());
    std::fs::write(broken.path("outputs/jax.log"), jax).unwrap();
    std::fs::remove_file(broken.path("outputs/inference.log")).unwrap();
    assert_eq!(broken.accept("b.json", &[]).status.code(), Some(1));
    let r = broken.record("b.json");
    let f = failed(&r, "jax.collective");
    assert_eq!(f.len(), 1);
    assert!(f[0].observed.contains("ncclAllReduce"), "{}", f[0].observed);
    assert_eq!(
        r.findings
            .iter()
            .find(|f| f.id == "inference")
            .map(|f| f.verdict),
        Some(Verdict::NotRun)
    );
}

#[test]
fn damaged_outputs_are_refused_with_file_and_line() {
    let bench = Bench::new(&Knobs::default());
    let log = bench.path("outputs/all-reduce.log");
    let text_before = std::fs::read_to_string(&log).unwrap();
    let cut: String = text_before
        .lines()
        .take(20)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&log, cut).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("{}:20:", log.display())), "{err}");
    assert!(err.contains("truncated"), "{err}");
    assert!(!bench.path("r.json").exists(), "no partial record");
    // A file nodeimg does not read is named, not skipped.
    std::fs::write(&log, text_before).unwrap();
    std::fs::write(bench.path("outputs/notes.txt"), "ran it twice\n").unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("notes.txt: not an output"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn what_did_not_run_is_never_a_pass() {
    let bench = Bench::new(&Knobs::default());
    for name in ["framework.log", "ib_write_bw-mlx5_5.log", "dcgm-diag.json"] {
        std::fs::remove_file(bench.path("outputs").join(name)).unwrap();
    }
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(1));
    let r = bench.record("r.json");
    assert_eq!(r.result, RecordResult::Incomplete);
    let verdict = |id: &str| r.findings.iter().find(|f| f.id == id).map(|f| f.verdict);
    assert_eq!(verdict("framework"), Some(Verdict::NotRun));
    assert_eq!(verdict("dcgm.level"), Some(Verdict::NotRun));
    assert_eq!(verdict("rdma.rails"), Some(Verdict::Incomplete));
    assert!(r.training.done().is_none() && r.dcgm.done().is_none());
    assert!(text(&out.stdout).contains("NOT-RUN"));
}

#[test]
fn an_output_that_misses_required_results_is_incomplete() {
    let bench = Bench::new(&Knobs::default());
    let edit = |name: &str, from: &str, to: &str| {
        let path = bench.path("outputs").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let at = text
            .find(from)
            .unwrap_or_else(|| panic!("{name}: no `{from}`"));
        let edited = format!("{}{to}{}", &text[..at], &text[at + from.len()..]);
        std::fs::write(&path, edited).unwrap();
    };
    // DCGM skipped its memory plugin on GPU 0 (a required plugin at level 3).
    let dcgm = std::fs::read_to_string(bench.path("outputs/dcgm-diag.json")).unwrap();
    let memory = dcgm
        .find(r#""name": "GPU Memory""#)
        .expect("a GPU Memory test");
    let skipped = format!(
        "{}{}",
        &dcgm[..memory],
        dcgm[memory..].replacen(r#""status": "Pass""#, r#""status": "Skip""#, 1)
    );
    std::fs::write(bench.path("outputs/dcgm-diag.json"), skipped).unwrap();
    // One rail measured in host memory although GPUDirect RDMA is declared: the run
    // without its CUDA lines.
    let rail = bench.path("outputs/ib_write_bw-mlx5_2.log");
    let log = std::fs::read_to_string(&rail).unwrap();
    let host: String = log
        .lines()
        .skip_while(|l| !l.starts_with("---"))
        .filter(|l| !l.contains("GPU buffer"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(host.len() < log.len() && !host.contains("CUDA"));
    std::fs::write(&rail, host).unwrap();
    // The single-node all-reduce ran without validating its results.
    edit("all-reduce.log", "validation: 1", "validation: 0");

    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = bench.record("r.json");
    assert_eq!(r.result, RecordResult::Incomplete, "{:#?}", r.findings);
    let verdict = |id: &str, subject: Option<&str>| {
        r.findings
            .iter()
            .find(|f| f.id == id && (subject.is_none() || f.subject.as_deref() == subject))
            .map(|f| f.verdict)
    };
    assert_eq!(verdict("dcgm.memory", None), Some(Verdict::Incomplete));
    assert_eq!(
        verdict("rdma.bandwidth", Some("mlx5_2")),
        Some(Verdict::Incomplete)
    );
    assert_eq!(
        verdict("nccl.all-reduce.data", None),
        Some(Verdict::Incomplete)
    );
    assert!(
        r.findings.iter().all(|f| f.verdict != Verdict::Fail),
        "nothing failed, something is missing: {:#?}",
        r.findings
    );
}

#[test]
fn outputs_of_another_node_or_blueprint_are_refused() {
    let bench = Bench::new(&Knobs::default());
    let smoke = bench.path("outputs/smoke.log");
    let other = std::fs::read_to_string(&smoke)
        .unwrap()
        .replace(NODE, "gpu-node-99");
    std::fs::write(&smoke, other).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("gpu-node-99"),
        "{}",
        text(&out.stderr)
    );
    // Another node's dcgm-exporter page maps that node's GPUs.
    let bench = Bench::new(&Knobs::default());
    let page = bench.path("outputs/dcgm-exporter-metrics.txt");
    let other = std::fs::read_to_string(&page)
        .unwrap()
        .replace(NODE, "gpu-node-98");
    std::fs::write(&page, other).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("node gpu-node-98's, not gpu-node-01's"),
        "{}",
        text(&out.stderr)
    );
    // The layer-1 record of another blueprint.
    let bench = Bench::new(&Knobs::default());
    let other_bp = bench.path("other.yaml");
    std::fs::write(
        &other_bp,
        BLUEPRINT.replace("version: \"2026.11.1\"", "version: \"2026.11.2\""),
    )
    .unwrap();
    let out = nodeimg(&[
        "accept",
        "--blueprint",
        &other_bp.to_string_lossy(),
        "--node-record",
        &bench.arg("layer1.json"),
        &bench.arg("outputs"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("another image"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn record_schema_is_published_and_describes_the_record() {
    let out = nodeimg(&["schema", "--record"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["title"], "NodeAcceptanceRecord");
    let props = schema["properties"].as_object().unwrap();
    for field in [
        "hardware",
        "firmware",
        "os",
        "runtime",
        "gpu",
        "device_injection",
        "network",
        "interconnect",
        "layers",
        "kubernetes",
        "device_container",
        "dcgm",
        "baseline",
        "training",
        "inference",
        "figures",
        "findings",
        "result",
        "evidence",
    ] {
        assert!(props.contains_key(field), "{field}");
    }
    // Every key of a real record is described by the schema.
    let bench = Bench::new(&Knobs::default());
    bench.accept("r.json", &[]);
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bench.path("r.json")).unwrap()).unwrap();
    for key in record.as_object().unwrap().keys() {
        assert!(props.contains_key(key), "{key} is not in the schema");
    }
}

/// `Path` helper for the fixture module.
#[allow(dead_code)]
fn exists(p: &Path) -> bool {
    p.exists()
}

/// The fixture blueprint has RDMA rails and no OFED: GPUDirect RDMA can only go through
/// DMA-BUF, so a CUDA perftest run that did not register through it fails, with why.
#[test]
fn a_gpudirect_run_that_did_not_use_dma_buf_fails() {
    let bench = Bench::new(&Knobs::default());
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let dma_buf: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.id == "rdma.dma-buf")
        .collect();
    assert_eq!(dma_buf.len(), 8, "{:#?}", r.findings);
    assert!(dma_buf.iter().all(|f| f.verdict == Verdict::Pass));

    // Rail 3 ran with --use_cuda but not --use_cuda_dmabuf.
    let bench = Bench::new(&Knobs::default());
    let rail = bench.path("outputs/ib_write_bw-mlx5_3.log");
    let log = std::fs::read_to_string(&rail).unwrap();
    let without: String = log
        .lines()
        .filter(|l| !l.starts_with("using DMA-BUF"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(without.len() < log.len() && without.contains("initializing CUDA"));
    std::fs::write(&rail, without).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = bench.record("r.json");
    assert_eq!(r.result, RecordResult::Fail);
    let f = failed(&r, "rdma.dma-buf");
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert!(
        f[0].subject
            .as_deref()
            .is_some_and(|s| s.starts_with("mlx5_3")),
        "{:?}",
        f[0].subject
    );
    assert_eq!(f[0].fault, FaultClass::DriverDaemon);
    assert!(f[0].observed.contains("using DMA-BUF"), "{}", f[0].observed);
}

/// The fixture blueprint sets `system.shmSize: 64Gi`: the smoke Pod reports its
/// `/dev/shm`, and a Pod the rendered shm policy did not reach (the sandbox's 64 MiB) or
/// an output without the report fails `smoke.shm`.
#[test]
fn the_smoke_pods_dev_shm_must_be_the_blueprints_size() {
    let bench = Bench::new(&Knobs::default());
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let shm = r.findings.iter().find(|f| f.id == "smoke.shm");
    assert_eq!(
        shm.map(|f| f.verdict),
        Some(Verdict::Pass),
        "{:#?}",
        r.findings
    );

    let smoke = bench.path("outputs/smoke.log");
    let log = std::fs::read_to_string(&smoke).unwrap();
    assert!(log.contains("68719476736"));
    std::fs::write(&smoke, log.replace("68719476736", "67108864")).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = bench.record("r.json");
    let f = failed(&r, "smoke.shm");
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert!(f[0].observed.contains("67108864"), "{}", f[0].observed);
    assert!(f[0].expected.contains("68719476736"), "{}", f[0].expected);
    assert_eq!(f[0].fault, FaultClass::DriverDaemon);

    let without: String = log
        .lines()
        .filter(|l| !l.contains(r#""step": "shm""#))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(without.len() < log.len());
    std::fs::write(&smoke, without).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let f = failed(&r, "smoke.shm");
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert!(f[0].observed.contains("no `shm` step"), "{}", f[0].observed);
}

fn mapping(r: &AcceptanceRecord) -> Vec<&nodeimg::verify::report::record::Finding> {
    r.findings
        .iter()
        .filter(|f| f.id == "smoke.mapping")
        .collect()
}

/// Layer 3's pod mapping: the UUIDs the smoke Pod prints are checked against the pod
/// labels dcgm-exporter puts on each GPU's series (the kubelet's allocation), and each
/// UUID against the other smoke Pods run beside it.
#[test]
fn the_smoke_pods_gpus_are_the_ones_the_kubelet_allocated() {
    let bench = Bench::new(&Knobs::default());
    let out = bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let m = mapping(&r);
    assert_eq!(m.len(), 1, "{:#?}", r.findings);
    assert_eq!(m[0].verdict, Verdict::Pass, "{:#?}", m[0]);
    assert_eq!(
        m[0].subject.as_deref(),
        Some("nodeimg-acceptance/nodeimg-acceptance-smoke")
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));

    // The kubelet gave GPU 7 to another Pod, yet the smoke Pod sees it.
    let page = bench.path("outputs/dcgm-exporter-metrics.txt");
    let healthy = std::fs::read_to_string(&page).unwrap();
    let other = healthy
        .lines()
        .map(|l| {
            if l.contains(&fixture::gpu_uuid(7)) {
                l.replace("nodeimg-acceptance-smoke", "training-0")
                    .replace("namespace=\"nodeimg-acceptance\"", "namespace=\"team-a\"")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(other, healthy);
    std::fs::write(&page, &other).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = bench.record("r.json");
    let f = failed(&r, "smoke.mapping");
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert!(
        f[0].observed.contains(&format!(
            "sees {} not allocated to it",
            fixture::gpu_uuid(7)
        )),
        "{}",
        f[0].observed
    );
    assert_eq!(f[0].fault, FaultClass::DriverDaemon);
    assert!(
        f[0].evidence
            .iter()
            .any(|e| e.contains("dcgm-exporter-metrics.txt:")),
        "{:?}",
        f[0].evidence
    );

    // A second smoke Pod, run at the same time, was handed GPU 0 too.
    std::fs::write(&page, &healthy).unwrap();
    let twin = fixture::smoke(1).replace(
        "\"pod\": \"nodeimg-acceptance-smoke\"",
        "\"pod\": \"nodeimg-acceptance-smoke-b\"",
    );
    std::fs::write(bench.path("outputs/smoke-b.log"), twin).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let f = failed(&r, "smoke.mapping");
    assert!(
        f.iter().any(|f| f.observed.contains(&format!(
            "{} also went to nodeimg-acceptance/nodeimg-acceptance-smoke-b",
            fixture::gpu_uuid(0)
        ))),
        "{:#?}",
        f
    );
    std::fs::remove_file(bench.path("outputs/smoke-b.log")).unwrap();

    // Scraped after the Pod ended: no series names it, which proves nothing.
    std::fs::write(&page, fixture::dcgm_exporter(0, "")).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let r = bench.record("r.json");
    let m = mapping(&r);
    assert_eq!(m.len(), 1, "{:#?}", m);
    assert_eq!(m[0].verdict, Verdict::Incomplete);
    assert!(
        m[0].observed.contains("after the Pod ended"),
        "{}",
        m[0].observed
    );

    // No page at all: incomplete on an NVIDIA node, never a pass.
    std::fs::remove_file(&page).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let m = mapping(&r);
    assert_eq!(m.len(), 1, "{:#?}", m);
    assert_eq!(m[0].verdict, Verdict::Incomplete);

    // A page cut mid-line is refused with its file and line.
    let cut = &healthy[..healthy.find("pod=\"nodeimg-acceptance-smoke\"").unwrap() + 12];
    std::fs::write(&page, cut).unwrap();
    let out = bench.accept("r.json", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("dcgm-exporter-metrics.txt:") && err.contains("not closed"),
        "{err}"
    );
}

/// `accept` on the MI300X example with the AMD test runner's events: the documented
/// event (ROCm/gpu-operator `docs/test/auto-unhealthy-device-test.md`, v1.2.2;
/// `tests/fixtures/accept/amd-test-runner-events.json`) fails its two failed test actions
/// as the GPU's fault, to service; the same run passing on all eight GPUs passes; no
/// event at all is `not-run`, never a pass.
#[test]
fn the_amd_test_runners_failed_action_is_a_device_fault() {
    let dir = tempfile::tempdir().unwrap();
    let sample = std::fs::read_to_string(
        crate::support::root().join("tests/fixtures/accept/amd-test-runner-events.json"),
    )
    .unwrap();
    let bp = crate::support::root().join("blueprints/mi300x-rhel.yaml");
    let run = |events: Option<&str>| -> AcceptanceRecord {
        let rec = dir.path().join("r.json");
        let input = dir.path().join("events.json");
        // Another tool's output, so that a run without events still has an input.
        let other = dir.path().join("nodes.json");
        std::fs::write(&other, r#"{"kind": "NodeList", "items": []}"#).unwrap();
        let mut args = vec![
            "accept".to_owned(),
            "--blueprint".to_owned(),
            bp.to_string_lossy().into_owned(),
            "--record".to_owned(),
            rec.to_string_lossy().into_owned(),
            other.to_string_lossy().into_owned(),
        ];
        if let Some(events) = events {
            std::fs::write(&input, events).unwrap();
            args.push(input.to_string_lossy().into_owned());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = nodeimg(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        AcceptanceRecord::parse(&std::fs::read_to_string(&rec).unwrap(), &rec)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let runner = |r: &AcceptanceRecord| -> Vec<(String, Verdict)> {
        r.findings
            .iter()
            .filter(|f| f.id.starts_with("test-runner."))
            .map(|f| (f.id.clone(), f.verdict))
            .collect()
    };

    let r = run(Some(&sample));
    let fp32 = failed(&r, "test-runner.gpustress-41000-fp32-false");
    assert_eq!(fp32.len(), 1, "{:#?}", runner(&r));
    assert_eq!(fp32[0].fault, FaultClass::Device);
    assert_eq!(fp32[0].action, nodeimg::fault::Action::Service);
    assert!(
        fp32[0].observed.contains("GPU 0 (KFD 35824)"),
        "{}",
        fp32[0].observed
    );
    assert_eq!(
        failed(&r, "test-runner.gst-1215Tflops-4K4K8K-rand-fp8").len(),
        1
    );
    assert_eq!(failed(&r, "test-runner.run").len(), 1);
    // One GPU of eight tested: the others are missing from the results.
    assert_eq!(failed(&r, "test-runner.gpus").len(), 1);
    assert!(
        runner(&r).contains(&(
            "test-runner.gpustress-3000-dgemm-false".into(),
            Verdict::Pass
        )),
        "{:#?}",
        runner(&r)
    );

    // The events were written for host `leto`: judged for another node, they are
    // refused as that node's output, never laid on this one.
    {
        let rec = dir.path().join("other-node.json");
        let input = dir.path().join("events.json");
        std::fs::write(&input, &sample).unwrap();
        let out = nodeimg(&[
            "accept",
            "--blueprint",
            &bp.to_string_lossy(),
            "--node-name",
            "gpu-node-17",
            "--record",
            &rec.to_string_lossy(),
            &input.to_string_lossy(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("is from leto, not gpu-node-17"),
            "{}",
            text(&out.stderr)
        );
        assert!(!rec.exists(), "no record for a refused input");
    }

    // The same run passing on eight GPUs.
    let gpus: Vec<String> = (0..8).map(|i| (35824 + i).to_string()).collect();
    let results: Vec<String> = gpus
        .iter()
        .map(|k| {
            format!(
                r#"\"{k}\":{{\"gpustress-3000-dgemm-false\":\"success\",\"gst-8096-150000-fp16\":\"success\"}}"#
            )
        })
        .collect();
    let labels: Vec<String> = gpus
        .iter()
        .enumerate()
        .map(|(i, k)| format!(r#""testrunner.amd.com/gpu.kfd.{k}": "{i}","#))
        .collect();
    let start = sample.find(r#""message": "[{"#).unwrap();
    let end = start + sample[start..].find('\n').unwrap();
    let passing = format!(
        "{}\"message\": \"[{{\\\"number\\\":1,\\\"suitesResult\\\":{{{}}},\\\"status\\\":\\\"completed\\\"}}]\",{}",
        &sample[..start],
        results.join(","),
        &sample[end..]
    )
    .replace("\"TestFailed\"", "\"TestPassed\"")
    .replace(
        r#""testrunner.amd.com/gpu.kfd.35824": "0","#,
        &labels.join("\n"),
    );
    let r = run(Some(&passing));
    let verdicts = runner(&r);
    assert!(
        verdicts.len() >= 4 && verdicts.iter().all(|(_, v)| *v == Verdict::Pass),
        "{verdicts:#?}"
    );

    // Another recipe than the blueprint's is not its diagnostic.
    let r = run(Some(&passing.replace("\"gst_single\"", "\"babel\"")));
    assert_eq!(
        runner(&r),
        vec![("test-runner.recipe".to_owned(), Verdict::Incomplete)]
    );

    // No event: not run.
    let r = run(None);
    assert_eq!(
        runner(&r),
        vec![("test-runner.recipe".to_owned(), Verdict::NotRun)]
    );
}

/// `rocm-bandwidth-test -a` as its `PrintPerfMatrix` prints it (ROCm/rocm_bandwidth_test
/// `rocm_bandwidth_test_report.cpp`, commit 6bd5c1a: left-aligned columns of 10 and 12,
/// a blank line after each row), with its device lines: 2 CPUs then 8 GPUs, every GPU pair
/// at `d2d` GB/s but GPU 3 → GPU 6 at `slow`, host copies at `h2d`.
fn rocm_bandwidth_a(h2d: f64, d2d: f64, slow: f64) -> String {
    let mut out = String::from("\n          RocmBandwidthTest Version: 2.6.0\n\n");
    out.push_str("          Launch Command is: rocm-bandwidth-test -a\n\n\n");
    for id in 0..10 {
        if id < 2 {
            out.push_str(&format!(
                "          Device: {id},  AMD EPYC 9654 96-Core Processor\n"
            ));
        } else {
            out.push_str(&format!(
                "          Device: {id},  AMD Instinct MI300X,  GPU-{:016x},  {:02x}:00.0\n",
                0x1a2b_3c4d_0000_u64 + id as u64,
                0x05 + 0x10 * (id - 2)
            ));
        }
    }
    out.push_str("\n          Unidirectional copy peak bandwidth GB/s\n\n");
    out.push_str(&format!("{:<10}{:<10}", "", "D/D"));
    for id in 0..10 {
        out.push_str(&format!("{id:<12}"));
    }
    out.push_str("\n\n");
    for src in 0..10u32 {
        out.push_str(&format!("{:<10}{src:<10}", ""));
        for dst in 0..10u32 {
            let v = match (src < 2, dst < 2) {
                (true, true) if src == dst => 0.0,
                (true, true) => 0.0,
                (true, false) | (false, true) => h2d,
                (false, false) if src == dst => 0.0,
                (false, false) if src == 5 && dst == 8 => slow,
                (false, false) => d2d,
            };
            if v == 0.0 {
                out.push_str(&format!("{:<12}", "N/A"));
            } else {
                out.push_str(&format!("{v:<12.3}"));
            }
        }
        out.push_str("\n\n");
    }
    out.push('\n');
    out
}

/// `accept` on the MI300X example with rocm-bandwidth-test's matrices: the slowest cell of
/// each kind against `amd-copy-bandwidth.csv` (Azure NHC's 48/44 GB/s on the same command),
/// a slow Infinity Fabric pair failing as `link` with the pair named, each minimum recorded
/// and judged against the previous record; the documented `-A` matrix alone is incomplete.
#[test]
fn rocm_bandwidth_is_judged_against_the_mi300x_table_and_the_previous_record() {
    let dir = tempfile::tempdir().unwrap();
    let bp = crate::support::root().join("blueprints/mi300x-rhel.yaml");
    let run = |name: &str, output: &str, previous: Option<&str>| -> AcceptanceRecord {
        let rec = dir.path().join(format!("{name}.json"));
        let input = dir.path().join(format!("{name}-rocm-bandwidth.log"));
        std::fs::write(&input, output).unwrap();
        let mut args = vec![
            "accept".to_owned(),
            "--blueprint".to_owned(),
            bp.to_string_lossy().into_owned(),
            "--record".to_owned(),
            rec.to_string_lossy().into_owned(),
        ];
        if let Some(p) = previous {
            args.push("--previous".to_owned());
            args.push(
                dir.path()
                    .join(format!("{p}.json"))
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        args.push(input.to_string_lossy().into_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = nodeimg(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        AcceptanceRecord::parse(&std::fs::read_to_string(&rec).unwrap(), &rec)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let finding = |r: &AcceptanceRecord, id: &str| {
        r.findings
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no {id}: {:#?}", r.findings))
            .clone()
    };

    let healthy = run("healthy", &rocm_bandwidth_a(55.2, 57.4, 57.3), None);
    for id in [
        "rocm-bandwidth.gpus",
        "rocm-bandwidth.host-to-device",
        "rocm-bandwidth.device-to-host",
        "rocm-bandwidth.device-to-device",
    ] {
        assert_eq!(finding(&healthy, id).verdict, Verdict::Pass, "{id}");
    }
    let d2d = finding(&healthy, "rocm-bandwidth.device-to-device");
    assert!(d2d.expected.contains(">= 44 GB/s"), "{}", d2d.expected);
    assert!(
        d2d.expected.contains("nd96isr_mi300x_v5.conf"),
        "{}",
        d2d.expected
    );
    assert_eq!(
        healthy.figures["rocm-bandwidth.unidirectional.device-to-device.min"].value,
        57.3
    );

    // One slow pair: a link fault, named.
    let slow = run("slow", &rocm_bandwidth_a(55.2, 57.4, 31.0), None);
    let d2d = finding(&slow, "rocm-bandwidth.device-to-device");
    assert_eq!(d2d.verdict, Verdict::Fail);
    assert_eq!(d2d.fault, FaultClass::Link);
    assert_eq!(d2d.action, nodeimg::fault::Action::RebootNode);
    assert_eq!(
        d2d.subject.as_deref(),
        Some("GPU 3 (device 5) → GPU 6 (device 8)")
    );

    // 10 % slower Infinity Fabric, above 44 GB/s: a regression against the healthy record.
    let after = run(
        "after",
        &rocm_bandwidth_a(55.2, 51.6, 51.6),
        Some("healthy"),
    );
    assert_eq!(
        finding(&after, "rocm-bandwidth.device-to-device").verdict,
        Verdict::Pass
    );
    let regression = after
        .findings
        .iter()
        .find(|f| {
            f.id == "regression"
                && f.subject.as_deref()
                    == Some("rocm-bandwidth.unidirectional.device-to-device.min")
        })
        .unwrap_or_else(|| panic!("{:#?}", after.findings));
    assert_eq!(regression.verdict, Verdict::Fail);

    // The bidirectional matrix alone (the documented sample) does not carry the thresholds.
    let bidir = std::fs::read_to_string(
        crate::support::root().join("tests/fixtures/accept/rocm-bandwidth-test-A.txt"),
    )
    .unwrap();
    let r = run("bidir", &bidir, None);
    assert_eq!(
        finding(&r, "rocm-bandwidth.device-to-device").verdict,
        Verdict::Incomplete
    );
    assert!(
        r.figures
            .contains_key("rocm-bandwidth.bidirectional.device-to-device.min")
    );
}

/// The fixture blueprint with `accelerators.sharing` set to `sharing` (YAML under
/// `sharing:`), under the GPU Operator that applies it.
fn sharing_blueprint(sharing: &str, manages: &str) -> String {
    let bp = BLUEPRINT.replace(
        "  sharing:\n    mode: none\n",
        &format!(
            "  operator:\n    name: gpu-operator\n    version: v25.10.1\n    manages: [{manages}]\n  sharing:\n{sharing}"
        ),
    );
    assert_ne!(bp, BLUEPRINT);
    bp
}

/// A second smoke Pod's lines: the fixture's, under another name.
fn smoke_of(pod: &str, text: &str) -> String {
    text.replace(
        &format!("\"pod\": \"{}\"", fixture::SMOKE_POD),
        &format!("\"pod\": \"{pod}\""),
    )
}

/// Time-slicing with `replicas: 2`: two smoke Pods on the same eight GPUs pass, a third
/// on GPU 0 is one Pod too many. The page is dcgm-exporter's under
/// `KUBERNETES_VIRTUAL_GPUS` (`kubernetes.go`, 4.4.2-4.7.0): one copy of each GPU's
/// series per pod sharing it, with its `pod_uid` and the replica in `vgpu`. Without that
/// setting the exporter names one pod per GPU: the judge then checks what the page shows.
#[test]
fn shared_gpus_go_to_at_most_replicas_pods() {
    let bp = sharing_blueprint(
        "    mode: time-slicing\n    replicas: 2\n",
        "device-plugin, dcgm-exporter, gpu-feature-discovery",
    );
    let bench = Bench::of_any_host(&bp);
    let pods = ["nodeimg-acceptance-smoke", "nodeimg-acceptance-smoke-b"];
    let page = bench.path("outputs/dcgm-exporter-metrics.txt");
    let smoke = std::fs::read_to_string(bench.path("outputs/smoke.log")).unwrap();
    std::fs::write(bench.path("outputs/smoke-b.log"), smoke_of(pods[1], &smoke)).unwrap();
    std::fs::write(&page, virtual_page(&|_| pods.map(String::from).to_vec())).unwrap();
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("vgpu=\"1\"")
    );
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let m = mapping(&r);
    assert_eq!(m.len(), 2, "{:#?}", r.findings);
    assert!(m.iter().all(|f| f.verdict == Verdict::Pass), "{:#?}", m);
    assert!(
        m[0].expected.contains("at most 2 Pods"),
        "{}",
        m[0].expected
    );

    // A third smoke Pod on GPU 0, named on its series too: three Pods, two replicas.
    std::fs::write(
        bench.path("outputs/smoke-c.log"),
        smoke_of("nodeimg-acceptance-smoke-c", &smoke),
    )
    .unwrap();
    std::fs::write(
        &page,
        virtual_page(&|i| {
            let mut holders = pods.map(String::from).to_vec();
            if i == 0 {
                holders.push("nodeimg-acceptance-smoke-c".into());
            }
            holders
        }),
    )
    .unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let f = failed(&r, "smoke.mapping");
    assert!(
        f.iter().any(|f| f.observed.contains(&format!(
            "{} went to 3 Pods (nodeimg-acceptance/nodeimg-acceptance-smoke, nodeimg-acceptance/nodeimg-acceptance-smoke-b, nodeimg-acceptance/nodeimg-acceptance-smoke-c), more than its 2 time-slicing replicas",
            fixture::gpu_uuid(0)
        ))),
        "{:#?}",
        f
    );
    assert!(f.iter().all(|f| f.fault == FaultClass::DriverDaemon));
    std::fs::remove_file(bench.path("outputs/smoke-c.log")).unwrap();

    // The exporter's default: one pod named per GPU (here GPUs 0–3 the first Pod,
    // 4–7 the second). Each Pod sees all eight; what the page shows agrees.
    let one_each = fixture::dcgm_exporter(8, fixture::SMOKE_POD)
        .lines()
        .map(|l| {
            if (4..8).any(|i| l.contains(&fixture::gpu_uuid(i))) {
                l.replace(
                    &format!("pod=\"{}\"", fixture::SMOKE_POD),
                    &format!("pod=\"{}\"", pods[1]),
                )
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&page, &one_each).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let m = mapping(&r);
    assert_eq!(m.len(), 2, "{:#?}", r.findings);
    assert!(m.iter().all(|f| f.verdict == Verdict::Pass), "{:#?}", m);
    assert!(
        m[0].observed.contains("KUBERNETES_VIRTUAL_GPUS is off"),
        "{}",
        m[0].observed
    );
    // GPU 7 held by no pod at all, yet both Pods see it: foreign to both.
    let unheld = one_each
        .lines()
        .map(|l| {
            if l.contains(&fixture::gpu_uuid(7)) {
                l.replace(&format!("pod=\"{}\"", pods[1]), "pod=\"\"")
                    .replace("namespace=\"nodeimg-acceptance\"", "namespace=\"\"")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&page, &unheld).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let f = failed(&r, "smoke.mapping");
    assert_eq!(f.len(), 2, "{:#?}", r.findings);
    assert!(
        f.iter().all(|f| f.observed.contains(&format!(
            "sees {} not allocated to it",
            fixture::gpu_uuid(7)
        ))),
        "{:#?}",
        f
    );
    // A Pod the page names on no GPU: not judged, never a pass.
    let only_b = one_each.replace(
        &format!("pod=\"{}\"", fixture::SMOKE_POD),
        &format!("pod=\"{}\"", pods[1]),
    );
    std::fs::write(&page, &only_b).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let m = mapping(&r);
    let a = m
        .iter()
        .find(|f| f.subject.as_deref() == Some("nodeimg-acceptance/nodeimg-acceptance-smoke"))
        .unwrap();
    assert_eq!(a.verdict, Verdict::Incomplete, "{a:#?}");
    assert!(
        a.observed.contains("names one pod per GPU"),
        "{}",
        a.observed
    );
}

/// One shared smoke Pod's probe lines: it asked for one replica and received `gpu`.
fn shared_smoke(pod: &str, gpu: usize) -> String {
    let one = fixture::smoke(8);
    let device = format!(
        r#"{{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "{}", "bus": "0000:{:02x}:00.0"}}"#,
        fixture::gpu_uuid(gpu),
        0x19 + 0x20 * gpu
    );
    let start = one.find("\"devices\": [").unwrap();
    let end = start + one[start..].find("]}").unwrap();
    let text = format!("{}\"devices\": [{device}{}", &one[..start], &one[end..])
        .replace("\"requested\": 8", "\"requested\": 1");
    smoke_of(pod, &text)
}

/// dcgm-exporter's page under `KUBERNETES_VIRTUAL_GPUS`: each GPU's series once per pod
/// that holds one of its replicas (`vgpu`), as `holders` says.
fn virtual_page(holders: &dyn Fn(usize) -> Vec<String>) -> String {
    let mut out = String::new();
    for line in fixture::dcgm_exporter(8, fixture::SMOKE_POD).lines() {
        match (0..8).find(|i| line.contains(&fixture::gpu_uuid(*i))) {
            None => out.push_str(line),
            Some(i) => {
                let copies: Vec<String> = holders(i)
                    .iter()
                    .enumerate()
                    .map(|(replica, pod)| {
                        line.replace(
                            &format!("pod=\"{}\"}}", fixture::SMOKE_POD),
                            &format!("pod=\"{pod}\",pod_uid=\"\",vgpu=\"{replica}\"}}"),
                        )
                    })
                    .collect();
                out.push_str(&copies.join("\n"));
            }
        }
        out.push('\n');
    }
    out
}

/// Under time-slicing or MPS the device plugin refuses a request for more than one
/// replica, so the smoke test is GPUs × replicas Pods of one replica each (here 8 × 2):
/// each received one device and each GPU went to exactly two of them. The one Pod asking
/// for all eight (what whole GPUs run) is never admitted: not a pass; a GPU given to three
/// Pods while another goes to one fails.
#[test]
fn shared_gpus_are_smoke_tested_one_replica_per_pod() {
    let bp = sharing_blueprint(
        "    mode: time-slicing\n    replicas: 2\n",
        "device-plugin, dcgm-exporter, gpu-feature-discovery",
    );
    let bench = Bench::of_any_host(&bp);
    let devices = |r: &AcceptanceRecord| -> Vec<nodeimg::verify::report::record::Finding> {
        r.findings
            .iter()
            .filter(|f| f.id == "smoke.devices")
            .cloned()
            .collect()
    };
    // The one Pod of whole GPUs, asking for eight replicas.
    bench.accept("r.json", &[]);
    let d = devices(&bench.record("r.json"));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].verdict, Verdict::Incomplete, "{d:#?}");
    assert!(
        d[0].observed
            .contains("nodeimg-acceptance-smoke requested 8"),
        "{}",
        d[0].observed
    );

    // Sixteen Pods: Pod i holds a replica of GPU i mod 8.
    std::fs::remove_file(bench.path("outputs/smoke.log")).unwrap();
    let pod = |i: usize| format!("nodeimg-acceptance-smoke-{i}");
    let write = |gpu_of: &dyn Fn(usize) -> usize| {
        for i in 0..16 {
            std::fs::write(
                bench.path(&format!("outputs/smoke-{i}.log")),
                shared_smoke(&pod(i), gpu_of(i)),
            )
            .unwrap();
        }
        std::fs::write(
            bench.path("outputs/dcgm-exporter-metrics.txt"),
            virtual_page(&|g| (0..16).filter(|i| gpu_of(*i) == g).map(pod).collect()),
        )
        .unwrap();
    };
    write(&|i| i % 8);
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let d = devices(&r);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].verdict, Verdict::Pass, "{d:#?}");
    assert!(
        d[0].expected
            .starts_with("16 smoke Pods (8 GPUs × 2 time-slicing replicas)"),
        "{}",
        d[0].expected
    );
    assert_eq!(d[0].observed, "16 replicas of 8 GPUs, 2 each");
    let m = mapping(&r);
    assert_eq!(m.len(), 16, "{:#?}", r.findings);
    assert!(m.iter().all(|f| f.verdict == Verdict::Pass), "{m:#?}");

    // Every Pod's kernel counts: one that failed on its replica fails the test.
    let p3 = bench.path("outputs/smoke-3.log");
    let text = std::fs::read_to_string(&p3).unwrap().replace(
        "\"step\": \"tensor\", \"status\": \"pass\",",
        "\"step\": \"tensor\", \"status\": \"fail\", \"error\": \"CUDA error: out of memory\",",
    );
    assert!(text.contains("out of memory"));
    std::fs::write(&p3, text).unwrap();
    bench.accept("r.json", &[]);
    let k = failed(&bench.record("r.json"), "smoke.kernel")
        .into_iter()
        .map(|f| f.observed.clone())
        .collect::<Vec<_>>();
    assert_eq!(k, ["fail: CUDA error: out of memory"]);

    // Pod 15 given GPU 0 rather than GPU 7: GPU 0 in three Pods, GPU 7 in one.
    write(&|i| if i == 15 { 0 } else { i % 8 });
    bench.accept("r.json", &[]);
    let d = devices(&bench.record("r.json"));
    assert_eq!(d[0].verdict, Verdict::Fail, "{d:#?}");
    assert_eq!(d[0].fault, FaultClass::DriverDaemon);
    assert_eq!(
        d[0].observed,
        format!(
            "8 distinct GPUs; {} in 3, {} in 1",
            fixture::gpu_uuid(0),
            fixture::gpu_uuid(7)
        )
    );

    // One Pod short (its output missing): the capacity was not filled, not judged.
    write(&|i| i % 8);
    std::fs::remove_file(bench.path("outputs/smoke-15.log")).unwrap();
    bench.accept("r.json", &[]);
    let d = devices(&bench.record("r.json"));
    assert_eq!(d[0].verdict, Verdict::Incomplete, "{d:#?}");
    assert_eq!(d[0].observed, "15 smoke Pods' output");
}

/// MIG (`all-1g.10gb`): the smoke Pod sees a `MIG-` device and prints its parent GPU and
/// GPU instance; dcgm-exporter labels that instance's series (`UUID` of the parent,
/// `GPU_I_PROFILE`, `GPU_I_ID`: `render_metrics.go`, 4.4.2-4.7.0) with the pod. The pair
/// must match; another instance of the same GPU is another allocation.
#[test]
fn mig_devices_are_matched_by_parent_gpu_and_instance() {
    let bp = sharing_blueprint(
        "    mode: mig\n    migProfile: all-1g.10gb\n    migStrategy: single\n",
        "device-plugin, dcgm-exporter, gpu-feature-discovery, mig-manager",
    );
    let bench = Bench::of_any_host(&bp);
    let parent = fixture::gpu_uuid(0);
    let smoke = std::fs::read_to_string(bench.path("outputs/smoke.log")).unwrap();
    let devices_line = smoke
        .lines()
        .find(|l| l.contains("\"step\": \"devices\""))
        .unwrap();
    let mig_line = |device: &str| {
        let start = devices_line.find("\"devices\": [").unwrap();
        format!("{}\"devices\": [{device}]}}", &devices_line[..start])
            .replace("\"requested\": 8", "\"requested\": 1")
    };
    let mig_device = format!(
        r#"{{"index": 0, "name": "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "uuid": "MIG-5d0c4b1a-6f2e-5a8b-9c3d-2e1f0a9b8c7d", "parent": "{parent}", "gpu_instance": 9}}"#
    );
    let write_smoke = |device: &str| {
        let text: String = smoke
            .lines()
            .map(|l| {
                if l.contains("\"step\": \"devices\"") {
                    mig_line(device)
                } else {
                    l.to_owned()
                }
            })
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(bench.path("outputs/smoke.log"), text).unwrap();
    };
    write_smoke(&mig_device);
    // GPU 0's instances 9 and 10 (dcgm-exporter's GPU line with the MIG labels), the
    // first held by the smoke Pod; the parent's own series and GPUs 1–7 held by none.
    let page = |held: u32| {
        let mut out = String::from(
            "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n",
        );
        for gi in [9u32, 10] {
            let (c, ns, p) = if gi == held {
                ("probe", "nodeimg-acceptance", fixture::SMOKE_POD)
            } else {
                ("", "", "")
            };
            out.push_str(&format!(
                "DCGM_FI_DEV_FB_USED{{gpu=\"0\",UUID=\"{parent}\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"{gi}\",Hostname=\"{NODE}\",container=\"{c}\",namespace=\"{ns}\",pod=\"{p}\",pod_uid=\"\"}} 512\n"
            ));
        }
        for i in 0..8 {
            out.push_str(&format!(
                "DCGM_FI_DEV_FB_USED{{gpu=\"{i}\",UUID=\"{}\",pci_bus_id=\"00000000:{:02X}:00.0\",device=\"nvidia{i}\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"{NODE}\"}} 0\n",
                fixture::gpu_uuid(i),
                0x19 + 0x20 * i
            ));
        }
        out
    };
    let path = bench.path("outputs/dcgm-exporter-metrics.txt");
    std::fs::write(&path, page(9)).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let m = mapping(&r);
    assert_eq!(m.len(), 1, "{:#?}", r.findings);
    assert_eq!(m[0].verdict, Verdict::Pass, "{:#?}", m[0]);
    assert!(m[0].expected.contains("GPU instances"), "{}", m[0].expected);

    // The kubelet gave the Pod instance 10; it sees instance 9.
    std::fs::write(&path, page(10)).unwrap();
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let f = failed(&r, "smoke.mapping");
    assert_eq!(f.len(), 1, "{:#?}", r.findings);
    assert!(
        f[0].observed.contains(&format!(
            "sees {parent} GPU instance 9 not allocated to it; was allocated {parent} GPU instance 10 it does not see"
        )),
        "{}",
        f[0].observed
    );
    assert_eq!(f[0].fault, FaultClass::DriverDaemon);

    // A MIG device the probe could not place (no nvidia-smi in the image): incomplete.
    std::fs::write(&path, page(9)).unwrap();
    write_smoke(
        r#"{"index": 0, "name": "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "uuid": "MIG-5d0c4b1a-6f2e-5a8b-9c3d-2e1f0a9b8c7d"}"#,
    );
    bench.accept("r.json", &[]);
    let r = bench.record("r.json");
    let m = mapping(&r);
    assert_eq!(m.len(), 1, "{:#?}", r.findings);
    assert_eq!(m[0].verdict, Verdict::Incomplete, "{:#?}", m[0]);
    assert!(m[0].observed.contains("parent GPU"), "{}", m[0].observed);
}
