//! The node acceptance record: what this node is (hardware SKU and serial, firmware, OS,
//! kernel, runtime, driver, GPUs, NICs, links), what the blueprint declares around it
//! (operator, device plugin or DRA), and what each acceptance layer found — layer 1 from
//! `nodeimg verify` at boot, layers 2–5 (Kubernetes inventory, device in a container,
//! interconnect, framework) from `nodeimg accept` after the node joined — with the
//! figures a later record is compared with, and where the evidence is.
//!
//! The record is the contract between `verify` and `accept`: `verify` writes layer 1 and
//! marks the rest not run; `accept` reads that record back, fills layers 2–5 and writes
//! the complete one. Every machine value is a fact: known, or `{"unknown": "<reason>"}`;
//! every section of a layer is its content or `{"not_run": "<reason>"}`. Nothing is left
//! empty. JSON or YAML by the file's extension, written atomically; the JSON Schema is
//! [`schema`] (`nodeimg schema --record`).

use super::{BlueprintRef, Outcome, Report};
use crate::blueprint::Spec;
use crate::blueprint::model::InjectionMode;
use crate::fault::{Action, FaultClass};
use crate::verify::checks::{CheckResult, Verdict as CheckVerdict};
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// `schema` of the record.
pub const SCHEMA: &str = "nodeimg.dev/acceptance-record/v1";

/// Why a layer's section is empty in a record `verify` wrote.
pub const LATER: &str = "not run yet: `nodeimg accept` fills layers 2-5 after the node joined";

// ---------------------------------------------------------------------------------------
// Fact and Run on the wire.

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Fact<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr<T> {
            Unknown { unknown: String },
            Known(T),
        }
        Ok(match Repr::deserialize(d)? {
            Repr::Unknown { unknown } => Fact::Unknown { reason: unknown },
            Repr::Known(v) => Fact::Known(v),
        })
    }
}

impl<T: JsonSchema> JsonSchema for Fact<T> {
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("Fact_{}", T::schema_name()))
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let known = generator.subschema_for::<T>();
        schemars::json_schema!({
            "description": "A value read from the machine, or why it is unknown.",
            "anyOf": [
                known,
                {
                    "type": "object",
                    "properties": {"unknown": {"type": "string"}},
                    "required": ["unknown"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// A section filled from evidence, or the reason it was not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Run<T> {
    NotRun { not_run: String },
    Done(T),
}

impl<T> Run<T> {
    pub fn not_run(reason: impl Into<String>) -> Self {
        Run::NotRun {
            not_run: reason.into(),
        }
    }

    pub fn done(&self) -> Option<&T> {
        match self {
            Run::Done(v) => Some(v),
            Run::NotRun { .. } => None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// The record.

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "NodeAcceptanceRecord")]
pub struct AcceptanceRecord {
    /// Always `nodeimg.dev/acceptance-record/v1`.
    pub schema: String,
    /// When layer 1 ran (RFC 3339, UTC).
    pub created_at: String,
    pub nodeimg_version: String,
    /// The node's host name (its Kubernetes node name after join).
    pub hostname: Fact<String>,
    pub blueprint: BlueprintIdentity,
    /// The image the node ran when layer 1 judged it (what `apply` kept of it): the
    /// evidence is bound to exactly this manifest.
    #[serde(default = "ImageIdentity::not_recorded")]
    pub image: Fact<ImageIdentity>,
    pub hardware: Hardware,
    pub firmware: Firmware,
    pub os: Os,
    pub runtime: Runtime,
    pub gpu: GpuSection,
    pub device_injection: DeviceInjection,
    pub network: Network,
    pub interconnect: Interconnect,
    /// Layer 1: the checks `nodeimg verify` ran.
    pub diagnostics: Diagnostics,
    /// The verdict of each acceptance layer.
    #[serde(default = "Layers::later")]
    pub layers: Layers,
    /// Layer 2: the Node object against the blueprint.
    #[serde(default)]
    pub kubernetes: Run<Kubernetes>,
    /// Layer 3: the devices a Pod received and a kernel it ran.
    #[serde(default)]
    pub device_container: Run<DeviceContainer>,
    /// Layer 4: DCGM diagnostics.
    #[serde(default)]
    pub dcgm: Run<Dcgm>,
    /// Layer 4: interconnect and storage figures.
    #[serde(default = "Baseline::later")]
    pub baseline: Baseline,
    /// Layer 5: representative training (framework steps other than inference).
    #[serde(default)]
    pub training: Run<Framework>,
    /// Layer 5: representative inference.
    #[serde(default)]
    pub inference: Run<Framework>,
    /// Every measured figure, by key (`nccl.all_reduce.busbw`, `rdma.mlx5_0.write`, ...):
    /// what the next record of this node is compared with.
    #[serde(default)]
    pub figures: BTreeMap<String, FigureValue>,
    /// Every verdict of layers 2–5.
    #[serde(default)]
    pub findings: Vec<Finding>,
    pub result: RecordResult,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_glass: Option<String>,
    /// Where the evidence is: the capture of a failed verify, or the URI given to accept.
    pub evidence: Option<String>,
}

fn later<T>() -> Run<T> {
    Run::not_run(LATER)
}

/// A section missing from a record read back is a layer not run yet.
impl<T> Default for Run<T> {
    fn default() -> Self {
        later()
    }
}

/// The blueprint a record was made against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlueprintIdentity {
    pub name: String,
    pub version: String,
    /// `sha256:…` of the resolved blueprint.
    pub id: String,
    pub file: String,
}

impl From<&BlueprintRef> for BlueprintIdentity {
    fn from(b: &BlueprintRef) -> Self {
        BlueprintIdentity {
            name: b.name.clone(),
            version: b.version.clone(),
            id: b.id.clone(),
            file: b.file.clone(),
        }
    }
}

/// The image a record was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImageIdentity {
    /// The image manifest digest (`sha256:…`).
    pub manifest: String,
    /// The signature's status: `verified`, `missing`, `untrusted-key`, `other-digest`,
    /// `other-identity` or `malformed`.
    pub signature: String,
    /// The id (`sha256:` of the SubjectPublicKeyInfo) of the key whose signature verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// The digest of the image's SBOM, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sbom: Option<String>,
}

impl ImageIdentity {
    fn not_recorded() -> Fact<ImageIdentity> {
        Fact::unknown("not recorded (a record from before images were named)")
    }

    /// The identity of the image in `facts`, as far as the node knows it.
    pub fn of(facts: &Facts) -> Fact<ImageIdentity> {
        facts.image.as_ref().map(|i| ImageIdentity {
            manifest: i.report.image.to_string(),
            signature: i.report.signature.word().to_owned(),
            signed_by: i.report.signer().map(|k| k.to_string()),
            sbom: i.report.sbom_digest.as_ref().map(|d| d.to_string()),
        })
    }
}

/// Overall result: every layer ran and passed, something failed, something required did
/// not run or could not be judged, or layer 1 failed and an operator overrode it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecordResult {
    Pass,
    Fail,
    Incomplete,
    Overridden,
}

impl RecordResult {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordResult::Pass => "pass",
            RecordResult::Fail => "fail",
            RecordResult::Incomplete => "incomplete",
            RecordResult::Overridden => "overridden",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hardware {
    pub vendor: Fact<String>,
    pub product: Fact<String>,
    pub sku: Fact<String>,
    pub serial: Fact<String>,
    pub board: Fact<String>,
    pub board_serial: Fact<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Firmware {
    pub bios_vendor: Fact<String>,
    pub bios_version: Fact<String>,
    pub bios_date: Fact<String>,
    pub bmc: Fact<String>,
    /// VBIOS per GPU address.
    pub gpu_vbios: BTreeMap<String, Fact<String>>,
    /// Firmware per RDMA device.
    pub nic: BTreeMap<String, Fact<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Os {
    pub pretty_name: Fact<String>,
    pub kernel: Fact<String>,
    pub cmdline: Fact<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Runtime {
    pub containerd: Fact<String>,
    pub kubelet: Fact<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuDevice {
    pub address: String,
    pub name: Fact<String>,
    pub uuid: Fact<String>,
    pub serial: Fact<String>,
    /// Every check on this GPU passed.
    pub healthy: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GpuSection {
    pub count: usize,
    pub driver: Fact<String>,
    pub cuda: Fact<String>,
    pub devices: Vec<GpuDevice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceInjection {
    /// `device-plugin`, `dra` or `none`, as the blueprint declares.
    pub mode: String,
    pub version: Option<String>,
    pub operator: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NicEntry {
    pub name: String,
    pub driver: Fact<Option<String>>,
    pub speed_mbps: Fact<u32>,
    pub mtu: Fact<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Network {
    pub nics: Vec<NicEntry>,
    /// Versions of the RDMA / NIC kernel modules loaded (`mlx5_core`, `mlx5_ib`, ...).
    pub rdma_driver: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Interconnect {
    /// `address: xW @ speed (max)` for each GPU.
    pub pcie: BTreeMap<String, String>,
    pub nvswitches: usize,
    pub fabric_manager: Fact<String>,
    /// The slowest GPU pair measured over NVLink / xGMI, or why it is not known.
    pub nvlink: Fact<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostics {
    pub phase: String,
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub unreadable: usize,
    pub warnings: usize,
    /// Names of the checks that did not pass.
    pub not_passed: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Layers 2–5.

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
    fn later() -> Self {
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
    fn later() -> Self {
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

impl AcceptanceRecord {
    pub fn new(blueprint: &Spec, facts: &Facts, report: &Report, evidence: Option<&Path>) -> Self {
        let dmi = &facts.dmi;
        let gpus = &facts.gpus.gpus;
        let devices = gpus
            .iter()
            .map(|gpu| {
                let address = gpu.address.to_string();
                let entry =
                    |get: fn(&crate::verify::facts::nvidia_smi::NvidiaGpu) -> Fact<String>| {
                        match &gpu.nvidia {
                            Some(Fact::Known(n)) => get(n),
                            Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
                            None => match &gpu.amd {
                                Some(Fact::Known(_)) | None => {
                                    Fact::unknown("not reported by nvidia-smi")
                                }
                                Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
                            },
                        }
                    };
                let amd =
                    |get: fn(&crate::verify::facts::rocm_smi::AmdGpu) -> Fact<String>| match &gpu
                        .amd
                    {
                        Some(Fact::Known(a)) => Some(get(a)),
                        _ => None,
                    };
                GpuDevice {
                    healthy: report
                        .results
                        .iter()
                        .filter(|r| r.subject.as_deref() == Some(address.as_str()))
                        .all(|r| r.verdict == CheckVerdict::Pass),
                    name: amd(|a| a.product_name.clone())
                        .unwrap_or_else(|| entry(|n| n.product_name.clone())),
                    uuid: amd(|a| a.unique_id.clone()).unwrap_or_else(|| entry(|n| n.uuid.clone())),
                    serial: amd(|a| a.serial.clone())
                        .unwrap_or_else(|| entry(|n| n.serial.clone())),
                    address,
                }
            })
            .collect();
        let gpu_vbios = gpus
            .iter()
            .map(|gpu| {
                let vbios = match (&gpu.nvidia, &gpu.amd) {
                    (Some(n), _) => n.clone().and_then(|n| n.vbios_version),
                    (None, Some(a)) => a.clone().and_then(|a| a.vbios_version),
                    (None, None) => Fact::unknown("no vendor tool output"),
                };
                (gpu.address.to_string(), vbios.map(|v| v.to_string()))
            })
            .collect();
        let nic_firmware = match &facts.rdma_devices {
            Fact::Known(devices) => devices
                .iter()
                .map(|d| (d.name.clone(), d.fw_ver.clone().map(|v| v.to_string())))
                .collect(),
            Fact::Unknown { reason } => {
                BTreeMap::from([("*".to_owned(), Fact::unknown(reason.clone()))])
            }
        };
        let driver = match (&facts.gpus.nvidia_smi, &facts.gpus.rocm_smi) {
            (Some(_), _) | (None, None) => facts.modules.nvidia_driver.clone().map(|d| d.version),
            (None, Some(rocm)) => rocm.clone().and_then(|r| r.driver_version),
        }
        .map(|v| v.to_string());
        let cuda = match &facts.gpus.nvidia_smi {
            Some(summary) => summary.clone().and_then(|s| s.cuda_version),
            None => Fact::unknown("no NVIDIA GPU"),
        }
        .map(|v| v.to_string());
        let runtime = facts.runtime.as_ref();
        let pcie = gpus
            .iter()
            .filter_map(|gpu| {
                let device = gpu.pci.known()?;
                let link = &device.link;
                let width = link
                    .current_width
                    .known()
                    .map_or("?".to_owned(), |w| format!("x{w}"));
                let max = link
                    .max_speed
                    .known()
                    .map_or("?".to_owned(), |s| format!("{} GT/s", s.gt_per_s));
                let now = link
                    .current_speed
                    .known()
                    .map_or("?".to_owned(), |s| format!("{} GT/s", s.gt_per_s));
                Some((
                    gpu.address.to_string(),
                    format!("{width} @ {now} (max {max})"),
                ))
            })
            .collect();
        let injection = &blueprint.kubernetes.device_injection;
        let counts = &report.counts;
        let gpu_links = blueprint
            .accelerators
            .as_ref()
            .is_some_and(|a| a.interconnect.gpu_links);
        let layer1 = match report.outcome {
            Outcome::Pass => Verdict::Pass,
            Outcome::Fail | Outcome::Overridden => Verdict::Fail,
        };
        AcceptanceRecord {
            schema: SCHEMA.to_owned(),
            created_at: report.started_at.clone(),
            nodeimg_version: report.nodeimg_version.clone(),
            hostname: facts.hostname.clone(),
            image: ImageIdentity::of(facts),
            blueprint: BlueprintIdentity::from(&report.blueprint),
            hardware: Hardware {
                vendor: dmi.sys_vendor.clone(),
                product: dmi.product_name.clone(),
                sku: dmi.product_sku.clone(),
                serial: dmi.product_serial.clone(),
                board: dmi.board_name.clone(),
                board_serial: dmi.board_serial.clone(),
            },
            firmware: Firmware {
                bios_vendor: dmi.bios_vendor.clone(),
                bios_version: dmi.bios_version.clone(),
                bios_date: dmi.bios_date.clone(),
                bmc: Fact::unknown("not readable from the host (needs IPMI or Redfish)"),
                gpu_vbios,
                nic: nic_firmware,
            },
            os: Os {
                pretty_name: facts.os.clone().and_then(|os| os.pretty_name),
                kernel: facts.kernel.release.clone(),
                cmdline: facts.kernel.cmdline.clone().map(|c| c.raw),
            },
            runtime: Runtime {
                containerd: runtime
                    .as_ref()
                    .and_then(|r| r.containerd_version.as_ref().map(ToString::to_string)),
                kubelet: runtime
                    .as_ref()
                    .and_then(|r| r.kubelet_version.as_ref().map(ToString::to_string)),
            },
            gpu: GpuSection {
                count: gpus.iter().filter(|g| g.pci.is_known()).count(),
                driver,
                cuda,
                devices,
            },
            device_injection: DeviceInjection {
                mode: match injection.mode {
                    InjectionMode::None => "none",
                    InjectionMode::DevicePlugin => "device-plugin",
                    InjectionMode::Dra => "dra",
                }
                .to_owned(),
                version: injection.version.as_ref().map(ToString::to_string),
                operator: blueprint
                    .accelerators
                    .as_ref()
                    .and_then(|a| a.operator.as_ref())
                    .map(|o| {
                        let name = serde_json::to_value(o.name)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default();
                        format!("{name} {}", o.version)
                    }),
            },
            network: Network {
                nics: facts
                    .nics
                    .known()
                    .map(|nics| {
                        nics.iter()
                            .filter(|n| n.pci_address.known().is_some_and(Option::is_some))
                            .map(|n| NicEntry {
                                name: n.name.clone(),
                                driver: n.driver.clone(),
                                speed_mbps: n.speed_mbps.clone(),
                                mtu: n.mtu.clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                rdma_driver: facts
                    .modules
                    .versions
                    .known()
                    .map(|v| {
                        v.iter()
                            .filter(|(name, _)| {
                                name.starts_with("mlx")
                                    || name.starts_with("ib_")
                                    || name.starts_with("rdma")
                                    || name.as_str() == "nvidia_peermem"
                            })
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            interconnect: Interconnect {
                pcie,
                nvswitches: facts.gpus.nvswitches.len(),
                fabric_manager: runtime.and_then(|r| {
                    r.units
                        .get("nvidia-fabricmanager")
                        .cloned()
                        .unwrap_or_else(|| Fact::unknown("not collected"))
                }),
                nvlink: if gpu_links {
                    Fact::unknown(format!(
                        "measured by layer 4 (nvbandwidth device to device): {LATER}"
                    ))
                } else {
                    Fact::unknown(
                        "no GPU links: the blueprint declares none (accelerators.interconnect.gpuLinks)",
                    )
                },
            },
            diagnostics: Diagnostics {
                phase: report.phase.clone(),
                total: counts.total,
                passed: counts.passed,
                failed: counts.failed,
                unreadable: counts.errors,
                warnings: counts.warnings,
                not_passed: report
                    .results
                    .iter()
                    .filter(|r| r.verdict != CheckVerdict::Pass)
                    .map(CheckResult::name)
                    .collect(),
            },
            layers: Layers {
                hardware_driver: Run::Done(LayerResult {
                    result: layer1,
                    checks: counts.total,
                    not_passed: report
                        .results
                        .iter()
                        .filter(|r| r.blocks())
                        .map(CheckResult::name)
                        .collect(),
                    at: report.started_at.clone(),
                }),
                kubernetes: later(),
                device_container: later(),
                interconnect: later(),
                framework: later(),
            },
            kubernetes: later(),
            device_container: later(),
            dcgm: later(),
            baseline: Baseline::later(),
            training: later(),
            inference: later(),
            figures: BTreeMap::new(),
            findings: Vec::new(),
            result: match report.outcome {
                Outcome::Fail => RecordResult::Fail,
                Outcome::Overridden => RecordResult::Overridden,
                // Layer 1 alone never accepts a node: layers 2–5 are still to run.
                Outcome::Pass => RecordResult::Incomplete,
            },
            break_glass: report.break_glass.clone(),
            evidence: evidence.map(|p| p.display().to_string()),
        }
    }

    /// Writes layer 2 as `nodeimg verify --phase cluster` judged it: the Node's section,
    /// the layer's verdict and its findings (replacing earlier layer-2 findings; those of
    /// layers 3–5 stay), then the overall result again. Layer 1 stays as it is.
    pub fn set_kubernetes_layer(
        &mut self,
        kubernetes: Kubernetes,
        findings: Vec<Finding>,
        at: &str,
    ) {
        let verdict = match findings.iter().map(|f| f.verdict).min() {
            None | Some(Verdict::NotRun) => Verdict::Incomplete,
            Some(v) => v,
        };
        self.layers.kubernetes = Run::Done(LayerResult {
            result: verdict,
            checks: findings.len(),
            not_passed: findings
                .iter()
                .filter(|f| f.verdict != Verdict::Pass)
                .map(Finding::name)
                .collect(),
            at: at.to_owned(),
        });
        self.kubernetes = Run::Done(kubernetes);
        self.findings.retain(|f| f.layer != Layer::Kubernetes);
        self.findings.extend(findings);
        let layer1 = self.layers.hardware_driver.done().map(|l| l.result);
        let later = self.findings.iter().map(|f| f.verdict).min();
        // Layers 3-5 that `accept` has not judged yet keep the node from passing.
        let pending = [
            &self.layers.device_container,
            &self.layers.interconnect,
            &self.layers.framework,
        ]
        .iter()
        .any(|l| matches!(l, Run::NotRun { not_run } if not_run == LATER));
        let overridden = self.result == RecordResult::Overridden;
        self.result = match (layer1, later) {
            (Some(Verdict::Fail), _) if !overridden => RecordResult::Fail,
            (_, Some(Verdict::Fail)) => RecordResult::Fail,
            (Some(Verdict::Fail), _) => RecordResult::Overridden,
            (None, _) | (_, Some(Verdict::Incomplete | Verdict::NotRun)) => {
                RecordResult::Incomplete
            }
            _ if pending || verdict != Verdict::Pass => RecordResult::Incomplete,
            _ => RecordResult::Pass,
        };
    }

    /// YAML for `.yaml`/`.yml` files, JSON otherwise.
    pub fn render_for(&self, path: &Path) -> Result<String, String> {
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        if is_yaml(path) {
            let tree: yaml::Tree = serde_json::from_str(&json).map_err(|e| e.to_string())?;
            Ok(tree.to_yaml())
        } else {
            Ok(json + "\n")
        }
    }

    /// Reads a record (JSON, or YAML for `.yaml`/`.yml`), refusing another schema.
    pub fn parse(text: &str, path: &Path) -> Result<Self, String> {
        let value: serde_json::Value = if is_yaml(path) {
            crate::blueprint::source::parse(text)
                .map_err(|e| match e.pos {
                    Some(p) => format!("line {}: {}", p.line, e.message),
                    None => e.message,
                })?
                .value
        } else {
            serde_json::from_str(text).map_err(|e| format!("line {}: {e}", e.line()))?
        };
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA) => {}
            Some(other) => return Err(format!("schema `{other}`: this version reads `{SCHEMA}`")),
            None => return Err("no `schema`: not an acceptance record".to_owned()),
        }
        let mut track = serde_path_to_error::Track::new();
        let de = serde_path_to_error::Deserializer::new(value, &mut track);
        AcceptanceRecord::deserialize(de).map_err(|e| format!("{}: {}", track.path(), e))
    }
}

fn is_yaml(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Block YAML in the record's field order (a `serde_json::Value` would sort the keys).
mod yaml {
    use crate::render::escape::yaml_string;
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    pub enum Tree {
        Scalar(String),
        Seq(Vec<Tree>),
        Map(Vec<(String, Tree)>),
    }

    impl<'de> Deserialize<'de> for Tree {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Tree;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_unit<E>(self) -> Result<Tree, E> {
                    Ok(Tree::Scalar("null".into()))
                }
                fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
                    Ok(Tree::Scalar(v.to_string()))
                }
                fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
                    Ok(Tree::Scalar(v.to_string()))
                }
                fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
                    Ok(Tree::Scalar(v.to_string()))
                }
                fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
                    Ok(Tree::Scalar(
                        serde_json::Number::from_f64(v).map_or("null".into(), |n| n.to_string()),
                    ))
                }
                fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
                    Ok(Tree::Scalar(yaml_string(v)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                    let mut items = Vec::new();
                    while let Some(x) = a.next_element()? {
                        items.push(x);
                    }
                    Ok(Tree::Seq(items))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                    let mut items = Vec::new();
                    while let Some((k, v)) = a.next_entry::<String, Tree>()? {
                        items.push((k, v));
                    }
                    Ok(Tree::Map(items))
                }
            }
            d.deserialize_any(V)
        }
    }

    impl Tree {
        pub fn to_yaml(&self) -> String {
            let mut out = String::new();
            self.block(0, &mut out);
            out
        }

        fn inline(&self) -> Option<String> {
            match self {
                Tree::Scalar(s) => Some(s.clone()),
                Tree::Seq(v) if v.is_empty() => Some("[]".into()),
                Tree::Map(m) if m.is_empty() => Some("{}".into()),
                _ => None,
            }
        }

        fn block(&self, indent: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            match self {
                Tree::Map(items) => {
                    for (k, v) in items {
                        match v.inline() {
                            Some(s) => out.push_str(&format!("{pad}{}: {s}\n", yaml_string(k))),
                            None => {
                                out.push_str(&format!("{pad}{}:\n", yaml_string(k)));
                                v.block(indent + 2, out);
                            }
                        }
                    }
                }
                Tree::Seq(items) => {
                    for v in items {
                        match v.inline() {
                            Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                            None => {
                                let mut inner = String::new();
                                v.block(indent + 2, &mut inner);
                                out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                            }
                        }
                    }
                }
                Tree::Scalar(s) => out.push_str(&format!("{pad}{s}\n")),
            }
        }
    }
}

/// The record's JSON Schema (`nodeimg schema --record`).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(AcceptanceRecord)).expect("schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_and_runs_round_trip() {
        let f: Fact<String> = serde_json::from_str(r#"{"unknown": "no BMC"}"#).unwrap();
        assert_eq!(f, Fact::unknown("no BMC"));
        let f: Fact<u32> = serde_json::from_str("400").unwrap();
        assert_eq!(f, Fact::Known(400));
        let r: Run<Vec<u32>> = serde_json::from_str(r#"{"not_run": "later"}"#).unwrap();
        assert_eq!(r, Run::not_run("later"));
        assert_eq!(serde_json::to_string(&Run::<u32>::Done(3)).unwrap(), "3");
    }

    #[test]
    fn yaml_keeps_the_field_order_and_reads_back() {
        let json = r#"{"b": {"x": [1, {"k": "v: w"}, []], "a": {}}, "a": "0000:13:00.0"}"#;
        let tree: yaml::Tree = serde_json::from_str(json).unwrap();
        let text = tree.to_yaml();
        assert_eq!(
            text,
            "b:\n  x:\n    - 1\n    - k: \"v: w\"\n    - []\n  a: {}\na: \"0000:13:00.0\"\n"
        );
        let back = crate::blueprint::source::parse(&text).unwrap().value;
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(json).unwrap()
        );
    }

    #[test]
    fn the_schema_names_every_section() {
        let schema = schema();
        let text = schema.to_string();
        for section in [
            "layers",
            "kubernetes",
            "device_container",
            "dcgm",
            "baseline",
            "training",
            "inference",
            "figures",
            "findings",
            "not_run",
            "unknown",
        ] {
            assert!(text.contains(&format!("\"{section}\"")), "{section}");
        }
    }
}
