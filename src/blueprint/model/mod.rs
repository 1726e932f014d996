//! The blueprint as written: serde types with `deny_unknown_fields`, one file
//! per section, each field documented (the docs become the JSON Schema and the
//! README's blueprint reference).
//!
//! Anyone can deserialise or build these types; nothing downstream takes them.
//! [`crate::blueprint::load_file`] (and [`crate::blueprint::load_bytes`]) check the
//! structure against the schema, every leaf value's syntax and every semantic rule,
//! then wrap the model in a [`crate::blueprint::Spec`] inside a
//! [`crate::blueprint::Blueprint`]: render, verify, accept and the record take those.

mod accelerators;
pub mod acceptance;
mod boot;
mod firmware;
mod kubernetes;
mod network;
mod os;
pub mod rollout;
mod runtime;
mod security;
mod system;

pub use accelerators::*;
pub use acceptance::Acceptance;
pub use boot::*;
pub use firmware::*;
pub use kubernetes::*;
pub use network::*;
pub use os::*;
pub use rollout::Rollout;
pub use runtime::*;
pub use security::*;
pub use system::*;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::value::{AbsPath, DnsLabel, FileMode, ImageVersion, RelPath};

/// The only apiVersion this release reads.
pub const API_VERSION: &str = "nodeimg.dev/v1alpha1";

/// A pinned, declarative description of one kind of GPU Kubernetes node.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "NodeBlueprint")]
pub struct RawBlueprint {
    /// Always `nodeimg.dev/v1alpha1`.
    pub api_version: ApiVersion,
    /// Always `NodeBlueprint`.
    pub kind: Kind,
    pub metadata: Metadata,
    pub os: Os,
    #[serde(default)]
    pub boot: Boot,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<Firmware>,
    /// Absent on a CPU-only node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerators: Option<Accelerators>,
    #[serde(default)]
    pub network: Network,
    pub runtime: Runtime,
    pub kubernetes: Kubernetes,
    #[serde(default)]
    pub system: System,
    #[serde(default)]
    pub security: Security,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Files>,
    /// After join: the acceptance workloads rendered into `cluster/acceptance/` (images
    /// pinned by digest, the DCGM level, the multi-node engine) and how `nodeimg accept`
    /// judges their outputs (required tests, threshold overrides, regression tolerance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<Acceptance>,
    /// How a new image reaches the fleet (failure domains, wave budget, canaries, the
    /// upgrade engine) and how a bad node is remediated by fault class; nothing on the node
    /// changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<Rollout>,
}

impl RawBlueprint {
    /// GPUDirect RDMA registers GPU memory through DMA-BUF on this node class: NVIDIA
    /// GPUs, RDMA NICs and no pinned OFED. Without MLNX_OFED/DOCA-OFED there is no
    /// `nvidia_peermem` (it needs OFED's peer-memory symbols), so DMA-BUF is the only
    /// path; it needs the open kernel modules and a kernel with DMA-BUF (Linux 5.12+).
    /// Verify checks those (`gpudirect.dma-buf.*`) and acceptance requires perftest's
    /// GPU runs to say `using DMA-BUF`.
    pub fn gpudirect_dma_buf(&self) -> bool {
        self.accelerators
            .as_ref()
            .is_some_and(|a| a.vendor == Vendor::Nvidia)
            && self.network.ofed.is_none()
            && self.network.nics.iter().any(|n| n.rdma)
    }

    /// The node labels that select the GPUs' sharing (NVIDIA only; the
    /// device plugin's sharing key is the node class's name).
    pub fn sharing_labels(&self) -> Vec<(&'static str, String)> {
        self.accelerators
            .as_ref()
            .filter(|a| a.vendor == Vendor::Nvidia)
            .map(|a| a.sharing.node_labels(self.metadata.name.as_str()))
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApiVersion {
    #[serde(rename = "nodeimg.dev/v1alpha1")]
    V1alpha1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Kind {
    NodeBlueprint,
}

/// Who this blueprint is and which revision.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metadata {
    /// DNS-1123 label naming the node class, e.g. `h100-sxm-ubuntu`.
    pub name: DnsLabel,
    /// The blueprint's own revision, e.g. `2026.11.1`; also the image tag
    /// `nodeimg build` writes by default, so it follows the OCI tag grammar.
    pub version: ImageVersion,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A folder copied verbatim into the image layer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Files {
    /// Folder relative to the blueprint file; its tree maps onto `/`.
    pub overlay: RelPath,
    /// Modes for overlay files (default 0644, or 0755 when the source is executable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modes: Vec<FileModeOverride>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileModeOverride {
    /// Path on the node, e.g. `/usr/local/bin/gpu-burn-in`.
    pub path: AbsPath,
    pub mode: FileMode,
}

/// `enabled` / `disabled` switches, as BIOS setup screens name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Toggle {
    Enabled,
    Disabled,
}
