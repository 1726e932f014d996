//! PCI devices (`/sys/bus/pci/devices/*`): identity, driver, NUMA node, link, upstream link,
//! BAR sizes and AER error counters.
//!
//! Each entry is a link into `/sys/devices/pci<domain>:<bus>/.../<address>`; the directory
//! above a device is its upstream port (a root port or a PCIe switch downstream port) when
//! its name is a PCI address. A degraded link can show only on that side, so the upstream
//! port's link is read too. BAR sizes come from `resource` (start, end, flags per line;
//! size = end - start + 1), so Resizable BAR / Above-4G decoding show as large BARs.
//!
//! An HGX node has hundreds of bridges and functions, and the checks look at GPUs, NICs
//! and NVSwitches (and the ports above them): every device's identity and class is read,
//! the rest only for those classes ([`checked_class`]); other devices say "not read".

use super::attribute;
use super::pci_address::PciAddress;
use super::pcie_link::{self, PcieLink};
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";

pub const VENDOR_NVIDIA: u16 = 0x10de;
pub const VENDOR_AMD: u16 = 0x1002;
pub const VENDOR_MELLANOX: u16 = 0x15b3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PciDevice {
    pub address: PciAddress,
    /// The device's real directory (`/sys/devices/pci0000:00/...`).
    pub sysfs_path: Fact<String>,
    pub vendor: Fact<u16>,
    pub device: Fact<u16>,
    pub subsystem_vendor: Fact<u16>,
    pub subsystem_device: Fact<u16>,
    /// 24-bit class code: base class, subclass, programming interface.
    pub class: Fact<u32>,
    /// The bound driver; `None` when unbound.
    pub driver: Fact<Option<String>>,
    /// `None` when the kernel reports no affinity (`-1`).
    pub numa_node: Fact<Option<u32>>,
    pub iommu_group: Fact<Option<u32>>,
    pub link: PcieLink,
    /// The port above the device; `None` for devices on a root bus.
    pub upstream: Fact<Option<UpstreamPort>>,
    pub bars: Fact<Vec<Bar>>,
    pub aer: Aer,
}

impl PciDevice {
    /// Base class and subclass (`0x0302` for a 3D controller).
    pub fn class_prefix(&self) -> Option<u16> {
        self.class.known().map(|class| (class >> 8) as u16)
    }

    pub fn vendor_is(&self, vendor: u16) -> bool {
        self.vendor.known() == Some(&vendor)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpstreamPort {
    pub address: PciAddress,
    pub link: PcieLink,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BarKind {
    Io,
    Memory32,
    Memory64,
}

/// One used entry of `resource`: index 0-5 are BARs, 6 the expansion ROM, 7-12 the
/// SR-IOV VF BARs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bar {
    pub index: usize,
    pub start: u64,
    pub size: u64,
    pub kind: BarKind,
    pub prefetchable: bool,
}

/// AER counters of the three severities, each a map `name -> count` as the kernel prints
/// them, plus the `TOTAL_ERR_*` line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aer {
    pub correctable: Fact<AerCounters>,
    pub nonfatal: Fact<AerCounters>,
    pub fatal: Fact<AerCounters>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AerCounters {
    pub counters: BTreeMap<String, u64>,
    pub total: Option<u64>,
}

/// Every PCI device, sorted by address. Two entries naming one address (a hand-made tree
/// or snapshot can hold `0000:13:00.0` and `13:00.0`) make the list unknown: which one
/// describes the device cannot be told, and reading either would hide the other.
pub fn collect(host: &dyn Host) -> Fact<Vec<PciDevice>> {
    attribute::list(host, PCI_DEVICES, false).and_then(|names| {
        let mut addresses: BTreeMap<PciAddress, &str> = BTreeMap::new();
        for name in &names {
            let Ok(address) = PciAddress::parse(name) else {
                continue;
            };
            if let Some(first) = addresses.insert(address, name) {
                return Fact::unknown(format!(
                    "{PCI_DEVICES} lists {address} twice (as {first:?} and {name:?})"
                ));
            }
        }
        Fact::Known(
            addresses
                .into_keys()
                .map(|address| read_device(host, address))
                .collect(),
        )
    })
}

/// Whether the checks look at a device of this class beyond its identity: display and
/// 3D controllers (0x03) and processing accelerators (0x12) are GPUs, network and
/// InfiniBand controllers (0x02) NICs, "other bridge" (0x0680) NVSwitches. A class that
/// could not be read is read in full.
pub fn checked_class(class: &Fact<u32>) -> bool {
    class
        .known()
        .is_none_or(|c| matches!(c >> 16, 0x02 | 0x03 | 0x12) || c >> 8 == 0x0680)
}

/// One device by address.
pub fn read_device(host: &dyn Host, address: PciAddress) -> PciDevice {
    let dir = format!("{PCI_DEVICES}/{address}");
    let at = |name: &str| format!("{dir}/{name}");
    let vendor = attribute::parsed(host, &at("vendor"), attribute::hex_u16);
    let device = attribute::parsed(host, &at("device"), attribute::hex_u16);
    let subsystem_vendor = attribute::parsed(host, &at("subsystem_vendor"), attribute::hex_u16);
    let subsystem_device = attribute::parsed(host, &at("subsystem_device"), attribute::hex_u16);
    let class = attribute::parsed(host, &at("class"), attribute::hex_u32);
    if !checked_class(&class) {
        let reason = format!(
            "not read: class {:#08x} is not one verify checks",
            class.known().copied().unwrap_or_default()
        );
        return PciDevice {
            address,
            sysfs_path: Fact::unknown(&reason),
            vendor,
            device,
            subsystem_vendor,
            subsystem_device,
            class,
            driver: Fact::unknown(&reason),
            numa_node: Fact::unknown(&reason),
            iommu_group: Fact::unknown(&reason),
            link: PcieLink::not_read(&reason),
            upstream: Fact::unknown(&reason),
            bars: Fact::unknown(&reason),
            aer: Aer {
                correctable: Fact::unknown(&reason),
                nonfatal: Fact::unknown(&reason),
                fatal: Fact::unknown(&reason),
            },
        };
    }
    let real = Fact::from(host.canonicalize(Path::new(&dir)));
    let upstream = real.as_ref().map(|real| upstream_port(host, real));
    PciDevice {
        address,
        sysfs_path: real.map(|path| path.display().to_string()),
        vendor,
        device,
        subsystem_vendor,
        subsystem_device,
        class,
        driver: attribute::optional_link_name(host, &at("driver")),
        numa_node: attribute::parsed(host, &at("numa_node"), attribute::numa_node),
        iommu_group: attribute::optional_link_name(host, &at("iommu_group")).and_then(|name| {
            match name.map(|n| n.parse::<u32>()) {
                None => Fact::Known(None),
                Some(Ok(group)) => Fact::Known(Some(group)),
                Some(Err(e)) => Fact::unknown(format!("{dir}/iommu_group: {e}")),
            }
        }),
        link: pcie_link::collect(host, &dir),
        upstream: upstream.and_then(|port| port),
        bars: attribute::parsed(host, &at("resource"), parse_resource),
        aer: Aer {
            correctable: attribute::parsed(host, &at("aer_dev_correctable"), parse_aer),
            nonfatal: attribute::parsed(host, &at("aer_dev_nonfatal"), parse_aer),
            fatal: attribute::parsed(host, &at("aer_dev_fatal"), parse_aer),
        },
    }
}

fn upstream_port(host: &dyn Host, real: &Path) -> Fact<Option<UpstreamPort>> {
    let Some(parent) = real.parent() else {
        return Fact::Known(None);
    };
    let name = parent
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match PciAddress::parse(&name) {
        Ok(address) => Fact::Known(Some(UpstreamPort {
            address,
            link: pcie_link::collect(host, &parent.display().to_string()),
        })),
        // `pci0000:00`: a root bus, no port above.
        Err(_) => Fact::Known(None),
    }
}

/// `0x%016llx 0x%016llx 0x%016llx` lines: start, end, flags.
pub fn parse_resource(raw: &str) -> Result<Vec<Bar>, String> {
    const IORESOURCE_IO: u64 = 0x100;
    const IORESOURCE_MEM: u64 = 0x200;
    const IORESOURCE_PREFETCH: u64 = 0x2000;
    const IORESOURCE_MEM_64: u64 = 0x10_0000;
    let hex = |s: &str| {
        let digits = s
            .strip_prefix("0x")
            .ok_or_else(|| format!("{s:?}: no 0x"))?;
        u64::from_str_radix(digits, 16).map_err(|e| format!("{s:?}: {e}"))
    };
    let mut bars = Vec::new();
    for (index, line) in raw.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [start, end, flags] = fields.as_slice() else {
            return Err(format!("line {}: expected start end flags", index + 1));
        };
        let (start, end, flags) = (hex(start)?, hex(end)?, hex(flags)?);
        if end == 0 || end < start {
            continue;
        }
        let kind = if flags & IORESOURCE_IO != 0 {
            BarKind::Io
        } else if flags & IORESOURCE_MEM != 0 && flags & IORESOURCE_MEM_64 != 0 {
            BarKind::Memory64
        } else if flags & IORESOURCE_MEM != 0 {
            BarKind::Memory32
        } else {
            continue;
        };
        bars.push(Bar {
            index,
            start,
            size: end - start + 1,
            kind,
            prefetchable: flags & IORESOURCE_PREFETCH != 0,
        });
    }
    Ok(bars)
}

/// `<Name> <count>` lines; `TOTAL_ERR_*` is the total.
pub fn parse_aer(raw: &str) -> Result<AerCounters, String> {
    let mut counters = BTreeMap::new();
    let mut total = None;
    for line in raw.lines().filter(|l| !l.trim().is_empty()) {
        let (name, count) = line
            .trim()
            .rsplit_once(char::is_whitespace)
            .ok_or_else(|| format!("{line:?}: expected \"<name> <count>\""))?;
        let count: u64 = count.parse().map_err(|e| format!("{line:?}: {e}"))?;
        if name.starts_with("TOTAL_ERR") {
            total = Some(count);
        } else {
            counters.insert(name.trim().to_owned(), count);
        }
    }
    Ok(AerCounters { counters, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bars_from_resource() {
        let raw = "0x00000000c2000000 0x00000000c2ffffff 0x0000000000040200\n\
                   0x0000000000000000 0x0000000000000000 0x0000000000000000\n\
                   0x0000220000000000 0x00002207ffffffff 0x000000000014220c\n";
        let bars = parse_resource(raw).unwrap_or_default();
        assert_eq!(bars.len(), 2);
        assert_eq!(
            (bars[0].index, bars[0].size, bars[0].kind),
            (0, 16 << 20, BarKind::Memory32)
        );
        assert_eq!(
            (bars[1].index, bars[1].size, bars[1].kind),
            (2, 32 << 30, BarKind::Memory64)
        );
        assert!(bars[1].prefetchable);
        assert!(parse_resource("0x0 0x1").is_err());
    }

    #[test]
    fn parses_aer_counters() {
        let aer = parse_aer("RxErr 2\nBadTLP 1\nTOTAL_ERR_COR 3\n");
        assert_eq!(aer.as_ref().ok().and_then(|a| a.total), Some(3));
        assert_eq!(
            aer.ok().and_then(|a| a.counters.get("BadTLP").copied()),
            Some(1)
        );
        assert!(parse_aer("RxErr x").is_err());
    }
}
