//! `firmware`: the BIOS policy and the firmware versions a node must run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Toggle;
use crate::blueprint::value::{AbsPath, VersionReq};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Firmware {
    #[serde(default)]
    pub bios: BiosPolicy,
    #[serde(default)]
    pub versions: FirmwareVersions,
    /// How verify reaches the BMC beyond IPMI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmc: Option<BmcAccess>,
}

/// How verify reads the BMC.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BmcAccess {
    /// The Redfish service on the host interface (SMBIOS type 42): its Manager's full
    /// `FirmwareVersion` instead of IPMI's major.minor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redfish: Option<RedfishAccess>,
}

/// Credentials for the BMC's Redfish service, as files on the node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RedfishAccess {
    /// A file on the node whose first line is `USER:PASSWORD` (HTTP Basic auth; a
    /// read-only Redfish role is enough). Read at each verify, never logged or recorded.
    pub credentials_file: AbsPath,
    /// PEM CA certificates the BMC's certificate must chain to (most BMCs' are
    /// self-signed: name it here); the node's trust store without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<AbsPath>,
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
