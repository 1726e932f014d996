//! `accelerators`: the GPUs, their links, their driver and who owns it.
//!
//! NVIDIA and AMD are both first-class: the vendor picks which toolkit
//! (`cuda` or `rocm`) and which interconnect fields apply, and nothing else
//! in the model is vendor-specific.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{
    DnsLabel, LinkWidth, MigProfile, OneLine, PcieGen, Version, VersionReq,
};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Accelerators {
    pub vendor: Vendor,
    /// Model name, e.g. `H100 SXM`, `H200 SXM`, `MI300X` (see the compatibility matrix;
    /// a known model is written with the matrix's spelling).
    pub model: OneLine,
    /// GPUs per node.
    pub count: u32,
    pub pcie: PcieLink,
    #[serde(default)]
    pub interconnect: Interconnect,
    pub driver: Driver,
    /// CUDA toolkit release the node's workloads need, e.g. `"12.8"`. Required for NVIDIA
    /// (it sets the minimum driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<Version>,
    /// ROCm release, e.g. `"6.2.4"`. Required for AMD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rocm: Option<Version>,
    /// Container toolkit that injects the GPUs (nvidia-container-toolkit or AMD container toolkit),
    /// installed in the image. NVIDIA: required unless the operator manages `toolkit`.
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
    /// PCIe generation: 1, 2, 3, 4, 5 or 6.
    pub generation: PcieGen,
    /// Lanes per link: 1, 2, 4, 8 or 16 (write 16, not x16).
    pub width: LinkWidth,
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
    /// Exact version (`570.124.06`): the driver baked into the image, or the one image tag
    /// the operator installs (a constraint such as `>=570.26, <571` is refused for the
    /// operator: its chart takes a tag).
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
    /// Chart/operator release, e.g. `v25.3.4`. An AMD GPU Operator chart before v1.3.1 has no
    /// driver tolerations (DeviceConfig `spec.driver.tolerations`): with an operator-built driver
    /// and a NoSchedule or NoExecute taint it is refused (the driver would never load).
    pub version: Version,
    /// Components the operator deploys on this node class.
    #[serde(default)]
    pub manages: Vec<OperatorComponent>,
    /// AMD GPU Operator building the driver: the registry repository KMM
    /// pushes the driver image it builds to (DeviceConfig `driver.image`),
    /// e.g. `registry.example.com/amdgpu-driver`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_image: Option<OneLine>,
    /// Secrets (in the operator's namespace) holding the key and
    /// certificate the operator signs the driver modules with (DeviceConfig
    /// `driver.imageSign`): required when Secure Boot enforces module signing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_signing: Option<SigningSecrets>,
}

/// Names of the Secrets holding a module-signing key and its certificate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SigningSecrets {
    pub key_secret: DnsLabel,
    pub cert_secret: DnsLabel,
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

/// How GPUs are shared between pods: `mode` decides which settings apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "mode",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase",
    try_from = "SharingFields"
)]
pub enum Sharing {
    /// One pod per GPU.
    None {},
    /// Multi-Instance GPU partitions.
    Mig {
        mig_profile: MigProfile,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mig_strategy: Option<MigStrategy>,
    },
    /// Time-sliced sharing: `replicas` pods per GPU.
    TimeSlicing { replicas: Replicas },
    /// CUDA MPS: `replicas` pods per GPU.
    Mps { replicas: Replicas },
}

impl Default for Sharing {
    fn default() -> Self {
        Sharing::None {}
    }
}

impl Sharing {
    /// Pods per GPU under time-slicing or MPS.
    pub fn replicas(&self) -> Option<u32> {
        match self {
            Sharing::TimeSlicing { replicas } | Sharing::Mps { replicas } => Some(replicas.get()),
            _ => None,
        }
    }

    /// The node labels that select this sharing on an NVIDIA node, for the
    /// kubelet to register with and `verify --phase cluster` to find: the
    /// MIG manager applies the mig-parted configuration that
    /// `nvidia.com/mig.config` names; the device plugin picks the key of its
    /// sharing ConfigMap that `nvidia.com/device-plugin.config` names (the
    /// node class, `config`). Label names as the GPU Operator documents them
    /// (gpu-operator/gpu-sharing.html, gpu-operator-mig.html).
    pub fn node_labels(&self, config: &str) -> Vec<(&'static str, String)> {
        match self {
            Sharing::None {} => Vec::new(),
            Sharing::Mig { mig_profile, .. } => {
                vec![(MIG_CONFIG_LABEL, mig_profile.as_str().to_owned())]
            }
            Sharing::TimeSlicing { .. } | Sharing::Mps { .. } => {
                vec![(DEVICE_PLUGIN_CONFIG_LABEL, config.to_owned())]
            }
        }
    }

    pub fn mode(&self) -> SharingMode {
        match self {
            Sharing::None {} => SharingMode::None,
            Sharing::Mig { .. } => SharingMode::Mig,
            Sharing::TimeSlicing { .. } => SharingMode::TimeSlicing,
            Sharing::Mps { .. } => SharingMode::Mps,
        }
    }
}

/// The node label the GPU Operator's MIG manager reads the wanted
/// mig-parted configuration from.
pub const MIG_CONFIG_LABEL: &str = "nvidia.com/mig.config";
/// The node label the NVIDIA device plugin reads the key of its
/// configuration ConfigMap from.
pub const DEVICE_PLUGIN_CONFIG_LABEL: &str = "nvidia.com/device-plugin.config";
/// The key of the device plugin's configuration ConfigMap that shares
/// nothing, beside each sharing class's own: the acceptance workloads that
/// need whole GPUs run on a node switched to it for their window. A class
/// key is the blueprint name, a DNS-1123 label, so the dot keeps every
/// class off this key (and it stays a valid ConfigMap key and label value).
pub const WHOLE_GPUS_CONFIG: &str = "nodeimg.whole-gpus";

/// `sharing` as written: `mode` may be left out (none).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SharingFields {
    #[serde(default)]
    mode: SharingMode,
    mig_profile: Option<MigProfile>,
    mig_strategy: Option<MigStrategy>,
    replicas: Option<Replicas>,
}

impl TryFrom<SharingFields> for Sharing {
    type Error = String;

    fn try_from(f: SharingFields) -> Result<Self, String> {
        let stray = |names: &[(&str, bool)]| {
            names
                .iter()
                .find(|(_, set)| *set)
                .map(|(n, _)| format!("`{n}` does not apply to sharing mode `{}`", f.mode.as_str()))
        };
        let (mig, rep) = (
            f.mig_profile.is_some() || f.mig_strategy.is_some(),
            f.replicas.is_some(),
        );
        match f.mode {
            SharingMode::None => match stray(&[("migProfile", mig), ("replicas", rep)]) {
                Some(e) => Err(e),
                None => Ok(Sharing::None {}),
            },
            SharingMode::Mig => match (f.mig_profile, stray(&[("replicas", rep)])) {
                (_, Some(e)) => Err(e),
                (None, _) => Err("mode mig needs `migProfile` (e.g. all-1g.10gb)".into()),
                (Some(mig_profile), None) => Ok(Sharing::Mig {
                    mig_profile,
                    mig_strategy: f.mig_strategy,
                }),
            },
            SharingMode::TimeSlicing | SharingMode::Mps => {
                match (f.replicas, stray(&[("migProfile", mig)])) {
                    (_, Some(e)) => Err(e),
                    (None, _) => Err("time-slicing and MPS need `replicas` (2 or more)".into()),
                    (Some(replicas), None) if f.mode == SharingMode::Mps => {
                        Ok(Sharing::Mps { replicas })
                    }
                    (Some(replicas), None) => Ok(Sharing::TimeSlicing { replicas }),
                }
            }
        }
    }
}

/// The schema states which settings go with which mode, so a wrong
/// combination is reported at its line like any structural error.
impl JsonSchema for Sharing {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Sharing")
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let described = |mut s: schemars::Schema, text: &str| {
            s.insert("description".into(), text.into());
            s
        };
        let mut mode = described(
            g.subschema_for::<SharingMode>(),
            "How GPUs are shared; decides which of the settings below apply.",
        );
        mode.insert("default".into(), "none".into());
        let profile = described(
            g.subschema_for::<MigProfile>(),
            "MIG configuration applied to every GPU, e.g. `all-1g.10gb`. Required with mode `mig`.",
        );
        let strategy = described(
            g.subschema_for::<MigStrategy>(),
            "MIG strategy exposed to Kubernetes (mode `mig`; the operator's default is single).",
        );
        let replicas = described(
            g.subschema_for::<Replicas>(),
            "Pods per GPU, 2 or more. Required with modes `time-slicing` and `mps`.",
        );
        let is = |m: &str| serde_json::json!({"properties": {"mode": {"const": m}}, "required": ["mode"]});
        schemars::json_schema!({
            "description": "How GPUs are shared between pods.",
            "type": "object",
            "properties": {
                "mode": mode,
                "migProfile": profile,
                "migStrategy": strategy,
                "replicas": replicas,
            },
            "additionalProperties": false,
            "allOf": [
                {"if": is("mig"), "then": {"required": ["migProfile"], "properties": {"replicas": false}}},
                {"if": is("time-slicing"), "then": {"required": ["replicas"], "properties": {"migProfile": false, "migStrategy": false}}},
                {"if": is("mps"), "then": {"required": ["replicas"], "properties": {"migProfile": false, "migStrategy": false}}},
                {"if": {"not": {"required": ["mode"]}}, "then": {"properties": {"migProfile": false, "migStrategy": false, "replicas": false}}},
                {"if": is("none"), "then": {"properties": {"migProfile": false, "migStrategy": false, "replicas": false}}},
            ],
        })
    }
}

/// Pods per GPU when sharing by time-slicing or MPS: 2 or more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Replicas(u32);

impl Replicas {
    pub fn get(self) -> u32 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Replicas {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u32::deserialize(d)? {
            n if n >= 2 => Ok(Self(n)),
            n => Err(serde::de::Error::custom(format!(
                "replicas is {n}; sharing a GPU needs 2 or more"
            ))),
        }
    }
}

impl JsonSchema for Replicas {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Replicas")
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "minimum": 2, "maximum": 4294967295u64})
    }
}

/// The sharing modes, for code that only asks which one is in use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SharingMode {
    #[default]
    None,
    Mig,
    TimeSlicing,
    Mps,
}

impl SharingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SharingMode::None => "none",
            SharingMode::Mig => "mig",
            SharingMode::TimeSlicing => "time-slicing",
            SharingMode::Mps => "mps",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MigStrategy {
    Single,
    Mixed,
}
