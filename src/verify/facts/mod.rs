//! Typed facts about a machine, each parsed once from what the [`Host`] returns.
//!
//! [`collect`] reads everything verify needs in one pass and never fails as a whole: a part
//! that cannot be read is a [`Fact::Unknown`] with its reason, and the rest is still
//! collected. One concept per module; this one only orders the collection.

pub mod amd_ras;
pub mod applied;
pub mod attribute;
pub mod bmc;
pub mod boot_security;
pub mod cdi;
pub mod cgroup;
pub mod cpu;
pub mod cpu_list;
pub mod disk;
pub mod dmi;
pub mod dri;
pub mod fabric_manager_log;
pub mod gpu;
pub mod hugepages;
pub mod image;
pub mod iommu;
pub mod kernel;
pub mod kernel_config;
pub mod kernel_log;
pub mod memlock;
pub mod memory;
pub mod module_build;
pub mod modules;
pub mod mounts;
pub mod nic;
pub mod numa;
pub mod nvidia_smi;
pub mod options;
pub mod os_release;
pub mod pci;
pub mod pci_address;
pub mod pcie_acs;
pub mod pcie_link;
pub mod rdma;
pub mod redfish_host_interface;
pub mod rocm_smi;
pub mod runtime;
pub mod shm;
pub mod sysctl;

use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;

use self::options::{CollectOptions, KernelLogSource};

/// Everything verify knows about a machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Facts {
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Fact<String>,
    pub os: Fact<os_release::OsRelease>,
    pub kernel: kernel::Kernel,
    /// The options of the running kernel's build configuration verify asks about
    /// (`/boot/config-<release>` or `/proc/config.gz`); unknown when not read.
    pub kernel_config: Fact<kernel_config::KernelConfig>,
    pub cgroup: Fact<cgroup::CgroupMode>,
    pub cpus: cpu::Cpus,
    pub numa_nodes: Fact<Vec<numa::NumaNode>>,
    pub memory: memory::Memory,
    pub dev_shm: Fact<shm::DevShm>,
    pub iommu: iommu::Iommu,
    pub boot_security: boot_security::BootSecurity,
    pub dmi: dmi::Dmi,
    /// The BMC's firmware version (Redfish host interface, or `ipmitool mc info`).
    pub bmc_firmware: bmc::BmcFirmware,
    pub pci_devices: Fact<Vec<pci::PciDevice>>,
    /// ACS of every bridge between the root complex and a GPU or NIC (`config`).
    pub pcie_acs: Fact<Vec<pcie_acs::AcsPort>>,
    pub gpus: gpu::GpuFacts,
    pub nics: Fact<Vec<nic::Nic>>,
    pub rdma_devices: Fact<Vec<rdma::RdmaDevice>>,
    pub modules: modules::KernelModules,
    /// The GPU and RDMA module files the running kernel would load, and those in memory.
    pub module_builds: module_build::ModuleBuilds,
    pub runtime: Fact<runtime::Runtime>,
    /// containerd's RLIMIT_MEMLOCK (what pods inherit).
    pub containerd_memlock: Fact<memlock::Memlock>,
    pub cdi_specs: Fact<Vec<cdi::CdiSpec>>,
    /// `/proc/mounts` and the partitions by label.
    pub mounts: mounts::Mounts,
    /// Space and inodes of each local disk file system, by mount point (`df`).
    pub disk_usage: Fact<BTreeMap<String, disk::DiskUsage>>,
    /// `/dev/dri/renderD*` and the PCI device of each.
    pub render_nodes: Fact<Vec<dri::RenderNode>>,
    /// Kernel parameters from `/proc/sys`, by dotted name (those the options named).
    pub sysctls: BTreeMap<String, Fact<sysctl::Setting>>,
    /// `None` when the caller skipped the kernel log.
    pub kernel_log: Option<Fact<kernel_log::KernelLog>>,
    /// The image `apply` kept, judged with the node's trust keys.
    pub image: Fact<image::RunningImage>,
    /// Which of the files every image writes this machine lacks.
    pub applied: Fact<applied::Applied>,
    /// `/proc/sys/kernel/random/boot_id`: which boot the kernel log is of.
    pub boot_id: Fact<String>,
    /// Fabric Manager's log; `None` when the file does not exist.
    pub fabric_manager_log: Fact<Option<fabric_manager_log::FabricManagerLog>>,
}

/// Fabric Manager's log file (its configuration's `LOG_FILE_NAME` default).
pub const FABRIC_MANAGER_LOG: &str = "/var/log/fabricmanager.log";

/// Reads every fact from `host`. Never panics and never fails as a whole.
///
/// The vendor commands (nvidia-smi or rocm-smi, containerd, kubelet, systemctl) are the
/// slow part, seconds on an 8-GPU node: they run on their own threads, all started at once
/// under the same `command_timeout`, while this thread reads sysfs and procfs. The PCI
/// walk comes first, as it says whether a GPU tool is needed at all.
pub fn collect(host: &dyn Host, options: &CollectOptions) -> Facts {
    let pci_devices = pci::collect(host);
    std::thread::scope(|scope| {
        // The GPU thread owns the PCI list while it reads it, and hands both back.
        let gpus = scope.spawn(move || {
            let gpus = gpu::collect(
                host,
                &pci_devices,
                &options.nvidia_smi,
                &options.rocm_smi,
                options.command_timeout,
            );
            (pci_devices, gpus)
        });
        let bmc_firmware = scope.spawn(|| {
            if options.bmc {
                bmc::collect(host, options.redfish.as_ref(), options.command_timeout)
            } else {
                bmc::BmcFirmware {
                    version: Fact::unknown("the BMC was not asked: no selected check needs it"),
                    source: String::new(),
                }
            }
        });
        let module_builds = scope.spawn(|| {
            if options.module_builds {
                module_build::collect(host, options.command_timeout)
            } else {
                module_build::ModuleBuilds::not_read(
                    "the module files were not read: no selected check needs them",
                )
            }
        });
        let runtime = scope.spawn(|| {
            if options.runtime_commands {
                Fact::Known(runtime::collect(
                    host,
                    &options.units,
                    options.versions,
                    options.command_timeout,
                ))
            } else {
                Fact::unknown("runtime commands were not run (disabled by the caller)")
            }
        });
        let memory = memory::collect(host);
        let dev_shm = attribute::text(host, "/proc/mounts")
            .and_then(|mounts| shm::parse(&mounts, &memory.total_kb));
        let kernel_log = match &options.kernel_log {
            KernelLogSource::Skip => None,
            KernelLogSource::Provided(text) => Some(Fact::Known(kernel_log::parse_since(
                text,
                options.kernel_log_since.as_ref(),
            ))),
            KernelLogSource::Kmsg => Some(
                Fact::from(host.read_kernel_log())
                    .map(|text| kernel_log::parse_since(&text, options.kernel_log_since.as_ref())),
            ),
        };
        let boot_id = attribute::text(host, "/proc/sys/kernel/random/boot_id");
        let fabric_manager_log = match host.read_text(std::path::Path::new(FABRIC_MANAGER_LOG)) {
            Ok(text) => Fact::Known(Some(fabric_manager_log::parse(&text))),
            Err(e) if e.is_not_found() => Fact::Known(None),
            Err(e) => Fact::unknown(e.to_string()),
        };
        let hostname = attribute::text(host, "/proc/sys/kernel/hostname");
        let os = os_release::collect(host);
        let kernel = kernel::collect(host);
        let kernel_config = if options.kernel_config {
            kernel_config::collect(host, &kernel.release)
        } else {
            Fact::unknown("the kernel configuration was not read: no selected check needs it")
        };
        let cgroup = cgroup::collect(host);
        let cpus = cpu::collect(host);
        let numa_nodes = numa::collect(host);
        let iommu = iommu::collect(host);
        let boot_security = boot_security::collect(host);
        let dmi = dmi::collect(host);
        let nics = nic::collect(host);
        let rdma_devices = rdma::collect_at(host, rdma::INFINIBAND_CLASS);
        let modules = modules::collect(host);
        let cdi_specs = cdi::collect(host);
        let render_nodes = dri::collect(host);
        let mounts = mounts::collect(host);
        let disk_usage = disk::collect(host, &mounts, options.command_timeout);
        let containerd_memlock = memlock::collect(host);
        let sysctls = sysctl::collect(host, &options.sysctls);
        let image = if options.image {
            image::collect(host)
        } else {
            Fact::unknown("the kept image was not read: no selected check needs it")
        };
        let applied = applied::collect(host);
        let (pci_devices, gpus) = runtime::joined(gpus);
        let pcie_acs = pcie_acs::collect(host, &pci_devices);
        Facts {
            hostname,
            os,
            kernel,
            kernel_config,
            cgroup,
            cpus,
            numa_nodes,
            memory,
            dev_shm,
            iommu,
            boot_security,
            dmi,
            bmc_firmware: runtime::joined(bmc_firmware),
            pci_devices,
            pcie_acs,
            gpus,
            nics,
            rdma_devices,
            modules,
            module_builds: runtime::joined(module_builds),
            runtime: runtime::joined(runtime),
            containerd_memlock,
            cdi_specs,
            render_nodes,
            mounts,
            disk_usage,
            sysctls,
            kernel_log,
            image,
            applied,
            boot_id,
            fabric_manager_log,
        }
    })
}
