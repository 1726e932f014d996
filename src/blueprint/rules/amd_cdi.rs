//! AMD CDI specs by `amd-ctk cdi generate`. amd-ctk is the AMD Container
//! Toolkit's CLI (ROCm/container-toolkit), so the image must carry that
//! toolkit. It lists each GPU's DRM nodes as the driver exposes them, one
//! CDI device per GPU or compute partition, which a static spec cannot
//! (it assumes one render node per GPU, in probe order, which compute
//! partitioning breaks: a CPX GPU has a render node per partition).

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let Some(acc) = &bp.accelerators else {
        return;
    };
    let cdi = &bp.runtime.cdi;
    if acc.vendor != Vendor::Amd || !cdi.enabled || cdi.generator != CdiGenerator::AmdCtk {
        return;
    }
    if acc.container_toolkit.is_none() {
        out.error(
            "cdi-generator",
            &p("accelerators.containerToolkit"),
            "amd-ctk generates the CDI specs, so the image needs the AMD Container Toolkit (amd-ctk is its CLI); pin its version",
        );
    }
}
