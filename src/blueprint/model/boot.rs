//! `boot`: kernel command line (required and forbidden arguments), IOMMU mode
//! and hugepages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{ByteSize, KernelArg};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Boot {
    #[serde(default)]
    pub kernel_args: KernelArgs,
    /// Kernel IOMMU mode. `passthrough` (`iommu=pt`) is what GPU and RDMA
    /// nodes use; `kernel-default` adds no argument and leaves the mode to
    /// the kernel and firmware.
    #[serde(default)]
    pub iommu: IommuMode,
    /// Hugepage pools reserved at boot (rendered as kernel arguments).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hugepages: Vec<HugepagePool>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KernelArgs {
    /// Arguments that must be on the command line: `name` or `name=value`. Verify reads
    /// `/proc/cmdline` as the kernel does: the last occurrence wins, numbers compare by
    /// value (`0x1` is `1`), `-` and `_` are alike in names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<KernelArg>,
    /// Arguments that must not be: `name` (any value) or `name=value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<KernelArg>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IommuMode {
    /// No IOMMU argument: the kernel's and firmware's default (AMD-Vi is on
    /// when the BIOS enables it; VT-d depends on the kernel build).
    #[default]
    #[serde(rename = "kernel-default")]
    KernelDefault,
    /// IOMMU disabled.
    Off,
    /// IOMMU on with DMA translation for every device.
    On,
    /// IOMMU on, host devices in passthrough (`iommu=pt`).
    Passthrough,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HugepagePool {
    /// Page size: `2Mi` or `1Gi`.
    pub size: ByteSize,
    /// Number of pages.
    pub count: u32,
}
