//! Reading one attribute file (sysfs, procfs) into a typed fact.
//!
//! Sysfs attributes are one value and a newline. These helpers read through the [`Host`],
//! trim, and parse once; the path and the raw text go into the reason when reading or
//! parsing fails, so an `Unknown` always says which file and what was in it.

use crate::verify::fact::Fact;
use crate::verify::host::Host;
use std::path::Path;
use std::str::FromStr;

/// The file's text without surrounding whitespace.
pub fn text(host: &dyn Host, path: &str) -> Fact<String> {
    Fact::from(host.read_text(Path::new(path))).map(|text| text.trim().to_owned())
}

/// The file's text, parsed; `parse` says why a value is not acceptable.
pub fn parsed<T>(
    host: &dyn Host,
    path: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Fact<T> {
    text(host, path).and_then(|raw| match parse(&raw) {
        Ok(value) => Fact::Known(value),
        Err(why) => Fact::unknown(format!("{path}: cannot parse {raw:?}: {why}")),
    })
}

/// The last component of a link's target (`driver -> ../../bus/pci/drivers/nvidia` gives
/// `nvidia`); `None` when the link does not exist (an unbound device, a virtual NIC).
pub fn optional_link_name(host: &dyn Host, path: &str) -> Fact<Option<String>> {
    match host.read_link(Path::new(path)) {
        Ok(target) => match target.file_name() {
            Some(name) => Fact::Known(Some(name.to_string_lossy().into_owned())),
            None => Fact::unknown(format!(
                "{path}: link target {} has no name",
                target.display()
            )),
        },
        Err(err) if err.is_not_found() => Fact::Known(None),
        Err(err) => Fact::unknown(err.to_string()),
    }
}

/// A directory listing; a missing directory is an empty list when `missing_is_empty`.
pub fn list(host: &dyn Host, path: &str, missing_is_empty: bool) -> Fact<Vec<String>> {
    match host.list_dir(Path::new(path)) {
        Ok(names) => Fact::Known(names),
        Err(err) if missing_is_empty && err.is_not_found() => Fact::Known(Vec::new()),
        Err(err) => Fact::unknown(err.to_string()),
    }
}

/// A decimal number.
pub fn decimal<T: FromStr>(raw: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    raw.trim().parse::<T>().map_err(|e| e.to_string())
}

/// A `0x`-prefixed hexadecimal number (`0x10de`, `0x030200`).
pub fn hex_u32(raw: &str) -> Result<u32, String> {
    let digits = raw
        .trim()
        .strip_prefix("0x")
        .or_else(|| raw.trim().strip_prefix("0X"))
        .ok_or_else(|| "expected a 0x-prefixed hex number".to_owned())?;
    u32::from_str_radix(digits, 16).map_err(|e| e.to_string())
}

/// A 16-bit `0x`-prefixed id (PCI vendor or device).
pub fn hex_u16(raw: &str) -> Result<u16, String> {
    let value = hex_u32(raw)?;
    u16::try_from(value).map_err(|_| format!("{value:#x} does not fit 16 bits"))
}

/// A NUMA node as the kernel prints it: `-1` means no affinity (`None`).
pub fn numa_node(raw: &str) -> Result<Option<u32>, String> {
    let node: i64 = decimal(raw)?;
    if node < 0 {
        Ok(None)
    } else {
        u32::try_from(node).map(Some).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids_and_numa() {
        assert_eq!(hex_u16("0x10de"), Ok(0x10de));
        assert_eq!(hex_u32("0x030200"), Ok(0x030200));
        assert!(hex_u16("10de").is_err());
        assert!(hex_u16("0x10000").is_err());
        assert_eq!(numa_node("-1"), Ok(None));
        assert_eq!(numa_node("1"), Ok(Some(1)));
        assert!(numa_node("x").is_err());
    }
}
