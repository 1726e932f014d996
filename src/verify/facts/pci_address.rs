//! PCI addresses (`domain:bus:device.function`), parsed from the spellings the sources use.
//!
//! Sysfs writes `0000:3b:00.0`; nvidia-smi writes `00000000:3B:00.0` (eight-digit domain,
//! upper case) and older drivers `0000:04:00.0`; rocm-smi writes `0000:1E:00.0`. One typed
//! address makes them comparable; it prints the sysfs way.

use serde::{Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciAddress {
    pub domain: u32,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl PciAddress {
    /// Parses `[domain:]bus:device.function` in any hex case.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        let bad = || format!("{raw:?} is not a PCI address (domain:bus:device.function)");
        let (rest, function) = raw.rsplit_once('.').ok_or_else(bad)?;
        let mut parts = rest.rsplitn(3, ':');
        let device = parts.next().ok_or_else(bad)?;
        let bus = parts.next().ok_or_else(bad)?;
        let domain = parts.next().unwrap_or("0");
        let hex = |s: &str, max_len: usize| {
            if s.is_empty() || s.len() > max_len || !s.chars().all(|c| c.is_ascii_hexdigit()) {
                Err(bad())
            } else {
                u32::from_str_radix(s, 16).map_err(|_| bad())
            }
        };
        let domain = hex(domain, 8)?;
        let bus = u8::try_from(hex(bus, 2)?).map_err(|_| bad())?;
        let device = u8::try_from(hex(device, 2)?).map_err(|_| bad())?;
        let function = u8::try_from(hex(function, 1)?).map_err(|_| bad())?;
        if device > 0x1f || function > 7 {
            return Err(bad());
        }
        Ok(PciAddress {
            domain,
            bus,
            device,
            function,
        })
    }
}

impl PciAddress {
    /// The address of function 0 of the same device: what the kernel log names when it
    /// prints `domain:bus:device` (NVIDIA Xids).
    pub fn device_slot(self) -> PciAddress {
        PciAddress {
            function: 0,
            ..self
        }
    }
}

impl fmt::Display for PciAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl Serialize for PciAddress {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_spelling() {
        let expected = PciAddress {
            domain: 0,
            bus: 0x3b,
            device: 0,
            function: 0,
        };
        assert_eq!(PciAddress::parse("0000:3b:00.0"), Ok(expected));
        assert_eq!(PciAddress::parse("00000000:3B:00.0"), Ok(expected));
        assert_eq!(PciAddress::parse("3b:00.0"), Ok(expected));
        assert_eq!(expected.to_string(), "0000:3b:00.0");
        assert!(PciAddress::parse("pci0000:00").is_err());
        assert!(PciAddress::parse("0000:3b:20.0").is_err());
        assert!(PciAddress::parse("virtio2").is_err());
    }
}
