//! The complete acceptance record: the layer-1 record `nodeimg verify` wrote on the
//! node (or, without one, its sections marked unknown with the reason), with layers 2–5
//! from the [`Judgement`], the regression findings, and the overall result.

use super::judge::Judgement;
use crate::verify::fact::Fact;
use crate::verify::report::record::{
    self, AcceptanceRecord, BlueprintIdentity, Finding, Layer, LayerResult, RecordResult, Run,
    Verdict,
};
use std::collections::BTreeMap;

/// Why layer-1 fields are unknown when no layer-1 record was given.
pub const NO_LAYER1: &str = "no layer-1 record given: run `nodeimg verify --record FILE` on the node and pass FILE with --node-record";

/// A record with layer 1 not run, for a node known only by name.
pub fn without_layer1(
    blueprint: BlueprintIdentity,
    hostname: Option<&str>,
    at: &str,
) -> AcceptanceRecord {
    let unknown = || Fact::unknown(NO_LAYER1);
    AcceptanceRecord {
        schema: record::SCHEMA.to_owned(),
        created_at: at.to_owned(),
        nodeimg_version: env!("CARGO_PKG_VERSION").to_owned(),
        hostname: hostname.map_or_else(unknown, |h| Fact::Known(h.to_owned())),
        blueprint,
        image: Fact::unknown(NO_LAYER1),
        hardware: record::Hardware {
            vendor: unknown(),
            product: unknown(),
            sku: unknown(),
            serial: unknown(),
            board: unknown(),
            board_serial: unknown(),
        },
        firmware: record::Firmware {
            bios_vendor: unknown(),
            bios_version: unknown(),
            bios_date: unknown(),
            bmc: unknown(),
            gpu_vbios: BTreeMap::new(),
            nic: BTreeMap::new(),
        },
        os: record::Os {
            pretty_name: unknown(),
            kernel: unknown(),
            cmdline: unknown(),
        },
        runtime: record::Runtime {
            containerd: unknown(),
            kubelet: unknown(),
        },
        gpu: record::GpuSection {
            count: 0,
            driver: unknown(),
            cuda: unknown(),
            devices: Vec::new(),
        },
        device_injection: record::DeviceInjection {
            mode: "unknown".to_owned(),
            version: None,
            operator: None,
        },
        network: record::Network {
            nics: Vec::new(),
            rdma_driver: BTreeMap::new(),
        },
        interconnect: record::Interconnect {
            pcie: BTreeMap::new(),
            nvswitches: 0,
            fabric_manager: unknown(),
            nvlink: unknown(),
        },
        diagnostics: record::Diagnostics {
            phase: "not run".to_owned(),
            total: 0,
            passed: 0,
            failed: 0,
            unreadable: 0,
            warnings: 0,
            not_passed: Vec::new(),
            actions: Vec::new(),
        },
        layers: record::Layers {
            hardware_driver: Run::not_run(NO_LAYER1),
            kubernetes: Run::default(),
            device_container: Run::default(),
            interconnect: Run::default(),
            framework: Run::default(),
        },
        kubernetes: Run::default(),
        device_container: Run::default(),
        dcgm: Run::default(),
        baseline: record::Baseline {
            nccl: Run::default(),
            rdma: Run::default(),
            nvbandwidth: Run::default(),
            storage: Run::default(),
            ports: Run::default(),
            gpu_nic: Run::default(),
        },
        training: Run::default(),
        inference: Run::default(),
        figures: BTreeMap::new(),
        findings: Vec::new(),
        result: RecordResult::Incomplete,
        break_glass: None,
        evidence: None,
    }
}

/// The worst verdict of a set of findings (pass when empty).
pub fn worst(findings: &[&Finding]) -> Verdict {
    findings
        .iter()
        .map(|f| f.verdict)
        .min()
        .unwrap_or(Verdict::Pass)
}

fn layer(findings: &[Finding], which: Layer, at: &str) -> Run<LayerResult> {
    let of: Vec<&Finding> = findings.iter().filter(|f| f.layer == which).collect();
    if of.is_empty() {
        return Run::not_run("not required by the blueprint and no output given");
    }
    let verdict = match worst(&of) {
        Verdict::NotRun => Verdict::Incomplete,
        v => v,
    };
    Run::Done(LayerResult {
        result: verdict,
        checks: of.len(),
        not_passed: of
            .iter()
            .filter(|f| f.verdict != Verdict::Pass)
            .map(|f| f.name())
            .collect(),
        at: at.to_owned(),
    })
}

/// Fills layers 2–5 of `base` and decides the result.
pub fn complete(
    mut base: AcceptanceRecord,
    judgement: Judgement,
    regression: Vec<Finding>,
    evidence: Option<String>,
    at: &str,
) -> AcceptanceRecord {
    let mut findings = judgement.findings;
    findings.extend(regression);
    base.layers.kubernetes = layer(&findings, Layer::Kubernetes, at);
    base.layers.device_container = layer(&findings, Layer::DeviceContainer, at);
    base.layers.interconnect = layer(&findings, Layer::Interconnect, at);
    base.layers.framework = layer(&findings, Layer::Framework, at);
    base.kubernetes = judgement.kubernetes;
    base.device_container = judgement.device_container;
    base.dcgm = judgement.dcgm;
    base.baseline = judgement.baseline;
    base.training = judgement.training;
    base.inference = judgement.inference;
    if let Some(nvlink) = judgement.nvlink {
        base.interconnect.nvlink = Fact::Known(nvlink);
    }
    base.figures = judgement.figures;
    let layer1 = base.layers.hardware_driver.done().map(|l| l.result);
    let refs: Vec<&Finding> = findings.iter().collect();
    let later = worst(&refs);
    base.result = match (layer1, later) {
        (Some(Verdict::Fail), _) if base.result != RecordResult::Overridden => RecordResult::Fail,
        (_, Verdict::Fail) => RecordResult::Fail,
        (None, _) | (_, Verdict::Incomplete | Verdict::NotRun) => RecordResult::Incomplete,
        (Some(Verdict::Fail), _) => RecordResult::Overridden,
        _ => RecordResult::Pass,
    };
    base.findings = findings;
    if evidence.is_some() {
        base.evidence = evidence;
    }
    base
}
