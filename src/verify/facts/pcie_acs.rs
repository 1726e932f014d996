//! PCIe Access Control Services (ACS) of the bridges between the root complex and each GPU
//! and NIC: whether a switch port redirects peer-to-peer traffic up to the root complex.
//!
//! ACS is a PCIe extended capability (ID `0x000d`, PCIe Base Specification §7.7.8). Its
//! 16-bit Capability register (offset 4) says which controls a port has; the 16-bit
//! Control register (offset 6) which are on. Bits, in both: 0 Source Validation, 1
//! Translation Blocking, 2 P2P Request Redirect, 3 P2P Completion Redirect, 4 Upstream
//! Forwarding, 5 P2P Egress Control, 6 Direct Translated P2P. With Request or Completion
//! Redirect on at a switch's downstream port, a GPU's peer write to its neighbour (or a
//! NIC's GPUDirect read) goes up through the root complex instead of across the switch.
//!
//! The registers are read from the port's `config` file in sysfs: the whole configuration
//! space, 4096 bytes for a PCIe function. Only root reads past the first 64 bytes, so a
//! shorter file means the extended space was not readable, never "no ACS". The extended
//! capabilities form a list from offset `0x100`: each 32-bit header holds the ID (bits
//! 0-15), the version (16-19) and the next offset (20-31; 0 ends the list). What kind of
//! port a bridge is (root port, switch upstream or downstream port) is the Device/Port
//! Type of its PCI Express capability (ID `0x10` in the list from offset `0x34`, bits 4-7
//! of its Capabilities register): ACS redirect matters on the ports that take traffic from
//! below, root and downstream ports.

use super::pci::PciDevice;
use super::pci_address::PciAddress;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The ACS extended capability ID.
pub const ACS_CAPABILITY_ID: u16 = 0x000d;
/// Size of a PCIe function's configuration space.
const CONFIG_SPACE: usize = 4096;
/// Where the extended capabilities start.
const EXTENDED_START: usize = 0x100;

/// One ACS control, by its bit in the Capability and Control registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcsBit {
    pub bit: u16,
    /// The name lspci prints (`ACSCtl: SrcValid+ …`).
    pub name: &'static str,
}

/// The seven controls in register order.
pub const ACS_BITS: [AcsBit; 7] = [
    AcsBit {
        bit: 1 << 0,
        name: "SrcValid",
    },
    AcsBit {
        bit: 1 << 1,
        name: "TransBlk",
    },
    AcsBit {
        bit: 1 << 2,
        name: "ReqRedir",
    },
    AcsBit {
        bit: 1 << 3,
        name: "CmpltRedir",
    },
    AcsBit {
        bit: 1 << 4,
        name: "UpstreamFwd",
    },
    AcsBit {
        bit: 1 << 5,
        name: "EgressCtrl",
    },
    AcsBit {
        bit: 1 << 6,
        name: "DirectTrans",
    },
];

/// P2P Request Redirect.
pub const REQUEST_REDIRECT: u16 = 1 << 2;
/// P2P Completion Redirect.
pub const COMPLETION_REDIRECT: u16 = 1 << 3;
/// P2P Egress Control.
pub const EGRESS_CONTROL: u16 = 1 << 5;

/// A port's ACS capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Acs {
    /// Offset of the capability in configuration space (setpci's `ECAP_ACS`).
    pub offset: u16,
    /// The Capability register: the controls the port has.
    pub capability: u16,
    /// The Control register: the controls that are on.
    pub control: u16,
}

impl Acs {
    /// The Control register as lspci prints it: `SrcValid+ TransBlk- …`.
    pub fn control_text(&self) -> String {
        ACS_BITS
            .iter()
            .map(|b| {
                let on = if self.control & b.bit != 0 { '+' } else { '-' };
                format!("{}{on}", b.name)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The names of the bits set in `mask`.
pub fn bit_names(mask: u16) -> Vec<&'static str> {
    ACS_BITS
        .iter()
        .filter(|b| mask & b.bit != 0)
        .map(|b| b.name)
        .collect()
}

/// The Device/Port Type of a PCI Express capability (PCIe Base Specification §7.5.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PortType {
    RootPort,
    SwitchUpstream,
    SwitchDownstream,
    /// Any other type (an endpoint, a PCIe-to-PCI bridge…), by its number.
    Other(u8),
}

impl PortType {
    fn from_field(field: u8) -> Self {
        match field {
            0x4 => PortType::RootPort,
            0x5 => PortType::SwitchUpstream,
            0x6 => PortType::SwitchDownstream,
            other => PortType::Other(other),
        }
    }
}

/// What the configuration space of a bridge says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PortConfig {
    /// `None` when the function has no PCI Express capability.
    pub port_type: Option<PortType>,
    /// `None` when the port has no ACS capability.
    pub acs: Option<Acs>,
}

/// A bridge on the path from the root complex to a GPU or NIC.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcsPort {
    pub address: PciAddress,
    /// The GPUs and NICs below the port.
    pub below: Vec<PciAddress>,
    pub config: Fact<PortConfig>,
}

/// Whether a device is one whose peer paths matter: a GPU (display, 3D controller or
/// processing accelerator) or a network/InfiniBand controller.
fn on_a_peer_path(device: &PciDevice) -> bool {
    device
        .class
        .known()
        .is_some_and(|c| matches!(c >> 16, 0x02 | 0x03 | 0x12))
}

/// The bridges above `path` (`/sys/devices/pci0000:10/0000:10:01.0/…/0000:13:00.0`),
/// from the root port down, without the device itself.
pub fn bridges_above(path: &str) -> Vec<PciAddress> {
    let mut addresses: Vec<PciAddress> = path
        .split('/')
        .skip_while(|c| !c.starts_with("pci"))
        .skip(1)
        .map_while(|c| PciAddress::parse(c).ok())
        .collect();
    addresses.pop();
    addresses
}

/// The ACS capability of every bridge above a GPU or NIC, by address.
pub fn collect(host: &dyn Host, devices: &Fact<Vec<PciDevice>>) -> Fact<Vec<AcsPort>> {
    let devices = match devices {
        Fact::Known(devices) => devices,
        Fact::Unknown { reason } => return Fact::unknown(reason.clone()),
    };
    let mut ports: BTreeMap<PciAddress, Vec<PciAddress>> = BTreeMap::new();
    for device in devices.iter().filter(|d| on_a_peer_path(d)) {
        let Some(path) = device.sysfs_path.known() else {
            continue;
        };
        for bridge in bridges_above(path) {
            ports.entry(bridge).or_default().push(device.address);
        }
    }
    Fact::Known(
        ports
            .into_iter()
            .map(|(address, below)| {
                let file = format!("{}/{address}/config", super::pci::PCI_DEVICES);
                let config = match host.read(Path::new(&file)) {
                    Ok(bytes) => match parse(&bytes) {
                        Ok(config) => Fact::Known(config),
                        Err(why) => Fact::unknown(format!("{file}: {why}")),
                    },
                    Err(e) => Fact::unknown(e.to_string()),
                };
                AcsPort {
                    address,
                    below,
                    config,
                }
            })
            .collect(),
    )
}

fn word(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]))
}

fn dword(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *bytes.get(at)?,
        *bytes.get(at + 1)?,
        *bytes.get(at + 2)?,
        *bytes.get(at + 3)?,
    ]))
}

/// The port type and the ACS capability in a configuration space read from sysfs.
pub fn parse(config: &[u8]) -> Result<PortConfig, String> {
    if config.len() < CONFIG_SPACE {
        return Err(format!(
            "{} bytes of configuration space, not {CONFIG_SPACE}: only root reads the extended \
             capabilities (run verify as root)",
            config.len()
        ));
    }
    Ok(PortConfig {
        port_type: port_type(config)?,
        acs: acs(config)?,
    })
}

/// The Device/Port Type of the PCI Express capability, walking the standard capability
/// list (pointer at `0x34`, each entry ID then next pointer).
fn port_type(config: &[u8]) -> Result<Option<PortType>, String> {
    const STATUS_CAPABILITIES_LIST: u16 = 1 << 4;
    let status = word(config, 0x06).ok_or("no status register")?;
    if status & STATUS_CAPABILITIES_LIST == 0 {
        return Ok(None);
    }
    let mut at = usize::from(config[0x34] & 0xfc);
    // At most 48 entries fit between 0x40 and 0x100.
    for _ in 0..48 {
        if at == 0 {
            return Ok(None);
        }
        if !(0x40..0x100).contains(&at) {
            return Err(format!(
                "capability pointer {at:#x} outside the standard space"
            ));
        }
        if config[at] == 0x10 {
            let capabilities = word(config, at + 2).ok_or("PCI Express capability past the end")?;
            return Ok(Some(PortType::from_field(
                ((capabilities >> 4) & 0xf) as u8,
            )));
        }
        at = usize::from(config[at + 1] & 0xfc);
    }
    Err("the capability list loops".to_owned())
}

/// The ACS capability; `None` when the list of extended capabilities has none.
fn acs(config: &[u8]) -> Result<Option<Acs>, String> {
    if config.len() < CONFIG_SPACE {
        return Err(format!(
            "{} bytes of configuration space, not {CONFIG_SPACE}: only root reads the extended \
             capabilities (run verify as root)",
            config.len()
        ));
    }
    let mut at = EXTENDED_START;
    // A well-formed list visits each dword once at most; a loop is a malformed list.
    for _ in 0..(CONFIG_SPACE - EXTENDED_START) / 4 {
        let header = dword(config, at).ok_or("capability header past the end")?;
        // An empty list reads 0; a function that is gone reads all ones.
        if header == 0 || header == u32::MAX {
            return Ok(None);
        }
        if header & 0xffff == u32::from(ACS_CAPABILITY_ID) {
            let capability = word(config, at + 4).ok_or("ACS capability past the end")?;
            let control = word(config, at + 6).ok_or("ACS capability past the end")?;
            return Ok(Some(Acs {
                offset: u16::try_from(at).unwrap_or(u16::MAX),
                capability,
                control,
            }));
        }
        let next = ((header >> 20) & 0xffc) as usize;
        if next == 0 {
            return Ok(None);
        }
        if next < EXTENDED_START || next + 4 > CONFIG_SPACE {
            return Err(format!(
                "extended capability at {at:#x} points to {next:#x}, outside the extended space"
            ));
        }
        at = next;
    }
    Err("the extended capability list loops".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4096-byte configuration space with the extended capabilities `(offset, id,
    /// payload)` chained in the given order.
    fn space(caps: &[(usize, u16, &[u8])]) -> Vec<u8> {
        let mut bytes = vec![0u8; CONFIG_SPACE];
        for (i, (offset, id, payload)) in caps.iter().enumerate() {
            let next = caps.get(i + 1).map_or(0, |c| c.0) as u32;
            let header = u32::from(*id) | (1 << 16) | (next << 20);
            bytes[*offset..offset + 4].copy_from_slice(&header.to_le_bytes());
            bytes[offset + 4..offset + 4 + payload.len()].copy_from_slice(payload);
        }
        bytes
    }

    /// A downstream port's standard header: capabilities list, PCIe capability at 0x68.
    fn downstream(mut bytes: Vec<u8>) -> Vec<u8> {
        bytes[0x06] = 0x10;
        bytes[0x34] = 0x68;
        bytes[0x68..0x6c].copy_from_slice(&[0x10, 0x00, 0x62, 0x00]);
        bytes
    }

    #[test]
    fn reads_the_port_type() {
        let config = parse(&downstream(space(&[])));
        assert_eq!(
            config.map(|c| c.port_type),
            Ok(Some(PortType::SwitchDownstream))
        );
        assert_eq!(parse(&[0u8; CONFIG_SPACE]).map(|c| c.port_type), Ok(None));
        let mut looped = downstream(space(&[]));
        looped[0x68] = 0x01;
        looped[0x69] = 0x68;
        assert!(parse(&looped).is_err_and(|e| e.contains("loops")));
    }

    #[test]
    fn finds_acs_after_other_capabilities() {
        // AER (0x0001) at 0x100, then ACS at 0x148 with ReqRedir and CmpltRedir on.
        let config = space(&[
            (0x100, 0x0001, &[0; 8]),
            (0x148, ACS_CAPABILITY_ID, &[0x5f, 0x00, 0x1d, 0x00]),
        ]);
        let acs = parse(&config).map(|c| c.acs);
        assert_eq!(
            acs,
            Ok(Some(Acs {
                offset: 0x148,
                capability: 0x005f,
                control: 0x001d
            }))
        );
        let text = acs.ok().flatten().map(|a| a.control_text());
        assert_eq!(
            text.as_deref(),
            Some("SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-")
        );
    }

    #[test]
    fn a_list_without_acs_or_an_empty_one_is_none() {
        assert_eq!(
            parse(&space(&[(0x100, 0x0001, &[0; 8])])).map(|c| c.acs),
            Ok(None)
        );
        assert_eq!(parse(&[0u8; CONFIG_SPACE]).map(|c| c.acs), Ok(None));
    }

    #[test]
    fn a_short_read_or_a_bad_list_is_an_error() {
        assert!(parse(&[0; 64]).is_err_and(|e| e.contains("root")));
        // A header that points back into the standard header.
        let mut looped = vec![0u8; CONFIG_SPACE];
        looped[0x100..0x104].copy_from_slice(&(0x0001u32 | (0x40 << 20)).to_le_bytes());
        assert!(parse(&looped).is_err());
        // A header that points to itself.
        let mut cycle = vec![0u8; CONFIG_SPACE];
        cycle[0x100..0x104].copy_from_slice(&(0x0001u32 | (0x100 << 20)).to_le_bytes());
        assert!(parse(&cycle).is_err_and(|e| e.contains("loops")));
    }

    #[test]
    fn bridges_run_from_the_root_port_down() {
        let path = "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0";
        let bridges: Vec<String> = bridges_above(path).iter().map(|a| a.to_string()).collect();
        assert_eq!(bridges, ["0000:10:01.0", "0000:11:00.0", "0000:12:00.0"]);
        assert!(bridges_above("/sys/devices/pci0000:00/0000:00:1c.0").is_empty());
    }
}
