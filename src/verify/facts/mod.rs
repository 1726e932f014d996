//! Typed facts about a machine, each parsed once from what the [`Host`] returns.
//!
//! [`collect`] reads everything verify needs in one pass and never fails as a whole: a part
//! that cannot be read is a [`Fact::Unknown`] with its reason, and the rest is still
//! collected. One concept per module; this one only orders the collection.

pub mod attribute;
pub mod boot_security;
pub mod cdi;
pub mod cgroup;
pub mod cpu;
pub mod cpu_list;
pub mod dmi;
pub mod gpu;
pub mod hugepages;
pub mod iommu;
pub mod kernel;
pub mod kernel_log;
pub mod memlock;
pub mod memory;
pub mod modules;
pub mod nic;
pub mod numa;
pub mod nvidia_smi;
pub mod options;
pub mod os_release;
pub mod pci;
pub mod pci_address;
pub mod pcie_link;
pub mod rdma;
pub mod rocm_smi;
pub mod runtime;
pub mod shm;

use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

use self::options::{CollectOptions, KernelLogSource};

/// Everything verify knows about a machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Facts {
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Fact<String>,
    pub os: Fact<os_release::OsRelease>,
    pub kernel: kernel::Kernel,
    pub cgroup: Fact<cgroup::CgroupMode>,
    pub cpus: cpu::Cpus,
    pub numa_nodes: Fact<Vec<numa::NumaNode>>,
    pub memory: memory::Memory,
    pub dev_shm: Fact<shm::DevShm>,
    pub iommu: iommu::Iommu,
    pub boot_security: boot_security::BootSecurity,
    pub dmi: dmi::Dmi,
    pub pci_devices: Fact<Vec<pci::PciDevice>>,
    pub gpus: gpu::GpuFacts,
    pub nics: Fact<Vec<nic::Nic>>,
    pub rdma_devices: Fact<Vec<rdma::RdmaDevice>>,
    pub modules: modules::KernelModules,
    pub runtime: Fact<runtime::Runtime>,
    /// containerd's RLIMIT_MEMLOCK (what pods inherit).
    pub containerd_memlock: Fact<memlock::Memlock>,
    pub cdi_specs: Fact<Vec<cdi::CdiSpec>>,
    /// `None` when the caller skipped the kernel log.
    pub kernel_log: Option<Fact<kernel_log::KernelLog>>,
}

/// Reads every fact from `host`. Never panics and never fails as a whole.
pub fn collect(host: &dyn Host, options: &CollectOptions) -> Facts {
    let memory = memory::collect(host);
    let dev_shm = attribute::text(host, "/proc/mounts")
        .and_then(|mounts| shm::parse(&mounts, &memory.total_kb));
    let pci_devices = pci::collect(host);
    let gpus = gpu::collect(
        host,
        &pci_devices,
        &options.nvidia_smi,
        &options.rocm_smi,
        options.command_timeout,
    );
    let runtime = if options.runtime_commands {
        Fact::Known(runtime::collect(
            host,
            &options.units,
            options.command_timeout,
        ))
    } else {
        Fact::unknown("runtime commands were not run (disabled by the caller)")
    };
    let kernel_log = match &options.kernel_log {
        KernelLogSource::Skip => None,
        KernelLogSource::Provided(text) => Some(Fact::Known(kernel_log::parse(text))),
        KernelLogSource::Kmsg => {
            Some(Fact::from(host.read_kernel_log()).map(|text| kernel_log::parse(&text)))
        }
    };
    Facts {
        hostname: attribute::text(host, "/proc/sys/kernel/hostname"),
        os: os_release::collect(host),
        kernel: kernel::collect(host),
        cgroup: cgroup::collect(host),
        cpus: cpu::collect(host),
        numa_nodes: numa::collect(host),
        memory,
        dev_shm,
        iommu: iommu::collect(host),
        boot_security: boot_security::collect(host),
        dmi: dmi::collect(host),
        pci_devices,
        gpus,
        nics: nic::collect(host),
        rdma_devices: rdma::collect_at(host, rdma::INFINIBAND_CLASS),
        modules: modules::collect(host),
        runtime,
        containerd_memlock: memlock::collect(host),
        cdi_specs: cdi::collect(host),
        kernel_log,
    }
}
