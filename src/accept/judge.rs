//! Judging the outputs of layers 2–5 into findings, figures and the record's sections.
//!
//! Each test has one function here, and each finding it can produce has a stable id, a
//! layer and the fault class a failure points at (the table in the README lists them).
//! The rules that run through all of them:
//!
//! - **Nothing is a pass that did not run.** A required test without output is
//!   `not-run`; an output that does not cover what acceptance needs (fewer GPUs than the
//!   blueprint, smaller messages than the threshold is defined at, a skipped DCGM plugin
//!   of the required level, unvalidated NCCL results, host memory where GPUDirect is
//!   declared) is `incomplete`. Either keeps the node from being accepted.
//! - **Thresholds come from the topology** ([`threshold`]) or the
//!   blueprint; where there is none the figure is still recorded and compared with the
//!   node's previous record ([`regression`](super::regression)).
//! - **Fault classes are verify's**: a GPU missing or failing a stress test is `device`,
//!   slow NVLink/PCIe/NIC bandwidth is `link`, a device plugin that hands a Pod fewer
//!   devices is `driver-daemon`, a failing framework step is `transient-application`.

use super::dcgm::{DcgmDiag, DcgmTest, Status};
use super::input::{Input, Output};
use super::nccl::NcclRun;
use super::nvbandwidth::Nvbandwidth;
use super::perftest::{Kind, PerftestRun};
use super::probe::{Step, StepStatus, Suite};
use super::threshold::{self, Figure, Threshold, Topology};
use crate::blueprint::Spec;
use crate::blueprint::model::Vendor;
use crate::blueprint::model::acceptance::{Acceptance, Test};
use crate::fault::{Action, FaultClass};
use crate::k8s::Pod;
use crate::verify::report::record::{self, Baseline, FigureValue, Finding, Layer, Run, Verdict};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The all-reduce threshold is defined at 8–16 GiB messages (Azure NHC runs 8G and 16G).
pub const NCCL_MIN_BYTES: u64 = 8 << 30;
/// The per-rail threshold is defined at 8 MiB (`ib_write_bw -s 8388608`).
pub const RDMA_MIN_BYTES: u64 = 8 << 20;
/// The steps of the framework Job.
pub const FRAMEWORK_STEPS: &[&str] = &[
    "devices",
    "tensor",
    "collective",
    "multinode",
    "inference",
    "checkpoint",
];

/// What the blueprint asks of acceptance, resolved.
#[derive(Debug, Clone)]
pub struct Policy {
    pub topology: Topology,
    pub required: BTreeSet<Test>,
    pub dcgm_level: u8,
    pub multi_node_nodes: u32,
    pub gpudirect: bool,
    /// GPUDirect RDMA goes through DMA-BUF (NVIDIA, RDMA NICs, no OFED and so no
    /// `nvidia_peermem`): perftest's CUDA runs must say `using DMA-BUF`.
    pub dma_buf: bool,
    /// `system.shmSize` in bytes: the smoke Pod's `/dev/shm` (the rendered Kyverno
    /// policy's emptyDir) must be at least this large.
    pub shm_bytes: Option<u64>,
    pub tolerance_percent: f64,
    thresholds: BTreeMap<Figure, Option<Threshold>>,
}

impl Policy {
    pub fn new(blueprint: &Spec, settings: &Acceptance) -> Self {
        let topology = Topology::of(blueprint);
        let nvidia = topology.vendor == Some(Vendor::Nvidia);
        let gpus = topology.vendor.is_some() && topology.gpus > 0;
        let required: BTreeSet<Test> = match &settings.tests {
            Some(tests) => tests.iter().copied().collect(),
            None => Test::ALL
                .into_iter()
                .filter(|t| match t {
                    Test::Kubernetes => true,
                    Test::Smoke | Test::Framework => gpus,
                    Test::Dcgm | Test::Nvbandwidth => gpus && nvidia,
                    Test::Nccl => gpus && topology.gpus >= 2,
                    Test::Rdma | Test::MultiNodeNccl => gpus && topology.rail_count() > 0,
                    Test::Storage => settings.storage.is_some(),
                })
                .collect(),
        };
        let t = &settings.thresholds;
        let overrides = [
            (Figure::NcclAllReduceBusbw, t.nccl_all_reduce_busbw_gbps),
            (Figure::NcclMultiNodeBusbw, t.nccl_multi_node_busbw_gbps),
            (Figure::RdmaWrite, t.rdma_write_gbps),
            (
                Figure::NvbandwidthHostDevice,
                t.nvbandwidth_host_device_gbps,
            ),
            (
                Figure::NvbandwidthDeviceDevice,
                t.nvbandwidth_device_device_gbps,
            ),
        ];
        let thresholds = overrides
            .into_iter()
            .map(|(f, o)| (f, threshold::resolve(f, &topology, o)))
            .collect();
        Policy {
            gpudirect: blueprint.network.affinity.gpu_nic_same_pcie_switch,
            dma_buf: blueprint.gpudirect_dma_buf(),
            shm_bytes: blueprint.system.shm_size.as_ref().map(|s| s.bytes()),
            topology,
            required,
            dcgm_level: settings.dcgm.level,
            multi_node_nodes: settings.multi_node.nodes,
            tolerance_percent: settings.regression_tolerance_percent,
            thresholds,
        }
    }

    pub fn threshold(&self, figure: Figure) -> Option<&Threshold> {
        self.thresholds.get(&figure).and_then(Option::as_ref)
    }
}

/// Findings, figures and record sections from one set of outputs.
#[derive(Debug, Clone)]
pub struct Judgement {
    pub findings: Vec<Finding>,
    pub figures: BTreeMap<String, FigureValue>,
    pub kubernetes: Run<record::Kubernetes>,
    pub device_container: Run<record::DeviceContainer>,
    pub dcgm: Run<record::Dcgm>,
    pub baseline: Baseline,
    pub training: Run<record::Framework>,
    pub inference: Run<record::Framework>,
    /// The slowest GPU pair over NVLink, when measured.
    pub nvlink: Option<String>,
}

/// Builds findings without repeating the fixed parts.
pub(super) struct Ctx<'a> {
    pub(super) policy: &'a Policy,
    node: Option<&'a str>,
    findings: Vec<Finding>,
    figures: BTreeMap<String, FigureValue>,
}

pub(super) struct F {
    pub(super) id: Cow<'static, str>,
    pub(super) layer: Layer,
    pub(super) summary: &'static str,
    pub(super) fault: FaultClass,
    pub(super) action: Action,
}

/// The findings `accept` can produce, in report order (README table).
#[rustfmt::skip]
pub const FINDINGS: &[(&str, &str, &str)] = &[
    ("kubernetes", "kubernetes", "the Node object was given (layer 2; the `cluster.*` findings below)"),
    ("smoke.devices", "device-container", "the smoke Pod received every device it requested, each once"),
    ("smoke.kernel", "device-container", "the smoke Pod ran a kernel on its devices"),
    ("smoke.shm", "device-container", "the smoke Pod's /dev/shm is at least system.shmSize (the rendered shm policy applied)"),
    ("dcgm.level", "interconnect", "DCGM diagnostics reached the blueprint's level"),
    ("dcgm.gpus", "interconnect", "DCGM diagnosed every GPU of the blueprint"),
    ("dcgm.<plugin>", "interconnect", "a DCGM plugin passed on every GPU"),
    ("dcgm.proftester", "interconnect", "dcgmproftester's field test passed"),
    ("nvbandwidth.gpus", "interconnect", "nvbandwidth measured every GPU of the blueprint"),
    ("nvbandwidth.host-to-device", "interconnect", "host→GPU copy bandwidth of every GPU"),
    ("nvbandwidth.device-to-host", "interconnect", "GPU→host copy bandwidth of every GPU"),
    ("nvbandwidth.device-to-device", "interconnect", "GPU→GPU copy bandwidth of every pair (NVLink)"),
    ("nccl.all-reduce.ranks", "interconnect", "single-node all-reduce ran on every GPU"),
    ("nccl.all-reduce.data", "interconnect", "single-node all-reduce results were validated and correct"),
    ("nccl.all-reduce.busbw", "interconnect", "single-node all-reduce bus bandwidth at 8 GiB or more"),
    ("nccl.<collective>.data", "interconnect", "other collectives' results were correct"),
    ("nccl.multi-node.ranks", "interconnect", "multi-node all-reduce ran on every GPU of this node and enough nodes"),
    ("nccl.multi-node.data", "interconnect", "multi-node all-reduce results were validated and correct"),
    ("nccl.multi-node.busbw", "interconnect", "multi-node all-reduce bus bandwidth at 8 GiB or more"),
    ("rdma.rails", "interconnect", "ib_write_bw measured every RDMA rail"),
    ("rdma.bandwidth", "interconnect", "ib_write_bw bandwidth per rail at 8 MiB (GPU memory where GPUDirect is declared)"),
    ("rdma.dma-buf", "interconnect", "perftest registered its GPU buffers through DMA-BUF (NVIDIA without OFED: no nvidia_peermem)"),
    ("ports.port", "interconnect", "an RDMA port of a declared NIC group is Active, LinkUp, at the declared rate and link layer (ibstat)"),
    ("ports.count", "interconnect", "ibstat lists every port a NIC group declares"),
    ("ports.ibstat", "interconnect", "ibstat listed every device (no `ibpanic`)"),
    ("storage.jobs", "interconnect", "fio ran the four storage workloads (seq-read, seq-write, rand-read, rand-write) without an error"),
    ("storage.<workload>", "interconnect", "a storage workload reached acceptance.storage.thresholds (recorded, and judged against the previous record, without one)"),
    ("gpu-nic.gpus", "interconnect", "nvidia-smi topo -m shows every GPU of the blueprint"),
    ("gpu-nic.pcie-switch", "interconnect", "a GPU shares a PCIe switch (PIX/PXB) with a rail NIC (GPUDirect RDMA declared)"),
    ("gpu-nic.numa", "interconnect", "a GPU has a rail NIC on its NUMA node (not SYS)"),
    ("framework.<step>", "framework", "a framework step passed (devices, tensor, collective, multinode, inference, checkpoint)"),
    ("regression.<figure>", "(the figure's)", "a figure is no worse than the node's previous record beyond the tolerance"),
];

impl Ctx<'_> {
    pub(super) fn push(
        &mut self,
        f: &F,
        subject: Option<String>,
        verdict: Verdict,
        expected: impl Into<String>,
        observed: impl Into<String>,
        evidence: Vec<String>,
    ) {
        self.findings.push(Finding {
            id: f.id.to_string(),
            layer: f.layer,
            subject,
            summary: f.summary.to_owned(),
            verdict,
            expected: expected.into(),
            observed: observed.into(),
            evidence,
            fault: f.fault,
            action: if verdict == Verdict::Fail {
                f.action
            } else {
                Action::None
            },
        });
    }

    pub(super) fn figure(
        &mut self,
        key: String,
        value: f64,
        unit: &str,
        higher_is_better: bool,
        evidence: String,
    ) {
        self.figures.insert(
            key,
            FigureValue {
                value: round(value),
                unit: unit.to_owned(),
                higher_is_better,
                evidence,
            },
        );
    }

    fn required(&self, test: Test) -> bool {
        self.policy.required.contains(&test)
    }

    fn gpus(&self) -> u32 {
        self.policy.topology.gpus
    }

    /// A bandwidth at or above a threshold, or below it.
    fn bandwidth(
        &mut self,
        f: &F,
        figure: Figure,
        subject: Option<String>,
        value: f64,
        scale: f64,
        evidence: Vec<String>,
    ) {
        match self.policy.threshold(figure).cloned() {
            Some(t) => {
                let want = t.value * scale;
                let verdict = if value >= want { Verdict::Pass } else { Verdict::Fail };
                self.push(
                    f,
                    subject,
                    verdict,
                    format!(">= {} {} ({})", fmt(want), t.unit, t.source),
                    format!("{} {}", fmt(value), t.unit),
                    evidence,
                );
            }
            None => self.push(
                f,
                subject,
                Verdict::Pass,
                format!(
                    "no absolute threshold for this topology (set {}); judged against the previous record",
                    figure.field()
                ),
                format!("{} {}", fmt(value), figure.unit()),
                evidence,
            ),
        }
    }
}

fn round(v: f64) -> f64 {
    (v * 1e4).round() / 1e4
}

pub(super) fn fmt(v: f64) -> String {
    let s = format!("{:.2}", v);
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

pub(super) fn at(path: &Path, line: usize) -> String {
    format!("{}:{line}", path.display())
}

/// Judges every input against the policy. `node` is the node being accepted, when known.
pub fn judge(inputs: &[Input], policy: &Policy, blueprint: &Spec, node: Option<&str>) -> Judgement {
    let mut ctx = Ctx {
        policy,
        node,
        findings: Vec::new(),
        figures: BTreeMap::new(),
    };
    let required = ctx.required(Test::Kubernetes);
    let kubernetes =
        super::cluster::judge_inputs(&mut ctx.findings, inputs, blueprint, node, required);
    let device_container = smoke(&mut ctx, inputs);
    let dcgm = dcgm(&mut ctx, inputs);
    let (nvbandwidth, nvlink) = nvbandwidth(&mut ctx, inputs);
    let nccl = nccl(&mut ctx, inputs);
    let rdma = rdma(&mut ctx, inputs);
    let (ports, rails) = super::rails::judge_ports(&mut ctx, inputs, blueprint);
    let gpu_nic = super::rails::judge_gpu_nic(&mut ctx, inputs, blueprint, &rails);
    let settings = blueprint.acceptance.clone().unwrap_or_default();
    let storage = super::storage::judge(&mut ctx, inputs, &settings);
    let (training, inference) = framework(&mut ctx, inputs);
    Judgement {
        findings: ctx.findings,
        figures: ctx.figures,
        kubernetes,
        device_container,
        dcgm,
        baseline: Baseline {
            nccl,
            rdma,
            nvbandwidth,
            storage,
            ports,
            gpu_nic,
        },
        training,
        inference,
        nvlink,
    }
}

fn not_run(ctx: &mut Ctx<'_>, test: Test, f: &F, tool: &str) -> bool {
    if ctx.required(test) {
        ctx.push(
            f,
            None,
            Verdict::NotRun,
            format!("an output of {tool}"),
            "none among the inputs",
            Vec::new(),
        );
    }
    false
}

// Layer 3 ------------------------------------------------------------------------------

fn probe_steps(inputs: &[Input], suite: Suite) -> Vec<(&Path, &Step)> {
    inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Probe(steps) => Some(
                steps
                    .iter()
                    .filter(move |s| s.suite == suite)
                    .map(move |s| (i.path.as_path(), s)),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

fn smoke(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<record::DeviceContainer> {
    const DEVICES: F = F {
        id: Cow::Borrowed("smoke.devices"),
        layer: Layer::DeviceContainer,
        summary: "the smoke Pod received every device it requested, each once",
        fault: FaultClass::DriverDaemon,
        action: Action::RestartDaemon,
    };
    const KERNEL: F = F {
        id: Cow::Borrowed("smoke.kernel"),
        layer: Layer::DeviceContainer,
        summary: "the smoke Pod ran a kernel on its devices",
        fault: FaultClass::DriverDaemon,
        action: Action::RestartDaemon,
    };
    const SHM: F = F {
        id: Cow::Borrowed("smoke.shm"),
        layer: Layer::DeviceContainer,
        summary: "the smoke Pod's /dev/shm is at least system.shmSize (the rendered shm policy applied)",
        fault: FaultClass::DriverDaemon,
        action: Action::RestartDaemon,
    };
    let steps = probe_steps(inputs, Suite::Smoke);
    if steps.is_empty() {
        not_run(
            ctx,
            Test::Smoke,
            &DEVICES,
            "the smoke Pod (probe suite smoke)",
        );
        return Run::not_run("no smoke Pod output among the inputs");
    }
    let evidence: Vec<String> = steps.iter().map(|(p, s)| at(p, s.line)).collect();
    let devices = steps.iter().find(|(_, s)| s.name == "devices");
    let mut requested = None;
    let mut received = Vec::new();
    match devices {
        None => ctx.push(
            &DEVICES,
            None,
            Verdict::Incomplete,
            "a `devices` step",
            "the smoke output has none",
            evidence.clone(),
        ),
        Some((path, step)) => {
            let list = step.devices.clone().unwrap_or_default();
            requested = step.requested;
            received = list
                .iter()
                .map(|d| record::ReceivedDevice {
                    index: d.index,
                    name: d.name.clone(),
                    uuid: d.uuid.clone(),
                    bus: d.bus.clone(),
                })
                .collect();
            let mut ids: Vec<&str> = list
                .iter()
                .map(|d| d.uuid.as_deref().unwrap_or(&d.name))
                .collect();
            ids.sort_unstable();
            let unique =
                ids.windows(2).all(|w| w[0] != w[1]) || list.iter().all(|d| d.uuid.is_none());
            let ev = vec![at(path, step.line)];
            let want = ctx.gpus();
            match step.requested {
                None => ctx.push(
                    &DEVICES,
                    None,
                    Verdict::Incomplete,
                    format!("{want} devices requested"),
                    "the output does not say how many were requested",
                    ev,
                ),
                Some(r) if r < want => ctx.push(
                    &DEVICES,
                    None,
                    Verdict::Incomplete,
                    format!("the Pod requests all {want} GPUs of the node"),
                    format!("requested {r}"),
                    ev,
                ),
                Some(r) if list.len() as u32 != r || !unique || step.status == StepStatus::Fail => {
                    ctx.push(
                        &DEVICES,
                        None,
                        Verdict::Fail,
                        format!("{r} distinct devices"),
                        format!(
                            "received {}{}{}",
                            list.len(),
                            if unique { "" } else { ", some more than once" },
                            step.error
                                .as_deref()
                                .map(|e| format!(": {e}"))
                                .unwrap_or_default()
                        ),
                        ev,
                    )
                }
                Some(r) => ctx.push(
                    &DEVICES,
                    None,
                    Verdict::Pass,
                    format!("{r} distinct devices"),
                    format!("received {}", list.len()),
                    ev,
                ),
            }
        }
    }
    let kernel = steps.iter().find(|(_, s)| s.name == "tensor");
    let kernel_status = match kernel {
        None => {
            ctx.push(
                &KERNEL,
                None,
                Verdict::Incomplete,
                "a `tensor` step",
                "the smoke output has none",
                evidence.clone(),
            );
            "not run".to_owned()
        }
        Some((path, step)) => {
            let (verdict, observed) = match step.status {
                StepStatus::Pass => (Verdict::Pass, "pass".to_owned()),
                StepStatus::Skip => (Verdict::Incomplete, "skipped".to_owned()),
                StepStatus::Fail => (
                    Verdict::Fail,
                    format!(
                        "fail: {}",
                        step.error.as_deref().unwrap_or("no reason given")
                    ),
                ),
            };
            ctx.push(
                &KERNEL,
                None,
                verdict,
                "pass",
                observed,
                vec![at(path, step.line)],
            );
            format!("{:?}", step.status).to_lowercase()
        }
    };
    if let Some(want) = ctx.policy.shm_bytes {
        shm(ctx, &SHM, &steps, want, &evidence);
    }
    Run::Done(record::DeviceContainer {
        requested,
        received,
        kernel: kernel_status,
        evidence,
    })
}

// Layer 4: DCGM ------------------------------------------------------------------------

/// Fault class and action of a failing DCGM test.
fn dcgm_fault(test: &DcgmTest) -> (FaultClass, Action) {
    let name = test.name.to_ascii_lowercase();
    match test.plugin().as_str() {
        "software"
            if name.contains("page retirement")
                || name.contains("row remap")
                || name.contains("inforom") =>
        {
            (FaultClass::Device, Action::Service)
        }
        "software" if name.contains("graphics processes") => {
            (FaultClass::TransientApplication, Action::RestartApp)
        }
        "software" => (FaultClass::DriverDaemon, Action::RestartDaemon),
        "pcie" | "nvlink" | "nvbandwidth" => (FaultClass::Link, Action::RebootNode),
        _ => (FaultClass::Device, Action::Service),
    }
}

fn dcgm(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<record::Dcgm> {
    const LEVEL: F = F {
        id: Cow::Borrowed("dcgm.level"),
        layer: Layer::Interconnect,
        summary: "DCGM diagnostics reached the blueprint's level",
        fault: FaultClass::Device,
        action: Action::None,
    };
    const GPUS: F = F {
        id: Cow::Borrowed("dcgm.gpus"),
        layer: Layer::Interconnect,
        summary: "DCGM diagnosed every GPU of the blueprint",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const PROF: F = F {
        id: Cow::Borrowed("dcgm.proftester"),
        layer: Layer::Interconnect,
        summary: "dcgmproftester's field test passed",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    for input in inputs {
        if let Output::Proftester(runs) = &input.output {
            for run in runs {
                let subject = format!("GPU {} field {}", run.gpu, run.field);
                let verdict = if run.passed {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                };
                ctx.push(
                    &PROF,
                    Some(subject),
                    verdict,
                    "PASSED",
                    if run.passed { "PASSED" } else { "FAILED" },
                    vec![at(&input.path, run.line)],
                );
                if let Some((value, unit)) = &run.peak {
                    let name = run.name.clone().unwrap_or_else(|| run.field.to_string());
                    ctx.figure(
                        format!("dcgm.proftester.gpu{}.{name}", run.gpu),
                        *value,
                        unit,
                        true,
                        at(&input.path, run.line),
                    );
                }
            }
        }
    }
    let diags: Vec<(&Path, &DcgmDiag)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Dcgm(d) => Some(d.iter().map(move |d| (i.path.as_path(), d))),
            _ => None,
        })
        .flatten()
        .collect();
    if diags.is_empty() {
        not_run(ctx, Test::Dcgm, &LEVEL, "dcgmi diag");
        return Run::not_run("no dcgmi diag output among the inputs");
    }
    // Several tables (one per task) count together.
    let merged = DcgmDiag {
        format: diags[0].1.format,
        version: diags.iter().find_map(|(_, d)| d.version.clone()),
        driver: diags.iter().find_map(|(_, d)| d.driver.clone()),
        gpu_device_ids: diags
            .iter()
            .map(|(_, d)| d.gpu_device_ids.clone())
            .max_by_key(Vec::len)
            .unwrap_or_default(),
        tests: diags.iter().flat_map(|(_, d)| d.tests.clone()).collect(),
    };
    let path_of = |test: &DcgmTest| {
        diags
            .iter()
            .find(|(_, d)| {
                d.tests
                    .iter()
                    .any(|t| std::ptr::eq(t, test) || (t.name == test.name && t.line == test.line))
            })
            .map_or(diags[0].0, |(p, _)| p)
    };
    let evidence: Vec<String> = diags
        .iter()
        .map(|(p, d)| at(p, d.tests.first().map_or(1, |t| t.line)))
        .collect();
    let level = merged.level();
    let want = ctx.policy.dcgm_level;
    let missing = merged.missing_for(want);
    if missing.is_empty() {
        ctx.push(
            &LEVEL,
            None,
            Verdict::Pass,
            format!("level {want}"),
            format!("level {level}"),
            evidence.clone(),
        );
    } else {
        ctx.push(
            &LEVEL,
            None,
            Verdict::Incomplete,
            format!(
                "level {want}: {}",
                super::dcgm::LEVELS
                    .iter()
                    .filter(|(_, l)| *l <= want)
                    .map(|(p, _)| *p)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!(
                "level {level}; without a result (or skipped): {}",
                missing.join(", ")
            ),
            evidence.clone(),
        );
    }
    let gpu_count = merged.gpu_device_ids.len().max(merged.gpus().len());
    let want_gpus = ctx.gpus() as usize;
    if gpu_count > 0 || want_gpus > 0 {
        let verdict = if gpu_count >= want_gpus {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        ctx.push(
            &GPUS,
            None,
            verdict,
            format!("{want_gpus} GPUs"),
            format!("{gpu_count} GPUs in the results"),
            evidence.clone(),
        );
    }
    let mut tests = Vec::new();
    for test in &merged.tests {
        let status = test.status();
        let plugin = test.plugin();
        let (fault, action) = dcgm_fault(test);
        let f = F {
            id: Cow::Owned(format!("dcgm.{plugin}")),
            layer: Layer::Interconnect,
            summary: "a DCGM plugin passed on every GPU",
            fault,
            action,
        };
        let required = super::dcgm::LEVELS
            .iter()
            .any(|(p, l)| *p == plugin && *l <= want);
        let verdict = match &status {
            Status::Pass | Status::Warn => Verdict::Pass,
            Status::Fail => Verdict::Fail,
            Status::Skip | Status::NotRun if required => Verdict::Incomplete,
            Status::Skip | Status::NotRun => Verdict::Pass,
            Status::Unknown(_) => Verdict::Incomplete,
        };
        let failed = test.failed_gpus();
        let details: Vec<&str> = test
            .results
            .iter()
            .flat_map(|r| r.detail.iter().map(String::as_str))
            .collect();
        let mut observed = status.as_str().to_owned();
        if !failed.is_empty() {
            observed.push_str(&format!(
                " on GPU {}",
                failed
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if verdict != Verdict::Pass && !details.is_empty() {
            observed.push_str(&format!(": {}", details.join("; ")));
        }
        let expected = if required {
            "pass"
        } else {
            "pass or skip (optional at this level)"
        };
        ctx.push(
            &f,
            Some(test.name.clone()),
            verdict,
            expected,
            observed,
            vec![at(path_of(test), test.line)],
        );
        tests.push(record::DcgmTestResult {
            category: test.category.clone(),
            name: test.name.clone(),
            plugin,
            status: status.as_str().to_owned(),
            failed_gpus: failed,
        });
    }
    Run::Done(record::Dcgm {
        version: merged.version.clone(),
        driver: merged.driver.clone(),
        level,
        required_level: want,
        gpus: gpu_count,
        tests,
        evidence,
    })
}

// Layer 4: nvbandwidth -----------------------------------------------------------------

fn nvbandwidth(
    ctx: &mut Ctx<'_>,
    inputs: &[Input],
) -> (Run<record::NvbandwidthResult>, Option<String>) {
    const GPUS: F = F {
        id: Cow::Borrowed("nvbandwidth.gpus"),
        layer: Layer::Interconnect,
        summary: "nvbandwidth measured every GPU of the blueprint",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const H2D: F = F {
        id: Cow::Borrowed("nvbandwidth.host-to-device"),
        layer: Layer::Interconnect,
        summary: "host→GPU copy bandwidth of every GPU",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const D2H: F = F {
        id: Cow::Borrowed("nvbandwidth.device-to-host"),
        layer: Layer::Interconnect,
        summary: "GPU→host copy bandwidth of every GPU",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const D2D: F = F {
        id: Cow::Borrowed("nvbandwidth.device-to-device"),
        layer: Layer::Interconnect,
        summary: "GPU→GPU copy bandwidth of every pair (NVLink)",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    for input in inputs {
        if let Output::P2p(p) = &input.output {
            for m in &p.matrices {
                if (m.title.starts_with("Unidirectional P2P=Enabled")
                    || m.title.starts_with("Bidirectional P2P=Enabled"))
                    && let Some((_, _, v)) = m.min()
                {
                    let key = if m.title.starts_with("Uni") {
                        "p2p.unidirectional.min"
                    } else {
                        "p2p.bidirectional.min"
                    };
                    ctx.figure(key.to_owned(), v, "GB/s", true, at(&input.path, m.line));
                }
            }
        }
    }
    let runs: Vec<(&Path, &Nvbandwidth)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Nvbandwidth(n) => Some((i.path.as_path(), n)),
            _ => None,
        })
        .collect();
    if runs.is_empty() {
        not_run(ctx, Test::Nvbandwidth, &H2D, "nvbandwidth");
        return (Run::not_run("no nvbandwidth output among the inputs"), None);
    }
    // Testcases may come from several runs (`nvbandwidth -t ...` per test): the last
    // output that has a testcase counts for it.
    let mut cases: BTreeMap<&str, (&Path, &super::nvbandwidth::Testcase)> = BTreeMap::new();
    for (path, nv) in &runs {
        for case in &nv.testcases {
            cases.insert(case.name.as_str(), (*path, case));
        }
    }
    let mut minimum = BTreeMap::new();
    let mut waived = Vec::new();
    for (name, (path, case)) in &cases {
        if case.waived {
            waived.push((*name).to_owned());
            continue;
        }
        if let Some((_, _, v)) = case.matrix().and_then(|m| m.min()) {
            minimum.insert((*name).to_owned(), round(v));
            let unit = if case.matrix().is_some_and(|m| m.title.ends_with("(ns)")) {
                "ns"
            } else {
                "GB/s"
            };
            ctx.figure(
                format!("nvbandwidth.{name}.min"),
                v,
                unit,
                unit != "ns",
                at(path, case.line),
            );
        }
    }
    // GPUs: the columns of any matrix (GPU columns in every testcase).
    let gpus = cases
        .values()
        .filter_map(|(_, c)| c.matrix())
        .map(|m| m.columns.len())
        .chain(runs.iter().map(|(_, n)| n.devices.len()))
        .max()
        .unwrap_or(0);
    let want = ctx.gpus() as usize;
    let first = at(runs[0].0, 1);
    ctx.push(
        &GPUS,
        None,
        if gpus >= want {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        format!("{want} GPUs"),
        format!("{gpus} GPUs measured"),
        vec![first.clone()],
    );
    for (f, name) in [
        (&H2D, "host_to_device_memcpy_ce"),
        (&D2H, "device_to_host_memcpy_ce"),
    ] {
        match cases.get(name) {
            Some((path, case)) if !case.waived => match case.matrix().and_then(|m| m.min()) {
                Some((_, gpu, v)) => ctx.bandwidth(
                    f,
                    Figure::NvbandwidthHostDevice,
                    Some(format!("GPU {gpu}")),
                    v,
                    1.0,
                    vec![at(path, case.line)],
                ),
                None => ctx.push(
                    f,
                    None,
                    Verdict::Incomplete,
                    "a measured value per GPU",
                    "no value",
                    vec![at(path, case.line)],
                ),
            },
            Some((path, case)) => ctx.push(
                f,
                None,
                Verdict::Incomplete,
                format!("{name} measured"),
                "waived",
                vec![at(path, case.line)],
            ),
            None => ctx.push(
                f,
                None,
                Verdict::Incomplete,
                format!("testcase {name}"),
                "not in the output",
                vec![first.clone()],
            ),
        }
    }
    let mut nvlink = None;
    if ctx.policy.topology.gpu_links && want >= 2 {
        // Azure's check reads device_to_device_memcpy_read_ce; the write test measures the
        // same links and counts when the read test was not run.
        let found = [
            "device_to_device_memcpy_read_ce",
            "device_to_device_memcpy_write_ce",
        ]
        .iter()
        .find_map(|n| cases.get(n).map(|c| (*n, *c)));
        match found {
            Some((name, (path, case))) if !case.waived => match case.matrix().and_then(|m| m.min())
            {
                Some((a, b, v)) => {
                    nvlink = Some(format!(
                        "slowest pair GPU {a} -> GPU {b}: {} GB/s (nvbandwidth {name})",
                        fmt(v)
                    ));
                    ctx.bandwidth(
                        &D2D,
                        Figure::NvbandwidthDeviceDevice,
                        Some(format!("GPU {a} -> GPU {b}")),
                        v,
                        1.0,
                        vec![at(path, case.line)],
                    );
                }
                None => ctx.push(
                    &D2D,
                    None,
                    Verdict::Incomplete,
                    "a value per GPU pair",
                    "no value",
                    vec![at(path, case.line)],
                ),
            },
            Some((name, (path, case))) => ctx.push(
                &D2D,
                None,
                Verdict::Incomplete,
                format!("{name} measured over NVLink"),
                "waived",
                vec![at(path, case.line)],
            ),
            None => ctx.push(
                &D2D,
                None,
                Verdict::Incomplete,
                "testcase device_to_device_memcpy_read_ce",
                "not in the output",
                vec![first],
            ),
        }
    }
    let record = record::NvbandwidthResult {
        version: runs.iter().find_map(|(_, n)| n.version.clone()),
        gpus,
        minimum_gbps: minimum,
        waived,
        evidence: runs.iter().map(|(p, _)| at(p, 1)).collect(),
    };
    (Run::Done(record), nvlink)
}

// Layer 4: NCCL / RCCL -----------------------------------------------------------------

fn scope(run: &NcclRun) -> &'static str {
    match run.hosts().len() {
        0 => "unknown",
        1 => "single-node",
        _ => "multi-node",
    }
}

fn nccl(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<Vec<record::NcclResult>> {
    const RANKS: F = F {
        id: Cow::Borrowed("nccl.all-reduce.ranks"),
        layer: Layer::Interconnect,
        summary: "single-node all-reduce ran on every GPU",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const DATA: F = F {
        id: Cow::Borrowed("nccl.all-reduce.data"),
        layer: Layer::Interconnect,
        summary: "single-node all-reduce results were validated and correct",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const BUSBW: F = F {
        id: Cow::Borrowed("nccl.all-reduce.busbw"),
        layer: Layer::Interconnect,
        summary: "single-node all-reduce bus bandwidth at 8 GiB or more",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const M_RANKS: F = F {
        id: Cow::Borrowed("nccl.multi-node.ranks"),
        layer: Layer::Interconnect,
        summary: "multi-node all-reduce ran on every GPU of this node and enough nodes",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const M_DATA: F = F {
        id: Cow::Borrowed("nccl.multi-node.data"),
        layer: Layer::Interconnect,
        summary: "multi-node all-reduce results were validated and correct",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const M_BUSBW: F = F {
        id: Cow::Borrowed("nccl.multi-node.busbw"),
        layer: Layer::Interconnect,
        summary: "multi-node all-reduce bus bandwidth at 8 GiB or more",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const OTHER: F = F {
        id: Cow::Borrowed("nccl.collective.data"),
        layer: Layer::Interconnect,
        summary: "other collectives' results were correct",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    let runs: Vec<(&Path, &NcclRun)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Nccl(r) => Some(r.iter().map(move |r| (i.path.as_path(), r))),
            _ => None,
        })
        .flatten()
        .collect();
    let mut records = Vec::new();
    let mut single = None;
    let mut multi = None;
    let mut unplaced = None;
    for (path, run) in &runs {
        let scope = scope(run);
        let collective = run.collective.clone();
        let largest = run.largest().map_or(0, |r| r.size);
        let busbw = run.peak_busbw().unwrap_or(0.0);
        let evidence = at(path, run.lines.1);
        let name = collective.clone().unwrap_or_else(|| "unknown".into());
        let prefix = if scope == "multi-node" {
            "nccl.multi-node"
        } else {
            "nccl"
        };
        if scope != "unknown" {
            ctx.figure(
                format!("{prefix}.{name}.busbw"),
                busbw,
                "GB/s",
                true,
                evidence.clone(),
            );
        }
        records.push(record::NcclResult {
            suite: match run.suite {
                super::nccl::Suite::NcclTests => "nccl-tests".into(),
                super::nccl::Suite::RcclTests => "rccl-tests".into(),
            },
            collective: collective.clone(),
            scope: scope.into(),
            ranks: run.ranks.len(),
            hosts: run.hosts().into_iter().map(str::to_owned).collect(),
            largest_bytes: largest,
            busbw_gbps: busbw,
            avg_busbw_gbps: run.avg_busbw,
            data_errors: run.data_errors(),
            library: run.library_version.clone(),
            evidence: evidence.clone(),
        });
        let all_reduce = collective.as_deref() == Some("all_reduce");
        match (scope, all_reduce) {
            ("single-node", true) => single = Some((*path, *run)),
            ("multi-node", true) => multi = Some((*path, *run)),
            ("unknown", true) => unplaced = Some((*path, *run)),
            _ => {
                if run.data_errors() > 0 {
                    ctx.push(
                        &OTHER,
                        Some(name),
                        Verdict::Fail,
                        "0 wrong values",
                        format!("{} wrong values", run.data_errors()),
                        vec![evidence],
                    );
                }
            }
        }
    }
    let want = ctx.gpus() as usize;
    match single {
        Some((path, run)) => {
            let ev = vec![at(path, run.lines.1)];
            let ranks = run.ranks.len();
            let verdict = match ranks.cmp(&want) {
                std::cmp::Ordering::Equal => Verdict::Pass,
                std::cmp::Ordering::Less => Verdict::Fail,
                std::cmp::Ordering::Greater => Verdict::Incomplete,
            };
            ctx.push(&RANKS, None, verdict, format!("{want} ranks, one per GPU"), format!("{ranks} ranks on {}", run.hosts().join(", ")), ev.clone());
            data_check(ctx, &DATA, run, ev.clone());
            size_and_bandwidth(ctx, &BUSBW, Figure::NcclAllReduceBusbw, run, ev);
        }
        None => match unplaced {
            Some((path, run)) if ctx.required(Test::Nccl) => ctx.push(
                &RANKS,
                None,
                Verdict::Incomplete,
                format!("{want} ranks, one per GPU"),
                "the output lists no `# Rank` lines (a table-only copy): which GPUs took part is unknown",
                vec![at(path, run.lines.0)],
            ),
            _ => {
                not_run(ctx, Test::Nccl, &BUSBW, "nccl-tests/rccl-tests all_reduce_perf on one node");
            }
        },
    }
    match multi {
        Some((path, run)) => {
            let ev = vec![at(path, run.lines.1)];
            let hosts = run.hosts();
            let mine = match ctx.node {
                Some(node) => run.ranks.iter().filter(|r| r.host == node).count(),
                None => hosts
                    .iter()
                    .map(|h| run.ranks.iter().filter(|r| r.host == *h).count())
                    .min()
                    .unwrap_or(0),
            };
            let enough_nodes = hosts.len() as u32 >= ctx.policy.multi_node_nodes;
            let verdict = if ctx.node.is_some() && mine == 0 {
                Verdict::Incomplete
            } else if mine < want {
                Verdict::Fail
            } else if !enough_nodes {
                Verdict::Incomplete
            } else {
                Verdict::Pass
            };
            ctx.push(
                &M_RANKS,
                ctx.node.map(str::to_owned),
                verdict,
                format!(
                    "{want} ranks on this node, {} nodes or more",
                    ctx.policy.multi_node_nodes
                ),
                format!(
                    "{mine} ranks on this node, {} nodes ({})",
                    hosts.len(),
                    hosts.join(", ")
                ),
                ev.clone(),
            );
            data_check(ctx, &M_DATA, run, ev.clone());
            size_and_bandwidth(ctx, &M_BUSBW, Figure::NcclMultiNodeBusbw, run, ev);
        }
        None => {
            not_run(
                ctx,
                Test::MultiNodeNccl,
                &M_BUSBW,
                "a multi-node nccl-tests/rccl-tests all_reduce_perf (MPIJob or JobSet)",
            );
        }
    }
    if runs.is_empty() {
        return Run::not_run("no nccl-tests/rccl-tests output among the inputs");
    }
    Run::Done(records)
}

fn data_check(ctx: &mut Ctx<'_>, f: &F, run: &NcclRun, ev: Vec<String>) {
    let errors = run.data_errors();
    let validated = run.params.as_ref().and_then(|p| p.validation) != Some(false)
        && run
            .rows
            .iter()
            .any(|r| !matches!(r.out_of_place.check, super::nccl::Check::NotChecked));
    if errors > 0 {
        ctx.push(
            f,
            None,
            Verdict::Fail,
            "0 wrong values",
            format!("{errors} wrong values"),
            ev,
        );
    } else if !validated {
        ctx.push(
            f,
            None,
            Verdict::Incomplete,
            "results validated (nccl-tests -c 1)",
            "not validated (validation: 0): wrong results would go unseen",
            ev,
        );
    } else {
        ctx.push(
            f,
            None,
            Verdict::Pass,
            "0 wrong values",
            "0 wrong values",
            ev,
        );
    }
}

fn size_and_bandwidth(ctx: &mut Ctx<'_>, f: &F, figure: Figure, run: &NcclRun, ev: Vec<String>) {
    let Some(row) = run.largest() else {
        return;
    };
    if row.size < NCCL_MIN_BYTES {
        ctx.push(
            f,
            None,
            Verdict::Incomplete,
            format!("messages up to {} GiB or more", NCCL_MIN_BYTES >> 30),
            format!(
                "largest message {} bytes: bus bandwidth there is not comparable",
                row.size
            ),
            ev,
        );
        return;
    }
    let ev = vec![
        ev.first()
            .map(|e| {
                e.rsplit_once(':')
                    .map_or(e.clone(), |(p, _)| format!("{p}:{}", row.line))
            })
            .unwrap_or_default(),
    ];
    ctx.bandwidth(f, figure, None, row.out_of_place.busbw, 1.0, ev);
}

/// The smoke Pod's `shm` step: the size of its `/dev/shm` (statvfs inside the container).
/// Where the blueprint sets `system.shmSize`, the rendered Kyverno policy mounts a
/// memory-backed emptyDir of that size there; a smaller one (the sandbox's own 64 MiB
/// tmpfs) means the policy did not reach the Pod. A memory-backed emptyDir is sized
/// the least of its `sizeLimit`, the Pod's memory limit and the node's allocatable
/// memory (EmptyDirVolumeSource.sizeLimit in the Kubernetes API), and the smoke Pod sets
/// no memory limit.
fn shm(ctx: &mut Ctx<'_>, f: &F, steps: &[(&Path, &Step)], want: u64, evidence: &[String]) {
    let expected = format!("/dev/shm of {want} bytes or more (system.shmSize)");
    let Some((path, step)) = steps.iter().find(|(_, s)| s.name == "shm") else {
        ctx.push(
            f,
            None,
            Verdict::Fail,
            expected,
            "the smoke output has no `shm` step: its probe does not report /dev/shm",
            evidence.to_vec(),
        );
        return;
    };
    let ev = vec![at(path, step.line)];
    let observed = step.metrics.get("bytes").copied();
    let (verdict, observed) = match (step.status, observed) {
        (StepStatus::Pass, Some(bytes)) if bytes >= want as f64 => {
            (Verdict::Pass, format!("{bytes} bytes"))
        }
        (StepStatus::Pass, Some(bytes)) => (
            Verdict::Fail,
            format!(
                "{bytes} bytes: the shm policy did not apply to the Pod (is Kyverno running and the policy applied?)"
            ),
        ),
        (_, _) => (
            Verdict::Fail,
            format!(
                "no size: {}",
                step.error
                    .as_deref()
                    .unwrap_or("the step reports no `bytes`")
            ),
        ),
    };
    ctx.push(f, None, verdict, expected, observed, ev);
}

// Layer 4: RDMA ------------------------------------------------------------------------

fn rdma(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<Vec<record::RdmaResult>> {
    const RAILS: F = F {
        id: Cow::Borrowed("rdma.rails"),
        layer: Layer::Interconnect,
        summary: "ib_write_bw measured every RDMA rail",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const BW: F = F {
        id: Cow::Borrowed("rdma.bandwidth"),
        layer: Layer::Interconnect,
        summary: "ib_write_bw bandwidth per rail at 8 MiB (GPU memory where GPUDirect is declared)",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const DMA_BUF: F = F {
        id: Cow::Borrowed("rdma.dma-buf"),
        layer: Layer::Interconnect,
        summary: "perftest registered its GPU buffers through DMA-BUF (NVIDIA without OFED: no nvidia_peermem)",
        fault: FaultClass::DriverDaemon,
        action: Action::Service,
    };
    let runs: Vec<(&Path, &PerftestRun)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Perftest(r) => Some(r.iter().map(move |r| (i.path.as_path(), r))),
            _ => None,
        })
        .flatten()
        .collect();
    if runs.is_empty() {
        not_run(
            ctx,
            Test::Rdma,
            &RAILS,
            "perftest ib_write_bw on every rail",
        );
        return Run::not_run("no perftest output among the inputs");
    }
    let mut records = Vec::new();
    let mut rails = BTreeSet::new();
    for (path, run) in &runs {
        let device = run.device.clone().unwrap_or_else(|| "unknown".into());
        let op = run
            .title
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches("RDMA_")
            .to_ascii_lowercase();
        let ev = at(path, run.lines.1);
        // Without OFED, GPU memory reaches the NIC only through DMA-BUF: perftest prints
        // "using DMA-BUF for GPU buffer ..." when it registered the buffer with
        // ibv_reg_dmabuf_mr (`--use_cuda_dmabuf`); a CUDA run without it went another way
        // (nvidia_peermem, which this image does not load), or used host memory after all.
        if ctx.policy.dma_buf
            && let Some(gpu) = run.gpu.as_ref().filter(|g| g.api == "cuda")
        {
            let (verdict, observed) = if gpu.dmabuf {
                (Verdict::Pass, "using DMA-BUF".to_owned())
            } else {
                (
                    Verdict::Fail,
                    "CUDA buffers without a `using DMA-BUF` line: not registered through DMA-BUF (run ib_write_bw with --use_cuda_dmabuf; the open kernel modules and a DMA-BUF kernel are needed)".to_owned(),
                )
            };
            ctx.push(
                &DMA_BUF,
                Some(format!("{device} {}", run.title)),
                verdict,
                "GPU buffers registered through DMA-BUF (`using DMA-BUF`)",
                observed,
                vec![at(path, run.lines.0)],
            );
        }
        match run.kind {
            Kind::Bandwidth => {
                let Some(row) = run.largest() else { continue };
                let dir = if run.bidirectional { "-bidir" } else { "" };
                ctx.figure(
                    format!("rdma.{device}.{op}{dir}"),
                    row.average_gbps,
                    "Gb/s",
                    true,
                    at(path, row.line),
                );
                records.push(record::RdmaResult {
                    device: run.device.clone(),
                    test: run.title.clone(),
                    bidirectional: run.bidirectional,
                    gpu_memory: run.gpu.as_ref().map(|g| g.api.clone()),
                    bytes: row.bytes,
                    average_gbps: Some(row.average_gbps),
                    latency_usec: None,
                    evidence: ev.clone(),
                });
                if op != "write" {
                    continue;
                }
                rails.insert(device.clone());
                let row_ev = vec![at(path, row.line)];
                if row.bytes < RDMA_MIN_BYTES {
                    ctx.push(
                        &BW,
                        Some(device),
                        Verdict::Incomplete,
                        format!("a message of {} MiB or more", RDMA_MIN_BYTES >> 20),
                        format!("largest message {} bytes", row.bytes),
                        row_ev,
                    );
                } else if ctx.policy.gpudirect && run.gpu.is_none() {
                    ctx.push(
                        &BW,
                        Some(device),
                        Verdict::Incomplete,
                        "buffers in GPU memory (GPUDirect RDMA is declared: network.affinity.gpuNicSamePcieSwitch)",
                        format!("host memory, {} Gb/s", fmt(row.average_gbps)),
                        row_ev,
                    );
                } else {
                    // Bidirectional runs report both directions together.
                    let scale = if run.bidirectional { 2.0 } else { 1.0 };
                    ctx.bandwidth(
                        &BW,
                        Figure::RdmaWrite,
                        Some(device),
                        row.average_gbps,
                        scale,
                        row_ev,
                    );
                }
            }
            Kind::Latency => {
                let Some(row) = run.smallest_latency() else {
                    continue;
                };
                ctx.figure(
                    format!("rdma.{device}.{op}-latency"),
                    row.usec[2],
                    "us",
                    false,
                    at(path, row.line),
                );
                records.push(record::RdmaResult {
                    device: run.device.clone(),
                    test: run.title.clone(),
                    bidirectional: false,
                    gpu_memory: run.gpu.as_ref().map(|g| g.api.clone()),
                    bytes: row.bytes,
                    average_gbps: None,
                    latency_usec: Some(row.usec[2]),
                    evidence: ev,
                });
            }
        }
    }
    let want = ctx.policy.topology.rail_count() as usize;
    if want > 0 {
        let verdict = if rails.len() >= want {
            Verdict::Pass
        } else {
            Verdict::Incomplete
        };
        ctx.push(
            &RAILS,
            None,
            verdict,
            format!("ib_write_bw on each of {want} rails"),
            format!(
                "{} rail(s): {}",
                rails.len(),
                rails.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            runs.iter().map(|(p, r)| at(p, r.lines.0)).collect(),
        );
    }
    Run::Done(records)
}

// Layer 5 ------------------------------------------------------------------------------

fn framework(
    ctx: &mut Ctx<'_>,
    inputs: &[Input],
) -> (Run<record::Framework>, Run<record::Framework>) {
    const STEP: F = F {
        id: Cow::Borrowed("framework"),
        layer: Layer::Framework,
        summary: "a framework step passed",
        fault: FaultClass::TransientApplication,
        action: Action::RestartApp,
    };
    let steps = probe_steps(inputs, Suite::Framework);
    if steps.is_empty() {
        not_run(
            ctx,
            Test::Framework,
            &STEP,
            "the framework Job (probe suite framework)",
        );
        let reason = "no framework Job output among the inputs";
        return (Run::not_run(reason), Run::not_run(reason));
    }
    let mut training = Vec::new();
    let mut inference = Vec::new();
    let mut train_ev = Vec::new();
    let mut infer_ev = Vec::new();
    for name in FRAMEWORK_STEPS {
        let found: Vec<&(&Path, &Step)> = steps.iter().filter(|(_, s)| s.name == *name).collect();
        let fault = if *name == "devices" {
            FaultClass::DriverDaemon
        } else {
            FaultClass::TransientApplication
        };
        let f = F {
            id: Cow::Owned(format!("framework.{name}")),
            layer: Layer::Framework,
            summary: "a framework step passed",
            fault,
            action: if fault == FaultClass::DriverDaemon {
                Action::RestartDaemon
            } else {
                Action::RestartApp
            },
        };
        if found.is_empty() {
            ctx.push(
                &f,
                None,
                Verdict::Incomplete,
                "the step ran and passed",
                "not in the output",
                steps.iter().map(|(p, s)| at(p, s.line)).take(1).collect(),
            );
            continue;
        }
        // Several ranks may report a step: the worst counts.
        let worst = found
            .iter()
            .min_by_key(|(_, s)| s.status)
            .expect("non-empty");
        let (path, step) = (worst.0, worst.1);
        let (verdict, observed) = match step.status {
            StepStatus::Pass => (Verdict::Pass, "pass".to_owned()),
            StepStatus::Skip => (Verdict::Incomplete, "skipped".to_owned()),
            StepStatus::Fail => (
                Verdict::Fail,
                format!(
                    "fail: {}",
                    step.error.as_deref().unwrap_or("no reason given")
                ),
            ),
        };
        let ev = vec![at(path, step.line)];
        ctx.push(
            &f,
            step.rank.map(|r| format!("rank {r}")),
            verdict,
            "pass",
            observed,
            ev.clone(),
        );
        // Figures from the first reporter of each step.
        let (fpath, first) = (found[0].0, found[0].1);
        if let Some(s) = first.seconds {
            ctx.figure(
                format!("framework.{name}.seconds"),
                s,
                "s",
                false,
                at(fpath, first.line),
            );
        }
        for (metric, value) in &first.metrics {
            let lower = metric.ends_with("seconds")
                || metric.ends_with("_ms")
                || metric.contains("latency");
            ctx.figure(
                format!("framework.{name}.{metric}"),
                *value,
                metric_unit(metric),
                !lower,
                at(fpath, first.line),
            );
        }
        let entry = record::FrameworkStep {
            name: (*name).to_owned(),
            status: format!("{:?}", step.status).to_lowercase(),
            seconds: first.seconds,
            metrics: first.metrics.clone(),
            error: step.error.clone(),
        };
        if *name == "inference" {
            inference.push(entry);
            infer_ev.extend(ev);
        } else {
            training.push(entry);
            train_ev.extend(ev);
        }
    }
    let wrap = |steps: Vec<record::FrameworkStep>, evidence: Vec<String>, what: &str| {
        if steps.is_empty() {
            Run::not_run(format!("the framework output has no {what} step"))
        } else {
            Run::Done(record::Framework { steps, evidence })
        }
    };
    (
        wrap(training, train_ev, "training"),
        wrap(inference, infer_ev, "inference"),
    )
}

fn metric_unit(metric: &str) -> &'static str {
    if metric.ends_with("seconds") {
        "s"
    } else if metric.ends_with("_ms") {
        "ms"
    } else if metric.contains("tflops") {
        "TFLOPS"
    } else if metric.contains("gbps") || metric.contains("busbw") {
        "GB/s"
    } else {
        ""
    }
}

/// The prefix of every rendered acceptance workload's name, and so of its Pods' names.
const WORKLOAD_PREFIX: &str = "nodeimg-acceptance-";

/// Where the host name a single-node run printed puts it, as far as the inputs prove.
fn elsewhere(host: &str, node: &str, pods: &[&Pod]) -> Option<String> {
    if host == node || host == "localhost" {
        return None;
    }
    // A Pod without hostNetwork is named after itself: the Pod listing places it.
    if let Some(pod) = pods.iter().find(|p| p.name == host) {
        return match pod.node.as_deref() {
            Some(n) if n != node => Some(format!("in Pod {host} on node {n}")),
            _ => None,
        };
    }
    // A Pod of the rendered workloads that the inputs do not place: nothing proves it
    // ran elsewhere (the Pod listing would).
    if host.starts_with(WORKLOAD_PREFIX) {
        return None;
    }
    Some(format!(
        "on {host} (a Pod? give its listing: kubectl get pod {host} -o json)"
    ))
}

/// Outputs that name another node than `node`: a single-node NCCL run on another host
/// (or in a Pod the Pod listing places on another node), probe steps that report another
/// node. Judging them for this node would be wrong.
pub fn foreign(inputs: &[Input], node: &str) -> Vec<String> {
    let pods: Vec<&Pod> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Pods(p) => Some(p),
            _ => None,
        })
        .flatten()
        .collect();
    let mut out = Vec::new();
    for input in inputs {
        match &input.output {
            Output::Nccl(runs) => {
                for run in runs {
                    let hosts = run.hosts();
                    if let [host] = hosts.as_slice()
                        && let Some(where_) = elsewhere(host, node, &pods)
                    {
                        out.push(format!(
                            "{}:{}: ranks ran {where_}, not on {node}",
                            input.path.display(),
                            run.lines.0
                        ));
                    }
                }
            }
            Output::Probe(steps) => {
                for step in steps {
                    if let Some(other) = step.node.as_deref().filter(|n| *n != node) {
                        out.push(format!(
                            "{}:{}: step `{}` ran on {other}, not on {node}",
                            input.path.display(),
                            step.line,
                            step.name
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accept::input::{Format, parse};
    use std::path::PathBuf;

    /// A one-rank all_reduce whose rank line names `host`.
    fn nccl_on(host: &str) -> Input {
        let text = format!(
            "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n\
             #  Rank  0 Group  0 Pid  4242 on {host} device  0 [0000:0f:00] NVIDIA H100 80GB HBM3\n\
             #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n\
             \x20    1048576        262144     float     sum      -1    20.00   52.43   52.43       0    20.00   52.43   52.43       0\n\
             # Avg bus bandwidth    : 52.43\n"
        );
        Input {
            path: PathBuf::from("nccl.log"),
            output: parse(Format::Nccl, &text, "nccl.log").unwrap(),
        }
    }

    fn pod(name: &str, node: &str) -> Input {
        let text = format!(
            r#"{{"kind": "Pod", "metadata": {{"name": "{name}", "namespace": "nodeimg-acceptance"}},
                "spec": {{"nodeName": "{node}", "containers": []}}}}"#
        );
        Input {
            path: PathBuf::from("pods.json"),
            output: parse(Format::KubernetesPods, &text, "pods.json").unwrap(),
        }
    }

    #[test]
    fn a_run_in_a_pod_is_placed_by_what_the_inputs_prove() {
        // The node itself (hostNetwork) or a Pod of the rendered workloads that nothing
        // places elsewhere: judged for the node.
        assert!(foreign(&[nccl_on("gpu-node-01")], "gpu-node-01").is_empty());
        let in_pod = nccl_on("nodeimg-acceptance-nccl-x7k2p");
        assert!(foreign(std::slice::from_ref(&in_pod), "gpu-node-01").is_empty());
        // The Pod listing places it on this node, or on another.
        let here = [
            in_pod.clone(),
            pod("nodeimg-acceptance-nccl-x7k2p", "gpu-node-01"),
        ];
        assert!(foreign(&here, "gpu-node-01").is_empty());
        let there = [in_pod, pod("nodeimg-acceptance-nccl-x7k2p", "gpu-node-02")];
        let f = foreign(&there, "gpu-node-01");
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("on node gpu-node-02"), "{f:?}");
        // Another host, or a Pod of the user's own that no listing places: refused.
        let f = foreign(&[nccl_on("gpu-node-02")], "gpu-node-01");
        assert!(f[0].contains("kubectl get pod gpu-node-02"), "{f:?}");
        let mine = [nccl_on("my-nccl-run"), pod("my-nccl-run", "gpu-node-01")];
        assert!(foreign(&mine, "gpu-node-01").is_empty());
    }
}
