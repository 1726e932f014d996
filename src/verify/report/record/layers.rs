//! The record's schema for layers 2–5, which `nodeimg accept` fills after the node joined
//! (Kubernetes inventory, device in a container, interconnect, framework): each layer's
//! verdict, the findings with their fault class and action, the sections each test fills,
//! the baseline figures a later record is compared with.

use super::wire::{Run, later};
use crate::fault::{Action, FaultClass};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One verdict: the findings of layers 2–5 and of `verify --phase cluster`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Measured and wrong.
    Fail,
    /// Ran, but what it printed does not cover what acceptance needs (fewer GPUs, smaller
    /// messages, a skipped DCGM test): never a pass.
    Incomplete,
    /// Required, and no output of it was given.
    NotRun,
    Pass,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Incomplete => "incomplete",
            Verdict::NotRun => "not-run",
        }
    }
}

/// The acceptance layer a finding belongs to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    Kubernetes,
    DeviceContainer,
    Interconnect,
    Framework,
}

/// One verdict on one subject, with what was expected, what was observed and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Stable id: `nccl.all-reduce.busbw`, `dcgm.memory`, `cluster.allocatable.memory`.
    pub id: String,
    pub layer: Layer,
    /// A GPU, rail, resource or step; absent for node-wide findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub summary: String,
    pub verdict: Verdict,
    pub expected: String,
    pub observed: String,
    /// `file:line` of each output the verdict rests on.
    pub evidence: Vec<String>,
    /// The fault a failure points at.
    pub fault: FaultClass,
    /// Recommended action; `none` when it passed.
    pub action: Action,
}

impl Finding {
    /// `id` or `id[subject]`.
    pub fn name(&self) -> String {
        match &self.subject {
            Some(s) => format!("{}[{s}]", self.id),
            None => self.id.clone(),
        }
    }
}

/// A layer's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LayerResult {
    pub result: Verdict,
    pub checks: usize,
    /// Names of the findings (or layer-1 checks) that blocked acceptance.
    pub not_passed: Vec<String>,
    /// When the layer was judged.
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Layers {
    /// Layer 1: hardware and driver (`nodeimg verify`).
    pub hardware_driver: Run<LayerResult>,
    /// Layer 2: Kubernetes inventory.
    pub kubernetes: Run<LayerResult>,
    /// Layer 3: device in a container.
    pub device_container: Run<LayerResult>,
    /// Layer 4: interconnect (DCGM, nvbandwidth, NCCL/RCCL, RDMA).
    pub interconnect: Run<LayerResult>,
    /// Layer 5: the framework.
    pub framework: Run<LayerResult>,
}

impl Layers {
    pub(super) fn later() -> Self {
        Layers {
            hardware_driver: later(),
            kubernetes: later(),
            device_container: later(),
            interconnect: later(),
            framework: later(),
        }
    }
}

/// Layer 2: the Node object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Kubernetes {
    pub node: String,
    pub kubelet: Option<String>,
    pub container_runtime: Option<String>,
    pub capacity: BTreeMap<String, String>,
    pub allocatable: BTreeMap<String, String>,
    pub taints: Vec<String>,
    /// Condition type → status.
    pub conditions: BTreeMap<String, String>,
    pub runtime_handlers: Vec<String>,
    /// Device components on the node and whether they are ready.
    pub components: Vec<Component>,
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Component {
    /// `device-plugin`, `gpu-feature-discovery`, `dcgm-exporter`, ...
    pub name: String,
    /// `namespace/pod`, when one runs on the node.
    pub pod: Option<String>,
    pub ready: bool,
}

/// Layer 3: what a Pod requested and received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceContainer {
    pub requested: Option<u32>,
    pub received: Vec<ReceivedDevice>,
    /// `pass`, `fail` or `skip` of the kernel the Pod ran.
    pub kernel: String,
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReceivedDevice {
    pub index: u32,
    pub name: String,
    pub uuid: Option<String>,
    pub bus: Option<String>,
}

/// Layer 4: DCGM diagnostics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dcgm {
    pub version: Option<String>,
    pub driver: Option<String>,
    /// The run level the output reaches.
    pub level: u8,
    /// The level the blueprint asks for.
    pub required_level: u8,
    pub gpus: usize,
    pub tests: Vec<DcgmTestResult>,
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DcgmTestResult {
    pub category: String,
    pub name: String,
    /// DCGM 4 plugin name (`memory`, `targeted_stress`, `software`).
    pub plugin: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_gpus: Vec<u32>,
}

/// Layer 4 figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Baseline {
    pub nccl: Run<Vec<NcclResult>>,
    pub rdma: Run<Vec<RdmaResult>>,
    pub nvbandwidth: Run<NvbandwidthResult>,
    pub storage: Run<Vec<StorageResult>>,
    /// The RDMA ports `ibstat` listed, each with the NIC group that declares it.
    #[serde(default)]
    pub ports: Run<Vec<RailPort>>,
    /// Each GPU's nearest rail NIC in `nvidia-smi topo -m`.
    #[serde(default)]
    pub gpu_nic: Run<Vec<GpuNic>>,
}

impl Baseline {
    pub(super) fn later() -> Self {
        Baseline {
            nccl: later(),
            rdma: later(),
            nvbandwidth: later(),
            storage: later(),
            ports: later(),
            gpu_nic: later(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RailPort {
    /// `mlx5_0`.
    pub device: String,
    pub port: u32,
    /// `MT4129` (ibstat's CA type).
    pub ca_type: Option<String>,
    pub firmware: Option<String>,
    /// `Active`, `Down`, `Initializing`, `Armed`.
    pub state: String,
    /// `LinkUp`, `Polling`, `Disabled`.
    pub physical_state: String,
    pub rate_gbps: f64,
    /// `InfiniBand` or `Ethernet`.
    pub link_layer: String,
    /// `network.nics[<i>]` of the blueprint that declares the port; none when no group does.
    pub group: Option<String>,
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuNic {
    /// `GPU0`.
    pub gpu: String,
    /// The GPU's NUMA node.
    pub numa: Option<u32>,
    /// The nearest rail NIC's column (`NIC0`) and RDMA device (`mlx5_0`).
    pub nic: Option<String>,
    pub rdma_device: Option<String>,
    /// The path to it: `PIX`, `PXB`, `PHB`, `NODE`, `SYS`.
    pub path: Option<String>,
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclResult {
    /// `nccl-tests` or `rccl-tests`.
    pub suite: String,
    pub collective: Option<String>,
    /// `single-node`, `multi-node` or `unknown` (no rank lines).
    pub scope: String,
    pub ranks: usize,
    pub hosts: Vec<String>,
    pub largest_bytes: u64,
    /// Out-of-place bus bandwidth at the largest message, GB/s.
    pub busbw_gbps: f64,
    /// nccl-tests' `Avg bus bandwidth`, GB/s.
    pub avg_busbw_gbps: f64,
    pub data_errors: usize,
    pub library: Option<String>,
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RdmaResult {
    pub device: Option<String>,
    pub test: String,
    pub bidirectional: bool,
    /// `cuda` or `rocm` when the buffers were in GPU memory (GPUDirect RDMA).
    pub gpu_memory: Option<String>,
    pub bytes: u64,
    /// Average bandwidth at `bytes`, Gb/s (bandwidth tests).
    pub average_gbps: Option<f64>,
    /// Typical latency of the smallest message, µs (latency tests).
    pub latency_usec: Option<f64>,
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NvbandwidthResult {
    pub version: Option<String>,
    pub gpus: usize,
    /// Smallest per-GPU figure of each testcase, GB/s.
    pub minimum_gbps: BTreeMap<String, f64>,
    pub waived: Vec<String>,
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StorageResult {
    /// fio's job name: `seq-read`, `seq-write`, `rand-read`, `rand-write`.
    pub job: String,
    pub read_mib_s: Option<f64>,
    pub write_mib_s: Option<f64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    /// Completion latency at the 99th percentile, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_clat_p99_usec: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_clat_p99_usec: Option<f64>,
    /// `fio-3.33`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<String>,
    pub evidence: String,
}

/// Layer 5: framework steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Framework {
    pub steps: Vec<FrameworkStep>,
    pub evidence: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FrameworkStep {
    pub name: String,
    pub status: String,
    pub seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A measured figure, compared with the next record of the node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FigureValue {
    pub value: f64,
    pub unit: String,
    pub higher_is_better: bool,
    /// `file:line` it was read from.
    pub evidence: String,
}
