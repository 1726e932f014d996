//! The IOMMU must be on — in the kernel and in the BIOS — when SR-IOV, Kata
//! or VFIO passthrough is asked for; without it those features fail at
//! runtime with errors far from the cause.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let mut needs = Vec::new();
    for (i, nic) in bp.network.nics.iter().enumerate() {
        if nic.sriov_vfs.is_some_and(|n| n > 0) {
            needs.push((
                format!("SR-IOV on network.nics[{i}]"),
                p("network.nics").index(i).key("sriovVfs"),
            ));
        }
    }
    if bp
        .runtime
        .containerd
        .extra_runtimes
        .contains(&ExtraRuntime::Kata)
    {
        needs.push((
            "Kata Containers".into(),
            p("runtime.containerd.extraRuntimes"),
        ));
    }
    if bp.accelerators.as_ref().is_some_and(|a| a.vfio_passthrough) {
        needs.push(("VFIO passthrough".into(), p("accelerators.vfioPassthrough")));
    }
    for (what, path) in &needs {
        if matches!(bp.boot.iommu, IommuMode::Off | IommuMode::KernelDefault) {
            let mode = if bp.boot.iommu == IommuMode::Off {
                "off"
            } else {
                "the kernel's default (VT-d is off in most distro kernels)"
            };
            out.error(
                "iommu",
                &p("boot.iommu"),
                format!("{what} needs the IOMMU, but boot.iommu is {mode}"),
            )
            .hint = Some(format!(
                "set boot.iommu to `passthrough` or `on`; asked for at {path}"
            ));
        }
        let bios = bp.firmware.as_ref().and_then(|f| f.bios.iommu);
        if bios == Some(Toggle::Disabled) {
            out.error(
                "iommu",
                &p("firmware.bios.iommu"),
                format!("{what} needs VT-d/AMD-Vi, but the BIOS policy disables it"),
            )
            .hint = Some(format!("asked for at {path}"));
        }
    }
    if matches!(bp.boot.iommu, IommuMode::On | IommuMode::Passthrough)
        && bp.firmware.as_ref().and_then(|f| f.bios.iommu) == Some(Toggle::Disabled)
    {
        out.warning(
            "iommu",
            &p("boot.iommu"),
            "the kernel is told to use the IOMMU, but the BIOS policy disables VT-d/AMD-Vi",
        );
    }
}
