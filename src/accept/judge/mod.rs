//! Judging the outputs of layers 2–5 into findings, figures and the record's sections.
//!
//! [`judge`] runs each layer's judge in report order and gathers what they found. One file
//! per test, grouped by layer: layer 2 is [`cluster`](super::cluster); layer 3 the smoke
//! Pod (`device.rs`, and `mapping.rs`: its GPUs against the kubelet's allocation); layer 4 `dcgm.rs`, `test_runner.rs` (AMD's diagnostic), `nvbandwidth.rs`, `rocm_bandwidth.rs` (AMD's), `nccl.rs`, `rdma.rs`, and the
//! rails and storage judges beside this folder ([`rails`](super::rails),
//! [`storage`](super::storage)); layer 5 `framework.rs` and `engines.rs` (JAX, the
//! inference engine). They all write through `context.rs` against the resolved
//! [`Policy`]; `power.rs` judges the power samples taken beside the workloads;
//! `placement.rs` finds outputs that are another node's. Each finding has a stable id, a layer and the fault class a failure
//! points at (the table in the README lists them). The rules that run through all of them:
//!
//! - **Nothing is a pass that did not run.** A required test without output is
//!   `not-run`; an output that does not cover what acceptance needs (fewer GPUs than the
//!   blueprint, smaller messages than the threshold is defined at, a skipped DCGM plugin
//!   of the required level, unvalidated NCCL results, host memory where GPUDirect is
//!   declared) is `incomplete`. Either keeps the node from being accepted.
//! - **Thresholds come from the topology** ([`threshold`](super::threshold)) or the
//!   blueprint; where there is none the figure is still recorded and compared with the
//!   node's previous record ([`regression`](super::regression)).
//! - **Fault classes are verify's**: a GPU missing or failing a stress test is `device`,
//!   slow NVLink/PCIe/NIC bandwidth is `link`, a device plugin that hands a Pod fewer
//!   devices is `driver-daemon`, a failing framework step is `transient-application`.

pub(super) mod context;
mod dcgm;
mod device;
mod engines;
mod framework;
mod mapping;
mod nccl;
mod nvbandwidth;
mod placement;
mod policy;
mod power;
mod rdma;
mod rocm_bandwidth;
mod test_runner;

pub use framework::FRAMEWORK_STEPS;
pub use nccl::NCCL_MIN_BYTES;
pub use placement::foreign;
pub use policy::Policy;
pub use rdma::RDMA_MIN_BYTES;

use super::input::Input;
use crate::blueprint::Spec;
use crate::blueprint::model::acceptance::Test;
use crate::verify::report::record::{self, Baseline, FigureValue, Finding, Run};
use context::Ctx;
use std::collections::BTreeMap;

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

/// The findings `accept` can produce, in report order (README table).
#[rustfmt::skip]
pub const FINDINGS: &[(&str, &str, &str)] = &[
    ("kubernetes", "kubernetes", "the Node object was given (layer 2; the `cluster.*` findings below)"),
    ("smoke.devices", "device-container", "the smoke Pod received every device it requested, each once"),
    ("smoke.mapping", "device-container", "the GPUs (MIG: GPU instances) the smoke Pod saw are those the kubelet allocated to it (dcgm-exporter's pod labels), each to one smoke Pod (time-slicing, MPS: to at most `replicas` Pods)"),
    ("smoke.kernel", "device-container", "the smoke Pod ran a kernel on its devices"),
    ("smoke.shm", "device-container", "the smoke Pod's /dev/shm is at least system.shmSize (the rendered shm policy applied)"),
    ("dcgm.level", "interconnect", "DCGM diagnostics reached the blueprint's level"),
    ("dcgm.gpus", "interconnect", "DCGM diagnosed every GPU of the blueprint"),
    ("dcgm.<plugin>", "interconnect", "a DCGM plugin passed on every GPU"),
    ("dcgm.proftester", "interconnect", "dcgmproftester's field test passed"),
    ("test-runner.recipe", "interconnect", "the AMD GPU Operator's test runner ran the blueprint's RVS recipe (acceptance.testRunner.recipe)"),
    ("test-runner.gpus", "interconnect", "the test runner's latest run of the recipe tested every GPU of the blueprint"),
    ("test-runner.<action>", "interconnect", "an RVS test action of the recipe succeeded on every GPU (a failure: device, service; link for pebb/pbqt)"),
    ("test-runner.run", "interconnect", "the run's event says TestPassed (TestTimedOut is incomplete)"),
    ("nvbandwidth.gpus", "interconnect", "nvbandwidth measured every GPU of the blueprint"),
    ("nvbandwidth.host-to-device", "interconnect", "host→GPU copy bandwidth of every GPU"),
    ("nvbandwidth.device-to-host", "interconnect", "GPU→host copy bandwidth of every GPU"),
    ("nvbandwidth.device-to-device", "interconnect", "GPU→GPU copy bandwidth of every pair (NVLink)"),
    ("rocm-bandwidth.gpus", "interconnect", "rocm-bandwidth-test measured every GPU of the blueprint (AMD)"),
    ("rocm-bandwidth.host-to-device", "interconnect", "host→GPU copy bandwidth of every GPU, the slowest cell of `rocm-bandwidth-test -a` (amd-copy-bandwidth.csv)"),
    ("rocm-bandwidth.device-to-host", "interconnect", "GPU→host copy bandwidth of every GPU (amd-copy-bandwidth.csv)"),
    ("rocm-bandwidth.device-to-device", "interconnect", "GPU→GPU copy bandwidth of every pair over Infinity Fabric (amd-copy-bandwidth.csv)"),
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
    ("power.samples", "interconnect", "nvidia-smi or amd-smi sampled power, clocks and clock event reasons of every GPU beside the framework Job (and the NCCL and multi-node runs, each node's section named)"),
    ("power.peak", "interconnect", "a GPU drew at least acceptance.thresholds.powerPeakFractionOfLimit of its enforced power limit under the matmul load (default 0.75, DCGM targeted power's ratio)"),
    ("power.slowdown", "interconnect", "no hardware or thermal slowdown or power brake was active on a GPU while loaded"),
    ("framework.<step>", "framework", "a framework step passed (devices, tensor, load, collective, multinode, inference, checkpoint)"),
    ("jax.<step>", "framework", "a JAX probe step passed (devices, tensor, collective; multinode when it ran)"),
    ("inference.serve", "framework", "the inference engine served the model in its image and answered the fixed prompt"),
    ("inference.tokens-per-second", "framework", "the engine's generation rate reached acceptance.thresholds.inferenceTokensPerSecond (recorded, and judged against the previous record, without one)"),
    ("inference.ttft", "framework", "the engine's time to first token stayed within acceptance.thresholds.inferenceTtftMs (recorded, and judged against the previous record, without one)"),
    ("regression.<figure>", "(the figure's)", "a figure is no worse than the node's previous record beyond the tolerance"),
];

/// Judges every input against the policy. `node` is the node being accepted, when known.
pub fn judge(inputs: &[Input], policy: &Policy, blueprint: &Spec, node: Option<&str>) -> Judgement {
    let mut ctx = Ctx::new(policy, node);
    let required = ctx.required(Test::Kubernetes);
    let kubernetes =
        crate::accept::cluster::judge_inputs(&mut ctx.findings, inputs, blueprint, node, required);
    let device_container = device::smoke(&mut ctx, inputs);
    mapping::mapping(&mut ctx, inputs);
    let dcgm = dcgm::dcgm(&mut ctx, inputs);
    test_runner::test_runner(&mut ctx, inputs);
    let (nvbandwidth, nvlink) = nvbandwidth::nvbandwidth(&mut ctx, inputs);
    rocm_bandwidth::rocm_bandwidth(&mut ctx, inputs);
    let nccl = nccl::nccl(&mut ctx, inputs);
    let rdma = rdma::rdma(&mut ctx, inputs);
    let (ports, rails) = crate::accept::rails::judge_ports(&mut ctx, inputs, blueprint);
    let gpu_nic = crate::accept::rails::judge_gpu_nic(&mut ctx, inputs, blueprint, &rails);
    let settings = blueprint.acceptance.clone().unwrap_or_default();
    let storage = crate::accept::storage::judge(&mut ctx, inputs, &settings);
    let (training, inference) = framework::framework(&mut ctx, inputs);
    power::power(&mut ctx, inputs);
    engines::jax(&mut ctx, inputs);
    engines::inference(&mut ctx, inputs);
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
