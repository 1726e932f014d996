//! PCIe link checks of every GPU and every blueprint NIC, and of the port above each.
//!
//! NVIDIA GPUs lower their link *speed* when idle (P8 trains at 2.5 GT/s), so a GPU's
//! current speed is never compared: its *width* is checked strictly, and its speed
//! through the *maximum* speed of both ends (the GPU's capability and the upstream
//! port's). A narrowed width, or a slot that cannot reach the generation, fails. NICs do
//! not downshift at idle, so their current speed must equal what both ends can do. A
//! degraded link can show only on the upstream side, so that side is checked too.

use super::catalog::pcie::*;
use super::network;
use super::{Inputs, Observation, Results};
use crate::verify::fact::Fact;
use crate::verify::facts::pci::PciDevice;
use crate::verify::facts::pcie_link::{LinkSpeed, PcieLink};

fn gen_text(speed: &LinkSpeed) -> String {
    match speed.generation {
        Some(generation) => format!("Gen{generation} ({} GT/s)", speed.gt_per_s),
        None => format!("{} GT/s", speed.gt_per_s),
    }
}

/// GT/s of PCIe generation `generation`.
fn gen_speed(generation: u8) -> f64 {
    match generation {
        1 => 2.5,
        2 => 5.0,
        3 => 8.0,
        4 => 16.0,
        5 => 32.0,
        6 => 64.0,
        _ => 128.0,
    }
}

fn link_files(dir: &str) -> Vec<String> {
    [
        "current_link_width",
        "max_link_width",
        "current_link_speed",
        "max_link_speed",
    ]
    .iter()
    .map(|f| format!("{dir}/{f}"))
    .collect()
}

fn both<A: Clone, B: Clone>(a: &Fact<A>, b: &Fact<B>) -> Fact<(A, B)> {
    match (a, b) {
        (Fact::Known(a), Fact::Known(b)) => Fact::Known((a.clone(), b.clone())),
        (Fact::Unknown { reason }, _) | (_, Fact::Unknown { reason }) => {
            Fact::unknown(reason.clone())
        }
    }
}

pub fn evaluate(input: &Inputs, out: &mut Results) {
    if let Some(accelerators) = &input.blueprint.accelerators {
        let width = u32::from(accelerators.pcie.width.get());
        let generation = accelerators.pcie.generation.get();
        for gpu in &input.facts.gpus.gpus {
            let subject = Some(gpu.address.to_string());
            let dir = format!("/sys/bus/pci/devices/{}", gpu.address);
            let device = match &gpu.pci {
                Fact::Known(device) => device,
                Fact::Unknown { reason } => {
                    for spec in [&GPU_WIDTH, &GPU_MAX_SPEED] {
                        out.record(
                            spec,
                            subject.clone(),
                            "a PCIe device in sysfs",
                            Observation::unknown(reason.clone()),
                            vec![dir.clone()],
                        );
                    }
                    continue;
                }
            };
            gpu_link(out, device, subject, &dir, width, generation);
            aer(out, device);
        }
    }
    for member in network::members(input) {
        let Some(device) = member.pci else { continue };
        nic_link(out, device, &member.nic.name);
        aer(out, device);
    }
}

fn gpu_link(
    out: &mut Results,
    device: &PciDevice,
    subject: Option<String>,
    dir: &str,
    width: u32,
    generation: u8,
) {
    let link = &device.link;
    out.record(
        &GPU_WIDTH,
        subject.clone(),
        format!("x{width}"),
        Observation::of(
            &both(&link.current_width, &link.max_width),
            |(current, max)| format!("x{current} (device max x{max})"),
            |(current, _)| *current == width,
        ),
        link_files(dir),
    );
    let want = gen_speed(generation);
    out.record(
        &GPU_MAX_SPEED,
        subject.clone(),
        format!("max >= Gen{generation} ({want} GT/s); current speed may be lower at idle"),
        Observation::of(
            &both(&link.max_speed, &link.current_speed),
            |(max, current)| format!("max {}, now {}", gen_text(max), gen_text(current)),
            |(max, _)| max.gt_per_s >= want,
        ),
        link_files(dir),
    );
    match &device.upstream {
        Fact::Unknown { reason } => {
            for spec in [&GPU_UPSTREAM_WIDTH, &GPU_UPSTREAM_SPEED] {
                out.record(
                    spec,
                    subject.clone(),
                    "the upstream port's link",
                    Observation::unknown(reason.clone()),
                    vec![format!("{dir}/..")],
                );
            }
        }
        // Directly on the root complex (or a VM without bridges): no port to check.
        Fact::Known(None) => {}
        Fact::Known(Some(port)) => {
            let port_dir = format!("/sys/bus/pci/devices/{}", port.address);
            out.record(
                &GPU_UPSTREAM_WIDTH,
                subject.clone(),
                format!("x{width} at {}", port.address),
                Observation::of(
                    &port.link.current_width,
                    |current| format!("x{current}"),
                    |current| *current == width,
                ),
                link_files(&port_dir),
            );
            out.record(
                &GPU_UPSTREAM_SPEED,
                subject,
                format!("max >= Gen{generation} ({want} GT/s) at {}", port.address),
                Observation::of(&port.link.max_speed, gen_text, |max| max.gt_per_s >= want),
                link_files(&port_dir),
            );
        }
    }
}

fn nic_link(out: &mut Results, device: &PciDevice, name: &str) {
    let subject = Some(format!("{name} {}", device.address));
    let dir = format!("/sys/bus/pci/devices/{}", device.address);
    let mut evidence = link_files(&dir);
    let upstream: Fact<Option<PcieLink>> = device.upstream.clone().map(|port| port.map(|p| p.link));
    if let Fact::Known(Some(port)) = &device.upstream {
        evidence.extend(link_files(&format!(
            "/sys/bus/pci/devices/{}",
            port.address
        )));
    }
    let link = &device.link;
    let width = both(&both(&link.current_width, &link.max_width), &upstream).and_then(
        |((current, max), up)| match up {
            None => Fact::Known((current, max, None)),
            Some(up) => up.current_width.map(|w| (current, max, Some(w))),
        },
    );
    out.record(
        &NIC_WIDTH,
        subject.clone(),
        "current width = device max width, on both ends",
        Observation::of(
            &width,
            |(current, max, up)| match up {
                Some(up) => format!("x{current} of x{max}, upstream x{up}"),
                None => format!("x{current} of x{max}, no upstream port"),
            },
            |(current, max, up)| current == max && up.is_none_or(|up| up == *current),
        ),
        evidence.clone(),
    );
    let speed = both(&both(&link.current_speed, &link.max_speed), &upstream).and_then(
        |((current, max), up)| match up {
            None => Fact::Known((current, max, None)),
            Some(up) => up.max_speed.map(|s| (current, max, Some(s))),
        },
    );
    out.record(
        &NIC_SPEED,
        subject,
        "current speed = the lower max speed of the two ends",
        Observation::of(
            &speed,
            |(current, max, up)| match up {
                Some(up) => format!(
                    "{} now, device max {}, upstream max {}",
                    gen_text(current),
                    gen_text(max),
                    gen_text(up)
                ),
                None => format!("{} now, device max {}", gen_text(current), gen_text(max)),
            },
            |(current, max, up)| {
                let best = up.map_or(max.gt_per_s, |up| up.gt_per_s.min(max.gt_per_s));
                current.gt_per_s >= best
            },
        ),
        evidence,
    );
}

fn aer(out: &mut Results, device: &PciDevice) {
    let dir = format!("/sys/bus/pci/devices/{}", device.address);
    let totals = both(&device.aer.nonfatal, &device.aer.fatal);
    out.record(
        &AER,
        Some(device.address.to_string()),
        "0 non-fatal and 0 fatal",
        Observation::of(
            &totals,
            |(nonfatal, fatal)| {
                format!(
                    "{} non-fatal, {} fatal",
                    nonfatal.total.unwrap_or(0),
                    fatal.total.unwrap_or(0)
                )
            },
            |(nonfatal, fatal)| nonfatal.total.unwrap_or(0) + fatal.total.unwrap_or(0) == 0,
        ),
        vec![
            format!("{dir}/aer_dev_nonfatal"),
            format!("{dir}/aer_dev_fatal"),
        ],
    );
}
