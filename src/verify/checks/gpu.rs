//! GPU checks: count and NVSwitches (from sysfs, before any driver), then what the driver
//! reports: model, driver and CUDA versions, kernel module flavour, VBIOS (pinned and
//! identical across GPUs), ECC mode and volatile uncorrectable errors, row remapping
//! (pending, failed) or, before Ampere, retired pages, the driver's recovery action,
//! persistence, MIG mode, and Fabric Manager with each GPU's fabric state.
//!
//! Row remapping and page retirement are alternatives: Ampere and later report retired
//! pages as N/A and remap rows; older GPUs report remapped rows as N/A. The check that
//! applies is the one whose counters the GPU reports; when neither is readable both are
//! errors. The kernel log's Xid, SXid and amdgpu RAS events are judged by the vendors'
//! catalogs in [`super::gpu_events`]; throttling, temperature and AMD's RAS counters in
//! [`super::gpu_health`].

use super::catalog::gpu::*;
use super::matcher::Expect;
use super::{Inputs, Observation, Results};
use super::{gpu_events, gpu_health};
use crate::blueprint::model::{Accelerators, DriverAuthority, KernelModule, SharingMode, Vendor};
use crate::blueprint::value::{Version, VersionReq};
use crate::fault::Action;
use crate::fault::bucket::recovery_action;
use crate::verify::fact::Fact;
use crate::verify::facts::gpu::{Gpu, GpuVendor};
use crate::verify::facts::nvidia_smi::NvidiaGpu;
use regex::Regex;

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

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let Some(accelerators) = &input.blueprint.accelerators else {
        return;
    };
    let facts = input.facts;
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
    out.record(
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
        out.record(
            &NVSWITCH,
            None,
            "at least 1",
            observed,
            vec!["/sys/bus/pci/devices".to_owned()],
        );
    }
    driver(input, out, accelerators);
    for gpu in &gpus {
        model(input, out, accelerators, gpu);
        if accelerators.vendor == Vendor::Nvidia {
            nvidia_gpu(input, out, accelerators, gpu);
            // Xids and "fallen off the bus" are NVIDIA driver (NVRM) messages: on another
            // vendor's GPU the check would pass without having anything to read.
            gpu_events::nvidia_gpu(input, out, gpu);
            gpu_health::nvidia(input, out, gpu, &nvidia(gpu));
        } else {
            amd_gpu(input, out, gpu);
            gpu_events::amd_gpu(input, out, gpu);
            gpu_health::amd(input, out, gpu);
        }
    }
    if gpus.is_empty() {
        nothing_to_check(input, out, accelerators);
    }
    vbios_identical(out, accelerators, &gpus);
    if accelerators.vendor == Vendor::Nvidia {
        gpu_events::switches(input, out, accelerators.interconnect.nvswitch);
    }
    // With an operator-owned driver, Fabric Manager runs in the operator's driver
    // container, not as the host's unit; gpu.fabric.state judges what it did.
    if accelerators.vendor == Vendor::Nvidia
        && accelerators.interconnect.nvswitch
        && accelerators.driver.authority != DriverAuthority::Operator
    {
        let state = facts.runtime.as_ref().and_then(|r| {
            r.units
                .get("nvidia-fabricmanager")
                .cloned()
                .unwrap_or_else(|| {
                    Fact::unknown("the nvidia-fabricmanager unit state was not collected")
                })
        });
        out.expect(
            &FABRIC_MANAGER,
            None,
            &Expect::equal("active"),
            &state,
            vec!["systemctl is-active -- nvidia-fabricmanager".to_owned()],
        );
        gpu_events::fabric_manager_log(input, out);
    }
}

fn driver(input: &Inputs, out: &mut Results, accelerators: &Accelerators) {
    let facts = input.facts;
    let expect = Expect::Version(accelerators.driver.version.clone());
    match accelerators.vendor {
        Vendor::Nvidia => {
            let version = facts
                .modules
                .nvidia_driver
                .as_ref()
                .map(|d| d.version.clone());
            out.expect(
                &DRIVER,
                None,
                &expect,
                &version,
                vec!["/proc/driver/nvidia/version".to_owned()],
            );
            if let Some(flavour) = accelerators.driver.kernel_module {
                let open = flavour == KernelModule::Open;
                out.record(
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
                    Some(summary) => summary.as_ref().and_then(|s| s.cuda_version.clone()),
                    None => Fact::unknown("nvidia-smi was not run: no NVIDIA GPU on the PCI bus"),
                };
                // The driver supports this CUDA version or a later one.
                let expect = Expect::Version(VersionReq::at_least(cuda));
                out.expect(&CUDA, None, &expect, &observed, vec![NVIDIA_SMI.to_owned()]);
            }
        }
        Vendor::Amd => {
            out.expect(
                &DRIVER,
                None,
                &expect,
                &facts.modules.amdgpu_version,
                vec!["/sys/module/amdgpu/version".to_owned()],
            );
        }
    }
}

/// The per-GPU settings the blueprint asks for, when there is no GPU to check: each says
/// so as an error (next to the failing `gpu.count`) instead of vanishing from the report.
fn nothing_to_check(input: &Inputs, out: &mut Results, accelerators: &Accelerators) {
    let why = match &input.facts.pci_devices {
        Fact::Unknown { reason } => format!("the PCI devices are unknown: {reason}"),
        Fact::Known(_) => format!("no {} GPU on the PCI bus", accelerators.vendor.as_str()),
    };
    let evidence = || vec!["/sys/bus/pci/devices".to_owned()];
    if accelerators.ecc_required {
        out.nothing_to_check(&ECC_MODE, "enabled on every GPU", &why, evidence());
    }
    if accelerators.vendor == Vendor::Nvidia && accelerators.persistence {
        out.nothing_to_check(&PERSISTENCE, "enabled on every GPU", &why, evidence());
    }
    if let Some(req) = pinned_vbios(input) {
        out.nothing_to_check(&VBIOS, req, &why, evidence());
    }
}

/// The names a GPU of the blueprint's model may report: the model, its aliases from the
/// compatibility matrix, or any name carrying the model's words (`AMD Instinct MI300X`).
fn model_expectation(input: &Inputs, accelerators: &Accelerators) -> Expect {
    let mut names = vec![accelerators.model.to_string()];
    if let Some(model) = input.matrix.model(accelerators.vendor, &accelerators.model) {
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

fn model(input: &Inputs, out: &mut Results, accelerators: &Accelerators, gpu: &Gpu) {
    let subject = Some(gpu.address.to_string());
    let expect = model_expectation(input, accelerators);
    let (name, evidence) = match accelerators.vendor {
        Vendor::Nvidia => (nvidia(gpu).and_then(|g| g.product_name.clone()), NVIDIA_SMI),
        Vendor::Amd => (
            amd(gpu).and_then(|g| g.product_name.clone()),
            "rocm-smi --json",
        ),
    };
    out.expect(&MODEL, subject, &expect, &name, vec![evidence.to_owned()]);
}

fn amd(gpu: &Gpu) -> Fact<&crate::verify::facts::rocm_smi::AmdGpu> {
    match &gpu.amd {
        Some(Fact::Known(entry)) => Fact::Known(entry),
        Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
        None => Fact::unknown(format!("rocm-smi has no entry for {}", gpu.address)),
    }
}

fn amd_gpu(input: &Inputs, out: &mut Results, gpu: &Gpu) {
    if input
        .blueprint
        .accelerators
        .as_ref()
        .is_some_and(|a| a.ecc_required)
    {
        out.record(
            &ECC_MODE,
            Some(gpu.address.to_string()),
            "enabled (amdgpu RAS on the UMC block: ras/umc_err_count)",
            amd_ecc(input, gpu),
            vec![format!("/sys/bus/pci/devices/{}/ras", gpu.address)],
        );
    }
    if let Some(req) = pinned_vbios(input) {
        let vbios = amd(gpu).and_then(|g| g.vbios_version.clone());
        out.expect(
            &VBIOS,
            Some(gpu.address.to_string()),
            &Expect::Version(req),
            &vbios,
            vec!["rocm-smi --json".to_owned()],
        );
    }
}

/// ECC on an Instinct GPU's memory: the amdgpu driver creates `ras/<block>_err_count`
/// only for the IP blocks whose RAS is enabled, and the UMC block is the memory
/// controller, so `ras/umc_err_count` is VRAM ECC on (the kernel's "AMDGPU RAS
/// Support"); without a `ras` folder RAS is off altogether (`amdgpu.ras_enable=0`, or a
/// board without it).
fn amd_ecc(input: &Inputs, gpu: &Gpu) -> Observation {
    match input.facts.gpus.amd_ras.get(&gpu.address) {
        None => Observation::unknown(format!("the RAS folder of {} was not read", gpu.address)),
        Some(Fact::Unknown { reason }) => Observation::unknown(reason.clone()),
        Some(Fact::Known(ras)) if !ras.supported => {
            Observation::value("disabled: no ras folder (amdgpu RAS off)", false)
        }
        Some(Fact::Known(ras)) => {
            let on = ras.blocks.contains_key("umc");
            let blocks: Vec<&str> = ras.blocks.keys().map(String::as_str).collect();
            Observation::value(
                if on {
                    format!("enabled (RAS blocks: {})", blocks.join(", "))
                } else {
                    format!(
                        "disabled: RAS on for {} but not for umc (VRAM)",
                        if blocks.is_empty() {
                            "no block".to_owned()
                        } else {
                            blocks.join(", ")
                        }
                    )
                },
                on,
            )
        }
    }
}

/// `firmware.versions.gpuVbios`, when the blueprint pins one.
fn pinned_vbios(input: &Inputs) -> Option<VersionReq> {
    input
        .blueprint
        .firmware
        .as_ref()
        .and_then(|f| f.versions.gpu_vbios.clone())
}

fn vbios_identical(out: &mut Results, accelerators: &Accelerators, gpus: &[&Gpu]) {
    if gpus.len() < 2 {
        return;
    }
    let versions: Vec<Fact<Version>> = gpus
        .iter()
        .map(|gpu| match accelerators.vendor {
            Vendor::Nvidia => nvidia(gpu).and_then(|g| g.vbios_version.clone()),
            Vendor::Amd => amd(gpu).and_then(|g| g.vbios_version.clone()),
        })
        .collect();
    let observation = Observation::all_identical(&versions);
    let evidence = match accelerators.vendor {
        Vendor::Nvidia => NVIDIA_SMI,
        Vendor::Amd => "rocm-smi --json",
    };
    out.record(
        &VBIOS_IDENTICAL,
        None,
        "one VBIOS version",
        observation,
        vec![evidence.to_owned()],
    );
}

fn nvidia_gpu(input: &Inputs, out: &mut Results, accelerators: &Accelerators, gpu: &Gpu) {
    let subject = || Some(gpu.address.to_string());
    let evidence = || vec![NVIDIA_SMI.to_owned()];
    let entry = nvidia(gpu);
    let field = |get: fn(&NvidiaGpu) -> Fact<bool>| entry.clone().and_then(get);
    if let Some(req) = pinned_vbios(input) {
        let vbios = entry.clone().and_then(|g| g.vbios_version.clone());
        out.expect(&VBIOS, subject(), &Expect::Version(req), &vbios, evidence());
    }
    if accelerators.ecc_required {
        out.record(
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
    out.expect(
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
        out.record(
            &REMAP_PENDING,
            subject(),
            "no",
            Observation::of(&pending, yes_no, |p| !*p),
            evidence(),
        );
        let failure = remapped.and_then(|r| r.failure);
        out.record(
            &REMAP_FAILURE,
            subject(),
            "no",
            Observation::of(&failure, yes_no, |f| !*f),
            evidence(),
        );
    }
    if retired_known || entry.known().is_none() {
        let pending = retired.and_then(|r| r.pending);
        out.record(
            &RETIRED_PAGES,
            subject(),
            "no retirement pending",
            Observation::of(&pending, |p| format!("pending: {}", yes_no(p)), |p| !*p),
            evidence(),
        );
    }
    if accelerators.persistence {
        out.record(
            &PERSISTENCE,
            subject(),
            "enabled",
            Observation::of(&field(|g| g.persistence_mode.clone()), enabled, |on| *on),
            evidence(),
        );
    }
    recovery(out, gpu, &entry);
    let mig = accelerators.sharing.mode() == SharingMode::Mig;
    out.record(
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
        out.record(
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

/// What the driver itself says about the GPU's health: the recovery action it asks for
/// (`gpu_recovery_action`, 570+), `gpu_reset_status` (535 to 575), the SRAM error threshold
/// and, from 590, pending or impossible memory repairs. Any one of them fails the GPU; a
/// driver that reports none of them leaves the check unknown, never passed. NVIDIA's
/// recovery actions: `None`, `Reset` (GPU reset), `Reboot` (node reboot), `Drain P2P`,
/// `Drain and Reset`; a threshold crossed or unrepairable memory needs the board repaired.
fn recovery(out: &mut Results, gpu: &Gpu, entry: &Fact<&NvidiaGpu>) {
    let observation = match entry {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(g) => {
            let mut known = Vec::new();
            let mut flagged = Vec::new();
            if let Fact::Known(action) = &g.recovery_action {
                known.push(format!("recovery action {action}"));
                if action != "None" {
                    flagged.push(format!("recovery action {action}"));
                }
            }
            let flags: [(&Fact<bool>, &str); 5] = [
                (&g.reset_required, "reset required"),
                (
                    &g.drain_and_reset_recommended,
                    "drain and reset recommended",
                ),
                (&g.sram_threshold_exceeded, "SRAM error threshold exceeded"),
                (&g.repair_pending, "memory repair pending"),
                (&g.unrepairable_memory, "unrepairable memory"),
            ];
            for (fact, name) in flags {
                if let Fact::Known(on) = fact {
                    known.push(format!("{name}: {}", yes_no(on)));
                    if *on {
                        flagged.push(name.to_owned());
                    }
                }
            }
            if !flagged.is_empty() {
                Observation::value(flagged.join(", "), false)
            } else if known.is_empty() {
                Observation::unknown(
                    "the driver reports no recovery state (gpu_recovery_action, gpu_reset_status, \
                     sram_threshold_exceeded, repair_pending)",
                )
            } else {
                Observation::value(known.join(", "), true)
            }
        }
    };
    let repair = entry.known().is_some_and(|g| {
        matches!(g.sram_threshold_exceeded, Fact::Known(true))
            || matches!(g.unrepairable_memory, Fact::Known(true))
    });
    // The driver's own recovery action, in the catalog's words (Reboot is a reboot).
    let asked = entry
        .known()
        .and_then(|g| g.recovery_action.known())
        .and_then(|a| recovery_action(a))
        .filter(|a| *a > Action::Ignore);
    let result = out.record(
        &RECOVERY,
        Some(gpu.address.to_string()),
        "recovery action None, no reset, repair or threshold flag",
        observation,
        vec![NVIDIA_SMI.to_owned()],
    );
    if repair {
        result.action = Action::Service;
    } else if let Some(asked) = asked {
        result.action = asked;
    }
}
