//! Memory: `/proc/meminfo` totals, hugepage pools and the transparent hugepage mode.
//!
//! `MemTotal` feeds kubelet reservation checks and the default `/dev/shm` size; hugepage
//! pools and THP (`always [madvise] never`, the bracket marks the mode) are boot policy.

use super::attribute;
use super::hugepages::{self, HugePagePool};
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    pub total_kb: Fact<u64>,
    pub available_kb: Fact<u64>,
    pub hugepages_total: Fact<u64>,
    pub hugepage_size_kb: Fact<u64>,
    pub hugepage_pools: Fact<Vec<HugePagePool>>,
    /// The selected transparent hugepage mode: `always`, `madvise` or `never`.
    pub transparent_hugepage: Fact<String>,
}

pub fn collect(host: &dyn Host) -> Memory {
    let meminfo = attribute::text(host, "/proc/meminfo").map(|text| parse_meminfo(&text));
    let field = |key: &str| {
        meminfo.as_ref().and_then(|fields| match fields.get(key) {
            Some(value) => Fact::Known(*value),
            None => Fact::unknown(format!("/proc/meminfo has no {key}")),
        })
    };
    Memory {
        total_kb: field("MemTotal"),
        available_kb: field("MemAvailable"),
        hugepages_total: field("HugePages_Total"),
        hugepage_size_kb: field("Hugepagesize"),
        hugepage_pools: hugepages::collect_pools(host, "/sys/kernel/mm/hugepages"),
        transparent_hugepage: attribute::parsed(
            host,
            "/sys/kernel/mm/transparent_hugepage/enabled",
            selected_choice,
        ),
    }
}

/// `Key:   value [kB]` lines; values in kB or counts.
pub fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (key, rest) = line.split_once(':')?;
            let value = rest.split_whitespace().next()?.parse().ok()?;
            Some((key.trim().to_owned(), value))
        })
        .collect()
}

/// The `[bracketed]` word of a sysfs choice list.
pub fn selected_choice(raw: &str) -> Result<String, String> {
    raw.split_whitespace()
        .find_map(|word| word.strip_prefix('[')?.strip_suffix(']'))
        .map(str::to_owned)
        .ok_or_else(|| "no [selected] choice".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo_and_choices() {
        let fields = parse_meminfo(
            "MemTotal:       2113617408 kB\nHugePages_Total:    1024\nHugepagesize:       2048 kB\n",
        );
        assert_eq!(fields.get("MemTotal"), Some(&2_113_617_408));
        assert_eq!(fields.get("HugePages_Total"), Some(&1024));
        assert_eq!(
            selected_choice("always [madvise] never"),
            Ok("madvise".to_owned())
        );
        assert!(selected_choice("always madvise").is_err());
    }
}
