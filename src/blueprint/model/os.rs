//! `os`: distribution, patch level and the exact kernel.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{OneLine, Version};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Os {
    pub distro: Distro,
    /// Distribution release, e.g. `22.04` or `9.4` (quote it).
    pub version: Version,
    /// Patch level: a package snapshot date (`2026-11-15`) or a point release id.
    pub patch_level: OneLine,
    /// Exact kernel release as `uname -r` prints it, e.g. `5.15.0-126-generic`.
    pub kernel: Version,
    /// cgroup hierarchy; Kubernetes 1.35+ needs v2.
    #[serde(default)]
    pub cgroup: CgroupMode,
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
pub enum Distro {
    Ubuntu,
    Debian,
    Rhel,
    Rocky,
    Almalinux,
}

impl Distro {
    /// RHEL and its rebuilds share paths (trust store, grub, kernel packages).
    pub fn is_rhel_family(self) -> bool {
        matches!(self, Distro::Rhel | Distro::Rocky | Distro::Almalinux)
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CgroupMode {
    V1,
    #[default]
    V2,
}
