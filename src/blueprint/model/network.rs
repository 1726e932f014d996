//! `network`: NICs (model, count, speed, MTU, RDMA, firmware) and the
//! GPU↔NIC placement a multi-node job relies on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{DriverName, OneLine, Version, VersionReq};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Network {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<Nic>,
    #[serde(default)]
    pub affinity: Affinity,
    /// MLNX_OFED / DOCA-OFED release built into the image, e.g.
    /// `24.10-1.1.4.0`. Only with it is `nvidia_peermem` loaded; without it
    /// the inbox RDMA stack is used and GPUDirect RDMA goes through DMA-BUF
    /// (open NVIDIA kernel modules, Linux 5.12 or later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ofed: Option<Version>,
}

/// A group of identical NICs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Nic {
    /// What this group is for, e.g. `compute` or `frontend`.
    pub role: NicRole,
    /// Model, e.g. `ConnectX-7`.
    pub model: OneLine,
    pub count: u32,
    /// Link speed per port in Gb/s (400 for NDR).
    pub speed_gbps: u32,
    pub mtu: u32,
    pub link_layer: LinkLayer,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rdma: bool,
    /// Kernel driver, e.g. `mlx5_core`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<DriverName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<VersionReq>,
    /// SR-IOV virtual functions per port (needs the IOMMU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sriov_vfs: Option<u32>,
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
pub enum NicRole {
    Compute,
    Storage,
    Frontend,
    Management,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkLayer {
    Infiniband,
    Ethernet,
}

/// Where NICs must sit relative to GPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Affinity {
    /// Every GPU has a compute NIC on its own NUMA node.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_nic_same_numa: bool,
    /// Every GPU shares a PCIe switch with a compute NIC (GPUDirect RDMA).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gpu_nic_same_pcie_switch: bool,
}
