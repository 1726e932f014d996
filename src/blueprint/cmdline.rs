//! The kernel command line a blueprint asks for: the arguments its typed
//! fields imply (IOMMU mode, cgroup mode, hugepages, nouveau off) followed by
//! the explicitly required ones. Rendering writes it; verify compares the
//! running kernel's `/proc/cmdline` with it.

use super::model::*;

/// One argument, `name` or `name=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    pub name: String,
    pub value: Option<String>,
    /// Which blueprint field asks for it.
    pub from: String,
}

impl KernelArg {
    pub fn parse(text: &str, from: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("empty kernel argument".into());
        }
        if let Some(c) = text
            .chars()
            .find(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | '#' | ';' | '$' | '`'))
        {
            return Err(format!(
                "kernel argument `{}` contains {c:?}; one argument per list item, no quoting",
                text.escape_debug()
            ));
        }
        let (name, value) = match text.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(format!("kernel argument `{text}` has no name"));
        }
        Ok(Self {
            name: name.to_string(),
            value,
            from: from.to_string(),
        })
    }

    /// Same argument name (kernel treats `-` and `_` alike in parameter names).
    pub fn same_name(&self, other: &KernelArg) -> bool {
        norm(&self.name) == norm(&other.name)
    }
}

fn norm(s: &str) -> String {
    s.replace('-', "_")
}

impl std::fmt::Display for KernelArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.value {
            Some(v) => write!(f, "{}={v}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

fn arg(text: &str, from: &str) -> KernelArg {
    KernelArg::parse(text, from).expect("implied arguments are well formed")
}

/// Arguments implied by typed fields, in a fixed order.
pub fn implied(bp: &RawBlueprint) -> Vec<KernelArg> {
    let mut out = Vec::new();
    // `intel_iommu=on` turns on VT-d (off by default in most distro
    // kernels) and is ignored on AMD; AMD-Vi is on whenever the BIOS enables
    // it, and `amd_iommu` has no `on` value (kernel-parameters.txt).
    match bp.boot.iommu {
        IommuMode::KernelDefault => {}
        IommuMode::Off => out.push(arg("iommu=off", "boot.iommu")),
        IommuMode::On => out.push(arg("intel_iommu=on", "boot.iommu")),
        IommuMode::Passthrough => {
            out.push(arg("intel_iommu=on", "boot.iommu"));
            out.push(arg("iommu=pt", "boot.iommu"));
        }
    }
    match bp.os.cgroup {
        CgroupMode::V2 => out.push(arg("systemd.unified_cgroup_hierarchy=1", "os.cgroup")),
        CgroupMode::V1 => out.push(arg("systemd.unified_cgroup_hierarchy=0", "os.cgroup")),
    }
    if bp
        .accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        out.push(arg("rd.driver.blacklist=nouveau", "accelerators.vendor"));
        out.push(arg("modprobe.blacklist=nouveau", "accelerators.vendor"));
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
        out.push(arg(
            "cpufreq.default_governor=performance",
            "firmware.bios.powerProfile",
        ));
    }
    for (i, pool) in bp.boot.hugepages.iter().enumerate() {
        let from = format!("boot.hugepages[{i}]");
        let size = hugepage_size_arg(pool).unwrap_or_else(|| pool.size.to_string());
        if i == 0 {
            out.push(arg(&format!("default_hugepagesz={size}"), &from));
        }
        out.push(arg(&format!("hugepagesz={size}"), &from));
        out.push(arg(&format!("hugepages={}", pool.count), &from));
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

/// The full command line: implied arguments, then required ones not already present.
pub fn full(bp: &RawBlueprint) -> Vec<KernelArg> {
    let mut out = implied(bp);
    for (i, text) in bp.boot.kernel_args.required.iter().enumerate() {
        if let Ok(a) = KernelArg::parse(text, &format!("boot.kernelArgs.required[{i}]"))
            && !out.iter().any(|o| o.same_name(&a) && o.value == a.value)
        {
            out.push(a);
        }
    }
    out
}
