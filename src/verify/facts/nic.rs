//! Network interfaces (`/sys/class/net/*`): driver, speed, MTU, state, PCI address and NUMA
//! node.
//!
//! Reading `speed` fails with EINVAL when the link is down and prints `-1` when the driver
//! does not know; both become `Unknown` with that reason, never a speed of 0. Only physical
//! interfaces have a `device` link; for a virtio NIC it points at `virtio<N>`, whose parent
//! is the PCI function, so the address is the nearest PCI-named directory above it.

use super::attribute;
use super::pci_address::PciAddress;
use crate::verify::fact::Fact;
use crate::verify::host::{Host, HostErrorKind};
use serde::Serialize;
use std::path::Path;

pub const NET_CLASS: &str = "/sys/class/net";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nic {
    pub name: String,
    /// ARPHRD type: 1 Ethernet, 32 InfiniBand (IPoIB), 772 loopback.
    pub link_type: Fact<u32>,
    pub operstate: Fact<String>,
    pub speed_mbps: Fact<u32>,
    pub mtu: Fact<u32>,
    pub mac_address: Fact<String>,
    /// `None` for virtual interfaces.
    pub driver: Fact<Option<String>>,
    /// `None` for virtual interfaces (no `device` link) or non-PCI devices.
    pub pci_address: Fact<Option<PciAddress>>,
    pub numa_node: Fact<Option<u32>>,
}

pub fn collect(host: &dyn Host) -> Fact<Vec<Nic>> {
    attribute::list(host, NET_CLASS, false)
        .map(|names| names.iter().map(|name| read_nic(host, name)).collect())
}

fn read_nic(host: &dyn Host, name: &str) -> Nic {
    let dir = format!("{NET_CLASS}/{name}");
    let at = |attr: &str| format!("{dir}/{attr}");
    let pci_address = pci_address(host, &at("device"));
    let numa_node = pci_address.as_ref().and_then(|address| match address {
        Some(address) => attribute::parsed(
            host,
            &format!("/sys/bus/pci/devices/{address}/numa_node"),
            attribute::numa_node,
        ),
        None => Fact::Known(None),
    });
    Nic {
        name: name.to_owned(),
        link_type: attribute::parsed(host, &at("type"), attribute::decimal),
        operstate: attribute::text(host, &at("operstate")),
        speed_mbps: speed(host, &at("speed")),
        mtu: attribute::parsed(host, &at("mtu"), attribute::decimal),
        mac_address: attribute::text(host, &at("address")),
        driver: attribute::optional_link_name(host, &at("device/driver")),
        pci_address,
        numa_node,
    }
}

fn speed(host: &dyn Host, path: &str) -> Fact<u32> {
    match host.read_text(Path::new(path)) {
        Ok(text) => match text.trim().parse::<i64>() {
            Ok(mbps) if mbps < 0 || mbps == i64::from(u32::MAX) => Fact::unknown(format!(
                "{path}: the driver reports the speed as unknown ({mbps})"
            )),
            Ok(mbps) => match u32::try_from(mbps) {
                Ok(mbps) => Fact::Known(mbps),
                Err(e) => Fact::unknown(format!("{path}: {mbps}: {e}")),
            },
            Err(e) => Fact::unknown(format!("{path}: cannot parse {:?}: {e}", text.trim())),
        },
        Err(err) if err.kind == HostErrorKind::InvalidArgument => {
            Fact::unknown(format!("{err}: the link is down"))
        }
        Err(err) => Fact::unknown(err.to_string()),
    }
}

/// The PCI function behind a `device` link, if any.
fn pci_address(host: &dyn Host, device: &str) -> Fact<Option<PciAddress>> {
    match host.read_link(Path::new(device)) {
        Err(err) if err.is_not_found() => return Fact::Known(None),
        Err(err) => return Fact::unknown(err.to_string()),
        Ok(target) => {
            if let Some(Ok(address)) = target
                .file_name()
                .map(|n| PciAddress::parse(&n.to_string_lossy()))
            {
                return Fact::Known(Some(address));
            }
        }
    }
    match host.canonicalize(Path::new(device)) {
        Ok(real) => Fact::Known(
            real.ancestors()
                .filter_map(|dir| dir.file_name())
                .find_map(|name| PciAddress::parse(&name.to_string_lossy()).ok()),
        ),
        Err(err) => Fact::unknown(err.to_string()),
    }
}
