//! Every check verify can run, in one table: id, summary, severity, fault class,
//! recommended action, boot stage and whether it belongs to the post-join health subset.
//!
//! The `checks!` macro turns the table into one `static` [`Spec`] per row, grouped in a
//! module per family (`catalog::gpu::COUNT`), and into [`CATALOG`], the list in report
//! order. [`Spec`] has a private field, so a spec can only be made here: every result
//! points at a row of this table (`CheckResult::spec`), and a check cannot be declared
//! without being listed.
//!
//! Columns: `stage` is `Host` (readable before any GPU driver: always in `--phase boot`)
//! or `Driver` (needs the GPU driver: in `--phase driver`, and in `boot` when the image
//! carries the driver) or `Cluster` (the Node object after join, `--phase cluster`, judged
//! by [`crate::accept::cluster`]; `nodeimg accept` folds them into the record); `phase` is `health` when the check is part of `--phase health`,
//! the device health subset Node Problem Detector runs after join, `-` otherwise.

use super::{Phase, Stage};
use crate::fault::{Action, FaultClass, Severity};
use serde::Serialize;

/// The fixed description of a check: one row of the table.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[allow(
    clippy::manual_non_exhaustive,
    reason = "sealed to this module, which `non_exhaustive` (crate-wide) would not be"
)]
pub struct Spec {
    pub id: &'static str,
    pub summary: &'static str,
    pub severity: Severity,
    pub fault: FaultClass,
    pub action: Action,
    pub stage: Stage,
    /// Part of the post-join device health subset (`--phase health`).
    pub health: bool,
    /// Only this module makes specs.
    #[serde(skip)]
    sealed: (),
}

impl Spec {
    /// The phases that run this check, as `--list-checks` prints them: `boot` for host
    /// checks, `driver` for driver checks (and `boot` too when the driver is in the image),
    /// plus `health` for the health subset. `all` runs every check and is not listed.
    pub fn phases(&self) -> Vec<Phase> {
        let mut phases = match self.stage {
            Stage::Host => vec![Phase::Boot],
            Stage::Driver => vec![Phase::Driver],
            Stage::Cluster => vec![Phase::Cluster],
            Stage::InService => Vec::new(),
        };
        if self.health {
            phases.push(Phase::Health);
        }
        phases
    }
}

macro_rules! health {
    (health) => {
        true
    };
    (-) => {
        false
    };
}

macro_rules! checks {
    ($(
        $(#[$family_doc:meta])*
        $family:ident {
            $( $name:ident = $id:literal, $summary:literal, $severity:ident, $fault:ident,
               $action:ident, $stage:ident, $phase:tt; )*
        }
    )*) => {
        $(
            $(#[$family_doc])*
            pub mod $family {
                use super::*;
                $(
                    #[doc = $summary]
                    pub static $name: Spec = Spec {
                        id: $id,
                        summary: $summary,
                        severity: Severity::$severity,
                        fault: FaultClass::$fault,
                        action: Action::$action,
                        stage: Stage::$stage,
                        health: health!($phase),
                        sealed: (),
                    };
                )*
            }
        )*

        /// Every check, in report order.
        pub static CATALOG: &[&Spec] = &[$($(&$family::$name,)*)*];
    };
}

#[rustfmt::skip]
checks! {
    /// OS and kernel.
    os {
        //  const         id                          summary                                              severity  fault          action            stage  phase
        DISTRO         = "os.distro",                "OS distribution",                                    Critical, OsMemoryDisk,  Service,       Host,   -;
        VERSION        = "os.version",               "OS release",                                         Critical, OsMemoryDisk,  Service,       Host,   -;
        KERNEL_RELEASE = "os.kernel.release",        "running kernel release",                             Critical, OsMemoryDisk,  Service,       Host,   -;
        ARG_REQUIRED   = "os.kernel.arg.required",   "required kernel argument on the command line",       Critical, OsMemoryDisk,  Service,       Host,   -;
        ARG_IMPLIED    = "os.kernel.arg.implied",    "kernel argument the blueprint's typed fields imply", Warning,  OsMemoryDisk,  Service,       Host,   -;
        ARG_FORBIDDEN  = "os.kernel.arg.forbidden",  "forbidden kernel argument absent",                   Critical, OsMemoryDisk,  Service,       Host,   -;
        CGROUP         = "os.cgroup",                "cgroup hierarchy",                                   Critical, OsMemoryDisk,  Service,       Host,   -;
        HUGEPAGES      = "os.hugepages",             "hugepages reserved at boot",                         Critical, OsMemoryDisk,  RebootNode,    Host,   -;
        SHM            = "os.shm.size",              "memory can back the pods' /dev/shm (system.shmSize)", Critical, OsMemoryDisk, Service,       Host,   -;
        SYSCTL         = "os.sysctl",                "kernel parameter the image sets holds in /proc/sys", Critical, OsMemoryDisk,  Service,       Host,   -;
        NOUVEAU        = "os.nouveau.absent",        "nouveau not loaded",                                 Critical, DriverDaemon,  Service,       Host,   -;
        // The module the kernel runs: built for this kernel, the installed file, signed.
        MODULE_BUILD     = "os.module.kernel-build",  "GPU and RDMA modules built for the running kernel, and the loaded ones from that file", Critical, DriverDaemon, Service, Host, -;
        MODULE_SIGNATURE = "os.module.signature",     "with Secure Boot on, GPU and RDMA modules signed by a key the kernel trusts", Critical, DriverDaemon, Service, Host, -;
    }
    /// BIOS policy as the kernel sees its effects, and firmware versions.
    firmware {
        BIOS_VERSION    = "firmware.bios.version",       "BIOS version",                                   Critical, OsMemoryDisk,  Service,       Host,   -;
        BMC_VERSION     = "firmware.bmc.version",        "BMC firmware version (Redfish, else IPMI)",      Critical, OsMemoryDisk,  Service,       Host,   -;
        IOMMU           = "firmware.iommu",              "IOMMU mode",                                     Critical, OsMemoryDisk,  Service,       Host,   -;
        SMT             = "firmware.smt",                "simultaneous multithreading",                    Critical, OsMemoryDisk,  Service,       Host,   -;
        SECURE_BOOT     = "firmware.secure-boot",        "UEFI Secure Boot",                               Critical, OsMemoryDisk,  Service,       Host,   -;
        MODULE_SIGNING  = "firmware.module-signing",     "kernel module signature enforcement",            Critical, OsMemoryDisk,  Service,       Host,   -;
        NUMA_PER_SOCKET = "firmware.numa-per-socket",    "NUMA nodes per socket",                          Critical, OsMemoryDisk,  Service,       Host,   -;
        RESIZABLE_BAR   = "firmware.resizable-bar",      "GPU Resizable BAR",                              Critical, OsMemoryDisk,  Service,       Host,   -;
        ABOVE_4G        = "firmware.above-4g-decoding",  "GPU BARs above 4 GiB",                           Critical, OsMemoryDisk,  Service,       Host,   -;
        POWER_PROFILE   = "firmware.power-profile",      "CPU frequency governor fits the power profile",  Warning,  OsMemoryDisk,  Service,       Host,   -;
    }
    /// PCIe links of GPUs and NICs, both ends, and AER.
    pcie {
        GPU_WIDTH          = "gpu.pcie.link-width",          "GPU PCIe link width",                         Critical, Link, RebootNode,    Host,   health;
        GPU_MAX_SPEED      = "gpu.pcie.max-speed",           "GPU PCIe maximum link speed",                 Critical, Link, RebootNode,    Host,   health;
        GPU_UPSTREAM_WIDTH = "gpu.pcie.upstream-width",      "PCIe width of the port above the GPU",        Critical, Link, RebootNode,    Host,   health;
        GPU_UPSTREAM_SPEED = "gpu.pcie.upstream-max-speed",  "maximum speed of the port above the GPU",     Critical, Link, RebootNode,    Host,   health;
        NIC_WIDTH          = "nic.pcie.link-width",          "NIC PCIe link width, both ends",              Critical, Link, RebootNode,    Host,   health;
        NIC_SPEED          = "nic.pcie.link-speed",          "NIC PCIe link speed, both ends",              Critical, Link, RebootNode,    Host,   health;
        AER                = "pcie.aer.uncorrectable",       "no uncorrectable PCIe errors reported (AER)", Warning,  Link, RebootNode,    Host,   health;
        // Switch ports redirecting peer traffic to the root complex (bare metal), or not
        // isolating the GPUs (VFIO): a setting of the BIOS or the switch, not a broken link.
        ACS                = "pcie.acs.p2p-redirect",        "ACS peer-to-peer redirect on the switch ports above GPUs and NICs fits the blueprint's use", Critical, Link, Service, Host, -;
    }
    /// GPUs: presence from sysfs, then what the driver reports.
    gpu {
        COUNT             = "gpu.count",                      "GPUs on the PCI bus",                            Critical, Device,       Service,       Host,   health;
        NVSWITCH          = "gpu.nvswitch.present",           "NVSwitches on the PCI bus",                      Critical, Device,       Service,       Host,   health;
        MODEL             = "gpu.model",                      "GPU model",                                      Critical, Device,       Service,       Driver, -;
        DRIVER            = "gpu.driver.version",             "loaded GPU driver version",                      Critical, DriverDaemon, Service,       Driver, -;
        KERNEL_MODULE     = "gpu.driver.kernel-module",       "NVIDIA kernel module flavour",                   Critical, DriverDaemon, Service,       Driver, -;
        CUDA              = "gpu.cuda.version",               "CUDA version the driver supports",               Critical, DriverDaemon, Service,       Driver, -;
        VBIOS             = "gpu.vbios",                      "GPU VBIOS version",                              Critical, Device,       Service,       Driver, -;
        VBIOS_IDENTICAL   = "gpu.vbios.identical",            "same VBIOS on every GPU",                        Critical, Device,       Service,       Driver, -;
        ECC_MODE          = "gpu.ecc.mode",                   "ECC enabled",                                    Critical, Device,       ResetGpu,      Driver, -;
        ECC_UNCORRECTABLE = "gpu.ecc.volatile-uncorrectable", "no uncorrectable ECC errors since the driver loaded", Critical, Device,   ResetGpu,      Driver, health;
        REMAP_PENDING     = "gpu.row-remap.pending",          "no row remapping pending",                       Critical, Device,       ResetGpu,      Driver, health;
        REMAP_FAILURE     = "gpu.row-remap.failure",          "no row remapping failure",                       Critical, Device,       Service,       Driver, health;
        RETIRED_PAGES     = "gpu.retired-pages",              "no page retirement pending",                     Critical, Device,       ResetGpu,      Driver, health;
        XID               = "gpu.xid",                        "Xid events, judged by NVIDIA's Xid catalog",     Critical, Device,       ResetGpu,      Driver, health;
        SXID              = "gpu.sxid",                       "NVSwitch SXid events, judged by the Fabric Manager User Guide", Critical, Link, ResetFabric, Driver, health;
        RAS_EVENTS        = "gpu.ras.events",                 "amdgpu RAS and GPU reset events, judged by AMD's documented actions", Critical, Device, ResetGpu, Driver, health;
        // A code the catalogs do not list (a newer driver): a warning naming it, never a
        // guessed action.
        EVENT_UNKNOWN     = "gpu.event.unknown",              "no GPU or switch event the vendor catalog does not list", Warning, Device, None, Driver, health;
        RECOVERY          = "gpu.recovery",                   "the driver flags no reset, drain or repair",     Critical, Device,       ResetGpu,      Driver, health;
        HW_SLOWDOWN       = "gpu.clocks.hw-slowdown",         "clocks not held down by the hardware (slowdown, thermal, power brake)", Critical, Device, CheckCoolingPower, Driver, health;
        TEMPERATURE       = "gpu.temperature.margin",         "GPU and memory temperature below the slowdown limits", Warning, Device, CheckCoolingPower, Driver, health;
        RAS_ERRORS        = "gpu.ras.errors",                 "no new errors in amdgpu's RAS error counts",     Critical, Device,       ResetGpu,      Driver, health;
        RAS_BAD_PAGES     = "gpu.ras.bad-pages",              "every retired VRAM page reserved",               Critical, Device,       Service,       Driver, health;
        PERSISTENCE       = "gpu.persistence",                "persistence mode",                               Critical, DriverDaemon, RestartDaemon, Driver, -;
        MIG               = "gpu.mig.mode",                   "MIG mode",                                       Critical, DriverDaemon, ResetGpu,      Driver, -;
        FABRIC_MANAGER    = "gpu.fabric-manager.active",      "nvidia-fabricmanager active",                    Critical, DriverDaemon, RestartDaemon, Driver, health;
        FABRIC_STATE      = "gpu.fabric.state",               "GPU joined the NVLink fabric",                   Critical, Link,         ResetFabric,   Driver, health;
        FABRIC_MANAGER_LOG = "gpu.fabric-manager.log",        "no fatal entry in Fabric Manager's log",         Critical, DriverDaemon, ResetFabric,   Driver, health;
        // One render node per whole AMD GPU (the static CDI spec's renderD(128+N)): none
        // when the driver failed to set the GPU up, one per partition under CPX/DPX.
        RENDER_NODES      = "gpu.render-nodes",               "one DRM render node per AMD GPU",                Critical, Device,       ResetGpu,      Driver, health;
    }
    /// NICs of each blueprint group, and GPU-NIC placement.
    network {
        COUNT              = "nic.count",              "NICs of the group present",                   Critical, Link,         Service,       Host,   health;
        MODEL              = "nic.model",              "NICs of the group are the declared model",    Warning,  Link,         Service,       Host,   -;
        LINK_STATE         = "nic.link.state",         "interface operationally up",                  Critical, Link,         RebootNode,    Host,   health;
        SPEED              = "nic.speed",              "interface link speed",                        Critical, Link,         RebootNode,    Host,   health;
        MTU                = "nic.mtu",                "interface MTU",                               Critical, OsMemoryDisk, RestartDaemon, Host,   -;
        RDMA_STATE         = "nic.rdma.port-state",    "RDMA port ACTIVE and LinkUp",                 Critical, Link,         RebootNode,    Host,   health;
        RDMA_RATE          = "nic.rdma.rate",          "RDMA port rate",                              Critical, Link,         RebootNode,    Host,   health;
        FIRMWARE           = "nic.firmware",           "NIC firmware version",                        Critical, Link,         Service,       Host,   -;
        FIRMWARE_IDENTICAL = "nic.firmware.identical", "same NIC firmware across the group",          Critical, Link,         Service,       Host,   -;
        // Where the NIC sits against the GPU (its slot, the board, the BIOS NUMA split): the
        // PCIe topology, as gpu.nic.pcie-switch, not the host OS or its memory.
        GPU_NIC_NUMA       = "gpu.nic.numa",           "a compute NIC on the GPU's NUMA node",        Critical, Link,         Service,       Host,   -;
        GPU_NIC_SWITCH     = "gpu.nic.pcie-switch",    "a compute NIC behind the GPU's PCIe switch",  Critical, Link,         Service,       Host,   -;
    }
    /// GPUDirect RDMA through DMA-BUF, when the blueprint pins no OFED (so no nvidia_peermem).
    gpudirect {
        DMA_BUF_KERNEL = "gpudirect.dma-buf.kernel", "the kernel has DMA-BUF (Linux 5.12+, CONFIG_DMA_SHARED_BUFFER)", Critical, OsMemoryDisk, Service,       Host,   -;
        DMA_BUF_DRIVER = "gpudirect.dma-buf.driver", "the NVIDIA open kernel modules are loaded (DMA-BUF export)",       Critical, DriverDaemon, Service,       Driver, -;
    }
    /// Container runtime, kubelet and the CDI spec.
    runtime {
        CONTAINERD  = "runtime.containerd.version",  "containerd version",                             Critical, DriverDaemon, Service,       Host,   -;
        MEMLOCK     = "runtime.containerd.memlock",  "containerd (and so every pod) may lock unlimited memory", Critical, DriverDaemon, RestartDaemon, Host,   -;
        KUBELET     = "runtime.kubelet.version",     "kubelet version",                                Critical, DriverDaemon, Service,       Host,   -;
        CDI_SPEC    = "runtime.cdi.spec",            "GPU CDI spec present",                           Critical, DriverDaemon, RestartDaemon, Driver, -;
        CDI_DEVICES = "runtime.cdi.devices",         "CDI spec lists every GPU",                       Critical, DriverDaemon, RestartDaemon, Driver, -;
        CDI_NODES   = "runtime.cdi.device-nodes",    "CDI device nodes exist",                         Critical, DriverDaemon, RestartDaemon, Driver, -;
        CDI_DRIVER  = "runtime.cdi.driver-version",  "CDI spec mounts the loaded driver's libraries",  Critical, DriverDaemon, RestartDaemon, Driver, -;
        // Two specs defining one device: in one directory the CDI cache containerd
        // uses (container-device-interface pkg/cdi/cache.go) drops it as a conflict;
        // across directories /var/run/cdi silently shadows /etc/cdi.
        CDI_CONFLICTS = "runtime.cdi.conflicts",     "no CDI device is defined by two spec files",     Critical, DriverDaemon, RestartDaemon, Driver, -;
        // The GPU Operator with CDI and without its toolkit DaemonSet gives its operands
        // management.nvidia.com/gpu=all, which nodeimg-cdi-generate writes on the node.
        CDI_MANAGEMENT = "runtime.cdi.management-spec", "the GPU Operator's management CDI spec present", Critical, DriverDaemon, RestartDaemon, Driver, -;
    }
    /// The node as a whole.
    system {
        TIME_SYNC       = "system.time-sync.active",  "a time sync daemon is active",                    Critical, OsMemoryDisk, RestartDaemon, Host,   -;
        CAPACITY_CPU    = "system.capacity.cpu",      "online CPUs are the declared capacity",           Critical, OsMemoryDisk, Service,       Host,   -;
        CAPACITY_MEMORY = "system.capacity.memory",   "memory the kernel sees fits the declared capacity", Critical, OsMemoryDisk, Service,       Host,   -;
        PARTITION       = "system.partition.mounted", "the partition is mounted where its data goes",    Critical, OsMemoryDisk, Service,       Host,   -;
    }
    /// Host health after join, in service only (never at boot): the hardware errors the
    /// kernel logged, and the file systems the node writes to (containerd's root, the
    /// kubelet folder, the model cache).
    host {
        UNCORRECTED = "host.errors.uncorrected", "no uncorrected memory or machine-check error in the kernel log", Critical, OsMemoryDisk, Service,    InService, health;
        CORRECTED   = "host.errors.corrected",   "no corrected memory or machine-check error in the kernel log",   Warning,  OsMemoryDisk, Service,    InService, health;
        READ_WRITE  = "host.fs.read-write",      "the file systems the node writes to are mounted read-write",     Critical, OsMemoryDisk, RebootNode, InService, health;
        FREE_SPACE  = "host.fs.free-space",      "free space above the kubelet's hard eviction threshold",         Critical, OsMemoryDisk, Service,    InService, health;
        FREE_INODES = "host.fs.free-inodes",     "free inodes above the kubelet's hard eviction threshold",        Critical, OsMemoryDisk, Service,    InService, health;
        CACHE_WATERMARK = "host.fs.cache-watermark", "the model cache's file system below system.cache.highWatermark", Warning, OsMemoryDisk, Service, InService, health;
    }
    /// The image the node runs: its configuration is on the node at all (`image.applied`,
    /// recorded when a check that reads the image's files did not pass); as apply kept it,
    /// signed by a key the blueprint trusts, and the configuration on disk the signed one
    /// (only with `security.imageTrust`).
    image {
        APPLIED   = "image.applied",   "the image's configuration is on this node (its lock and rendered files)", Critical, Image, Service, Host, -;
        SIGNATURE = "image.signature", "the running image is signed by a key of security.imageTrust",   Critical, Image, Service, Host, -;
        CONFIG    = "image.config",    "the lock, matrix and trust keys on disk are the signed image's", Critical, Image, Service, Host, -;
    }
    /// The Node object after join (acceptance layer 2, `--phase cluster`).
    cluster {
        STATUS                  = "cluster.status",                        "the Node object has a status",                            Critical, DriverDaemon, None,          Cluster,-;
        CAPACITY_CPU            = "cluster.capacity.cpu",                  "the node has the blueprint's logical CPUs",               Critical, OsMemoryDisk, Service,       Cluster,-;
        CAPACITY_MEMORY         = "cluster.capacity.memory",               "the node has the blueprint's memory",                     Critical, OsMemoryDisk, Service,       Cluster,-;
        CAPACITY_STORAGE        = "cluster.capacity.ephemeral-storage",    "the kubelet file system has the blueprint's size",        Critical, OsMemoryDisk, Service,       Cluster,-;
        CAPACITY_HUGEPAGES      = "cluster.capacity.hugepages",            "the boot-time hugepage pool is advertised",               Critical, OsMemoryDisk, RebootNode,    Cluster,-;
        CAPACITY_GPU            = "cluster.capacity.gpu",                  "the device plugin advertises every GPU",                  Critical, DriverDaemon, RestartDaemon, Cluster,-;
        ALLOCATABLE_CPU         = "cluster.allocatable.cpu",               "allocatable CPU is capacity minus the reservations",      Critical, DriverDaemon, RestartDaemon, Cluster,-;
        ALLOCATABLE_MEMORY      = "cluster.allocatable.memory",            "allocatable memory is capacity minus the reservations",   Critical, DriverDaemon, RestartDaemon, Cluster,-;
        ALLOCATABLE_STORAGE     = "cluster.allocatable.ephemeral-storage", "allocatable storage is capacity minus the reservations",  Critical, DriverDaemon, RestartDaemon, Cluster,-;
        ALLOCATABLE_PODS        = "cluster.allocatable.pods",              "allocatable pods is the blueprint's maxPods",             Critical, DriverDaemon, RestartDaemon, Cluster,-;
        ALLOCATABLE_GPU         = "cluster.allocatable.gpu",               "every advertised GPU is allocatable",                     Critical, DriverDaemon, RestartDaemon, Cluster,-;
        LABEL                   = "cluster.label",                         "the node carries the label",                              Critical, DriverDaemon, RestartDaemon, Cluster,-;
        TAINT                   = "cluster.taint",                         "the node's taints are the blueprint's",                   Critical, DriverDaemon, RestartDaemon, Cluster,-;
        CONDITION               = "cluster.condition",                     "the node is ready and under no pressure",                 Critical, DriverDaemon, RestartDaemon, Cluster,-;
        RUNTIME_HANDLER         = "cluster.runtime-handler",               "containerd offers the runtime handler",                   Critical, DriverDaemon, RestartDaemon, Cluster,-;
        RUNTIME_CLASSES         = "cluster.runtime-classes",               "the cluster's RuntimeClasses are known (a RuntimeClass list)", Critical, DriverDaemon, None,   Cluster,-;
        RUNTIME_CLASS           = "cluster.runtime-class",                 "the cluster holds the class's RuntimeClass, its handler and scheduling", Critical, DriverDaemon, None, Cluster,-;
        COMPONENTS              = "cluster.components",                    "the device components are known (a Pod list)",            Critical, DriverDaemon, None,          Cluster,-;
        COMPONENT               = "cluster.component",                     "the device component runs on the node and is ready",      Critical, DriverDaemon, RestartDaemon, Cluster,-;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = BTreeSet::new();
        for spec in CATALOG {
            assert!(seen.insert(spec.id), "{} is in the table twice", spec.id);
            assert!(
                spec.id.split('.').all(|part| !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')),
                "{} is not a dotted lower-case id",
                spec.id
            );
        }
    }

    #[test]
    fn phases_follow_stage_and_health() {
        assert_eq!(gpu::COUNT.phases(), vec![Phase::Boot, Phase::Health]);
        assert_eq!(gpu::MODEL.phases(), vec![Phase::Driver]);
        assert_eq!(os::DISTRO.phases(), vec![Phase::Boot]);
        assert_eq!(cluster::LABEL.phases(), vec![Phase::Cluster]);
    }

    #[test]
    fn cluster_checks_run_in_the_cluster_phase_alone() {
        use crate::verify::checks::Selection;
        let select = |phase| {
            let selection = Selection {
                phase,
                patterns: Vec::new(),
            };
            CATALOG
                .iter()
                .filter(|s| selection.includes(s, true))
                .map(|s| s.id)
                .collect::<Vec<_>>()
        };
        for phase in [Phase::Boot, Phase::Driver, Phase::All, Phase::Health] {
            assert!(
                select(phase).iter().all(|id| !id.starts_with("cluster.")),
                "{phase}"
            );
        }
        let cluster = select(Phase::Cluster);
        assert!(cluster.contains(&"cluster.capacity.cpu"));
        assert!(cluster.iter().all(|id| id.starts_with("cluster.")));
    }
}
