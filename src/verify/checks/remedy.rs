//! What to do when a check fails: one remedy per check of the table, the first step an
//! on-call engineer takes, and the runbook `nodeimg verify --explain ID` prints (the
//! README's check reference points there). The catalog's action says who acts (the
//! automation's rung); the remedy says how.
//!
//! Most failures on a node built from its image have a cause in one of three places: the
//! image was not applied (the lock or a rendered file is absent: apply or reimage), a
//! setting did not take (reload it: `sysctl --system`, a daemon restart, a reboot for the
//! kernel command line), or the hardware. The remedies say which.

use super::{CATALOG, Spec};

/// (check id, remedy). A test keeps it one row per check of the table.
pub static REMEDIES: &[(&str, &str)] = &[
    (
        "os.distro",
        "The node does not run the image's OS: it was installed from another image, or apply did not run. Reimage it from the image built for this blueprint (`nodeimg apply IMAGE --root …` in the image pipeline).",
    ),
    (
        "os.version",
        "The OS release differs from the blueprint's: reimage from the image built for it, or pin the release the fleet runs in `os.version` and rebuild.",
    ),
    (
        "os.kernel.release",
        "Another kernel booted: check the boot loader's default entry (`grubby --default-kernel`, `grub-editenv list`, `bootctl status`); the image's kernel may have failed and the fallback booted (see the boot log). Set the default and reboot.",
    ),
    (
        "os.kernel.arg.required",
        "The argument is not on /proc/cmdline: the boot loader's configuration was not regenerated after apply, or another entry booted. Run apply's boot-loader step (`nodeimg apply IMAGE --root / --only-steps boot-loader`) and reboot.",
    ),
    (
        "os.kernel.arg.implied",
        "A typed blueprint field implies this argument (IOMMU, hugepages, nouveau): regenerate the boot loader's configuration from the image (apply's boot-loader step) and reboot.",
    ),
    (
        "os.kernel.arg.forbidden",
        "Remove the argument from the boot loader's configuration (`/etc/default/grub`, a BLS entry, `/etc/kernel/cmdline`), regenerate it and reboot.",
    ),
    (
        "os.cgroup",
        "The kernel booted without the unified cgroup hierarchy: check `systemd.unified_cgroup_hierarchy` on /proc/cmdline and the boot loader's configuration, then reboot.",
    ),
    (
        "os.hugepages",
        "Boot-time hugepages were not reserved (fragmented memory, or the arguments missing): check `hugepages=`/`hugepagesz=` on /proc/cmdline and reboot; the reservation cannot be made reliably at run time.",
    ),
    (
        "os.shm.size",
        "Memory outside the hugepage pools is below system.shmSize: fewer hugepages, more memory, or a smaller shmSize in the blueprint.",
    ),
    (
        "os.sysctl",
        "The value in /proc/sys differs from the image's /etc/sysctl.d file: run `sysctl --system` and verify again. If it still differs, a file later in sysctl.d order sets it (`systemd-analyze cat-config sysctl.d`); if the image's file is absent, the image is not applied here.",
    ),
    (
        "os.nouveau.absent",
        "nouveau is loaded: the blacklist (`modprobe.d` file and `rd.driver.blacklist=nouveau`) is not in the initramfs; rebuild the initramfs (apply's initramfs step) and reboot.",
    ),
    (
        "os.module.kernel-build",
        "No module for the running kernel, or one built for another: the out-of-tree build for this kernel failed or never ran (`dkms status`, `/var/lib/dkms/*/build/make.log`, akmods' log), or the kernel's prebuilt module package (linux-modules-nvidia-*) is missing; rebuild or install it for `uname -r` and reboot, or boot the kernel the image pins. A loaded module whose srcversion differs from the installed file is an older build still in memory: reload the module (drain the node first) or reboot.",
    ),
    (
        "os.module.signature",
        "With Secure Boot on, the kernel loads only modules signed by a key in its keyrings (the built-in keys, the db, or a MOK enrolled with `mokutil --import` and confirmed at the next boot). Unsigned: sign the module (DKMS signs with /var/lib/dkms/mok.key when it is enrolled; `sign-file` for a hand-built one). Tainted E: the key that signed it is not enrolled on this node; enroll it, or use the distribution's signed prebuilt modules.",
    ),
    (
        "firmware.bios.version",
        "Update the BIOS to the blueprint's version with the vendor's tool (or Redfish), or pin the version the fleet runs; unreadable means no DMI table (a VM, or /sys not mounted).",
    ),
    (
        "firmware.bmc.version",
        "Update the BMC firmware to the blueprint's version with the vendor's tool (or Redfish UpdateService), or pin the version the fleet's BMCs report: the Manager's `FirmwareVersion` with `firmware.bmc.redfish`, else `ipmitool mc info`'s revision (IPMI gives major.minor only). Unreadable through Redfish: the reason names the step (the SMBIOS type 42 record, the credentials file, the certificate against `caFile`, HTTP 401, the timeout); bring up the host interface's USB NIC (an address in the record's subnet) and give a read-only account. Unreadable through IPMI: load `ipmi_si` and `ipmi_devintf`, install ipmitool, or the BMC did not answer.",
    ),
    (
        "firmware.iommu",
        "Set the IOMMU in the BIOS (VT-d / AMD-Vi) and check `intel_iommu=`/`amd_iommu=`/`iommu=pt` on /proc/cmdline; then reboot.",
    ),
    (
        "firmware.smt",
        "Set SMT (Hyper-Threading) in the BIOS as the blueprint declares, or check for `nosmt` on /proc/cmdline; then reboot.",
    ),
    (
        "firmware.secure-boot",
        "Set UEFI Secure Boot in the BIOS as the blueprint declares; with it on, the kernel modules must be signed by an enrolled key.",
    ),
    (
        "firmware.module-signing",
        "Module signature enforcement differs: check Secure Boot and `module.sig_enforce` on /proc/cmdline against firmware.bios.moduleSigning.",
    ),
    (
        "firmware.numa-per-socket",
        "Set NUMA nodes per socket (NPS, SNC) in the BIOS as the blueprint declares, then reboot.",
    ),
    (
        "firmware.resizable-bar",
        "Enable Resizable BAR in the BIOS (and Above 4G Decoding), then reboot.",
    ),
    (
        "firmware.above-4g-decoding",
        "Enable Above 4G Decoding (MMIO above 4 GiB) in the BIOS, then reboot.",
    ),
    (
        "firmware.power-profile",
        "Set the BIOS power profile (or the cpufreq governor the image sets) to performance; a warning, the node may run.",
    ),
    (
        "gpu.pcie.link-width",
        "The GPU trained at a narrower width: reseat the GPU or its riser, check the slot; a reboot sometimes retrains it. Repeated: send to service.",
    ),
    (
        "gpu.pcie.max-speed",
        "The GPU cannot reach its PCIe generation: check the BIOS slot speed setting, reseat, then service.",
    ),
    (
        "gpu.pcie.upstream-width",
        "The switch or root port above the GPU trained narrower: reseat the GPU tray or switch board; service if it repeats.",
    ),
    (
        "gpu.pcie.upstream-max-speed",
        "The port above the GPU is limited to a lower generation: check the BIOS PCIe settings for that slot, then service.",
    ),
    (
        "nic.pcie.link-width",
        "The NIC trained at a narrower width (either end): reseat the card, check the slot; service if it repeats.",
    ),
    (
        "nic.pcie.link-speed",
        "The NIC's link is at a lower speed (either end): check the BIOS slot speed, reseat, then service.",
    ),
    (
        "pcie.aer.uncorrectable",
        "The device reported uncorrectable PCIe errors (AER): watch for more; reboot, and send to service if they recur.",
    ),
    (
        "pcie.acs.p2p-redirect",
        "Bare metal: ACS P2P Request/Completion Redirect on a switch port sends GPU peer and GPUDirect RDMA traffic through the root complex (NCCL slows down or hangs). Turn off ACS for the PCIe switches in the BIOS (often under IO virtualization / VT-d / ACS control), or clear the bits the finding names with the `setpci -s PORT ECAP_ACS+0x6.w=VALUE` it prints, at every boot (NVIDIA NCCL troubleshooting, \"PCI Access Control Services (ACS)\": https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs; GPUDirect Storage best practices: https://docs.nvidia.com/gpudirect-storage/best-practices-guide/software-settings.html). VFIO passthrough: the redirect must be on so each GPU gets its own IOMMU group; enable ACS and the IOMMU in the BIOS. Unreadable: run verify as root (the extended configuration space is root-only).",
    ),
    (
        "gpu.count",
        "GPUs are missing from the PCI bus: check `lspci -d 10de:` (NVIDIA) or `lspci -d 1002:` (AMD) and the kernel log for a GPU fallen off the bus; power-cycle (not just reboot) the node, then reseat or send to service. The other GPU checks are blocked by this one.",
    ),
    (
        "gpu.nvswitch.present",
        "NVSwitches are missing from the PCI bus: power-cycle the node; if still missing, the baseboard needs service.",
    ),
    (
        "gpu.model",
        "Another GPU model is installed than the blueprint declares: the node belongs to another node class, or the blueprint's accelerators.model is wrong.",
    ),
    (
        "gpu.driver.version",
        "The loaded driver is not the blueprint's (or none is loaded: `/proc/driver/nvidia/version` absent). Preinstalled: check `dkms status`/the kernel modules for the running kernel and the kernel log for the module load; operator: check the driver DaemonSet's pod.",
    ),
    (
        "gpu.driver.kernel-module",
        "The other NVIDIA kernel module flavour is loaded (open vs proprietary): install the flavour the blueprint pins and reboot.",
    ),
    (
        "gpu.cuda.version",
        "The driver supports another CUDA version than the blueprint's: the driver is not the pinned one (see gpu.driver.version).",
    ),
    (
        "gpu.vbios",
        "Flash the VBIOS the blueprint pins with the vendor's tool, or pin the version the fleet runs.",
    ),
    (
        "gpu.vbios.identical",
        "The GPUs run different VBIOS versions: flash them alike.",
    ),
    (
        "gpu.ecc.mode",
        "Enable ECC (`nvidia-smi -e 1`) and reset the GPUs or reboot: the mode changes at the next reset.",
    ),
    (
        "gpu.ecc.volatile-uncorrectable",
        "Uncorrectable ECC errors since the driver loaded: drain the node and reset the GPU (`nvidia-smi -r`) or reboot; repeated, send to service.",
    ),
    (
        "gpu.row-remap.pending",
        "A row remap is pending: reset the GPU (or reboot) to apply it.",
    ),
    (
        "gpu.row-remap.failure",
        "Row remapping failed: the GPU's memory cannot be repaired in the field; send the node to service (RMA).",
    ),
    (
        "gpu.retired-pages",
        "A page retirement is pending: reset the GPU (or reboot) to apply it.",
    ),
    (
        "gpu.xid",
        "Xid events in the kernel log, judged by NVIDIA's catalog: the action given is the catalog's (restart the application, reset the GPU, reboot); repeated, send to service.",
    ),
    (
        "gpu.sxid",
        "NVSwitch SXid events: reset the NVLink fabric (stop the GPU workloads, reset GPUs and switches, restart nvidia-fabricmanager), as the Fabric Manager User Guide says for the code.",
    ),
    (
        "gpu.ras.events",
        "amdgpu RAS or reset events: follow AMD's action for the event (reset the GPU, reboot); repeated, send to service.",
    ),
    (
        "gpu.event.unknown",
        "A GPU event code the catalogs do not list (a newer driver): look it up in the vendor's current catalog; a warning, not a verdict.",
    ),
    (
        "gpu.recovery",
        "The driver asks for a reset, a drain or a repair: do what it asks (`nvidia-smi -q` shows it), then verify again.",
    ),
    (
        "gpu.clocks.hw-slowdown",
        "The hardware holds the clocks down (thermal, power brake): check the cooling, the fans and the power feeds.",
    ),
    (
        "gpu.temperature.margin",
        "The GPU or its memory runs close to its slowdown limit: check airflow and the inlet temperature; a warning.",
    ),
    (
        "gpu.ras.errors",
        "New errors in amdgpu's RAS counters: reset the GPU or reboot; repeated, send to service.",
    ),
    (
        "gpu.ras.bad-pages",
        "A retired VRAM page is not reserved: reboot so the driver reserves it; repeated, send to service.",
    ),
    (
        "gpu.persistence",
        "Persistence mode is off: start nvidia-persistenced (the image enables it) or `nvidia-smi -pm 1`.",
    ),
    (
        "gpu.mig.mode",
        "MIG mode differs: set it (`nvidia-smi -mig 1|0`) and reset the GPU, or let the MIG manager apply the blueprint's profile.",
    ),
    (
        "gpu.fabric-manager.active",
        "nvidia-fabricmanager is not running: `systemctl status nvidia-fabricmanager` and its log; its version must be the driver's.",
    ),
    (
        "gpu.fabric.state",
        "The GPU did not join the NVLink fabric: restart nvidia-fabricmanager; if it persists, reset the fabric (GPUs and switches) or reboot.",
    ),
    (
        "gpu.fabric-manager.log",
        "Fabric Manager logged a fatal entry: reset the fabric (or reboot) and read the entry in /var/log/fabricmanager.log.",
    ),
    (
        "gpu.render-nodes",
        "A GPU has no DRM render node: the driver did not set it up; check the kernel log for amdgpu, reset the GPU or reboot.",
    ),
    (
        "nic.count",
        "NICs of this group are missing: check `lspci` and the kernel log for the NIC driver (mlx5_core …); reseat, or the node belongs to another class. Its other checks are blocked by this one.",
    ),
    (
        "nic.model",
        "Another NIC model is installed than the group declares; a warning.",
    ),
    (
        "nic.link.state",
        "The interface is down: check the cable and the switch port, `ip link`, and the switch side; reboot if the port is up but the NIC is not.",
    ),
    (
        "nic.speed",
        "The link negotiated a lower speed: check the cable (its rating) and the switch port's configuration.",
    ),
    (
        "nic.mtu",
        "The interface MTU differs: the image's network configuration did not apply (restart the network service) or the switch side limits it.",
    ),
    (
        "nic.rdma.port-state",
        "The RDMA port is not ACTIVE/LinkUp: check the cable and the subnet manager (InfiniBand) or the switch port (RoCE).",
    ),
    (
        "nic.rdma.rate",
        "The RDMA port runs at a lower rate: check the cable and the switch port.",
    ),
    (
        "nic.firmware",
        "Flash the NIC firmware the blueprint pins (`mlxfwmanager`), or pin the version the fleet runs.",
    ),
    (
        "nic.firmware.identical",
        "The NICs of the group run different firmware: flash them alike.",
    ),
    (
        "gpu.nic.numa",
        "No compute NIC on the GPU's NUMA node: the NIC sits in another slot than the board's layout expects, or the BIOS NUMA split (NPS) differs; check the slot and firmware.numa-per-socket.",
    ),
    (
        "gpu.nic.pcie-switch",
        "No compute NIC behind the GPU's PCIe switch: the NIC is in another slot than the board's layout expects; GPUDirect RDMA crosses the CPU.",
    ),
    (
        "gpudirect.dma-buf.kernel",
        "The kernel lacks DMA-BUF (Linux 5.12+, CONFIG_DMA_SHARED_BUFFER): boot a kernel that has it, or pin an OFED with nvidia_peermem.",
    ),
    (
        "gpudirect.dma-buf.driver",
        "DMA-BUF GPUDirect needs the NVIDIA open kernel modules: install the open flavour and reboot.",
    ),
    (
        "runtime.containerd.version",
        "Another containerd runs than the image pins: a package update replaced it, or the image is not applied (check the held packages).",
    ),
    (
        "runtime.containerd.memlock",
        "containerd may not lock unlimited memory: the image's containerd.service drop-in (LimitMEMLOCK=infinity) is missing or not loaded; `systemctl daemon-reload && systemctl restart containerd`.",
    ),
    (
        "runtime.kubelet.version",
        "Another kubelet runs than the image pins (or none is installed): the image is not applied, or a package update replaced it.",
    ),
    (
        "runtime.cdi.spec",
        "No GPU CDI spec: run the generator the blueprint names (`nvidia-ctk cdi generate`, or the image's nodeimg-cdi-generate unit) and check its log.",
    ),
    (
        "runtime.cdi.devices",
        "The CDI spec does not list every GPU: it was generated before a GPU appeared or with another driver; regenerate it.",
    ),
    (
        "runtime.cdi.device-nodes",
        "A device node the CDI spec names does not exist: the driver did not create it (check the module load), or the spec is stale; regenerate it.",
    ),
    (
        "runtime.cdi.driver-version",
        "The CDI spec mounts another driver's libraries: regenerate it after the driver changed (the image's refresh unit does at boot).",
    ),
    (
        "runtime.cdi.conflicts",
        "Two spec files define one device: remove the stale one (containerd drops both in one folder; /var/run/cdi shadows /etc/cdi).",
    ),
    (
        "runtime.cdi.management-spec",
        "The GPU Operator's management CDI spec is missing: the image's nodeimg-cdi-generate writes it; check that unit's log.",
    ),
    (
        "system.time-sync.active",
        "No time sync daemon is active: `systemctl status chronyd` (or chrony, systemd-timesyncd) and its sources.",
    ),
    (
        "system.capacity.cpu",
        "The kernel sees another number of CPUs: SMT, offlined CPUs, or a BIOS setting; or the blueprint's kubernetes.capacity.cpu is wrong.",
    ),
    (
        "system.capacity.memory",
        "The kernel sees less memory than declared: a DIMM failed or is not seated (check the BMC's event log), or kubernetes.capacity.memory is wrong.",
    ),
    (
        "system.partition.mounted",
        "The partition is not mounted where its data goes: check the image's mount unit (`systemctl status` of the .mount), the device, and the file system.",
    ),
    (
        "image.applied",
        "The image's lock or rendered files are absent: this node was not built from the image, or the image was not applied here, so the checks that read its files (blocked by image.applied) say nothing about the image. Apply it (`nodeimg apply IMAGE --in-place`, or `--root` in the image pipeline) or reimage the node, then verify again; to judge a machine that is not meant to run the image, expect these failures.",
    ),
    (
        "image.signature",
        "The running image is not signed by a key the blueprint trusts: apply a signed image (or roll back to the previous one).",
    ),
    (
        "image.config",
        "The lock, matrix or trust keys on disk differ from the signed image's: something changed them after apply; reapply the image.",
    ),
    (
        "cluster.status",
        "The Node object has no status: kubelet has not registered or reported; check kubelet's log on the node.",
    ),
    (
        "cluster.capacity.cpu",
        "The Node reports another CPU count: kubelet sees what the kernel does (see system.capacity.cpu).",
    ),
    (
        "cluster.capacity.memory",
        "The Node reports another memory size: see system.capacity.memory on the node.",
    ),
    (
        "cluster.capacity.ephemeral-storage",
        "The kubelet file system has another size: check the partition under /var/lib/kubelet.",
    ),
    (
        "cluster.capacity.hugepages",
        "The hugepage pool is not advertised: see os.hugepages on the node, and restart kubelet after the pool exists.",
    ),
    (
        "cluster.capacity.gpu",
        "The device plugin does not advertise every GPU: check its pod's log on the node; restart it after the driver and CDI are right.",
    ),
    (
        "cluster.allocatable.cpu",
        "Allocatable CPU is not capacity minus the reservations: kubelet runs with another configuration than the image's (check its config file and drop-ins); restart kubelet.",
    ),
    (
        "cluster.allocatable.memory",
        "Allocatable memory is not capacity minus the reservations: kubelet runs with another configuration than the image's; restart kubelet.",
    ),
    (
        "cluster.allocatable.ephemeral-storage",
        "Allocatable storage is not capacity minus the reservations: kubelet runs with another configuration than the image's; restart kubelet.",
    ),
    (
        "cluster.allocatable.pods",
        "Allocatable pods is not maxPods: kubelet runs with another configuration than the image's; restart kubelet.",
    ),
    (
        "cluster.allocatable.gpu",
        "Advertised GPUs are not allocatable: the device plugin marks some unhealthy; check its log and the GPU checks on the node.",
    ),
    (
        "cluster.label",
        "The Node lacks a label: kubelet's --node-labels (the image's drop-in) or NFD did not set it; check both.",
    ),
    (
        "cluster.taint",
        "The Node's taints differ from the blueprint's: kubelet's --register-with-taints only applies at registration; fix the taints with kubectl or re-register the node.",
    ),
    (
        "host.errors.uncorrected",
        "An uncorrected memory error or machine check: the host memory or a CPU is failing. Drain the node, read the EDAC or MCE lines in the evidence (DIMM, bank) and send it to service.",
    ),
    (
        "host.errors.corrected",
        "Corrected memory errors or machine checks: the hardware fixed them, but a DIMM that keeps reporting them is failing. Watch the rate (`edac-util -v`, `ras-mc-ctl --summary`) and plan a DIMM replacement if it grows.",
    ),
    (
        "host.fs.read-write",
        "The file system was remounted read-only, most often after an I/O error: read the kernel log for the device's errors, then drain and reboot; a disk that fails again goes to service.",
    ),
    (
        "host.fs.free-space",
        "Free space is below the kubelet's hard eviction threshold: remove unused images (`crictl rmi --prune`) and the largest pod logs, then find what grew (`du -x`).",
    ),
    (
        "host.fs.free-inodes",
        "Free inodes are below the kubelet's hard eviction threshold: find the folder holding millions of small files (`du --inodes -x`), most often container logs or a workload's scratch files.",
    ),
    (
        "host.fs.cache-watermark",
        "The model cache's file system is above system.cache.highWatermark: the cache's cleaner is not keeping up; remove the least recently used entries or give the cache more space.",
    ),
    (
        "cluster.condition",
        "The Node is not Ready or is under pressure: `kubectl describe node` names the condition; check kubelet and the resource under pressure.",
    ),
    (
        "cluster.runtime-handler",
        "containerd does not offer the runtime handler: the image's containerd configuration is not loaded; restart containerd.",
    ),
    (
        "cluster.runtime-classes",
        "The RuntimeClasses are unknown: give the list (`--runtime-classes FILE`, from `kubectl get runtimeclasses -o json`) to judge them.",
    ),
    (
        "cluster.runtime-class",
        "The node class's RuntimeClass is missing, names another handler, or selects nodes this one is not: apply the rendered `cluster/runtime-classes/` (`kubectl apply -f`), or label the node as the blueprint's `kubernetes.labels` say.",
    ),
    (
        "cluster.components",
        "The device components are unknown: give the Pod list (`--pods`) to judge them.",
    ),
    (
        "cluster.component",
        "A device component does not run or is not ready on the node: check its DaemonSet's pod there.",
    ),
];

/// The remedy of `spec`.
pub fn of(spec: &Spec) -> &'static str {
    REMEDIES
        .iter()
        .find(|(id, _)| *id == spec.id)
        .map_or("", |(_, text)| text)
}

/// The spec called `id`.
pub fn spec(id: &str) -> Option<&'static Spec> {
    CATALOG.iter().copied().find(|s| s.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_remedy_per_check_of_the_table() {
        for spec in CATALOG {
            let n = REMEDIES.iter().filter(|(id, _)| *id == spec.id).count();
            assert_eq!(n, 1, "{}: {n} remedies", spec.id);
        }
        for (id, text) in REMEDIES {
            assert!(spec(id).is_some(), "{id} is not a check");
            assert!(text.ends_with('.') || text.ends_with(')'), "{id}: {text}");
        }
    }
}
