//! What a change means for a running fleet: reboot the node, drain it and
//! restart a daemon, or apply it live. Two visible tables — blueprint paths
//! and rendered file paths — each row a prefix and its impact; the first
//! matching row wins, so specific prefixes come before general ones.

use serde::Serialize;

/// Ordered: a set of changes has the impact of its worst member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Impact {
    /// Applies without touching workloads (labels, logrotate, sysctl, verify expectations).
    Live,
    /// Drain the node, restart a daemon (containerd, kubelet), uncordon.
    Drain,
    /// Drain and reboot (kernel, kernel arguments, driver, firmware/BIOS policy).
    Reboot,
}

impl Impact {
    pub fn as_str(self) -> &'static str {
        match self {
            Impact::Live => "live",
            Impact::Drain => "drain",
            Impact::Reboot => "reboot",
        }
    }
}

/// Blueprint path prefix → impact and why.
pub const FIELDS: &[(&str, Impact, &str)] = &[
    ("metadata", Impact::Live, "metadata only"),
    (
        "os.cgroup",
        Impact::Reboot,
        "cgroup hierarchy is chosen at boot",
    ),
    ("os", Impact::Reboot, "OS packages and kernel"),
    ("boot", Impact::Reboot, "kernel command line"),
    ("firmware.versions", Impact::Reboot, "firmware update"),
    ("firmware", Impact::Reboot, "BIOS policy"),
    ("accelerators.driver", Impact::Reboot, "GPU driver"),
    (
        "accelerators.interconnect",
        Impact::Reboot,
        "Fabric Manager must match the driver",
    ),
    (
        "accelerators.vfioPassthrough",
        Impact::Reboot,
        "driver binding",
    ),
    (
        "accelerators.cuda",
        Impact::Live,
        "workload requirement, checked at validation",
    ),
    ("accelerators.rocm", Impact::Reboot, "ROCm stack"),
    (
        "accelerators.containerToolkit",
        Impact::Drain,
        "container runtime hook (restart containerd)",
    ),
    (
        "accelerators.sharing",
        Impact::Drain,
        "GPU partitioning (MIG reconfiguration resets GPUs)",
    ),
    (
        "accelerators.operator",
        Impact::Live,
        "cluster-side operator values",
    ),
    ("accelerators", Impact::Live, "verification expectations"),
    (
        "network.nics.sriovVfs",
        Impact::Reboot,
        "SR-IOV virtual functions",
    ),
    ("network", Impact::Live, "verification expectations"),
    (
        "runtime",
        Impact::Drain,
        "containerd configuration (restart containerd)",
    ),
    ("kubernetes.labels", Impact::Live, "node labels"),
    ("kubernetes.nfd", Impact::Live, "feature discovery rules"),
    (
        "kubernetes.taints",
        Impact::Drain,
        "taints apply when kubelet registers the node",
    ),
    (
        "kubernetes",
        Impact::Drain,
        "kubelet configuration (restart kubelet)",
    ),
    ("system.partitions", Impact::Reboot, "disk layout"),
    ("system", Impact::Live, "system services"),
    (
        "security",
        Impact::Live,
        "sshd, audit and sysctl reload live",
    ),
    ("files", Impact::Live, "overlay files"),
];

/// Rendered file prefix (`layer/…`, `cluster/…`) → impact and why.
pub const FILES: &[(&str, Impact, &str)] = &[
    (
        "layer/etc/default/grub.d/",
        Impact::Reboot,
        "kernel command line",
    ),
    (
        "layer/etc/kernel/cmdline",
        Impact::Reboot,
        "kernel command line",
    ),
    (
        "layer/etc/modprobe.d/",
        Impact::Reboot,
        "kernel module options",
    ),
    (
        "layer/etc/modules-load.d/",
        Impact::Reboot,
        "modules loaded at boot",
    ),
    ("layer/usr/lib/repart.d/", Impact::Reboot, "disk layout"),
    ("layer/etc/containerd/", Impact::Drain, "restart containerd"),
    ("layer/var/lib/kubelet/", Impact::Drain, "restart kubelet"),
    (
        "layer/etc/systemd/system/kubelet.service.d/",
        Impact::Drain,
        "restart kubelet",
    ),
    (
        "layer/etc/systemd/system/nodeimg-cdi-generate.service",
        Impact::Drain,
        "CDI specs regenerate before pods start",
    ),
    (
        "layer/etc/nodeimg/",
        Impact::Live,
        "verification expectations",
    ),
    ("layer/", Impact::Live, "reloads live"),
    ("cluster/", Impact::Live, "cluster-side objects"),
];

fn first<'a>(
    table: &'a [(&str, Impact, &str)],
    path: &str,
    boundary: fn(&str, &str) -> bool,
) -> (Impact, &'a str) {
    table
        .iter()
        .find(|(prefix, _, _)| boundary(path, prefix))
        .map(|(_, i, why)| (*i, *why))
        .unwrap_or((Impact::Drain, "unclassified change"))
}

/// Impact of a change at a blueprint path (`kubernetes.kubelet.maxPods`,
/// `network.nics[0].sriovVfs`; list indexes are ignored for matching).
pub fn of_field(path: &str) -> (Impact, &'static str) {
    let plain: String = {
        let mut out = String::new();
        let mut depth = 0;
        for c in path.chars() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                c if depth == 0 => out.push(c),
                _ => {}
            }
        }
        out
    };
    first(FIELDS, &plain, |p, prefix| {
        p == prefix || p.starts_with(&format!("{prefix}."))
    })
}

/// Impact of a changed rendered file.
pub fn of_file(path: &str) -> (Impact, &'static str) {
    first(FILES, path, |p, prefix| p.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies() {
        assert_eq!(of_field("os.kernel").0, Impact::Reboot);
        assert_eq!(of_field("boot.kernelArgs.required").0, Impact::Reboot);
        assert_eq!(of_field("accelerators.driver.version").0, Impact::Reboot);
        assert_eq!(of_field("network.nics[0].sriovVfs").0, Impact::Reboot);
        assert_eq!(of_field("network.nics[0].mtu").0, Impact::Live);
        assert_eq!(of_field("runtime.containerd.version").0, Impact::Drain);
        assert_eq!(of_field("kubernetes.kubelet.maxPods").0, Impact::Drain);
        assert_eq!(of_field("kubernetes.labels[\"a/b\"]").0, Impact::Live);
        assert_eq!(of_field("system.logs.rotate[0].keep").0, Impact::Live);
        assert_eq!(of_file("layer/etc/kernel/cmdline").0, Impact::Reboot);
        assert_eq!(of_file("layer/etc/containerd/config.toml").0, Impact::Drain);
        assert_eq!(of_file("layer/etc/logrotate.d/nodeimg").0, Impact::Live);
        assert!(Impact::Reboot > Impact::Drain && Impact::Drain > Impact::Live);
    }
}
