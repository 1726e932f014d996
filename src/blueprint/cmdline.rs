//! The kernel command line a blueprint asks for: the arguments its typed fields imply
//! (IOMMU mode, cgroup mode, hugepages, nouveau off) followed by the explicitly required
//! ones. Rendering writes it; verify compares the running kernel's `/proc/cmdline` with
//! it. Every argument is a [`KernelArg`], so both read it the same way.

use super::model::*;
use super::value::KernelArg;
use std::fmt;

/// One argument the blueprint asks for, and the field that asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    pub arg: KernelArg,
    /// `boot.iommu`, `boot.kernelArgs.required[0]`, ...
    pub from: String,
}

impl fmt::Display for Wanted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.arg.fmt(f)
    }
}

fn implied_arg(name: &'static str, value: impl fmt::Display, from: &str) -> Wanted {
    Wanted {
        arg: KernelArg::typed(name, value),
        from: from.to_owned(),
    }
}

/// Arguments implied by typed fields, in a fixed order. Crate-only: the rules
/// call it on the model they are checking; outside, [`full`] takes the checked spec.
pub(crate) fn implied(bp: &RawBlueprint) -> Vec<Wanted> {
    let mut out = Vec::new();
    // `intel_iommu=on` turns on VT-d (off by default in most distro
    // kernels) and is ignored on AMD; AMD-Vi is on whenever the BIOS enables
    // it, and `amd_iommu` has no `on` value (kernel-parameters.txt).
    match bp.boot.iommu {
        IommuMode::KernelDefault => {}
        IommuMode::Off => out.push(implied_arg("iommu", "off", "boot.iommu")),
        IommuMode::On => out.push(implied_arg("intel_iommu", "on", "boot.iommu")),
        IommuMode::Passthrough => {
            out.push(implied_arg("intel_iommu", "on", "boot.iommu"));
            out.push(implied_arg("iommu", "pt", "boot.iommu"));
        }
    }
    let unified = match bp.os.cgroup {
        CgroupMode::V2 => 1,
        CgroupMode::V1 => 0,
    };
    out.push(implied_arg(
        "systemd.unified_cgroup_hierarchy",
        unified,
        "os.cgroup",
    ));
    if bp
        .accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        out.push(implied_arg(
            "rd.driver.blacklist",
            "nouveau",
            "accelerators.vendor",
        ));
        out.push(implied_arg(
            "modprobe.blacklist",
            "nouveau",
            "accelerators.vendor",
        ));
    }
    // The BIOS power profile's OS half: with `performance` the CPU
    // frequency governor starts as `performance` (Linux 5.9+); other
    // profiles keep the kernel's default governor.
    if bp
        .firmware
        .as_ref()
        .and_then(|f| f.bios.power_profile)
        .is_some_and(|p| p == PowerProfile::Performance)
    {
        out.push(implied_arg(
            "cpufreq.default_governor",
            "performance",
            "firmware.bios.powerProfile",
        ));
    }
    for (i, pool) in bp.boot.hugepages.iter().enumerate() {
        let from = format!("boot.hugepages[{i}]");
        let size = hugepage_size_arg(pool).unwrap_or_else(|| pool.size.to_string());
        if i == 0 {
            out.push(implied_arg("default_hugepagesz", &size, &from));
        }
        out.push(implied_arg("hugepagesz", &size, &from));
        out.push(implied_arg("hugepages", pool.count, &from));
    }
    out
}

/// `2M` / `1G` as the kernel spells hugepage sizes; `None` for other sizes.
pub fn hugepage_size_arg(pool: &HugepagePool) -> Option<String> {
    match pool.size.units_ceil() {
        0x20_0000 => Some("2M".into()),
        0x4000_0000 => Some("1G".into()),
        _ => None,
    }
}

/// The explicitly required arguments, each with its field.
pub(crate) fn required(bp: &RawBlueprint) -> Vec<Wanted> {
    bp.boot
        .kernel_args
        .required
        .iter()
        .enumerate()
        .map(|(i, arg)| Wanted {
            arg: arg.clone(),
            from: format!("boot.kernelArgs.required[{i}]"),
        })
        .collect()
}

/// The full command line: implied arguments, then required ones not already present.
pub fn full(bp: &super::Spec) -> Vec<Wanted> {
    let mut out = implied(bp);
    for wanted in required(bp) {
        if !out.iter().any(|o| o.arg.same_setting(&wanted.arg)) {
            out.push(wanted);
        }
    }
    out
}
