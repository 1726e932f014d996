//! `accelerators`: the GPUs, their links, their driver and who owns it.
//!
//! NVIDIA and AMD are both first-class: the vendor picks which toolkit
//! (`cuda` or `rocm`) and which interconnect fields apply, and nothing else
//! in the model is vendor-specific.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{Version, VersionReq};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Accelerators {
    pub vendor: Vendor,
    /// Model name, e.g. `H100 SXM`, `H200 SXM`, `MI300X` (see the compatibility matrix).
    pub model: String,
    /// GPUs per node.
    pub count: u32,
    pub pcie: PcieLink,
    #[serde(default)]
    pub interconnect: Interconnect,
    pub driver: Driver,
    /// CUDA toolkit release the node's workloads need (NVIDIA), e.g. `12.4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<Version>,
    /// ROCm release (AMD), e.g. `6.2.4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rocm: Option<Version>,
    /// Container toolkit that injects the GPUs (nvidia-container-toolkit or AMD container toolkit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_toolkit: Option<Version>,
    /// The GPU operator, when one runs on the cluster for this node class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<Operator>,
    #[serde(default)]
    pub sharing: Sharing,
    /// ECC must be enabled on every GPU.
    #[serde(default = "yes")]
    pub ecc_required: bool,
    /// Persistence mode (NVIDIA) must be on.
    #[serde(default = "yes")]
    pub persistence: bool,
    /// Hand GPUs to VMs through VFIO instead of the host driver.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vfio_passthrough: bool,
}

fn yes() -> bool {
    true
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
}

impl Vendor {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// PCI vendor id as sysfs prints it.
    pub fn pci_id(self) -> &'static str {
        match self {
            Vendor::Nvidia => "0x10de",
            Vendor::Amd => "0x1002",
        }
    }
}

/// The PCIe link each GPU must train to under load.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PcieLink {
    /// PCIe generation (1–6).
    pub generation: u8,
    /// Lane count: 1, 2, 4, 8 or 16.
    pub width: u8,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Interconnect {
    /// GPU-to-GPU NVLink (NVIDIA) or Infinity Fabric/xGMI (AMD) links present.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_links: bool,
    /// NVSwitch baseboard (HGX/DGX); needs Fabric Manager.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nvswitch: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_manager: Option<FabricManager>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FabricManager {
    /// Must equal the driver version.
    pub version: Version,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Driver {
    /// Exact version when preinstalled; exact or a constraint when the operator installs it.
    pub version: VersionReq,
    /// Exactly one component owns the kernel driver.
    pub authority: DriverAuthority,
    /// NVIDIA kernel module flavour (`open` is required on Blackwell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_module: Option<KernelModule>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DriverAuthority {
    /// Baked into the image; the operator must not install a driver.
    Preinstalled,
    /// Installed by the GPU operator's driver container; the image carries none.
    Operator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KernelModule {
    Open,
    Proprietary,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Operator {
    pub name: OperatorName,
    /// Chart/operator release, e.g. `v25.3.4`.
    pub version: Version,
    /// Components the operator deploys on this node class.
    #[serde(default)]
    pub manages: Vec<OperatorComponent>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OperatorName {
    GpuOperator,
    AmdGpuOperator,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum OperatorComponent {
    Driver,
    Toolkit,
    DevicePlugin,
    DraDriver,
    DcgmExporter,
    MetricsExporter,
    MigManager,
    NodeFeatureDiscovery,
    GpuFeatureDiscovery,
}

/// How GPUs are shared between pods.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sharing {
    #[serde(default)]
    pub mode: SharingMode,
    /// MIG profile applied to every GPU, e.g. `all-1g.10gb` (mode `mig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_profile: Option<String>,
    /// MIG strategy exposed to Kubernetes (mode `mig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_strategy: Option<MigStrategy>,
    /// Pods per GPU (modes `time-slicing` and `mps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SharingMode {
    #[default]
    None,
    Mig,
    TimeSlicing,
    Mps,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MigStrategy {
    Single,
    Mixed,
}
