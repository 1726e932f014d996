//! GPU operator values the chart can actually take: an operator-installed
//! driver is one image tag, not a range; the AMD GPU Operator building an
//! out-of-tree driver under Secure Boot's module-signature enforcement
//! needs the Secrets it signs with, and a repository to push the image to;
//! on a tainted node its driver pods (KMM's build and module-load pods) need
//! tolerations, which the DeviceConfig carries only from chart v1.3.1
//! ([`crate::blueprint::amd_chart`]).

use super::p;
use crate::blueprint::amd_chart::{self, Feature};
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;
use crate::blueprint::value::TaintEffect;

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
    driver_tolerations(bp, op, out);
    if op.driver_image.is_none() {
        out.warning(
            "driver-image",
            &p("accelerators.operator"),
            "the AMD GPU Operator builds the driver image and pushes it to DeviceConfig driver.image: set driverImage to a repository the nodes can pull from",
        );
    }
}

/// A chart whose DeviceConfig has no `spec.driver.tolerations` on a node whose taints
/// keep pods off (NoSchedule, NoExecute): KMM's build and worker pods are never scheduled
/// there, and amdgpu never loads. The API server would prune the field if it were
/// rendered, so the only fixes are a chart that has it or a driver the operator does not
/// build.
fn driver_tolerations(bp: &RawBlueprint, op: &Operator, out: &mut Collector<'_>) {
    let chart = amd_chart::table();
    if chart.has(&op.version, Feature::DriverTolerations) {
        return;
    }
    let Some(taint) = bp
        .kubernetes
        .taints
        .iter()
        .find(|t| t.effect != TaintEffect::PreferNoSchedule)
    else {
        return;
    };
    let since = chart.since(Feature::DriverTolerations);
    out.error(
        "amd-driver-tolerations",
        &p("accelerators.operator.version"),
        format!(
            "the AMD GPU Operator chart {} has no DeviceConfig spec.driver.tolerations (it arrives in {}): the KMM pods that build and load amdgpu never tolerate the node's taint `{taint}` (kubernetes.taints), so the driver never loads",
            op.version, since.version
        ),
    )
    .hint = Some(format!(
        "pin the chart {} or later, or preinstall the driver in the image (accelerators.driver.authority: preinstalled, and drop driver from accelerators.operator.manages)",
        since.version
    ));
}
