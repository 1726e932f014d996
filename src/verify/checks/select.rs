//! Which checks a run keeps: the phase (`boot`, `driver`, `all`, `health`, `cluster`) and optional id
//! patterns (`--checks 'gpu.*,nic.rdma.*'`).
//!
//! `boot` runs before kubelet: every host check, plus the driver checks when the image
//! carries the driver (`authority: preinstalled`). `driver` runs the driver checks once an
//! operator-managed driver is up. `health` is the post-join device health subset that Node
//! Problem Detector runs periodically. Patterns match whole ids; `*` matches any run of
//! characters; a pattern starting with `!` excludes (`--checks '*,!runtime.kubelet.*'`).

use super::{Spec, Stage};
use serde::Serialize;

/// Which checks a run keeps (`--phase`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Phase {
    /// Before kubelet: host, firmware, PCIe, NICs, kernel, runtime; GPU driver checks too
    /// when the driver is preinstalled.
    Boot,
    /// After an operator-managed driver is up: the GPU driver, CDI.
    Driver,
    /// Both.
    All,
    /// Post-join device health subset (for Node Problem Detector).
    Health,
    /// After join, from anywhere with the Node object: acceptance layer 2 (capacity,
    /// allocatable, labels, taints, conditions, device components); no host check runs.
    Cluster,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Selection {
    pub phase: Phase,
    /// Id patterns (`--checks`); empty keeps every check of the phase.
    pub patterns: Vec<String>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            phase: Phase::All,
            patterns: Vec::new(),
        }
    }
}

impl Selection {
    /// Whether `spec` runs; `preinstalled` says the driver is in the image.
    pub fn includes(&self, spec: &Spec, preinstalled: bool) -> bool {
        let in_phase = match self.phase {
            Phase::All => spec.stage != Stage::Cluster,
            Phase::Boot => {
                spec.stage == Stage::Host || (preinstalled && spec.stage == Stage::Driver)
            }
            Phase::Driver => spec.stage == Stage::Driver,
            Phase::Health => spec.health,
            Phase::Cluster => spec.stage == Stage::Cluster,
        };
        let (exclude, include): (Vec<&String>, Vec<&String>) =
            self.patterns.iter().partition(|p| p.starts_with('!'));
        let included = include.is_empty() || include.iter().any(|p| glob(p, spec.id));
        let excluded = exclude.iter().any(|p| glob(&p[1..], spec.id));
        in_phase && included && !excluded
    }
}

/// `*`-only glob over the whole text.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_whole_ids() {
        assert!(glob("gpu.*", "gpu.pcie.link-width"));
        assert!(glob("gpu.pcie.link-width", "gpu.pcie.link-width"));
        assert!(!glob("gpu.pcie", "gpu.pcie.link-width"));
        assert!(glob("*.link-width", "nic.pcie.link-width"));
        assert!(glob("*pcie*", "nic.pcie.link-width"));
        assert!(!glob("nic.*", "gpu.count"));
        assert!(glob("*", "os.kernel.release"));
        assert!(!glob("a*a", "a"));
    }
}
