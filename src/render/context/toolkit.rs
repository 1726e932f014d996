//! `toolkit`: the NVIDIA Container Toolkit on the host
//! (`etc/nvidia-container-runtime/config.toml`) and the udev rule that keeps
//! `/dev/char` links for the GPU device nodes.

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::model::*;

#[derive(Debug, Clone, Serialize)]
pub struct Toolkit<'a> {
    /// `cdi` when CDI specs are generated on the node, else `auto`.
    pub mode: &'static str,
    pub cdi_kind: &'static str,
    pub spec_dirs: Vec<&'a str>,
    /// The driver is the image's, so the image keeps `/dev/char` links
    /// (`nvidia-ctk system create-dev-char-symlinks`).
    pub dev_char_links: bool,
}

/// The toolkit on the host: NVIDIA GPUs whose operator, if any, does not
/// deploy the toolkit.
pub(super) fn of(s: &Spec) -> Option<Toolkit<'_>> {
    let a = s.accelerators.as_ref()?;
    let operator_owned = a
        .operator
        .as_ref()
        .is_some_and(|o| o.manages.contains(&OperatorComponent::Toolkit));
    if a.vendor != Vendor::Nvidia || operator_owned {
        return None;
    }
    let cdi = &s.runtime.cdi;
    Some(Toolkit {
        mode: if cdi.enabled && cdi.generator == CdiGenerator::NvidiaCtk {
            "cdi"
        } else {
            "auto"
        },
        cdi_kind: "nvidia.com/gpu",
        spec_dirs: cdi.spec_dirs.iter().map(|d| d.as_str()).collect(),
        dev_char_links: a.driver.authority == DriverAuthority::Preinstalled,
    })
}
