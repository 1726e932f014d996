//! `runtime`: containerd (version, directories, default runtime, registries)
//! and CDI (where specs live, who writes them, when they refresh, rollback).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{AbsPath, MirrorUrl, RegistryHost, TomlKeyPath, Version};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Runtime {
    pub containerd: Containerd,
    #[serde(default)]
    pub cdi: Cdi,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Containerd {
    /// containerd release, e.g. `1.7.22` or `2.0.4` (decides the config format).
    pub version: Version,
    /// Persistent data directory.
    #[serde(default = "default_root")]
    pub root: AbsPath,
    /// Runtime state directory.
    #[serde(default = "default_state")]
    pub state: AbsPath,
    /// Runtime handler pods get by default. With CDI, `runc` (the `nvidia`
    /// handler stays registered for a RuntimeClass).
    #[serde(default)]
    pub default_runtime: DefaultRuntime,
    /// Pod sandbox (pause) image, pinned so containerd never garbage-collects
    /// it; default `registry.k8s.io/pause` at the tag kubeadm uses for the
    /// pinned Kubernetes minor. Name a mirror here on air-gapped sites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_image: Option<String>,
    /// Extra sandboxed runtimes to register; each gets a RuntimeClass
    /// `<handler>-<class>` (`cluster/runtime-classes/`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_runtimes: Vec<ExtraRuntime>,
    /// Registry mirrors and private CAs, one entry per registry host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registries: Vec<Registry>,
    /// Further config.toml settings as dotted TOML keys (`plugins."io.containerd.cri.v1.images".max_concurrent_downloads`),
    /// checked per key against the settings of the config version the pinned containerd reads (2 for 1.x,
    /// 3 for 2.x). Keys the typed fields own, and tables that hold them, are refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[serde(deserialize_with = "crate::blueprint::value::unique_keys")]
    #[schemars(extend("propertyNames" = {"type": "string", "format": "toml-key-path"}))]
    pub extra_config: BTreeMap<TomlKeyPath, serde_json::Value>,
}

fn default_root() -> AbsPath {
    AbsPath::from_const("/var/lib/containerd")
}

fn default_state() -> AbsPath {
    AbsPath::from_const("/run/containerd")
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DefaultRuntime {
    #[default]
    Runc,
    /// The NVIDIA runtime (needs NVIDIA accelerators).
    Nvidia,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExtraRuntime {
    /// Kata Containers (VM-isolated pods; needs the IOMMU for device passthrough).
    Kata,
    Gvisor,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Registry {
    /// Registry host as images name it, e.g. `docker.io` or `registry.corp:5000`.
    pub host: RegistryHost,
    /// Mirror endpoints tried in order before the host itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mirrors: Vec<MirrorUrl>,
    /// CA certificate (PEM) for this registry, relative to the blueprint file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<crate::blueprint::value::RelPath>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cdi {
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Directories containerd reads CDI specs from.
    #[serde(default = "default_spec_dirs")]
    pub spec_dirs: Vec<AbsPath>,
    /// Who writes the specs. Required (not `none`) when accelerators are declared and CDI is enabled.
    #[serde(default)]
    pub generator: CdiGenerator,
    /// When the specs are regenerated.
    #[serde(default = "default_refresh")]
    pub refresh_on: Vec<CdiRefresh>,
    /// What happens when regeneration fails.
    #[serde(default)]
    pub rollback: CdiRollback,
}

impl Default for Cdi {
    fn default() -> Self {
        Self {
            enabled: true,
            spec_dirs: default_spec_dirs(),
            generator: CdiGenerator::default(),
            refresh_on: default_refresh(),
            rollback: CdiRollback::default(),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_spec_dirs() -> Vec<AbsPath> {
    vec![
        AbsPath::from_const("/etc/cdi"),
        AbsPath::from_const("/var/run/cdi"),
    ]
}

fn default_refresh() -> Vec<CdiRefresh> {
    vec![CdiRefresh::Boot, CdiRefresh::DriverChange]
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CdiGenerator {
    /// `nvidia-ctk cdi generate` on the node, before kubelet.
    NvidiaCtk,
    /// `amd-ctk cdi generate` on the node, before kubelet.
    AmdCtk,
    /// The GPU operator's toolkit container writes them.
    Operator,
    /// nodeimg writes a static spec into the image (AMD GPUs: `/dev/kfd`
    /// and one render node per GPU). NVIDIA specs depend on the installed
    /// driver's files and need nvidia-ctk.
    Static,
    /// No generator: no CDI specs (CPU-only nodes).
    #[default]
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CdiRefresh {
    /// At every boot, before kubelet.
    Boot,
    /// When the driver's kernel module changes (module load / package update).
    DriverChange,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CdiRollback {
    /// Keep the previous spec when generation fails, and fail the unit.
    #[default]
    KeepPrevious,
    /// Remove the spec when generation fails (pods then fail to start).
    Remove,
}
