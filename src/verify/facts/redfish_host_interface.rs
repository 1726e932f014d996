//! Where the BMC's Redfish service answers the host: the SMBIOS type 42 record
//! (Management Controller Host Interface) of a Redfish host interface, as the kernel
//! exports it in `/sys/firmware/dmi/entries/42-<n>/raw`.
//!
//! Layout (DMTF DSP0134 3.x §7.43 for the structure, DSP0270 1.3.0 "SMBIOS Type 42"
//! for the Redfish parts; checked against EDK II's RedfishHostInterface.h and fwupd's
//! redfish plugin, which write and read the same bytes):
//!
//! | offset | field |
//! |---|---|
//! | 00h | type (42), 01h length of the formatted area, 02h handle (2 bytes) |
//! | 04h | interface type: 40h Network Host Interface (Redfish) |
//! | 05h | interface-specific data length n, then n bytes (device type and descriptor) |
//! | 06h+n | protocol record count, then records: type (04h Redfish over IP), length, data |
//!
//! The Redfish-over-IP data: service UUID (16), host IP assignment type and format (1+1),
//! host address and mask (16+16), service IP discovery type and address format (1+1;
//! format 01h IPv4 in the first 4 bytes, 02h IPv6), service address and mask (16+16),
//! service port (2, little-endian), VLAN ID (4), hostname length and hostname.

use super::super::host::{Host, HostError};
use serde::Serialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// Where the kernel exports each SMBIOS structure.
pub const DMI_ENTRIES: &str = "/sys/firmware/dmi/entries";

const TYPE_HOST_INTERFACE: u8 = 42;
const INTERFACE_NETWORK: u8 = 0x40;
const PROTOCOL_REDFISH_OVER_IP: u8 = 0x04;
/// Bytes of the Redfish-over-IP data before the hostname.
const OVER_IP_FIXED: usize = 91;

/// The Redfish service a type 42 record names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RedfishService {
    pub address: SocketAddr,
    /// The service's hostname, when the record gives one (the name its certificate
    /// carries, on most BMCs).
    pub hostname: Option<String>,
}

impl RedfishService {
    /// `https://HOST:PORT`, HOST the hostname when there is one.
    pub fn origin(&self) -> String {
        match (&self.hostname, self.address.ip()) {
            (Some(name), _) => format!("https://{name}:{}", self.address.port()),
            (None, IpAddr::V4(ip)) => format!("https://{ip}:{}", self.address.port()),
            (None, IpAddr::V6(ip)) => format!("https://[{ip}]:{}", self.address.port()),
        }
    }
}

/// The first Redfish host interface among the type 42 records, `Ok(None)` when the
/// machine has none (no record, or none of type 40h with a Redfish-over-IP protocol).
pub fn discover(host: &dyn Host) -> Result<Option<RedfishService>, String> {
    let entries = match host.list_dir(Path::new(DMI_ENTRIES)) {
        Ok(entries) => entries,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    for entry in entries.iter().filter(|e| e.starts_with("42-")) {
        let path = format!("{DMI_ENTRIES}/{entry}/raw");
        let raw = host
            .read(Path::new(&path))
            .map_err(|e: HostError| e.to_string())?;
        if let Some(service) = parse(&raw).map_err(|why| format!("{path}: {why}"))? {
            return Ok(Some(service));
        }
    }
    Ok(None)
}

/// The Redfish service of one type 42 structure; `Ok(None)` for a host interface of
/// another kind (an IPMI KCS interface, an MCTP one).
pub fn parse(raw: &[u8]) -> Result<Option<RedfishService>, String> {
    let byte = |at: usize, what: &str| {
        raw.get(at)
            .copied()
            .ok_or_else(|| format!("truncated: no {what} at offset {at:#04x}"))
    };
    if byte(0, "type")? != TYPE_HOST_INTERFACE {
        return Err(format!("type {} is not 42", raw[0]));
    }
    let length = usize::from(byte(1, "length")?);
    if length < 6 || length > raw.len() {
        return Err(format!(
            "the structure says {length} bytes, {} were read",
            raw.len()
        ));
    }
    let formatted = &raw[..length];
    if byte(4, "interface type")? != INTERFACE_NETWORK {
        return Ok(None);
    }
    let at = |at: usize, what: &str| {
        formatted.get(at).copied().ok_or_else(|| {
            format!("truncated: {what} at offset {at:#04x} is past the structure's {length} bytes")
        })
    };
    let specific = usize::from(at(5, "interface data length")?);
    let mut offset = 6 + specific;
    let count = at(offset, "protocol record count")?;
    offset += 1;
    for _ in 0..count {
        let kind = at(offset, "protocol type")?;
        let size = usize::from(at(offset + 1, "protocol data length")?);
        let data = formatted
            .get(offset + 2..offset + 2 + size)
            .ok_or_else(|| {
                format!(
                    "truncated: protocol record at offset {offset:#04x} runs past the structure"
                )
            })?;
        if kind == PROTOCOL_REDFISH_OVER_IP {
            return over_ip(data).map(Some);
        }
        offset += 2 + size;
    }
    Ok(None)
}

fn over_ip(data: &[u8]) -> Result<RedfishService, String> {
    if data.len() < OVER_IP_FIXED {
        return Err(format!(
            "Redfish over IP data is {} bytes, at least {OVER_IP_FIXED} expected",
            data.len()
        ));
    }
    let address = &data[52..68];
    let ip = match data[51] {
        1 => IpAddr::V4(Ipv4Addr::new(
            address[0], address[1], address[2], address[3],
        )),
        2 => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(address);
            IpAddr::V6(Ipv6Addr::from(octets))
        }
        other => {
            return Err(format!(
                "Redfish service address format {other:#04x} is neither IPv4 (01h) nor IPv6 (02h)"
            ));
        }
    };
    if ip.is_unspecified() {
        return Err("the Redfish service address is unspecified (0.0.0.0 or ::)".to_owned());
    }
    let port = u16::from_le_bytes([data[84], data[85]]);
    if port == 0 {
        return Err("the Redfish service port is 0".to_owned());
    }
    let name_length = usize::from(data[90]);
    let name = data
        .get(OVER_IP_FIXED..OVER_IP_FIXED + name_length)
        .ok_or_else(|| {
            format!(
                "the hostname's {name_length} bytes run past the protocol data's {}",
                data.len()
            )
        })?;
    let name = std::str::from_utf8(name)
        .map_err(|_| "the Redfish service hostname is not text".to_owned())?
        .trim_end_matches('\0');
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '.';
    let hostname = if name.is_empty() {
        None
    } else if name.chars().all(valid) && !name.starts_with(['-', '.']) {
        Some(name.to_owned())
    } else {
        return Err(format!(
            "the Redfish service hostname {name:?} is not a DNS name"
        ));
    };
    Ok(RedfishService {
        address: SocketAddr::new(ip, port),
        hostname,
    })
}

/// A type 42 structure for a Redfish host interface on a USB network device, as
/// DSP0270 lays it out; for tests (here and in tests/it).
pub fn record(ip: IpAddr, port: u16, hostname: &str) -> Vec<u8> {
    let mut over_ip = vec![0u8; OVER_IP_FIXED];
    over_ip[..16].copy_from_slice(&[0x11; 16]); // service UUID
    over_ip[16] = 0x02; // host IP by DHCP
    over_ip[17] = 0x01;
    over_ip[50] = 0x01; // service address static
    match ip {
        IpAddr::V4(v4) => {
            over_ip[51] = 0x01;
            over_ip[52..56].copy_from_slice(&v4.octets());
            over_ip[68..72].copy_from_slice(&[255, 255, 255, 0]);
        }
        IpAddr::V6(v6) => {
            over_ip[51] = 0x02;
            over_ip[52..68].copy_from_slice(&v6.octets());
        }
    }
    over_ip[84..86].copy_from_slice(&port.to_le_bytes());
    over_ip[90] = u8::try_from(hostname.len()).unwrap_or(0);
    over_ip.extend_from_slice(hostname.as_bytes());
    // USB network interface v2 (04h): length, idVendor, idProduct, serial number
    // string index, MAC address.
    let device = [
        0x04, 0x0b, 0x6b, 0x1d, 0x03, 0x01, 0x00, 0, 0x0a, 0x5b, 0x3c, 0x10,
    ];
    let mut raw = vec![TYPE_HOST_INTERFACE, 0, 0x2a, 0x00, INTERFACE_NETWORK];
    raw.push(device.len() as u8);
    raw.extend_from_slice(&device);
    raw.push(1);
    raw.push(PROTOCOL_REDFISH_OVER_IP);
    raw.push(over_ip.len() as u8);
    raw.extend_from_slice(&over_ip);
    raw[1] = raw.len() as u8;
    // No strings: the formatted area ends with two NULs.
    raw.extend_from_slice(&[0, 0]);
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_service_address_port_and_hostname() {
        let raw = record(IpAddr::V4(Ipv4Addr::new(169, 254, 0, 17)), 443, "bmc.local");
        let service = parse(&raw).unwrap().unwrap();
        assert_eq!(service.address, "169.254.0.17:443".parse().unwrap());
        assert_eq!(service.hostname.as_deref(), Some("bmc.local"));
        assert_eq!(service.origin(), "https://bmc.local:443");
        let v6 = record(IpAddr::V6("fe80::1".parse().unwrap()), 8443, "");
        let service = parse(&v6).unwrap().unwrap();
        assert_eq!(service.origin(), "https://[fe80::1]:8443");
    }

    #[test]
    fn an_ipmi_interface_is_not_redfish() {
        // KCS (02h): IPMI's own host interface, no protocol records.
        let raw = [42, 0x0b, 0x2a, 0, 0x02, 0x04, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(parse(&raw), Ok(None));
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let raw = record(IpAddr::V4(Ipv4Addr::new(169, 254, 0, 17)), 443, "bmc");
        let length = usize::from(raw[1]);
        for cut in 0..length {
            let mut short = raw[..cut].to_vec();
            if cut > 1 {
                short[1] = cut as u8;
            }
            assert!(parse(&short).is_err(), "{cut} bytes parsed");
        }
        // A length byte larger than what was read.
        let mut lying = raw.clone();
        lying.truncate(40);
        assert!(parse(&lying).unwrap_err().contains("says"));
    }

    #[test]
    fn refuses_an_unusable_address() {
        let mut raw = record(IpAddr::V4(Ipv4Addr::new(169, 254, 0, 17)), 443, "");
        let data = 6 + usize::from(raw[5]) + 3;
        raw[data + 51] = 0;
        assert!(parse(&raw).unwrap_err().contains("format"));
        let zero = record(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 443, "");
        assert!(parse(&zero).is_err());
        let no_port = record(IpAddr::V4(Ipv4Addr::new(169, 254, 0, 17)), 0, "");
        assert!(parse(&no_port).is_err());
        let bad_name = record(IpAddr::V4(Ipv4Addr::new(169, 254, 0, 17)), 443, "a b/c");
        assert!(parse(&bad_name).is_err());
    }
}
