//! `startup`: what runs before kubelet, in which order, and how the image
//! enables it — for the verify unit, the device-node and CDI units, the
//! containerd and kubelet drop-ins, the enablement links and the preset.
//!
//! The order on a node with a preinstalled NVIDIA driver:
//! modules loaded → device nodes (`nvidia-ctk system create-device-nodes`)
//! → nvidia-persistenced → CDI spec (`nvidia-ctk cdi generate`; Fabric
//! Manager alongside) → time synchronised → containerd → `nodeimg verify` →
//! kubelet. Verify pulls
//! in (`Wants=`) and waits for (`After=`) everything it gates on, so
//! nothing it checks is produced after it runs.
//!
//! With an operator-owned driver the boot phase checks the host only and
//! gates kubelet; the operator installs the driver after the node joined,
//! and `nodeimg-verify-driver.service` ([`DriverPhase`]) then produces the
//! device nodes and the CDI spec and runs the driver-phase checks.
//!
//! Enablement is carried by the layer itself: `<target>.wants/` links for
//! every unit the image starts (effective as soon as the layer is applied,
//! no `systemctl` step needed), and `usr/lib/systemd/system-preset/
//! 50-nodeimg.preset` with the same decisions, so that `systemctl
//! preset-all` (which RHEL-family image builds run, and first boot applies)
//! keeps them instead of applying a distribution's `disable *`. A second CDI
//! generator — the toolkit's own `nvidia-cdi-refresh` units (toolkit ≥
//! 1.18, enabled by its package) — is masked, so one generator writes one
//! spec.

use crate::blueprint::Spec;
use serde::Serialize;

use super::cdi::Cdi;
use super::gpu::Gpu;
use super::system::System;
use crate::render::escape;

/// How often verify runs before the node is given up on, and how long one
/// run waits for transient states (Fabric Manager training, links and IB
/// ports coming up) to settle.
pub const ATTEMPTS: u32 = 3;
pub const RETRY_DELAY_S: u64 = 20;
pub const SETTLE_S: u64 = 120;
/// One attempt at most: the settle deadline plus the vendor tools' own
/// timeouts (30 s each, run side by side) and the sysfs walk.
pub const ATTEMPT_MAX_S: u64 = 240;
/// How long the driver-phase unit waits for an operator to load the driver:
/// the operator's driver container builds or fetches the module after
/// kubelet joined (NVIDIA's precompiled drivers take minutes, a build from
/// source longer).
pub const DRIVER_WAIT_S: u64 = 1800;

#[derive(Debug, Clone, Serialize)]
pub struct Startup {
    /// Units verify waits for, in boot order.
    pub verify_after: Vec<String>,
    /// Units verify pulls into the boot transaction.
    pub verify_wants: Vec<String>,
    /// `nodeimg-device-nodes.service` is rendered (NVIDIA, CDI on the node).
    pub device_nodes: bool,
    /// `nodeimg-verify-driver.service`, rendered when an operator installs the
    /// driver after kubelet started: the driver-phase checks run then.
    pub driver_phase: Option<DriverPhase>,
    /// Units the CDI generator runs after.
    pub cdi_after: Vec<String>,
    pub retry: Retry,
    /// Paths containerd's and kubelet's data live under; their units
    /// require the mounts (`RequiresMountsFor=`).
    pub containerd_paths: Vec<String>,
    pub kubelet_paths: Vec<String>,
    /// Enablement and mask links the layer carries.
    pub links: Vec<Link>,
    /// The preset file's lines, `enable x.service` / `disable y.path`.
    pub preset: Vec<String>,
}

/// The driver phase of a node whose GPU driver an operator installs.
///
/// The unit waits (bounded) for the operator's kernel module to be live,
/// (re)runs the units that produce what the driver phase checks (device
/// nodes, the CDI spec: they need the driver, so they are not part of the
/// boot order on such a node), then runs `verify --phase driver` with the
/// boot phase's bounded retries. A driver that never loads is judged too:
/// verify runs and fails, leaving its report and evidence. The verdict
/// reaches the Node through node-problem-detector (`npd.driver_phase`),
/// which reads the unit's state and the summary it wrote.
#[derive(Debug, Clone, Serialize)]
pub struct DriverPhase {
    pub unit: &'static str,
    /// How long the unit waits for the operator's driver (the unit's
    /// `NODEIMG_DRIVER_WAIT_S`, which a drop-in may change).
    pub wait_s: u64,
    /// The driver's kernel module, and the sysfs file that says `live`
    /// once it is loaded.
    pub module: &'static str,
    pub module_state: String,
    /// Units (re)started once the driver is loaded, before verify.
    pub produce: Vec<String>,
    /// The unit's start timeout: the wait, the producers, verify's retries.
    pub timeout_s: u64,
    /// verify's one-line summary of this boot's driver phase (NPD's message).
    pub summary: &'static str,
    /// verify's JSON report (kept across reboots).
    pub report: &'static str,
}

/// Where the driver-phase unit leaves its verdict.
pub const DRIVER_UNIT: &str = "nodeimg-verify-driver.service";
pub const DRIVER_SUMMARY: &str = "/run/nodeimg-driver/summary.txt";
pub const DRIVER_REPORT: &str = "/var/lib/nodeimg/driver-verify.json";
/// Time for the producers (device nodes, CDI generation) once the driver is in.
const PRODUCE_MAX_S: u64 = 120;

#[derive(Debug, Clone, Serialize)]
pub struct Retry {
    pub attempts: u32,
    pub delay_s: u64,
    pub settle_s: u64,
    /// The unit's start timeout: every attempt and the pauses between them.
    pub timeout_s: u64,
}

/// A symbolic link in the layer: `path` (layer path) → `target`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Link {
    pub path: String,
    pub target: String,
}

const UNIT_DIR: &str = "etc/systemd/system";
/// Where distribution packages install units (merged /usr on every
/// supported release).
const PACKAGE_UNITS: &str = "/usr/lib/systemd/system";

/// `also`: (target, unit) of units other plan rows render, to enable too.
pub(super) fn of(
    s: &Spec,
    gpu: Option<&Gpu<'_>>,
    cdi: &Cdi,
    system: &System<'_>,
    also: &[(&str, &str)],
) -> Startup {
    let mut links = Vec::new();
    let mut preset = Vec::new();
    let mut enable = |target: &str, unit: &str, ours: bool| {
        let file = if ours {
            format!("/{UNIT_DIR}/{unit}")
        } else {
            format!("{PACKAGE_UNITS}/{unit}")
        };
        links.push(Link {
            path: format!("{UNIT_DIR}/{target}.wants/{unit}"),
            target: file,
        });
        preset.push(format!("enable {unit}"));
    };

    let nvidia = gpu.is_some_and(|g| g.nvidia);
    let preinstalled = gpu.is_some_and(|g| g.preinstalled);
    // An operator installs the driver after kubelet joined: what needs the
    // driver (device nodes, the CDI spec, the driver checks) runs in the
    // driver phase, after it loaded, not at boot.
    let operator_driver = gpu.is_some() && !preinstalled;
    let device_nodes = cdi.generate && nvidia;
    let persistenced = nvidia && preinstalled && gpu.is_some_and(|g| g.persistence);
    let fabric_manager = nvidia && preinstalled && gpu.is_some_and(|g| g.fabric_manager.is_some());

    // In boot order.
    let mut before_verify: Vec<String> = vec!["systemd-modules-load.service".into()];
    let mut wants: Vec<String> = Vec::new();
    if device_nodes && !operator_driver {
        before_verify.push("nodeimg-device-nodes.service".into());
        wants.push("nodeimg-device-nodes.service".into());
        enable("multi-user.target", "nodeimg-device-nodes.service", true);
    }
    let mut cdi_after = vec!["systemd-modules-load.service".to_string()];
    if device_nodes {
        cdi_after.push("nodeimg-device-nodes.service".into());
    }
    if persistenced {
        cdi_after.push("nvidia-persistenced.service".into());
    }
    if cdi.generate && !operator_driver {
        before_verify.push("nodeimg-cdi-generate.service".into());
        wants.push("nodeimg-cdi-generate.service".into());
        if cdi.on_boot {
            enable("multi-user.target", "nodeimg-cdi-generate.service", true);
        }
    }
    if persistenced {
        before_verify.push("nvidia-persistenced.service".into());
        wants.push("nvidia-persistenced.service".into());
        enable("multi-user.target", "nvidia-persistenced.service", false);
    }
    if fabric_manager {
        before_verify.push("nvidia-fabricmanager.service".into());
        wants.push("nvidia-fabricmanager.service".into());
        enable("multi-user.target", "nvidia-fabricmanager.service", false);
    }
    before_verify.push("network-online.target".into());
    wants.push("network-online.target".into());
    // Time synchronised: chrony-wait holds time-sync.target until chronyd
    // reports a synchronised clock (both Debian's and RHEL's chrony ship it,
    // disabled).
    before_verify.push("time-sync.target".into());
    if system.time_sync.is_some() {
        before_verify.push("chrony-wait.service".into());
        wants.push("time-sync.target".into());
        wants.push("chrony-wait.service".into());
        enable("multi-user.target", "chrony-wait.service", false);
    }
    // containerd: verify checks the running one (its memory-lock limit),
    // and with the CDI spec written before it starts, containerd reads the
    // spec verify checked. Running before acceptance starts no pod: kubelet
    // is the gate.
    before_verify.push("containerd.service".into());
    wants.push("containerd.service".into());
    enable("multi-user.target", "nodeimg-verify.service", true);
    let retry = Retry {
        attempts: ATTEMPTS,
        delay_s: RETRY_DELAY_S,
        settle_s: SETTLE_S,
        timeout_s: u64::from(ATTEMPTS) * (ATTEMPT_MAX_S + RETRY_DELAY_S),
    };
    let driver_phase = operator_driver.then(|| {
        enable("multi-user.target", DRIVER_UNIT, true);
        let module = if nvidia { "nvidia" } else { "amdgpu" };
        let mut produce = Vec::new();
        if device_nodes {
            produce.push("nodeimg-device-nodes.service".to_string());
        }
        if cdi.generate {
            produce.push("nodeimg-cdi-generate.service".to_string());
        }
        DriverPhase {
            unit: DRIVER_UNIT,
            wait_s: DRIVER_WAIT_S,
            module,
            module_state: format!("/sys/module/{module}/initstate"),
            produce,
            timeout_s: DRIVER_WAIT_S + PRODUCE_MAX_S + retry.timeout_s,
            summary: DRIVER_SUMMARY,
            report: DRIVER_REPORT,
        }
    });
    for (target, unit) in also {
        enable(target, unit, true);
    }

    let mut containerd_paths = vec![s.runtime.containerd.root.as_str().to_string()];
    let mut kubelet_paths = vec!["/var/lib/kubelet".to_string()];
    for p in &system.partitions {
        let unit = format!("{}.mount", mount_unit(p.mount_point));
        enable("local-fs.target", &unit, true);
        if p.mount_point.starts_with("/var/lib/containerd") {
            if !containerd_paths.iter().any(|x| x == p.mount_point) {
                containerd_paths.push(p.mount_point.to_string());
            }
        } else if !kubelet_paths.iter().any(|x| x == p.mount_point) {
            kubelet_paths.push(p.mount_point.to_string());
        }
    }

    if nvidia && cdi.generate && cdi.vendor == Some("nvidia") {
        for unit in ["nvidia-cdi-refresh.service", "nvidia-cdi-refresh.path"] {
            links.push(Link {
                path: format!("{UNIT_DIR}/{unit}"),
                target: "/dev/null".into(),
            });
            preset.push(format!("disable {unit}"));
        }
    }

    // A good boot is one whose verify passed (boot assessment).
    links.push(Link {
        path: format!("{UNIT_DIR}/boot-complete.target.requires/nodeimg-verify.service"),
        target: format!("/{UNIT_DIR}/nodeimg-verify.service"),
    });

    Startup {
        verify_after: before_verify,
        verify_wants: wants,
        device_nodes,
        driver_phase,
        cdi_after,
        retry,
        containerd_paths,
        kubelet_paths,
        links,
        preset,
    }
}

/// The mount unit name for a mount point (`/var/lib/containerd` →
/// `var-lib-containerd`), as `systemd-escape --path` writes it.
fn mount_unit(path: &str) -> String {
    escape::unit_path(minijinja::Value::from(path)).unwrap_or_else(|_| path.to_string())
}
