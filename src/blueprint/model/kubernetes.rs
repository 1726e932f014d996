//! `kubernetes`: version, declared node capacity, kubelet settings, device
//! injection (device plugin or DRA), NFD and platform labels, taints.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{
    ByteSize, CpuAmount, DomainName, LabelKey, LabelValue, Taint, Version,
};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kubernetes {
    /// Kubernetes (kubelet) release, e.g. `1.31.4`.
    pub version: Version,
    /// What the node has, for reservations and allocatable.
    pub capacity: Capacity,
    #[serde(default)]
    pub kubelet: Kubelet,
    #[serde(default)]
    pub device_injection: DeviceInjection,
    #[serde(default)]
    pub nfd: Nfd,
    /// Static labels the node registers with.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("propertyNames" = {"type": "string", "format": "label-key"}))]
    pub labels: BTreeMap<LabelKey, LabelValue>,
    /// Taints the node registers with (`key=value:Effect`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Capacity {
    /// Logical CPUs the kernel sees (with SMT on, twice the cores).
    pub cpu: u32,
    pub memory: ByteSize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_storage: Option<ByteSize>,
    /// NUMA nodes the kernel sees (sockets × NUMA nodes per socket); the
    /// Topology Manager rules compare pods' requests with one node's share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Kubelet {
    /// Pods per node (default 110); also feeds reservation policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_reserved: Option<Reservation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_reserved: Option<Reservation>,
    /// Hard eviction thresholds, e.g. `memory.available: 100Mi`, `nodefs.available: 10%`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub eviction_hard: BTreeMap<EvictionSignal, Threshold>,
    #[serde(default)]
    pub cgroup_driver: CgroupDriver,
    #[serde(default)]
    pub cpu_manager_policy: CpuManagerPolicy,
    #[serde(default)]
    pub topology_manager_policy: TopologyManagerPolicy,
    #[serde(default)]
    pub topology_manager_scope: TopologyManagerScope,
    #[serde(default)]
    pub memory_manager_policy: MemoryManagerPolicy,
    /// The cluster DNS service's addresses pods with `dnsPolicy: ClusterFirst`
    /// resolve through (kubelet `clusterDNS`). Leave unset where the bootstrap
    /// writes them (kubeadm does).
    #[serde(default, rename = "clusterDNS", skip_serializing_if = "Vec::is_empty")]
    pub cluster_dns: Vec<std::net::IpAddr>,
    /// The cluster's DNS domain (kubelet `clusterDomain`), e.g. `cluster.local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_domain: Option<DomainName>,
    /// Further KubeletConfiguration fields, checked against the known fields of
    /// the pinned Kubernetes version. Fields the typed settings own are refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_config: BTreeMap<String, serde_json::Value>,
}

/// Resources held back from pods: a named policy, explicit values, or both
/// (explicit values override the policy's).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<ReservationPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<ByteSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_storage: Option<ByteSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReservationPolicy {
    /// Amazon EKS: CPU bands; memory 11 MiB × maxPods + 255 MiB; 1Gi ephemeral storage.
    Eks,
    /// GKE: CPU bands; memory 25/20/10/6/2 % bands.
    Gke,
    /// Only the explicit values given.
    Static,
}

#[derive(
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
pub enum EvictionSignal {
    #[serde(rename = "memory.available")]
    #[strum(serialize = "memory.available")]
    MemoryAvailable,
    #[serde(rename = "nodefs.available")]
    #[strum(serialize = "nodefs.available")]
    NodefsAvailable,
    #[serde(rename = "nodefs.inodesFree")]
    #[strum(serialize = "nodefs.inodesFree")]
    NodefsInodesFree,
    #[serde(rename = "imagefs.available")]
    #[strum(serialize = "imagefs.available")]
    ImagefsAvailable,
    #[serde(rename = "imagefs.inodesFree")]
    #[strum(serialize = "imagefs.inodesFree")]
    ImagefsInodesFree,
    #[serde(rename = "containerfs.available")]
    #[strum(serialize = "containerfs.available")]
    ContainerfsAvailable,
    #[serde(rename = "pid.available")]
    #[strum(serialize = "pid.available")]
    PidAvailable,
}

impl EvictionSignal {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Eviction thresholds are a value type; named here too for the model's readers.
pub use crate::blueprint::value::Threshold;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CgroupDriver {
    #[default]
    Systemd,
    Cgroupfs,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CpuManagerPolicy {
    #[default]
    None,
    Static,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyManagerPolicy {
    #[default]
    None,
    BestEffort,
    Restricted,
    SingleNumaNode,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TopologyManagerScope {
    #[default]
    Container,
    Pod,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum MemoryManagerPolicy {
    #[default]
    None,
    Static,
}

/// How pods get devices.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceInjection {
    /// Required (not `none`) when accelerators are declared, even when the operator deploys the plugin.
    #[serde(default)]
    pub mode: InjectionMode,
    /// Device plugin or DRA driver release, e.g. `0.17.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Version>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InjectionMode {
    /// No devices to inject (CPU-only).
    #[default]
    None,
    DevicePlugin,
    Dra,
}

/// Node Feature Discovery and the mapping of vendor labels to stable platform labels.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Nfd {
    /// The NFD release (chart and image) that labels this node class, e.g. `0.18.2`: pinned in the rendered Helm values. When the GPU operator deploys NFD, the release its chart bundles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Version>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<NfdSource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub platform_labels: Vec<PlatformLabel>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NfdSource {
    Cpu,
    Kernel,
    Memory,
    Network,
    Pci,
    Storage,
    System,
    Usb,
    Custom,
    Local,
}

/// Sets a stable platform label when NFD-discovered features match — the
/// mapping from what the vendor hardware reports to what schedulers use.
/// Rendered as a NodeFeatureRule.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlatformLabel {
    /// Platform label to set, e.g. `platform.example.com/accelerator`.
    pub to: LabelKey,
    pub value: LabelValue,
    /// Every match must hold (NFD `matchFeatures`).
    pub when: Vec<FeatureMatch>,
}

/// One NFD feature expression: `pci.device` `vendor` In `[10de]`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureMatch {
    /// NFD feature, `<source>.<feature>`: `pci.device`, `kernel.loadedmodule`, `cpu.model`, `rdma.available`.
    pub feature: String,
    /// Attribute of the feature, e.g. `vendor`, `device`, `class`, or a module name.
    pub attribute: String,
    pub op: MatchOp,
    /// Values for In/NotIn (one or more), Gt/Lt (one), GtLt (two); none for the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum MatchOp {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
    GtLt,
    IsTrue,
    IsFalse,
}
