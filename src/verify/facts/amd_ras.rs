//! An AMD GPU's RAS state in sysfs, as the amdgpu driver exposes it under the PCI device
//! (`/sys/class/drm/card<N>/device` is the same folder): the error counts of each RAS
//! block (`ras/<block>_err_count`: `ue: N`, `ce: N` and, on newer drivers, `de: N`) and
//! the retired VRAM pages (`ras/gpu_vram_bad_pages`: `<pfn> : <size> : <R|P|F>` per page),
//! per the kernel's "AMDGPU RAS Support" documentation.
//!
//! A GPU without a `ras` folder has RAS off (consumer boards): that is a fact of its own
//! ([`AmdRas::supported`] false), not an error.

use super::pci_address::PciAddress;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AmdRas {
    pub supported: bool,
    /// Error counts by RAS block (`umc`, `gfx`, `sdma`, `xgmi_wafl`, ...).
    pub blocks: BTreeMap<String, ErrCount>,
    pub bad_pages: Fact<BadPages>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ErrCount {
    pub ue: u64,
    pub ce: u64,
    /// Deferred errors, where the driver reports them.
    pub de: Option<u64>,
}

/// Retired VRAM pages by flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BadPages {
    /// `R`: reserved, not used any more.
    pub reserved: u64,
    /// `P`: marked bad, reserved at the next window.
    pub pending: u64,
    /// `F`: could not be reserved.
    pub unreservable: u64,
}

/// The RAS folder of the GPU at `address`.
pub fn collect(host: &dyn Host, address: PciAddress) -> Fact<AmdRas> {
    let dir = format!("/sys/bus/pci/devices/{address}/ras");
    let names = match host.list_dir(Path::new(&dir)) {
        Ok(names) => names,
        Err(e) if e.is_not_found() => {
            return Fact::Known(AmdRas {
                supported: false,
                blocks: BTreeMap::new(),
                bad_pages: Fact::Known(BadPages::default()),
            });
        }
        Err(e) => return Fact::unknown(e.to_string()),
    };
    let mut blocks = BTreeMap::new();
    for name in &names {
        let Some(block) = name.strip_suffix("_err_count") else {
            continue;
        };
        let path = format!("{dir}/{name}");
        let text = match host.read_text(Path::new(&path)) {
            Ok(text) => text,
            Err(e) => return Fact::unknown(e.to_string()),
        };
        match parse_err_count(&text) {
            Ok(count) => {
                blocks.insert(block.to_owned(), count);
            }
            Err(why) => return Fact::unknown(format!("{path}: {why}")),
        }
    }
    let bad_pages = if names.iter().any(|n| n == "gpu_vram_bad_pages") {
        let path = format!("{dir}/gpu_vram_bad_pages");
        Fact::from(host.read_text(Path::new(&path))).and_then(|text| match parse_bad_pages(&text) {
            Ok(pages) => Fact::Known(pages),
            Err(why) => Fact::unknown(format!("{path}: {why}")),
        })
    } else {
        Fact::unknown(format!("{dir}/gpu_vram_bad_pages is missing"))
    };
    Fact::Known(AmdRas {
        supported: true,
        blocks,
        bad_pages,
    })
}

/// `ue: 0\nce: 1` (and `de: N`); both `ue` and `ce` are required.
pub fn parse_err_count(text: &str) -> Result<ErrCount, String> {
    let (mut ue, mut ce, mut de) = (None, None, None);
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("`{line}` is not `<ue|ce|de>: count`"))?;
        let value: u64 = value
            .trim()
            .parse()
            .map_err(|_| format!("`{line}`: the count is not a number"))?;
        match key.trim() {
            "ue" => ue = Some(value),
            "ce" => ce = Some(value),
            "de" => de = Some(value),
            // Counters a later driver adds are not judged.
            _ => {}
        }
    }
    match (ue, ce) {
        (Some(ue), Some(ce)) => Ok(ErrCount { ue, ce, de }),
        _ => Err("no `ue:` and `ce:` lines".to_owned()),
    }
}

/// `0x00000001 : 0x00001000 : R` per retired page.
pub fn parse_bad_pages(text: &str) -> Result<BadPages, String> {
    let mut pages = BadPages::default();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let flag = line
            .rsplit(':')
            .next()
            .map(str::trim)
            .filter(|_| line.matches(':').count() == 2)
            .ok_or_else(|| format!("`{line}` is not `<pfn> : <size> : <flag>`"))?;
        match flag {
            "R" => pages.reserved += 1,
            "P" => pages.pending += 1,
            "F" => pages.unreservable += 1,
            other => return Err(format!("`{line}`: flag `{other}` is not R, P or F")),
        }
    }
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_formats() {
        assert_eq!(
            parse_err_count("ue: 0\nce: 1\n"),
            Ok(ErrCount {
                ue: 0,
                ce: 1,
                de: None
            })
        );
        assert_eq!(
            parse_err_count("ue: 2\nce: 0\nde: 5\n").map(|c| c.de),
            Ok(Some(5))
        );
        assert!(parse_err_count("ue: x\nce: 0").is_err());
        assert!(parse_err_count("ce: 0").is_err());
        assert_eq!(
            parse_bad_pages("0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n"),
            Ok(BadPages {
                reserved: 1,
                pending: 1,
                unreservable: 0
            })
        );
        assert!(parse_bad_pages("0x1 : 0x1000 : Q").is_err());
        assert_eq!(parse_bad_pages(""), Ok(BadPages::default()));
    }
}
