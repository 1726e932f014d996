//! PCIe link speed and width of one end of a link (`current_link_*`, `max_link_*`).
//!
//! Kernels since about 5.7 print `"16.0 GT/s PCIe"`; older ones `"16 GT/s"` and
//! `"Unknown speed"`; newer ones `"Unknown"`. Width is a bare decimal (no `x`). Only PCIe
//! devices have these files, and VMs often hide them, so each value is its own `Fact`.
//! NVIDIA GPUs drop to 2.5 GT/s when idle: checks compare *width* strictly and *max* speed
//! of both ends, not the current speed.

use super::attribute;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

/// A link speed in GT/s, with its PCIe generation when it is a standard rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkSpeed {
    pub gt_per_s: f64,
    pub generation: Option<u8>,
}

impl LinkSpeed {
    /// Parses `"8.0 GT/s PCIe"`, `"8 GT/s"`, `"2.5 GT/s"`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        if raw.starts_with("Unknown") {
            return Err("the kernel reports the speed as unknown".to_owned());
        }
        let number = raw
            .split_whitespace()
            .next()
            .ok_or_else(|| "empty".to_owned())?;
        if !raw[number.len()..].trim_start().starts_with("GT/s") {
            return Err("expected \"<number> GT/s\"".to_owned());
        }
        let gt_per_s: f64 = number.parse().map_err(|e| format!("{e}"))?;
        let generation = match number.trim_end_matches(".0") {
            "2.5" => Some(1),
            "5" => Some(2),
            "8" => Some(3),
            "16" => Some(4),
            "32" => Some(5),
            "64" => Some(6),
            "128" => Some(7),
            _ => None,
        };
        Ok(LinkSpeed {
            gt_per_s,
            generation,
        })
    }
}

/// The speed and width one device reports for its link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PcieLink {
    pub current_speed: Fact<LinkSpeed>,
    pub max_speed: Fact<LinkSpeed>,
    pub current_width: Fact<u32>,
    pub max_width: Fact<u32>,
}

impl PcieLink {
    /// A link that was not read, each value saying why.
    pub fn not_read(reason: &str) -> Self {
        PcieLink {
            current_speed: Fact::unknown(reason),
            max_speed: Fact::unknown(reason),
            current_width: Fact::unknown(reason),
            max_width: Fact::unknown(reason),
        }
    }
}

/// Reads the four link attributes of the device directory `dir`.
pub fn collect(host: &dyn Host, dir: &str) -> PcieLink {
    let speed = |name: &str| attribute::parsed(host, &format!("{dir}/{name}"), LinkSpeed::parse);
    let width = |name: &str| attribute::parsed(host, &format!("{dir}/{name}"), attribute::decimal);
    PcieLink {
        current_speed: speed("current_link_speed"),
        max_speed: speed("max_link_speed"),
        current_width: width("current_link_width"),
        max_width: width("max_link_width"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_old_and_new_spellings() {
        for (raw, gts, generation) in [
            ("2.5 GT/s PCIe", 2.5, Some(1)),
            ("2.5 GT/s", 2.5, Some(1)),
            ("5 GT/s", 5.0, Some(2)),
            ("8 GT/s", 8.0, Some(3)),
            ("8.0 GT/s PCIe", 8.0, Some(3)),
            ("32.0 GT/s PCIe", 32.0, Some(5)),
            ("64.0 GT/s PCIe", 64.0, Some(6)),
        ] {
            assert_eq!(
                LinkSpeed::parse(raw),
                Ok(LinkSpeed {
                    gt_per_s: gts,
                    generation
                }),
                "{raw}"
            );
        }
        assert!(LinkSpeed::parse("Unknown speed").is_err());
        assert!(LinkSpeed::parse("Unknown").is_err());
        assert!(LinkSpeed::parse("16").is_err());
    }
}
