//! The record's schema, its top and layer 1: what the node is (hardware SKU and serial,
//! firmware, OS, kernel, runtime, driver, GPUs, NICs, links), what the blueprint declares
//! around it (operator, device plugin or DRA), the checks `nodeimg verify` ran, and the
//! overall result. Every machine value is a [`Fact`].

use super::layers::{
    Baseline, Dcgm, DeviceContainer, FigureValue, Finding, Framework, Kubernetes, Layers,
};
use super::wire::Run;
use crate::fault::{Action, FaultClass};
use crate::verify::fact::Fact;
use crate::verify::report::BlueprintRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    pub fn of(facts: &crate::verify::facts::Facts) -> Fact<ImageIdentity> {
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
    /// What each check that did not pass asks for: its fault class, its action (from the
    /// vendor's catalog, or the site's override, which `observed` then names) and what
    /// was observed (a kernel-log event group with its count).
    #[serde(default)]
    pub actions: Vec<CheckAction>,
}

/// One layer-1 check that did not pass, with the action it asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckAction {
    /// `id` or `id[subject]`.
    pub check: String,
    pub fault: FaultClass,
    pub action: Action,
    pub observed: String,
}
