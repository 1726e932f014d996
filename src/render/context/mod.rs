//! The values templates see, computed once from a checked blueprint, as a
//! typed [`Context`]: one sub-context per target (containerd, kubelet, CDI,
//! GPU, system, security, NFD, acceptance workloads), mirroring `templates/`.
//!
//! Templates stay declarative: every decision (which containerd config
//! version, which runtimes, the merged kubelet fields, unit names, trust
//! store paths) is made here in Rust, where it is typed and tested, and
//! templates only lay values out and escape them. Plan conditions, `each`
//! lists and the self-check read the same typed fields, so renaming a
//! field is a compile error rather than a file silently not rendered.
//! Templates (built-in or `--templates` overrides) see exactly this
//! context — not the raw blueprint. What verify reads back as well (the kernel
//! modules and parameters, [`Kernel`]) is computed in `blueprint`, below both.

mod acceptance;
mod amd;
mod boot;
mod cdi;
mod containerd;
mod gpu;
mod holds;
mod kubelet;
mod network;
mod nfd;
mod npd;
mod readmission;
mod remediation;
mod security;
mod shm;
mod startup;
mod system;
mod test_runner;
mod tolerations;
mod toolkit;

use serde::Serialize;

use super::RenderError;
use crate::blueprint::kernel::Kernel;
use crate::blueprint::runtime_classes::{self, RuntimeClass};
use crate::blueprint::{Blueprint, cmdline};

pub use acceptance::{Acceptance, GATE_LABEL, GATE_VALUE};
pub use amd::Amd;
pub use boot::Boot;
pub use cdi::Cdi;
pub use containerd::{Containerd, Registry, Runtime, pause_tag, sandbox_image};
pub use gpu::{Gpu, Operator};
pub use holds::Holds;
pub use kubelet::Kubelet;
pub use network::NicRule;
pub use nfd::Nfd;
pub use npd::Npd;
pub use readmission::Readmission;
pub use remediation::Remediation;
pub use security::Security;
pub use shm::Shm;
pub use startup::{Link, Startup};
pub use system::System;
pub use tolerations::Toleration;
pub use toolkit::Toolkit;

/// Where nodeimg lives on the node and what it writes there.
pub const NODEIMG_BIN: &str = "/usr/local/bin/nodeimg";
pub const LOCK_PATH: &str = "/etc/nodeimg/blueprint.lock.json";
pub const RECORD_PATH: &str = "/var/lib/nodeimg/acceptance.yaml";
pub const EVIDENCE_DIR: &str = "/var/lib/nodeimg/evidence";
pub const BREAK_GLASS: &str = "/etc/nodeimg/break-glass";
pub const CERTS_DIR: &str = "/etc/containerd/certs.d";

/// Everything a template can read.
#[derive(Debug, Clone, Serialize)]
pub struct Context<'a> {
    pub name: &'a str,
    pub id: &'a str,
    pub version: &'a str,
    /// The lock file's text (`etc/nodeimg/blueprint.lock.json`).
    pub lock: String,
    /// The matrix entries the blueprint was validated with, as the matrix
    /// file beside the lock (`etc/nodeimg/blueprint.matrix.json`).
    pub matrix: String,
    pub distro: Distro,
    /// The kernel command line, one argument each.
    pub cmdline: Vec<String>,
    /// How the command line reaches the boot loader.
    pub boot: Boot,
    pub gpu: Option<Gpu<'a>>,
    /// Any NIC with RDMA.
    pub rdma: bool,
    /// MTU and link-up rules per NIC group nodeimg can identify.
    pub nics: Vec<NicRule>,
    /// Modules loaded at boot and kernel parameters.
    pub kernel: Kernel,
    /// Package holds for what the blueprint pins.
    pub holds: Holds,
    pub containerd: Containerd<'a>,
    /// The RuntimeClasses of containerd's handlers beside runc (`cluster/runtime-classes/`).
    pub runtime_classes: Vec<RuntimeClass>,
    pub kubelet: Kubelet,
    pub cdi: Cdi,
    /// The NVIDIA Container Toolkit on the host, when the image carries it.
    pub toolkit: Option<Toolkit<'a>>,
    pub system: System<'a>,
    pub security: Security<'a>,
    /// CA certificates go into the distro trust store (registry CAs,
    /// system.certificates), so the store is rebuilt.
    pub trust_store: bool,
    pub nfd: Nfd<'a>,
    /// What the node's own DaemonSets tolerate: one per registration taint.
    pub tolerations: Vec<Toleration>,
    /// The node-problem-detector plugin; present with accelerators.
    pub npd: Option<Npd>,
    /// The AMD GPU Operator's DeviceConfig; present with an AMD operator.
    pub amd: Option<Amd>,
    /// The policy that sizes pods' `/dev/shm`; present with `system.shmSize`.
    pub shm: Option<Shm>,
    pub verify: Verify,
    /// The acceptance workloads (`cluster/acceptance/`); absent without an `acceptance` section.
    pub acceptance: Option<Acceptance<'a>>,
    /// Boot order and enablement of the units the image runs.
    pub startup: Startup,
    /// Isolation by fault class: node-problem-detector's health rules (one condition per
    /// class) and the NodeHealthChecks acting on them; absent without accelerators.
    pub remediation: Option<Remediation<'a>>,
    /// The acceptance workloads that re-admit a remediated node, by the part its fault
    /// pointed at; present with acceptance workloads and remediation.
    pub readmission: Option<Readmission<'a>>,
}

/// Distro-family paths.
#[derive(Debug, Clone, Serialize)]
pub struct Distro {
    pub name: &'static str,
    pub family: &'static str,
    pub version: String,
    pub chrony_conf: &'static str,
    /// Layer path of the system trust store's source folder.
    pub trust_dir: &'static str,
    pub trust_ext: &'static str,
    /// The program that owns `/etc/resolv.conf`: `networkmanager` on the
    /// RHEL family, `resolved` (systemd-resolved) on Debian and Ubuntu.
    pub resolver: &'static str,
    /// The command that rebuilds the trust store from its source folder.
    pub trust_update: &'static str,
}

/// Where the boot-time verifier lives and writes.
#[derive(Debug, Clone, Serialize)]
pub struct Verify {
    pub bin: &'static str,
    pub lock: &'static str,
    pub record: &'static str,
    pub evidence: &'static str,
    pub break_glass: &'static str,
}

impl<'a> Context<'a> {
    /// Computes the context of `bp`.
    pub fn new(bp: &'a Blueprint) -> Result<Self, RenderError> {
        let s = bp.spec();
        let rhel = s.os.distro.is_rhel_family();
        let args: Vec<String> = cmdline::full(s).iter().map(|a| a.to_string()).collect();
        let gpu = gpu::of(s);
        let cdi = cdi::of(s);
        let system = system::of(s);
        let kubelet = kubelet::of(bp)?;
        let boot = boot::of(rhel, &args);
        let trust_store = !s.system.certificates.is_empty()
            || s.runtime
                .containerd
                .registries
                .iter()
                .any(|r| r.ca_file.is_some());
        // Units other rows render, enabled like startup's own (the same
        // conditions as their plan rows).
        let mut also = Vec::new();
        if trust_store {
            also.push(("multi-user.target", "nodeimg-trust.service"));
        }
        if kubelet.fields.get("failSwapOn") != Some(&serde_json::Value::Bool(false)) {
            also.push(("sysinit.target", "nodeimg-swapoff.service"));
        }
        if boot.grubby {
            also.push(("sysinit.target", "nodeimg-kernel-args.service"));
        }
        // Boot assessment of an image applied in place (`nodeimg apply`).
        also.push(("sysinit.target", "nodeimg-boot-trial.service"));
        also.push(("multi-user.target", "nodeimg-boot-bless.service"));
        let startup = startup::of(s, gpu.as_ref(), &cdi, &system, &also);
        let tolerations = tolerations::of(s);
        Ok(Self {
            name: bp.name(),
            id: bp.id(),
            version: s.metadata.version.as_str(),
            lock: bp.identity().lock_text().trim_end().to_string(),
            matrix: bp.identity().matrix_text().trim_end().to_string(),
            distro: Distro {
                name: s.os.distro.as_str(),
                family: if rhel { "rhel" } else { "debian" },
                version: s.os.version.to_string(),
                chrony_conf: if rhel {
                    "etc/chrony.conf"
                } else {
                    "etc/chrony/chrony.conf"
                },
                trust_dir: if rhel {
                    "etc/pki/ca-trust/source/anchors"
                } else {
                    "usr/local/share/ca-certificates"
                },
                trust_ext: if rhel { "pem" } else { "crt" },
                resolver: if rhel { "networkmanager" } else { "resolved" },
                trust_update: if rhel {
                    "/usr/bin/update-ca-trust extract"
                } else {
                    "/usr/sbin/update-ca-certificates"
                },
            },
            cmdline: args.clone(),
            boot,
            gpu,
            rdma: s.network.nics.iter().any(|n| n.rdma),
            nics: network::of(s, bp.identity().matrix()),
            kernel: Kernel::of(s),
            holds: holds::of(s),
            containerd: containerd::of(s),
            runtime_classes: runtime_classes::of(s),
            kubelet,
            cdi,
            toolkit: toolkit::of(s),
            system,
            security: security::of(s),
            trust_store,
            nfd: nfd::of(s),
            amd: amd::of(s, &tolerations),
            shm: shm::of(s),
            tolerations,
            npd: s
                .accelerators
                .is_some()
                .then(|| npd::of(startup.driver_phase.as_ref())),
            verify: Verify {
                bin: NODEIMG_BIN,
                lock: LOCK_PATH,
                record: RECORD_PATH,
                evidence: EVIDENCE_DIR,
                break_glass: BREAK_GLASS,
            },
            acceptance: acceptance::of(s),
            remediation: remediation::of(s, startup.driver_phase.as_ref()),
            readmission: None,
            startup,
        })
        .map(|mut c: Self| {
            c.readmission = readmission::of(c.acceptance.as_ref(), c.remediation.is_some());
            c
        })
    }
}

/// A quantity as whole bytes, as text.
fn bytes(q: &crate::blueprint::value::Quantity) -> String {
    q.units_ceil().to_string()
}
