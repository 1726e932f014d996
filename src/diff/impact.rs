//! What a blueprint field change means for a running fleet: reboot the
//! node, drain it and restart a daemon, or apply it live. One visible table
//! of blueprint path prefixes, the first matching row wins, so specific
//! prefixes come before general ones; each row's sentence is what that
//! field's change does on the node, and `diff`'s summary gives the changed
//! fields' sentences, not those of the files they render into. Rendered files carry their impact in
//! the plan (`render::plan`), so a new output cannot come without one.

use crate::blueprint::model::SharingMode;
pub use crate::render::plan::Impact;

/// Blueprint path prefix → impact and why.
pub const FIELDS: &[(&str, Impact, &str)] = &[
    ("metadata", Impact::Live, "metadata only"),
    (
        "os.cgroup",
        Impact::Reboot,
        "cgroup hierarchy is chosen at boot",
    ),
    ("os", Impact::Reboot, "OS packages and kernel"),
    (
        "boot.kernelArgs.forbidden",
        Impact::Live,
        "forbidden kernel arguments are what verify looks for in /proc/cmdline; the command line itself does not change, so nothing reboots",
    ),
    (
        "boot.kernelArgs.required",
        Impact::Reboot,
        "kernel argument: the boot entries are rewritten when the image is applied (update-grub on Debian and Ubuntu, grubby on the RHEL family); the running kernel keeps its command line until the node reboots",
    ),
    (
        "boot.hugepages",
        Impact::Reboot,
        "hugepage pools are kernel arguments, reserved at the next boot (1Gi pages cannot be had reliably from fragmented memory)",
    ),
    ("boot", Impact::Reboot, "kernel command line: reboot"),
    ("firmware.versions", Impact::Reboot, "firmware update"),
    ("firmware", Impact::Reboot, "BIOS policy"),
    (
        "accelerators.driver.version",
        Impact::Reboot,
        "GPU driver version: the image replaces the kernel modules and the user-space libraries together, and the loaded modules stay the old ones until the node reboots (Fabric Manager and the persistence daemon are held at the same version)",
    ),
    (
        "accelerators.driver.kernelModule",
        Impact::Reboot,
        "GPU kernel module flavour (open or proprietary): another module package, loaded at the next boot",
    ),
    ("accelerators.driver", Impact::Reboot, "GPU driver: reboot"),
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
        "container runtime hook",
    ),
    (
        "accelerators.sharing",
        Impact::Drain,
        "GPU partitioning: MIG reconfiguration resets GPUs",
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
        "containerd configuration: restart containerd",
    ),
    (
        "kubernetes.labels",
        Impact::Live,
        "node labels: --node-labels applies when the Node is registered; kubectl label the existing nodes",
    ),
    ("kubernetes.nfd", Impact::Live, "feature discovery rules"),
    (
        "kubernetes.kubelet.cpuManagerPolicy",
        Impact::Drain,
        "CPU manager policy: delete /var/lib/kubelet/cpu_manager_state before kubelet restarts",
    ),
    (
        "kubernetes.kubelet.memoryManagerPolicy",
        Impact::Drain,
        "memory manager policy: delete /var/lib/kubelet/memory_manager_state before kubelet restarts",
    ),
    (
        "kubernetes.taints",
        Impact::Drain,
        "taints apply when kubelet registers the node",
    ),
    (
        "kubernetes.kubelet.maxPods",
        Impact::Drain,
        "restart kubelet: the Node's pod capacity changes (and, under the eks or gke reservation policy, the kubeReserved memory computed from it); a limit below the pods already running lets kubelet reject the newest of them at restart (OutOfpods), hence the drain",
    ),
    (
        "kubernetes",
        Impact::Drain,
        "kubelet configuration: restart kubelet",
    ),
    ("system.partitions", Impact::Reboot, "disk layout"),
    (
        "system.shmSize",
        Impact::Live,
        "cluster-side /dev/shm policy: pods created afterwards",
    ),
    ("system", Impact::Live, "system services"),
    (
        "security.sysctls",
        Impact::Live,
        "kernel parameter: `sysctl --system` applies /etc/sysctl.d/90-nodeimg.conf live; running processes see the new value at once, nothing restarts",
    ),
    (
        "security",
        Impact::Live,
        "sshd, audit and sysctl reload live",
    ),
    (
        "files",
        Impact::Live,
        "where the overlay is read from and its modes (each overlay file that changes is listed with its own impact)",
    ),
    (
        "acceptance",
        Impact::Live,
        "acceptance workloads and how `nodeimg accept` judges; nothing on the node changes",
    ),
    (
        "rollout",
        Impact::Live,
        "how rollouts and remediation run (cluster-side objects); nothing on the node changes",
    ),
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
        .unwrap_or((Impact::Reboot, "unclassified change"))
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

/// An overlay file that changed: nodeimg does not know what reads it, so it
/// is the most disruptive change, as a rendered file without a declared
/// impact is.
pub const OVERLAY_FILE: (Impact, &str) = (
    Impact::Reboot,
    "overlay file: nodeimg cannot tell what reads it, so it counts as a reboot",
);

/// The GPU driver under `accelerators.driver` when the GPU operator owns
/// it on both sides: the image does not carry it, the operator rolls it.
pub const OPERATOR_DRIVER: (Impact, &str) = (
    Impact::Live,
    "the GPU operator owns the driver and rolls it by the rendered driver.upgradePolicy (one failure domain's wave budget of nodes at a time, each drained first); the image does not change; `rollout plan` stages it by its waves where the operator can hold a node (NVIDIA: the operator's skip label holds the nodes, each wave releases its own, the gate asks the records for the new driver; the AMD GPU Operator has no such hold, so its upgrades run beside the waves and `rollout plan` warns)",
);

/// A change under `accelerators.sharing`, by the modes on either side: MIG
/// repartitions (the MIG manager resets every GPU, so the node is drained
/// first); time-slicing, MPS and none are the device plugin's
/// configuration, which it reloads by restarting while running pods keep
/// the GPUs they were allocated.
pub fn of_sharing(old: SharingMode, new: SharingMode) -> (Impact, &'static str) {
    if old == SharingMode::Mig || new == SharingMode::Mig {
        (
            Impact::Drain,
            "MIG reconfiguration: the MIG manager resets the GPUs (nvidia.com/mig.config); drain the node first, and set the label on running Nodes with kubectl label (the kubelet sets its node labels only when it registers the Node)",
        )
    } else {
        (
            Impact::Live,
            "GPU sharing: the device plugin restarts with the new sharing configuration; running pods keep the GPUs they hold, new pods get the new shares; a running Node keeps the labels it registered with (the kubelet sets them only then), so set or remove its nvidia.com/device-plugin.config label with kubectl label",
        )
    }
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
        assert!(Impact::Reboot > Impact::Drain && Impact::Drain > Impact::Live);
    }
}
