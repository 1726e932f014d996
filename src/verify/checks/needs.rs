//! Which of the costly facts the checks a run selects read, so that a run reads only those.
//!
//! Most facts are a few sysfs and procfs reads. A few cost real time at boot: the vendor
//! tools (`nvidia-smi -q -x` takes seconds on an 8-GPU node), `containerd --version` and
//! `kubelet --version` (Go programs whose start-up alone is tens of milliseconds),
//! `systemctl is-active`, the whole kernel log (one read per record from `/dev/kmsg`) and
//! every kernel parameter the image sets, and the kernel's build configuration (a few
//! hundred KiB, or a gzipped `/proc/config.gz`). [`Needs::of`] names the checks that read each of
//! them; [`Needs::apply`] leaves the rest unread, each with a reason that says so.
//!
//! Skipping can only make a fact unknown, which a check reports as an error, never a pass:
//! a check missing here fails closed. A test runs every check alone with only what it
//! needs and compares its verdict with the one it gets from every fact.

use super::catalog::{firmware, gpu, gpudirect, host, image, os, runtime, system};
use super::{Selection, Spec, Stage};
use crate::blueprint;
use crate::blueprint::model::DriverAuthority;
use crate::verify::facts::options::{CollectOptions, KernelLogSource, ToolOutput};

/// What the selected checks read, of the costly facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// The GPU vendor tool (nvidia-smi, rocm-smi): the checks that need the driver.
    pub gpu_tool: bool,
    /// The kernel log: Xid, SXid, amdgpu RAS and fallen-off-the-bus events (`gpu.xid`,
    /// `gpu.sxid`, `gpu.ras.events`, `gpu.event.unknown`), host memory errors and machine
    /// checks (`host.errors.*`).
    pub kernel_log: bool,
    /// `containerd --version` (`runtime.containerd.version`).
    pub containerd_version: bool,
    /// `kubelet --version` (`runtime.kubelet.version`).
    pub kubelet_version: bool,
    /// `systemctl is-active` (`system.time-sync.active` when `system.timeSync` is set,
    /// `gpu.fabric-manager.active`).
    pub unit_states: bool,
    /// `/proc/sys` read-back (`os.sysctl`).
    pub sysctls: bool,
    /// The kernel's build configuration (`gpudirect.dma-buf.kernel`, only on a DMA-BUF
    /// GPUDirect blueprint).
    pub kernel_config: bool,
    /// The image apply kept and the trust keys (`image.*`, only with
    /// `security.imageTrust`): a few small files, a config layer to decompress and a
    /// signature to verify.
    pub image: bool,
    /// `modinfo` of the GPU and RDMA modules (`os.module.kernel-build`,
    /// `os.module.signature`): a process per module, each reading a module file.
    pub module_builds: bool,
    /// `ipmitool mc info` (`firmware.bmc.version`, only when `firmware.versions.bmc` is
    /// pinned): a round trip to the BMC.
    pub bmc: bool,
}

impl Needs {
    /// Every costly fact (the acceptance record and an evidence capture want them all).
    pub const ALL: Needs = Needs {
        gpu_tool: true,
        kernel_log: true,
        containerd_version: true,
        kubelet_version: true,
        unit_states: true,
        sysctls: true,
        kernel_config: true,
        image: true,
        module_builds: true,
        bmc: true,
    };

    /// What the checks `selection` keeps for `blueprint` read.
    pub fn of(blueprint: &blueprint::Spec, selection: &Selection) -> Needs {
        let authority = blueprint.accelerators.as_ref().map(|a| a.driver.authority);
        let preinstalled = authority != Some(DriverAuthority::Operator);
        let selected = |spec: &Spec| selection.includes(spec, preinstalled);
        let gpus = blueprint.accelerators.is_some();
        let catalog = super::catalog();
        Needs {
            gpu_tool: gpus
                && catalog
                    .iter()
                    .any(|spec| spec.stage == Stage::Driver && selected(spec)),
            kernel_log: (gpus
                && [&gpu::XID, &gpu::SXID, &gpu::RAS_EVENTS, &gpu::EVENT_UNKNOWN]
                    .into_iter()
                    .any(selected))
                || [&host::UNCORRECTED, &host::CORRECTED]
                    .into_iter()
                    .any(selected),
            containerd_version: selected(&runtime::CONTAINERD),
            kubelet_version: selected(&runtime::KUBELET),
            unit_states: (blueprint.system.time_sync.is_some() && selected(&system::TIME_SYNC))
                || (gpus && selected(&gpu::FABRIC_MANAGER)),
            sysctls: selected(&os::SYSCTL),
            kernel_config: super::gpudirect::applies(blueprint)
                && selected(&gpudirect::DMA_BUF_KERNEL),
            image: blueprint.security.image_trust.is_some()
                && (selected(&image::SIGNATURE) || selected(&image::CONFIG)),
            module_builds: super::module_build::applies(blueprint)
                && (selected(&os::MODULE_BUILD) || selected(&os::MODULE_SIGNATURE)),
            bmc: blueprint
                .firmware
                .as_ref()
                .is_some_and(|f| f.versions.bmc.is_some())
                && selected(&firmware::BMC_VERSION),
        }
    }

    /// Leaves out of `options` what is not needed. A saved tool output or kernel log that
    /// is not needed is not parsed either.
    pub fn apply(self, options: &mut CollectOptions) {
        if !self.gpu_tool {
            options.nvidia_smi = ToolOutput::Skip;
            options.rocm_smi = ToolOutput::Skip;
        }
        if !self.kernel_log {
            options.kernel_log = KernelLogSource::Skip;
        }
        if !self.sysctls {
            options.sysctls.clear();
        }
        options.kernel_config &= self.kernel_config;
        options.image &= self.image;
        options.module_builds &= self.module_builds;
        options.bmc &= self.bmc;
        if !options.bmc {
            options.redfish = None;
        }
        if !self.unit_states {
            options.units.clear();
        }
        options.versions.containerd &= self.containerd_version;
        options.versions.kubelet &= self.kubelet_version;
        if !(self.unit_states || self.containerd_version || self.kubelet_version) {
            options.runtime_commands = false;
        }
    }
}
