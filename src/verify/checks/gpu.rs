//! GPU checks: count and NVSwitches (from sysfs, before any driver), then what the driver
//! reports: model, driver and CUDA versions, kernel module flavour, VBIOS (pinned and
//! identical across GPUs), ECC mode and volatile uncorrectable errors, row remapping
//! (pending, failed) or, before Ampere, retired pages, Xid events in the kernel log,
//! persistence, MIG mode, and Fabric Manager with each GPU's fabric state.
//!
//! Row remapping and page retirement are alternatives: Ampere and later report retired
//! pages as N/A and remap rows; older GPUs report remapped rows as N/A. The check that
//! applies is the one whose counters the GPU reports; when neither is readable both are
//! errors. Xids are classified so automation knows what to do: application Xids (13, 31,
//! 43, 45, 68, 109) are a workload's fault (warning), NVLink Xids (74, 149) a link fault,
//! GSP Xids (119, 120) a driver fault, and the rest device faults; 64 (row remap failure)
//! and 79 (fallen off the bus) need repair, the others a reset.

use super::context::{Context, Observation};
use super::matcher::{Expect, all_identical};
use super::{Action, FaultClass, Severity, Spec, Stage};
use crate::blueprint::model::{Accelerators, KernelModule, SharingMode, Vendor};
use crate::blueprint::value::VersionReq;
use crate::verify::fact::Fact;
use crate::verify::facts::gpu::{Gpu, GpuVendor};
use crate::verify::facts::kernel_log::KernelEventKind;
use crate::verify::facts::nvidia_smi::NvidiaGpu;
use regex::Regex;

const fn spec(
    id: &'static str,
    summary: &'static str,
    fault: FaultClass,
    action: Action,
    health: bool,
) -> Spec {
    Spec {
        id,
        summary,
        severity: Severity::Critical,
        fault,
        action,
        stage: Stage::Driver,
        health,
    }
}

use Action::{IsolateAndRepair, Reset, Restart};
use FaultClass::{Device, DriverDaemon, Link};

pub const COUNT: Spec = Spec {
    stage: Stage::Host,
    ..spec(
        "gpu.count",
        "GPUs on the PCI bus",
        Device,
        IsolateAndRepair,
        true,
    )
};
pub const NVSWITCH: Spec = Spec {
    stage: Stage::Host,
    ..spec(
        "gpu.nvswitch.present",
        "NVSwitches on the PCI bus",
        Device,
        IsolateAndRepair,
        true,
    )
};
pub const MODEL: Spec = spec("gpu.model", "GPU model", Device, IsolateAndRepair, false);
pub const DRIVER: Spec = spec(
    "gpu.driver.version",
    "loaded GPU driver version",
    DriverDaemon,
    IsolateAndRepair,
    false,
);
pub const KERNEL_MODULE: Spec = spec(
    "gpu.driver.kernel-module",
    "NVIDIA kernel module flavour",
    DriverDaemon,
    IsolateAndRepair,
    false,
);
pub const CUDA: Spec = spec(
    "gpu.cuda.version",
    "CUDA version the driver supports",
    DriverDaemon,
    IsolateAndRepair,
    false,
);
pub const VBIOS: Spec = spec(
    "gpu.vbios",
    "GPU VBIOS version",
    Device,
    IsolateAndRepair,
    false,
);
pub const VBIOS_IDENTICAL: Spec = spec(
    "gpu.vbios.identical",
    "same VBIOS on every GPU",
    Device,
    IsolateAndRepair,
    false,
);
pub const ECC_MODE: Spec = spec("gpu.ecc.mode", "ECC enabled", Device, Reset, false);
pub const ECC_UNCORRECTABLE: Spec = spec(
    "gpu.ecc.volatile-uncorrectable",
    "no uncorrectable ECC errors since the driver loaded",
    Device,
    Reset,
    true,
);
pub const REMAP_PENDING: Spec = spec(
    "gpu.row-remap.pending",
    "no row remapping pending",
    Device,
    Reset,
    true,
);
pub const REMAP_FAILURE: Spec = spec(
    "gpu.row-remap.failure",
    "no row remapping failure",
    Device,
    IsolateAndRepair,
    true,
);
pub const RETIRED_PAGES: Spec = spec(
    "gpu.retired-pages",
    "no page retirement pending",
    Device,
    Reset,
    true,
);
pub const XID: Spec = spec(
    "gpu.xid",
    "no Xid events in the kernel log",
    Device,
    Reset,
    true,
);
pub const PERSISTENCE: Spec = spec(
    "gpu.persistence",
    "persistence mode",
    DriverDaemon,
    Restart,
    false,
);
pub const MIG: Spec = spec("gpu.mig.mode", "MIG mode", DriverDaemon, Reset, false);
pub const FABRIC_MANAGER: Spec = spec(
    "gpu.fabric-manager.active",
    "nvidia-fabricmanager active",
    DriverDaemon,
    Restart,
    true,
);
pub const FABRIC_STATE: Spec = spec(
    "gpu.fabric.state",
    "GPU joined the NVLink fabric",
    Link,
    Reset,
    true,
);

pub const SPECS: &[Spec] = &[
    COUNT,
    NVSWITCH,
    MODEL,
    DRIVER,
    KERNEL_MODULE,
    CUDA,
    VBIOS,
    VBIOS_IDENTICAL,
    ECC_MODE,
    ECC_UNCORRECTABLE,
    REMAP_PENDING,
    REMAP_FAILURE,
    RETIRED_PAGES,
    XID,
    PERSISTENCE,
    MIG,
    FABRIC_MANAGER,
    FABRIC_STATE,
];

const NVIDIA_SMI: &str = "nvidia-smi -q -x";

fn vendor(v: Vendor) -> GpuVendor {
    match v {
        Vendor::Nvidia => GpuVendor::Nvidia,
        Vendor::Amd => GpuVendor::Amd,
    }
}

fn enabled(on: &bool) -> String {
    if *on { "enabled" } else { "disabled" }.to_owned()
}

fn yes_no(on: &bool) -> String {
    if *on { "yes" } else { "no" }.to_owned()
}

/// This GPU's nvidia-smi entry.
fn nvidia(gpu: &Gpu) -> Fact<&NvidiaGpu> {
    match &gpu.nvidia {
        Some(Fact::Known(entry)) => Fact::Known(entry),
        Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
        None => Fact::unknown(format!("{NVIDIA_SMI} has no entry for {}", gpu.address)),
    }
}

pub fn evaluate(ctx: &mut Context) {
    let Some(accelerators) = &ctx.blueprint.accelerators else {
        return;
    };
    let facts = ctx.facts;
    let gpus: Vec<&Gpu> = facts
        .gpus
        .gpus
        .iter()
        .filter(|g| g.vendor == vendor(accelerators.vendor))
        .collect();
    let in_sysfs: Vec<String> = gpus
        .iter()
        .filter(|g| g.pci.is_known())
        .map(|g| g.address.to_string())
        .collect();
    let observed = match &facts.pci_devices {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(_) => Observation::value(
            in_sysfs.len().to_string(),
            in_sysfs.len() == accelerators.count as usize,
        ),
    };
    ctx.record(
        &COUNT,
        None,
        format!(
            "{} {} {}",
            accelerators.count,
            accelerators.vendor.as_str(),
            accelerators.model
        ),
        observed,
        vec!["/sys/bus/pci/devices".to_owned()],
    );
    if accelerators.interconnect.nvswitch {
        let switches = &facts.gpus.nvswitches;
        let observed = match &facts.pci_devices {
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
            Fact::Known(_) => Observation::value(switches.len().to_string(), !switches.is_empty()),
        };
        ctx.record(
            &NVSWITCH,
            None,
            "at least 1",
            observed,
            vec!["/sys/bus/pci/devices".to_owned()],
        );
    }
    driver(ctx, accelerators);
    for gpu in &gpus {
        model(ctx, accelerators, gpu);
        if accelerators.vendor == Vendor::Nvidia {
            nvidia_gpu(ctx, accelerators, gpu);
        } else {
            amd_gpu(ctx, accelerators, gpu);
        }
        xid(ctx, gpu);
    }
    vbios_identical(ctx, accelerators, &gpus);
    if accelerators.vendor == Vendor::Nvidia && accelerators.interconnect.nvswitch {
        let state = facts.runtime.clone().and_then(|r| {
            r.units
                .get("nvidia-fabricmanager")
                .cloned()
                .unwrap_or_else(|| {
                    Fact::unknown("the nvidia-fabricmanager unit state was not collected")
                })
        });
        ctx.expect(
            &FABRIC_MANAGER,
            None,
            &Expect::equal("active"),
            &state,
            vec!["systemctl is-active -- nvidia-fabricmanager".to_owned()],
        );
    }
}

fn driver(ctx: &mut Context, accelerators: &Accelerators) {
    let facts = ctx.facts;
    let expect = Expect::Version(accelerators.driver.version.clone());
    match accelerators.vendor {
        Vendor::Nvidia => {
            let version = facts.modules.nvidia_driver.clone().map(|d| d.version);
            ctx.expect(
                &DRIVER,
                None,
                &expect,
                &version,
                vec!["/proc/driver/nvidia/version".to_owned()],
            );
            if let Some(flavour) = accelerators.driver.kernel_module {
                let open = flavour == KernelModule::Open;
                ctx.record(
                    &KERNEL_MODULE,
                    None,
                    if open { "open" } else { "proprietary" },
                    Observation::of(
                        &facts.modules.nvidia_driver,
                        |d| if d.open { "open" } else { "proprietary" }.to_owned(),
                        |d| d.open == open,
                    ),
                    vec!["/proc/driver/nvidia/version".to_owned()],
                );
            }
            if let Some(cuda) = &accelerators.cuda {
                let observed = match &facts.gpus.nvidia_smi {
                    Some(summary) => summary.clone().and_then(|s| s.cuda_version),
                    None => Fact::unknown("nvidia-smi was not run: no NVIDIA GPU on the PCI bus"),
                };
                let expect = match format!(">={cuda}").parse::<VersionReq>() {
                    Ok(req) => Expect::Version(req),
                    Err(_) => Expect::equal(cuda),
                };
                ctx.expect(&CUDA, None, &expect, &observed, vec![NVIDIA_SMI.to_owned()]);
            }
        }
        Vendor::Amd => {
            let version = facts
                .modules
                .versions
                .clone()
                .and_then(|v| match v.get("amdgpu") {
                    Some(version) => Fact::Known(version.clone()),
                    None => Fact::unknown(
                        "/sys/module/amdgpu/version: amdgpu is not loaded or has no version",
                    ),
                });
            ctx.expect(
                &DRIVER,
                None,
                &expect,
                &version,
                vec!["/sys/module/amdgpu/version".to_owned()],
            );
        }
    }
}

/// The names a GPU of the blueprint's model may report: the model, its aliases from the
/// compatibility matrix, or any name carrying the model's words (`AMD Instinct MI300X`).
fn model_expectation(ctx: &Context, accelerators: &Accelerators) -> Expect {
    let mut names = vec![accelerators.model.to_string()];
    if let Some(model) = ctx.matrix.model(accelerators.vendor, &accelerators.model) {
        names.push(model.model.clone());
        names.extend(model.aliases.iter().cloned());
    }
    names.dedup();
    let words: Vec<String> = accelerators
        .model
        .split_whitespace()
        .map(regex::escape)
        .collect();
    let pattern = format!(r"(?i)(^|\s){}(\s|$)", words.join(r"\s+"));
    match Regex::new(&pattern) {
        Ok(regex) => Expect::Any(vec![Expect::OneOf(names), Expect::Pattern(regex)]),
        Err(_) => Expect::OneOf(names),
    }
}

fn model(ctx: &mut Context, accelerators: &Accelerators, gpu: &Gpu) {
    let subject = Some(gpu.address.to_string());
    let expect = model_expectation(ctx, accelerators);
    let (name, evidence) = match accelerators.vendor {
        Vendor::Nvidia => (nvidia(gpu).and_then(|g| g.product_name.clone()), NVIDIA_SMI),
        Vendor::Amd => (
            amd(gpu).and_then(|g| g.product_name.clone()),
            "rocm-smi --json",
        ),
    };
    ctx.expect(&MODEL, subject, &expect, &name, vec![evidence.to_owned()]);
}

fn amd(gpu: &Gpu) -> Fact<&crate::verify::facts::rocm_smi::AmdGpu> {
    match &gpu.amd {
        Some(Fact::Known(entry)) => Fact::Known(entry),
        Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
        None => Fact::unknown(format!("rocm-smi has no entry for {}", gpu.address)),
    }
}

fn amd_gpu(ctx: &mut Context, accelerators: &Accelerators, gpu: &Gpu) {
    if let Some(req) = accelerators_vbios(ctx, accelerators) {
        let vbios = amd(gpu).and_then(|g| g.vbios_version.clone());
        ctx.expect(
            &VBIOS,
            Some(gpu.address.to_string()),
            &Expect::Version(req),
            &vbios,
            vec!["rocm-smi --json".to_owned()],
        );
    }
}

fn accelerators_vbios(ctx: &Context, _accelerators: &Accelerators) -> Option<VersionReq> {
    ctx.blueprint
        .firmware
        .as_ref()
        .and_then(|f| f.versions.gpu_vbios.clone())
}

fn vbios_identical(ctx: &mut Context, accelerators: &Accelerators, gpus: &[&Gpu]) {
    if gpus.len() < 2 {
        return;
    }
    let versions: Vec<Fact<String>> = gpus
        .iter()
        .map(|gpu| match accelerators.vendor {
            Vendor::Nvidia => nvidia(gpu).and_then(|g| g.vbios_version.clone()),
            Vendor::Amd => amd(gpu).and_then(|g| g.vbios_version.clone()),
        })
        .collect();
    let observation = match versions.iter().find_map(|v| v.reason()) {
        Some(reason) => Observation::unknown(reason.to_owned()),
        None => match all_identical(
            versions
                .iter()
                .filter_map(|v| v.known().map(String::as_str)),
        ) {
            Ok(text) => Observation::value(text, true),
            Err(text) => Observation::value(text, false),
        },
    };
    let evidence = match accelerators.vendor {
        Vendor::Nvidia => NVIDIA_SMI,
        Vendor::Amd => "rocm-smi --json",
    };
    ctx.record(
        &VBIOS_IDENTICAL,
        None,
        "one VBIOS version",
        observation,
        vec![evidence.to_owned()],
    );
}

fn nvidia_gpu(ctx: &mut Context, accelerators: &Accelerators, gpu: &Gpu) {
    let subject = || Some(gpu.address.to_string());
    let evidence = || vec![NVIDIA_SMI.to_owned()];
    let entry = nvidia(gpu);
    let field = |get: fn(&NvidiaGpu) -> Fact<bool>| entry.clone().and_then(get);
    if let Some(req) = accelerators_vbios(ctx, accelerators) {
        let vbios = entry.clone().and_then(|g| g.vbios_version.clone());
        ctx.expect(&VBIOS, subject(), &Expect::Version(req), &vbios, evidence());
    }
    if accelerators.ecc_required {
        ctx.record(
            &ECC_MODE,
            subject(),
            "enabled",
            Observation::of(&field(|g| g.ecc_mode.current.clone()), enabled, |on| *on),
            evidence(),
        );
    }
    let uncorrectable = entry
        .clone()
        .and_then(|g| g.ecc_errors.volatile.uncorrectable.clone());
    ctx.expect(
        &ECC_UNCORRECTABLE,
        subject(),
        &Expect::exactly(0.0),
        &uncorrectable,
        evidence(),
    );

    let remapped = entry.clone().and_then(|g| g.remapped_rows.clone());
    let retired = entry.clone().map(|g| g.retired_pages.clone());
    let retired_known = retired.known().is_some_and(|r| {
        r.pending.is_known() || r.single_bit.is_known() || r.double_bit.is_known()
    });
    if remapped.is_known() || !retired_known {
        let pending = remapped.clone().and_then(|r| r.pending);
        ctx.record(
            &REMAP_PENDING,
            subject(),
            "no",
            Observation::of(&pending, yes_no, |p| !*p),
            evidence(),
        );
        let failure = remapped.and_then(|r| r.failure);
        ctx.record(
            &REMAP_FAILURE,
            subject(),
            "no",
            Observation::of(&failure, yes_no, |f| !*f),
            evidence(),
        );
    }
    if retired_known || entry.known().is_none() {
        let pending = retired.and_then(|r| r.pending);
        ctx.record(
            &RETIRED_PAGES,
            subject(),
            "no retirement pending",
            Observation::of(&pending, |p| format!("pending: {}", yes_no(p)), |p| !*p),
            evidence(),
        );
    }
    if accelerators.persistence {
        ctx.record(
            &PERSISTENCE,
            subject(),
            "enabled",
            Observation::of(&field(|g| g.persistence_mode.clone()), enabled, |on| *on),
            evidence(),
        );
    }
    let mig = accelerators.sharing.mode() == SharingMode::Mig;
    ctx.record(
        &MIG,
        subject(),
        enabled(&mig),
        Observation::of(&field(|g| g.mig.current.clone()), enabled, |on| *on == mig),
        evidence(),
    );
    if accelerators.interconnect.nvswitch {
        let fabric = entry.and_then(|g| match (&g.fabric.state, &g.fabric.status) {
            (Fact::Known(state), Fact::Known(status)) => {
                Fact::Known((state.clone(), status.clone()))
            }
            (Fact::Unknown { reason }, _) | (_, Fact::Unknown { reason }) => {
                Fact::unknown(reason.clone())
            }
        });
        ctx.record(
            &FABRIC_STATE,
            subject(),
            "Completed / Success",
            Observation::of(
                &fabric,
                |(state, status)| format!("{state} / {status}"),
                |(state, status)| state == "Completed" && status == "Success",
            ),
            evidence(),
        );
    }
}

/// How an Xid is handled: its fault class, the action, and whether it blocks the node.
pub fn classify_xid(code: u32) -> (FaultClass, Action, Severity) {
    match code {
        13 | 31 | 43 | 45 | 68 | 109 => (
            FaultClass::TransientApplication,
            Action::Restart,
            Severity::Warning,
        ),
        74 | 149 => (FaultClass::Link, Action::Reset, Severity::Critical),
        119 | 120 => (FaultClass::DriverDaemon, Action::Reset, Severity::Critical),
        64 | 79 => (
            FaultClass::Device,
            Action::IsolateAndRepair,
            Severity::Critical,
        ),
        _ => (FaultClass::Device, Action::Reset, Severity::Critical),
    }
}

fn xid(ctx: &mut Context, gpu: &Gpu) {
    let address = gpu.address.to_string();
    let log = match &ctx.facts.kernel_log {
        Some(log) => log.clone(),
        None => Fact::unknown("the kernel log was not read"),
    };
    let mut codes: Vec<u32> = Vec::new();
    let mut fallen = false;
    if let Fact::Known(log) = &log {
        for event in &log.events {
            match &event.kind {
                KernelEventKind::Xid {
                    code,
                    pci: Some(pci),
                } if address.starts_with(&pci.to_ascii_lowercase()) => codes.push(*code),
                KernelEventKind::FallenOffBus { pci: Some(pci) } if *pci == gpu.address => {
                    fallen = true
                }
                _ => {}
            }
        }
    }
    let mut shown: Vec<String> = codes.iter().map(|c| format!("Xid {c}")).collect();
    if fallen {
        shown.push("fallen off the bus".to_owned());
    }
    let observation = match &log {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(_) if shown.is_empty() => Observation::value("none", true),
        Fact::Known(_) => Observation::value(shown.join(", "), false),
    };
    let result = ctx.record(
        &XID,
        Some(address),
        "none",
        observation,
        vec!["/dev/kmsg".to_owned()],
    );
    let worst = codes
        .iter()
        .map(|c| classify_xid(*c))
        .chain(fallen.then_some((
            FaultClass::Device,
            Action::IsolateAndRepair,
            Severity::Critical,
        )))
        .max_by_key(|(_, action, severity)| (*action, std::cmp::Reverse(*severity)));
    if let Some((fault, action, severity)) = worst {
        result.fault = fault;
        result.action = action;
        result.severity = severity;
    }
}
