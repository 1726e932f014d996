//! `rocm-smi --json` output, parsed across ROCm releases (4.3 to 6.1 seen).
//!
//! The document is `{"card0": {...}, ..., "system": {"Driver version": ...}}` and every
//! value is a string, numbers included (`"53.0"`, `"34342961152"`). Keys were renamed between
//! releases: `GPU ID` became `Device ID` (6.0); `Card series`/`Card model`/`Card vendor`
//! became `Card Series`/`Card Model`/`Card Vendor` (6.1), which also added `Device Name`.
//! ROCm 4.3 prints the vendor id `0x1002` where the series name belongs. Values may be
//! `N/A` or `N/A (Secondary die)`. Each field is therefore looked up under every spelling,
//! and sentinels become `Unknown`.

use super::pci_address::PciAddress;
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use serde::Serialize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RocmSmiReport {
    /// `system` / `Driver version`: the amdgpu-dkms version, or the kernel release for the
    /// in-tree driver.
    pub driver_version: Fact<Version>,
    pub gpus: Vec<AmdGpu>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AmdGpu {
    /// The JSON key, `card0`...
    pub card: String,
    pub bus_id: Fact<PciAddress>,
    /// `Card Series` / `Card series` / `Device Name`.
    pub product_name: Fact<String>,
    /// `Device ID` / `GPU ID`.
    pub device_id: Fact<u16>,
    pub sku: Fact<String>,
    pub vbios_version: Fact<Version>,
    pub serial: Fact<String>,
    pub unique_id: Fact<String>,
    pub temperature_edge_c: Fact<f64>,
    pub temperature_junction_c: Fact<f64>,
    pub power_w: Fact<f64>,
    pub numa_node: Fact<Option<u32>>,
    pub vram_total_bytes: Fact<u64>,
}

pub fn parse(json: &str) -> Result<RocmSmiReport, String> {
    let doc: Value =
        serde_json::from_str(json.trim()).map_err(|e| format!("rocm-smi JSON: {e}"))?;
    let object = doc
        .as_object()
        .ok_or_else(|| "rocm-smi JSON: top level is not an object".to_owned())?;
    let driver_version = match object.get("system").and_then(Value::as_object) {
        Some(system) => field(system, &["Driver version"]).version("rocm-smi \"Driver version\""),
        None => Fact::unknown("rocm-smi JSON has no \"system\" object"),
    };
    let mut cards: Vec<(u32, &String, &Map<String, Value>)> = object
        .iter()
        .filter_map(|(key, value)| {
            let index = key.strip_prefix("card")?.parse().ok()?;
            Some((index, key, value.as_object()?))
        })
        .collect();
    cards.sort_by_key(|(index, _, _)| *index);
    let gpus = cards
        .into_iter()
        .map(|(_, key, card)| parse_card(key, card))
        .collect();
    Ok(RocmSmiReport {
        driver_version,
        gpus,
    })
}

fn parse_card(key: &str, card: &Map<String, Value>) -> AmdGpu {
    let product_name =
        field(card, &["Card Series", "Card series", "Device Name"]).and_then(|name| {
            if name.starts_with("0x") {
                Fact::unknown(format!("card series is the vendor id {name:?}, not a name"))
            } else {
                Fact::Known(name)
            }
        });
    AmdGpu {
        card: key.to_owned(),
        bus_id: parsed(card, &["PCI Bus"], PciAddress::parse),
        product_name,
        device_id: parsed(card, &["Device ID", "GPU ID"], |s| {
            let digits = s.strip_prefix("0x").ok_or("expected 0x-prefixed hex")?;
            u16::from_str_radix(digits, 16).map_err(|e| e.to_string())
        }),
        sku: field(card, &["Card SKU"]),
        vbios_version: field(card, &["VBIOS version"]).version("rocm-smi \"VBIOS version\""),
        serial: field(card, &["Serial Number"]),
        unique_id: field(card, &["Unique ID"]),
        temperature_edge_c: parsed(card, &["Temperature (Sensor edge) (C)"], float),
        temperature_junction_c: parsed(card, &["Temperature (Sensor junction) (C)"], float),
        power_w: parsed(
            card,
            &[
                "Average Graphics Package Power (W)",
                "Current Socket Graphics Package Power (W)",
            ],
            float,
        ),
        numa_node: parsed(card, &["(Topology) Numa Node"], |s| {
            let node: i64 = s.parse().map_err(|e| format!("{e}"))?;
            Ok(u32::try_from(node).ok())
        }),
        vram_total_bytes: parsed(card, &["VRAM Total Memory (B)"], |s| {
            s.parse().map_err(|e| format!("{e}"))
        }),
    }
}

/// The value under the first key present; `N/A...` becomes `Unknown`.
fn field(object: &Map<String, Value>, keys: &[&str]) -> Fact<String> {
    for key in keys {
        if let Some(value) = object.get(*key) {
            let text = match value {
                Value::String(s) => s.trim().to_owned(),
                Value::Number(n) => n.to_string(),
                other => return Fact::unknown(format!("{key:?} is not a string: {other}")),
            };
            if text.is_empty() || text.starts_with("N/A") || text == "Unknown" {
                return Fact::unknown(format!("{key:?} is {text:?}"));
            }
            return Fact::Known(text);
        }
    }
    Fact::unknown(format!("rocm-smi output has no {}", keys.join(" / ")))
}

fn parsed<T>(
    object: &Map<String, Value>,
    keys: &[&str],
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Fact<T> {
    field(object, keys).and_then(|text| match parse(&text) {
        Ok(value) => Fact::Known(value),
        Err(why) => Fact::unknown(format!("{} {text:?}: {why}", keys[0])),
    })
}

fn float(text: &str) -> Result<f64, String> {
    text.parse().map_err(|e| format!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_old_and_new_keys() {
        let old = r#"{"card0": {"GPU ID": "0x738c", "Card series": "Arcturus GL-XL [Instinct MI100]", "PCI Bus": "0000:1E:00.0", "Average Graphics Package Power (W)": "N/A (Secondary die)"}, "system": {"Driver version": "6.2.4"}}"#;
        let new = r#"
{"card1": {"Device ID": "0x74a1", "Card Series": "AMD Instinct MI300X", "PCI Bus": "0000:05:00.0"}, "card0": {"Device ID": "0x74a1", "Card Series": "0x1002"}, "system": {}}"#;
        let old = parse(old).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(old.gpus[0].device_id, Fact::Known(0x738c));
        assert_eq!(
            old.gpus[0]
                .bus_id
                .known()
                .map(ToString::to_string)
                .as_deref(),
            Some("0000:1e:00.0")
        );
        assert!(!old.gpus[0].power_w.is_known());
        assert_eq!(
            old.driver_version.known().map(Version::as_str),
            Some("6.2.4")
        );
        let new = parse(new).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(new.gpus[0].card, "card0");
        assert!(!new.gpus[0].product_name.is_known());
        assert_eq!(
            new.gpus[1].product_name,
            Fact::Known("AMD Instinct MI300X".to_owned())
        );
        assert!(!new.driver_version.is_known());
    }
}
