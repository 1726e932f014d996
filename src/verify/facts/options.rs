//! What a fact collection should do besides reading files: which vendor tools to run (or
//! what saved output to use instead), the kernel log source, the timeout, the units.
//!
//! Saved outputs are passed as text, not paths: the caller (the CLI) reads them from the
//! machine running nodeimg, which is not the verified machine behind the `Host`.

use crate::blueprint::value::SysctlKey;
use crate::verify::host::UnitName;
use std::time::Duration;

/// Where a vendor tool's output comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolOutput {
    /// Run the tool when a GPU of its vendor is on the PCI bus.
    #[default]
    Run,
    /// Use this saved output (e.g. a captured `nvidia-smi -q -x`).
    Provided(String),
    /// Do not run it; GPU facts from it are `Unknown`.
    Skip,
}

/// Where kernel-log events come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum KernelLogSource {
    /// `/dev/kmsg` through the host, read without blocking.
    #[default]
    Kmsg,
    /// A saved `dmesg` or kmsg text.
    Provided(String),
    Skip,
}

/// Which runtime tools are asked for their version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeVersions {
    pub containerd: bool,
    pub kubelet: bool,
}

impl Default for RuntimeVersions {
    fn default() -> Self {
        RuntimeVersions {
            containerd: true,
            kubelet: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectOptions {
    pub nvidia_smi: ToolOutput,
    pub rocm_smi: ToolOutput,
    pub kernel_log: KernelLogSource,
    /// The health phase's position in this boot's kernel log from its last run: records at
    /// or before it are not judged again.
    pub kernel_log_since: Option<super::kernel_log::Cursor>,
    /// Deadline for each vendor command.
    pub command_timeout: Duration,
    /// Units whose `systemctl is-active` state is collected.
    pub units: Vec<UnitName>,
    /// Run `containerd --version` and `systemctl` (off when only hardware is of interest).
    pub runtime_commands: bool,
    /// Which `--version` runs happen when `runtime_commands` is on (a Go daemon's
    /// `--version` costs tens of milliseconds of start-up; verify asks only for the
    /// versions its selected checks judge).
    pub versions: RuntimeVersions,
    /// Kernel parameters read back from `/proc/sys`; by default every key the image's
    /// baselines write ([`super::sysctl::BASELINE`]).
    pub sysctls: Vec<SysctlKey>,
    /// Read the kernel's build configuration (`/boot/config-<release>`, a few hundred
    /// KiB, or `/proc/config.gz`).
    pub kernel_config: bool,
    /// Read the image `apply` kept (`/var/lib/nodeimg/image`) and the trust keys, and
    /// verify its signature.
    pub image: bool,
    /// Run `modinfo` on the GPU and RDMA modules and read them in `/sys/module`.
    pub module_builds: bool,
    /// Ask the BMC for its firmware revision (`ipmitool mc info`).
    pub bmc: bool,
    /// Read it through the BMC's Redfish host interface with these credentials instead,
    /// where the machine has one.
    pub redfish: Option<crate::blueprint::model::RedfishAccess>,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            nvidia_smi: ToolOutput::Run,
            rocm_smi: ToolOutput::Run,
            kernel_log: KernelLogSource::Kmsg,
            kernel_log_since: None,
            command_timeout: Duration::from_secs(30),
            units: [
                "containerd",
                "kubelet",
                "nvidia-fabricmanager",
                "chrony",
                "chronyd",
                "systemd-timesyncd",
            ]
            .iter()
            .filter_map(|name| UnitName::parse(name).ok())
            .collect(),
            runtime_commands: true,
            versions: RuntimeVersions::default(),
            sysctls: super::sysctl::baseline(),
            kernel_config: true,
            image: true,
            module_builds: true,
            bmc: true,
            redfish: None,
        }
    }
}
