//! `firmware`: the BIOS policy and the firmware versions a node must run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Toggle;
use crate::blueprint::value::VersionReq;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Firmware {
    #[serde(default)]
    pub bios: BiosPolicy,
    #[serde(default)]
    pub versions: FirmwareVersions,
}

/// BIOS/UEFI setup settings the node must have.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BiosPolicy {
    /// VT-d / AMD-Vi.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iommu: Option<Toggle>,
    /// Above 4G decoding (needed for large GPU BARs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above4g_decoding: Option<Toggle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resizable_bar: Option<Toggle>,
    /// Simultaneous multithreading (Hyper-Threading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<Toggle>,
    /// NUMA nodes per socket (NPS1, NPS2, NPS4 on AMD; SNC on Intel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_per_socket: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_profile: Option<PowerProfile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_boot: Option<Toggle>,
    /// Kernel module signature policy; `enforce` needs signed GPU/NIC modules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_signing: Option<ModuleSigning>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PowerProfile {
    Performance,
    Balanced,
    PowerSaver,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModuleSigning {
    Enforce,
    Permissive,
}

/// Expected firmware versions (exact or constraints such as `>=2.10`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FirmwareVersions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bios: Option<VersionReq>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmc: Option<VersionReq>,
    /// GPU VBIOS, e.g. `96.00.99.00.01`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_vbios: Option<VersionReq>,
    /// NIC firmware, e.g. `28.39.1002`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic: Option<VersionReq>,
}
