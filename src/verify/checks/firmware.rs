//! Firmware checks: BIOS and BMC versions, and the BIOS policy as the kernel sees its
//! effects (IOMMU mode, SMT, Secure Boot, module signature enforcement, NUMA per socket,
//! Resizable BAR and Above-4G decoding from the GPUs' BAR sizes and addresses).
//!
//! BIOS settings have no generic sysfs view, so each is inferred from what it changes:
//! a resized GPU BAR is larger than the 256 MiB legacy window, Above-4G decoding places
//! 64-bit BARs above 4 GiB. The BMC's firmware revision is IPMI's Get Device ID answer
//! (`ipmitool mc info`, [`crate::verify::facts::bmc`]), judged against
//! `firmware.versions.bmc`.
//!
//! The BIOS power profile shows in the CPU frequency governor the OS runs
//! (`cpufreq/policy*/scaling_governor`): `performance` pins the highest frequency; the
//! dynamic governors (`schedutil`, `ondemand`, `conservative`, and `powersave`, which is
//! intel_pstate's and amd-pstate's dynamic mode) balance; `powersave`/`conservative` save
//! power. A machine without cpufreq leaves frequencies to the firmware: the profile cannot
//! be seen from the host, and the check says so (a warning, as the governor is a
//! performance matter, not a safety one).

use super::catalog::firmware::*;
use super::matcher::Expect;
use super::{Inputs, Observation, Results};
use crate::blueprint::model::{IommuMode, ModuleSigning, PowerProfile, Toggle};
use crate::verify::fact::Fact;
use crate::verify::facts::boot_security::{SECURE_BOOT_VAR, SecureBoot};
use crate::verify::facts::pci::{BarKind, PciDevice};

/// The legacy BAR window; a resized BAR is larger.
const LEGACY_BAR: u64 = 256 * 1024 * 1024;
const FOUR_GIB: u64 = 4 * 1024 * 1024 * 1024;

fn toggle(t: Toggle) -> &'static str {
    match t {
        Toggle::Enabled => "enabled",
        Toggle::Disabled => "disabled",
    }
}

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    let facts = input.facts;
    iommu(input, out);
    let Some(firmware) = &bp.firmware else {
        return;
    };
    if let Some(req) = &firmware.versions.bios {
        out.expect(
            &BIOS_VERSION,
            None,
            &Expect::Version(req.clone()),
            &facts.dmi.bios,
            vec!["/sys/class/dmi/id/bios_version".to_owned()],
        );
    }
    if let Some(req) = &firmware.versions.bmc {
        out.expect(
            &BMC_VERSION,
            None,
            &Expect::Version(req.clone()),
            &facts
                .bmc_firmware
                .version
                .clone()
                .version("the BMC firmware version"),
            vec![facts.bmc_firmware.source.clone()],
        );
    }
    let bios = &firmware.bios;
    if let Some(profile) = bios.power_profile {
        power_profile(input, out, profile);
    }
    if let Some(want) = bios.smt {
        out.record(
            &SMT,
            None,
            toggle(want),
            Observation::of(
                &facts.cpus.smt_active,
                |on| if *on { "enabled" } else { "disabled" }.to_owned(),
                |on| *on == (want == Toggle::Enabled),
            ),
            vec!["/sys/devices/system/cpu/smt/active".to_owned()],
        );
    }
    if let Some(want) = bios.secure_boot {
        out.record(
            &SECURE_BOOT,
            None,
            toggle(want),
            Observation::of(
                &facts.boot_security.secure_boot,
                |state| match state {
                    SecureBoot::Enabled => "enabled".to_owned(),
                    SecureBoot::Disabled => "disabled".to_owned(),
                    SecureBoot::LegacyBoot => "disabled (legacy BIOS boot)".to_owned(),
                },
                |state| (*state == SecureBoot::Enabled) == (want == Toggle::Enabled),
            ),
            vec![format!("/{}", SECURE_BOOT_VAR.trim_start_matches('/'))],
        );
    }
    if let Some(policy) = bios.module_signing {
        let enforce = policy == ModuleSigning::Enforce;
        out.record(
            &MODULE_SIGNING,
            None,
            if enforce { "enforced" } else { "not enforced" },
            Observation::of(
                &facts.boot_security.module_sig_enforce,
                |on| if *on { "enforced" } else { "not enforced" }.to_owned(),
                |on| *on == enforce,
            ),
            vec!["/sys/module/module/parameters/sig_enforce".to_owned()],
        );
    }
    if let Some(nps) = bios.numa_per_socket {
        let observed = match (&facts.numa_nodes, &facts.cpus.sockets) {
            (Fact::Known(nodes), Fact::Known(sockets)) if *sockets > 0 => {
                let per = nodes.len() as f64 / *sockets as f64;
                Observation::value(
                    format!("{per} ({} nodes, {sockets} sockets)", nodes.len()),
                    per == f64::from(nps),
                )
            }
            (Fact::Unknown { reason }, _) | (_, Fact::Unknown { reason }) => {
                Observation::unknown(reason.clone())
            }
            _ => Observation::unknown("no CPU socket found in /proc/cpuinfo"),
        };
        out.record(
            &NUMA_PER_SOCKET,
            None,
            nps,
            observed,
            vec![
                "/sys/devices/system/node".to_owned(),
                "/proc/cpuinfo".to_owned(),
            ],
        );
    }
    bars(input, out, bios.resizable_bar, bios.above4g_decoding);
}

fn iommu(input: &Inputs, out: &mut Results) {
    let facts = input.facts;
    let mode = input.blueprint.boot.iommu;
    if mode == IommuMode::KernelDefault {
        // The blueprint leaves the mode to the kernel; nothing to compare.
        return;
    }
    let expected = match mode {
        IommuMode::KernelDefault | IommuMode::Off => "off (no IOMMU groups)",
        IommuMode::On => "on, translated DMA (DMA or DMA-FQ groups)",
        IommuMode::Passthrough => "on, passthrough (identity groups)",
    };
    let observation = match &facts.iommu.groups {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(groups) if groups.is_empty() => {
            Observation::value("off (no IOMMU groups)", mode == IommuMode::Off)
        }
        Fact::Known(groups) => match &facts.iommu.default_domain_type {
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
            Fact::Known(kind) => {
                let pass = match mode {
                    IommuMode::KernelDefault | IommuMode::Off => false,
                    IommuMode::On => kind == "DMA" || kind == "DMA-FQ",
                    IommuMode::Passthrough => kind == "identity",
                };
                Observation::value(format!("{} groups, mostly {kind}", groups.len()), pass)
            }
        },
    };
    out.record(
        &IOMMU,
        None,
        expected,
        observation,
        vec!["/sys/kernel/iommu_groups".to_owned()],
    );
}

fn largest_bar(device: &PciDevice) -> Fact<u64> {
    device.bars.as_ref().map(|bars| {
        bars.iter()
            .filter(|b| b.kind != BarKind::Io)
            .map(|b| b.size)
            .max()
            .unwrap_or(0)
    })
}

fn bars(input: &Inputs, out: &mut Results, resizable: Option<Toggle>, above4g: Option<Toggle>) {
    let gpus = &input.facts.gpus.gpus;
    for gpu in gpus {
        let subject = Some(gpu.address.to_string());
        let evidence = vec![format!("/sys/bus/pci/devices/{}/resource", gpu.address)];
        if let Some(want) = resizable {
            let size = gpu.pci.as_ref().and_then(largest_bar);
            let on = want == Toggle::Enabled;
            out.record(
                &RESIZABLE_BAR,
                subject.clone(),
                if on {
                    "largest BAR over 256 MiB"
                } else {
                    "largest BAR at most 256 MiB"
                },
                Observation::of(
                    &size,
                    |s| format!("largest BAR {} MiB", s / (1024 * 1024)),
                    |s| (*s > LEGACY_BAR) == on,
                ),
                evidence.clone(),
            );
        }
        if let Some(want) = above4g {
            let high = gpu.pci.as_ref().and_then(|d| {
                d.bars.as_ref().map(|bars| {
                    bars.iter()
                        .filter(|b| b.kind == BarKind::Memory64)
                        .map(|b| b.start)
                        .max()
                        .unwrap_or(0)
                })
            });
            let on = want == Toggle::Enabled;
            out.record(
                &ABOVE_4G,
                subject,
                if on {
                    "a 64-bit BAR above 4 GiB"
                } else {
                    "no BAR above 4 GiB"
                },
                Observation::of(
                    &high,
                    |start| format!("highest 64-bit BAR at {start:#x}"),
                    |start| (*start >= FOUR_GIB) == on,
                ),
                evidence,
            );
        }
    }
}

/// The governors a power profile allows.
fn governors_for(profile: PowerProfile) -> &'static [&'static str] {
    match profile {
        PowerProfile::Performance => &["performance"],
        PowerProfile::Balanced => &["schedutil", "ondemand", "conservative", "powersave"],
        PowerProfile::PowerSaver => &["powersave", "conservative"],
    }
}

fn power_profile(input: &Inputs, out: &mut Results, profile: PowerProfile) {
    let allowed = governors_for(profile);
    let observation = match &input.facts.cpus.governors {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(None) => Observation::unknown(
            "not checkable: no cpufreq driver, the firmware alone sets CPU frequencies",
        ),
        Fact::Known(Some(governors)) => {
            let shown: Vec<String> = governors
                .iter()
                .map(|(governor, n)| format!("{governor} ×{n}"))
                .collect();
            Observation::value(
                shown.join(", "),
                governors.keys().all(|g| allowed.contains(&g.as_str())),
            )
        }
    };
    out.record(
        &POWER_PROFILE,
        None,
        format!(
            "{} governor ({} profile)",
            allowed.join(" or "),
            match profile {
                PowerProfile::Performance => "performance",
                PowerProfile::Balanced => "balanced",
                PowerProfile::PowerSaver => "power-saver",
            }
        ),
        observation,
        vec!["/sys/devices/system/cpu/cpufreq/policy*/scaling_governor".to_owned()],
    );
}
