//! RDMA devices and ports (`/sys/class/infiniband/<dev>/ports/<n>/*`): state, physical
//! state, rate, link layer, and the device's firmware version.
//!
//! The kernel prints `state` as `4: ACTIVE`, `phys_state` as `5: LinkUp`, and `rate` as
//! `400 Gb/sec (4X NDR)` (`%d%s Gb/sec (%dX%s)`, the speed name empty for SDR). A
//! ConnectX-7 NDR port must be ACTIVE/LinkUp at 400; RoCE ports say `Ethernet` as their
//! link layer.

use super::attribute;
use super::pci_address::PciAddress;
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

pub const INFINIBAND_CLASS: &str = "/sys/class/infiniband";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RdmaDevice {
    pub name: String,
    pub fw_ver: Fact<Version>,
    /// e.g. `MT4129` (ConnectX-7).
    pub hca_type: Fact<String>,
    pub board_id: Fact<String>,
    pub pci_address: Fact<Option<PciAddress>>,
    pub ports: Fact<Vec<RdmaPort>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RdmaPort {
    pub number: u32,
    pub state: Fact<PortState>,
    pub phys_state: Fact<PortState>,
    pub rate: Fact<IbRate>,
    /// `InfiniBand`, `Ethernet` (RoCE) or `Unknown`.
    pub link_layer: Fact<String>,
}

/// `4: ACTIVE` as code and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortState {
    pub code: u32,
    pub name: String,
}

impl PortState {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let (code, name) = raw.split_once(':').ok_or("expected \"<code>: <name>\"")?;
        Ok(PortState {
            code: code.trim().parse().map_err(|e| format!("{e}"))?,
            name: name.trim().to_owned(),
        })
    }
}

/// `400 Gb/sec (4X NDR)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IbRate {
    pub gbps: f64,
    pub lanes: u32,
    /// `NDR`, `HDR`, `EDR`, ...; `None` for SDR, which the kernel leaves unnamed.
    pub speed: Option<String>,
}

impl IbRate {
    pub fn parse(raw: &str) -> Result<Self, String> {
        let bad = || "expected \"<n> Gb/sec (<lanes>X <speed>)\"".to_owned();
        let (gbps, rest) = raw.split_once(" Gb/sec").ok_or_else(bad)?;
        let inner = rest
            .trim()
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(bad)?;
        let (lanes, speed) = inner.split_once('X').ok_or_else(bad)?;
        let speed = speed.trim();
        Ok(IbRate {
            gbps: gbps.trim().parse().map_err(|e| format!("{e}"))?,
            lanes: lanes.trim().parse().map_err(|e| format!("{e}"))?,
            speed: (!speed.is_empty()).then(|| speed.to_owned()),
        })
    }
}

/// Every RDMA device under `class_dir` (normally [`INFINIBAND_CLASS`]); no directory means
/// no RDMA driver is loaded, which is an empty list.
pub fn collect_at(host: &dyn Host, class_dir: &str) -> Fact<Vec<RdmaDevice>> {
    attribute::list(host, class_dir, true).map(|names| {
        names
            .iter()
            .map(|name| read_device(host, class_dir, name))
            .collect()
    })
}

fn read_device(host: &dyn Host, class_dir: &str, name: &str) -> RdmaDevice {
    let dir = format!("{}/{name}", class_dir.trim_end_matches('/'));
    let ports_dir = format!("{dir}/ports");
    let ports = attribute::list(host, &ports_dir, false).map(|numbers| {
        let mut ports: Vec<RdmaPort> = numbers
            .iter()
            .filter_map(|n| n.parse::<u32>().ok())
            .map(|number| {
                let port = format!("{ports_dir}/{number}");
                RdmaPort {
                    number,
                    state: attribute::parsed(host, &format!("{port}/state"), PortState::parse),
                    phys_state: attribute::parsed(
                        host,
                        &format!("{port}/phys_state"),
                        PortState::parse,
                    ),
                    rate: attribute::parsed(host, &format!("{port}/rate"), IbRate::parse),
                    link_layer: attribute::text(host, &format!("{port}/link_layer")),
                }
            })
            .collect();
        ports.sort_by_key(|port| port.number);
        ports
    });
    RdmaDevice {
        name: name.to_owned(),
        fw_ver: attribute::text(host, &format!("{dir}/fw_ver")).version(&format!("{dir}/fw_ver")),
        hca_type: attribute::text(host, &format!("{dir}/hca_type")),
        board_id: attribute::text(host, &format!("{dir}/board_id")),
        pci_address: attribute::optional_link_name(host, &format!("{dir}/device")).and_then(
            |name| match name.map(|n| PciAddress::parse(&n)) {
                None => Fact::Known(None),
                Some(Ok(address)) => Fact::Known(Some(address)),
                Some(Err(e)) => Fact::unknown(format!("{dir}/device: {e}")),
            },
        ),
        ports,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_states_and_rates() {
        assert_eq!(
            PortState::parse("4: ACTIVE"),
            Ok(PortState {
                code: 4,
                name: "ACTIVE".to_owned()
            })
        );
        let ndr = IbRate::parse("400 Gb/sec (4X NDR)").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (ndr.gbps, ndr.lanes, ndr.speed.as_deref()),
            (400.0, 4, Some("NDR"))
        );
        let sdr = IbRate::parse("10 Gb/sec (4X)").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((sdr.gbps, sdr.speed), (10.0, None));
        assert_eq!(
            IbRate::parse("2.5 Gb/sec (1X SDR)").map(|r| r.gbps),
            Ok(2.5)
        );
        assert!(IbRate::parse("400").is_err());
    }
}
