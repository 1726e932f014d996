//! GPU operator values the chart can actually take: an operator-installed
//! driver is one image tag, not a range; the AMD GPU Operator building an
//! out-of-tree driver under Secure Boot's module-signature enforcement
//! needs the Secrets it signs with, and a repository to push the image to.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let Some(acc) = &bp.accelerators else {
        return;
    };
    let Some(op) = &acc.operator else {
        return;
    };
    if !op.manages.contains(&OperatorComponent::Driver) {
        return;
    }
    // NVIDIA's chart takes `driver.version` as the tag of
    // nvcr.io/nvidia/driver (`580.105.08` → `580.105.08-ubuntu22.04`); the
    // AMD DeviceConfig's `driver.version` is one ROCm release. A range
    // would be passed through as a tag that does not exist.
    if acc.driver.version.exact().is_none() {
        out.error(
            "operator-driver-version",
            &p("accelerators.driver.version"),
            format!(
                "the operator installs one driver image, tagged with an exact version; `{}` is a range (pin it, e.g. `570.124.06`)",
                acc.driver.version
            ),
        );
    }
    if acc.vendor != Vendor::Amd {
        return;
    }
    let enforced = bp.firmware.as_ref().is_some_and(|f| {
        f.bios.secure_boot == Some(Toggle::Enabled)
            && f.bios.module_signing == Some(ModuleSigning::Enforce)
    });
    if enforced && op.module_signing.is_none() {
        out.error(
            "module-signing",
            &p("accelerators.operator"),
            "Secure Boot enforces module signatures, and the operator builds amdgpu: name the Secrets it signs with (moduleSigning: {keySecret, certSecret}), or the module never loads",
        );
    }
    if op.driver_image.is_none() {
        out.warning(
            "driver-image",
            &p("accelerators.operator"),
            "the AMD GPU Operator builds the driver image and pushes it to DeviceConfig driver.image: set driverImage to a repository the nodes can pull from",
        );
    }
}
