//! NIC checks: each blueprint NIC group's count, and each member's link state, speed,
//! MTU, RDMA port state and rate, and firmware (also identical across the group); then
//! GPU↔NIC placement (same NUMA node, same PCIe switch).
//!
//! A physical interface belongs to the first group it fits: link layer (`type` 1 Ethernet,
//! 32 InfiniBand), kernel driver when the group names one, and the PCI device id when the
//! matrix knows the model (its `nics` entries, cited data that a site's `--matrix` extends;
//! see [`Matrix::nic_device_ids`]). For an unknown model only the driver and link layer can
//! be matched; a warning says so. An InfiniBand interface's MTU is the
//! IPoIB MTU, which is the IB MTU less the 4-byte IPoIB header (4092 for 4096).

use super::catalog::network::*;
use super::{Inputs, Observation, Results};
use crate::blueprint::compat::Matrix;
use crate::blueprint::model::{LinkLayer, Nic as NicGroup, NicRole};
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use crate::verify::facts::nic::Nic;
use crate::verify::facts::pci::PciDevice;
use crate::verify::facts::rdma::RdmaDevice;

/// A physical interface matched to a blueprint NIC group.
pub struct Member<'a> {
    pub group: usize,
    pub nic: &'a Nic,
    pub pci: Option<&'a PciDevice>,
    pub rdma: Option<&'a RdmaDevice>,
}

fn arp_type(layer: LinkLayer) -> u32 {
    match layer {
        LinkLayer::Ethernet => 1,
        LinkLayer::Infiniband => 32,
    }
}

/// The group's link layer and, when it names one, its driver.
fn fits_layer_and_driver(group: &NicGroup, nic: &Nic) -> bool {
    let layer = nic.link_type.known() == Some(&arp_type(group.link_layer));
    let driver = match &group.driver {
        None => true,
        Some(want) => nic
            .driver
            .known()
            .is_some_and(|d| d.as_deref() == Some(want.as_str())),
    };
    layer && driver
}

fn fits(matrix: &Matrix, group: &NicGroup, nic: &Nic, pci: Option<&PciDevice>) -> bool {
    let model = match matrix.nic_device_ids(&group.model) {
        None => true,
        Some(ids) => pci
            .and_then(|d| d.device.known())
            .is_some_and(|id| ids.contains(id)),
    };
    fits_layer_and_driver(group, nic) && model
}

/// `nic.model`: the PCI device ids of the interfaces that could be this group's (its link
/// layer and driver, not claimed by another group), read from the machine. Passes when
/// there is at least one and every one is an id of the declared model; a NIC of another
/// model in the group's place shows up here with its own id.
fn model_observation(
    input: &Inputs,
    members: &[Member],
    index: usize,
    group: &NicGroup,
) -> Observation {
    let Some(ids) = input.matrix.nic_device_ids(&group.model) else {
        return Observation::unknown(format!(
            "the compatibility matrix has no PCI ids for model {:?}; NICs were matched by driver and link layer only",
            group.model
        ));
    };
    let nics = match &input.facts.nics {
        Fact::Known(nics) => nics,
        Fact::Unknown { reason } => return Observation::unknown(reason.clone()),
    };
    let pci = match &input.facts.pci_devices {
        Fact::Known(pci) => pci,
        Fact::Unknown { reason } => return Observation::unknown(reason.clone()),
    };
    let mut seen: Vec<Fact<u16>> = Vec::new();
    for nic in nics {
        let Some(Some(address)) = nic.pci_address.known() else {
            continue;
        };
        let elsewhere = members
            .iter()
            .any(|m| m.group != index && m.nic.name == nic.name);
        if elsewhere || !fits_layer_and_driver(group, nic) {
            continue;
        }
        seen.push(match pci.iter().find(|d| d.address == *address) {
            Some(device) => device.device.clone(),
            None => Fact::unknown(format!("{address} is not in /sys/bus/pci/devices")),
        });
    }
    if seen.is_empty() {
        return Observation::value("no NIC of this link layer and driver", false);
    }
    let shown: Vec<Fact<String>> = seen
        .iter()
        .map(|id| id.as_ref().map(|id| format!("device id {id:#06x}")))
        .collect();
    match Observation::all_identical(&shown) {
        Observation::Value { text, .. } => {
            let pass = seen
                .iter()
                .all(|id| id.known().is_some_and(|id| ids.contains(id)));
            Observation::value(text, pass)
        }
        unknown => unknown,
    }
}

/// Every physical interface that fits a blueprint NIC group, by group order.
pub fn members<'a>(input: &Inputs<'a>) -> Vec<Member<'a>> {
    let facts = input.facts;
    let groups = &input.blueprint.network.nics;
    let (Fact::Known(nics), pci) = (&facts.nics, facts.pci_devices.known()) else {
        return Vec::new();
    };
    let rdma = facts.rdma_devices.known();
    let mut out = Vec::new();
    for nic in nics {
        let Some(Some(address)) = nic.pci_address.known() else {
            continue;
        };
        let device = pci.and_then(|all| all.iter().find(|d| d.address == *address));
        let Some(group) = groups
            .iter()
            .position(|g| fits(input.matrix, g, nic, device))
        else {
            continue;
        };
        let rdma = rdma.and_then(|all| {
            all.iter()
                .find(|r| r.pci_address.known() == Some(&Some(*address)))
        });
        out.push(Member {
            group,
            nic,
            pci: device,
            rdma,
        });
    }
    out
}

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let groups = &input.blueprint.network.nics;
    if groups.is_empty() {
        return;
    }
    let members = members(input);
    let default_firmware = input
        .blueprint
        .firmware
        .as_ref()
        .and_then(|f| f.versions.nic.clone());
    for (index, group) in groups.iter().enumerate() {
        let label = format!("{} {}", group.role, group.model);
        let mine: Vec<&Member> = members.iter().filter(|m| m.group == index).collect();
        let names: Vec<&str> = mine.iter().map(|m| m.nic.name.as_str()).collect();
        let observation = match &input.facts.nics {
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
            Fact::Known(_) => Observation::value(
                format!("{} ({})", mine.len(), list(&names)),
                mine.len() == group.count as usize,
            ),
        };
        let driver = group.driver.as_deref().unwrap_or("any driver");
        out.record(
            &COUNT,
            Some(label.clone()),
            format!(
                "{} {} NICs ({driver})",
                group.count,
                match group.link_layer {
                    LinkLayer::Ethernet => "Ethernet",
                    LinkLayer::Infiniband => "InfiniBand",
                }
            ),
            observation,
            vec!["/sys/class/net".to_owned()],
        );
        let model = model_observation(input, &members, index, group);
        out.record(
            &MODEL,
            Some(label.clone()),
            &group.model,
            model,
            vec!["/sys/bus/pci/devices/*/device".to_owned()],
        );
        // `firmware.versions.nic` is the RDMA NICs' firmware; other groups pin their own.
        let firmware = group
            .firmware
            .clone()
            .or_else(|| default_firmware.clone().filter(|_| group.rdma));
        for member in &mine {
            member_checks(out, group, member, firmware.as_ref());
        }
        if mine.len() > 1 && (group.rdma || firmware.is_some()) {
            let versions: Vec<Fact<Version>> = mine.iter().map(|m| firmware_of(m)).collect();
            out.record(
                &FIRMWARE_IDENTICAL,
                Some(label),
                "one firmware version",
                Observation::all_identical(&versions),
                vec!["/sys/class/infiniband/*/fw_ver".to_owned()],
            );
        }
    }
    affinity(input, out, &members);
}

fn firmware_of(member: &Member) -> Fact<Version> {
    match member.rdma {
        Some(rdma) => rdma.fw_ver.clone(),
        None => Fact::unknown(format!(
            "{} has no RDMA device; its firmware version is not readable from sysfs",
            member.nic.name
        )),
    }
}

fn member_checks(
    out: &mut Results,
    group: &NicGroup,
    member: &Member,
    firmware: Option<&crate::blueprint::value::VersionReq>,
) {
    let nic = member.nic;
    let subject = Some(nic.name.clone());
    let net = format!("/sys/class/net/{}", nic.name);
    out.record(
        &LINK_STATE,
        subject.clone(),
        "up".to_owned(),
        Observation::of(&nic.operstate, Clone::clone, |s| s == "up"),
        vec![format!("{net}/operstate")],
    );
    let mbps = u64::from(group.speed_gbps) * 1000;
    out.record(
        &SPEED,
        subject.clone(),
        format!("{} Gb/s", group.speed_gbps),
        Observation::of(
            &nic.speed_mbps,
            |s| format!("{} Gb/s", f64::from(*s) / 1000.0),
            |s| u64::from(*s) == mbps,
        ),
        vec![format!("{net}/speed")],
    );
    let (want_mtu, mtu_text) = match group.link_layer {
        LinkLayer::Ethernet => (group.mtu, group.mtu.to_string()),
        LinkLayer::Infiniband => {
            let ipoib = group.mtu.saturating_sub(4);
            (ipoib, format!("{ipoib} (IPoIB on IB MTU {})", group.mtu))
        }
    };
    out.record(
        &MTU,
        subject.clone(),
        mtu_text,
        Observation::of(&nic.mtu, ToString::to_string, |m| *m == want_mtu),
        vec![format!("{net}/mtu")],
    );
    let ib = member
        .rdma
        .map(|r| format!("/sys/class/infiniband/{}", r.name))
        .unwrap_or_else(|| "/sys/class/infiniband".to_owned());
    if group.rdma {
        let ports: Fact<Vec<crate::verify::facts::rdma::RdmaPort>> = match member.rdma {
            Some(rdma) => rdma.ports.clone(),
            None => Fact::unknown(format!("no RDMA device for {}", nic.name)),
        };
        let states = ports.clone().and_then(|ports| {
            let mut shown = Vec::new();
            let mut ok = !ports.is_empty();
            for port in &ports {
                match (&port.state, &port.phys_state) {
                    (Fact::Known(state), Fact::Known(phys)) => {
                        ok &= state.code == 4 && phys.code == 5;
                        shown.push(format!(
                            "port {}: {}/{}",
                            port.number, state.name, phys.name
                        ));
                    }
                    (Fact::Unknown { reason }, _) | (_, Fact::Unknown { reason }) => {
                        return Fact::unknown(reason.clone());
                    }
                }
            }
            if shown.is_empty() {
                shown.push("no ports".to_owned());
            }
            Fact::Known((shown.join(", "), ok))
        });
        out.record(
            &RDMA_STATE,
            subject.clone(),
            "every port ACTIVE / LinkUp".to_owned(),
            Observation::of(&states, |(text, _)| text.clone(), |(_, ok)| *ok),
            vec![
                format!("{ib}/ports/*/state"),
                format!("{ib}/ports/*/phys_state"),
            ],
        );
        let rates = ports.and_then(|ports| {
            let mut shown = Vec::new();
            let mut ok = !ports.is_empty();
            for port in &ports {
                match &port.rate {
                    Fact::Known(rate) => {
                        ok &= rate.gbps == f64::from(group.speed_gbps);
                        shown.push(format!("port {}: {} Gb/s", port.number, rate.gbps));
                    }
                    Fact::Unknown { reason } => return Fact::unknown(reason.clone()),
                }
            }
            Fact::Known((shown.join(", "), ok))
        });
        out.record(
            &RDMA_RATE,
            subject.clone(),
            format!("{} Gb/s on every port", group.speed_gbps),
            Observation::of(&rates, |(text, _)| text.clone(), |(_, ok)| *ok),
            vec![format!("{ib}/ports/*/rate")],
        );
    }
    if let Some(req) = firmware {
        let fw = firmware_of(member);
        let observation = Observation::of(&fw, Version::to_string, |v| req.matches(v));
        out.record(
            &FIRMWARE,
            subject,
            format!("version {}", req.as_str()),
            observation,
            vec![format!("{ib}/fw_ver")],
        );
    }
}

/// The directories from the root complex down to `path`'s device (`pci0000:10`, ...).
fn ancestry(path: &str) -> Vec<&str> {
    path.split('/')
        .skip_while(|c| !c.starts_with("pci"))
        .collect()
}

/// Two devices share a PCIe switch when their paths share more than the root complex and
/// the root port (root complex / root port / switch upstream port / ...).
fn same_switch(a: &str, b: &str) -> bool {
    let (a, b) = (ancestry(a), ancestry(b));
    let common = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
    common >= 3 && common < a.len() && common < b.len()
}

fn affinity(input: &Inputs, out: &mut Results, members: &[Member]) {
    let bp = input.blueprint;
    let affinity = &bp.network.affinity;
    if !affinity.gpu_nic_same_numa && !affinity.gpu_nic_same_pcie_switch {
        return;
    }
    let compute: Vec<&Member> = members
        .iter()
        .filter(|m| {
            bp.network
                .nics
                .get(m.group)
                .is_some_and(|g| g.role == NicRole::Compute)
        })
        .collect();
    if input.facts.gpus.gpus.is_empty() {
        let why = match &input.facts.pci_devices {
            Fact::Unknown { reason } => format!("the PCI devices are unknown: {reason}"),
            Fact::Known(_) => "no GPU on the PCI bus".to_owned(),
        };
        let evidence = || vec!["/sys/bus/pci/devices".to_owned()];
        if affinity.gpu_nic_same_numa {
            out.nothing_to_check(
                &GPU_NIC_NUMA,
                "a compute NIC on the same NUMA node as each GPU",
                &why,
                evidence(),
            );
        }
        if affinity.gpu_nic_same_pcie_switch {
            out.nothing_to_check(
                &GPU_NIC_SWITCH,
                "a compute NIC behind the same PCIe switch as each GPU",
                &why,
                evidence(),
            );
        }
        return;
    }
    for gpu in &input.facts.gpus.gpus {
        let subject = Some(gpu.address.to_string());
        let device = match &gpu.pci {
            Fact::Known(device) => device,
            Fact::Unknown { reason } => {
                out.record(
                    &GPU_NIC_NUMA,
                    subject,
                    "a compute NIC".to_owned(),
                    Observation::unknown(reason.clone()),
                    Vec::new(),
                );
                continue;
            }
        };
        if affinity.gpu_nic_same_numa {
            let observation = match &device.numa_node {
                Fact::Unknown { reason } => Observation::unknown(reason.clone()),
                Fact::Known(node) => {
                    let near: Vec<&str> = compute
                        .iter()
                        .filter(|m| m.nic.numa_node.known() == Some(node))
                        .map(|m| m.nic.name.as_str())
                        .collect();
                    let node_text = node.map_or("none".to_owned(), |n| n.to_string());
                    Observation::value(
                        format!("GPU node {node_text}; compute NICs there: {}", list(&near)),
                        node.is_some() && !near.is_empty(),
                    )
                }
            };
            out.record(
                &GPU_NIC_NUMA,
                subject.clone(),
                "a compute NIC on the same NUMA node".to_owned(),
                observation,
                vec![
                    format!("/sys/bus/pci/devices/{}/numa_node", gpu.address),
                    "/sys/class/net/*/device/numa_node".to_owned(),
                ],
            );
        }
        if affinity.gpu_nic_same_pcie_switch {
            let observation = match &device.sysfs_path {
                Fact::Unknown { reason } => Observation::unknown(reason.clone()),
                Fact::Known(path) => {
                    let near: Vec<&str> = compute
                        .iter()
                        .filter(|m| {
                            m.pci
                                .and_then(|d| d.sysfs_path.known())
                                .is_some_and(|nic_path| same_switch(path, nic_path))
                        })
                        .map(|m| m.nic.name.as_str())
                        .collect();
                    Observation::value(
                        format!("compute NICs behind the same switch: {}", list(&near)),
                        !near.is_empty(),
                    )
                }
            };
            out.record(
                &GPU_NIC_SWITCH,
                subject,
                "a compute NIC behind the same PCIe switch".to_owned(),
                observation,
                vec![format!("/sys/bus/pci/devices/{}", gpu.address)],
            );
        }
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_siblings_share_three_levels() {
        let gpu = "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0";
        let nic = "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:01.0/0000:14:00.0";
        let other = "/sys/devices/pci0000:10/0000:10:02.0/0000:21:00.0";
        assert!(same_switch(gpu, nic));
        assert!(!same_switch(gpu, other));
    }
}
