//! The kernel's CPU list format (`0-47,96-143`), used by `online`, NUMA `cpulist` and PCI
//! `local_cpulist`.
//!
//! Kept as ranges so that a 384-CPU list stays small; printed back the kernel's way.

use serde::{Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuList {
    ranges: Vec<(u32, u32)>,
}

impl CpuList {
    /// Parses `0-3,8,10-11`; an empty string is the empty list (a memory-only NUMA node).
    pub fn parse(raw: &str) -> Result<Self, String> {
        let mut ranges = Vec::new();
        for part in raw.trim().split(',').filter(|p| !p.trim().is_empty()) {
            let part = part.trim();
            let number = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|e| format!("{part:?}: {e}"))
            };
            let range = match part.split_once('-') {
                Some((low, high)) => (number(low)?, number(high)?),
                None => (number(part)?, number(part)?),
            };
            if range.0 > range.1 {
                return Err(format!("{part:?}: range runs backwards"));
            }
            ranges.push(range);
        }
        Ok(CpuList { ranges })
    }

    /// How many CPUs the list names.
    pub fn count(&self) -> usize {
        self.ranges
            .iter()
            .map(|(low, high)| (high - low) as usize + 1)
            .sum()
    }

    pub fn contains(&self, cpu: u32) -> bool {
        self.ranges
            .iter()
            .any(|(low, high)| (*low..=*high).contains(&cpu))
    }

    pub fn cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|(low, high)| *low..=*high)
    }
}

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (low, high)) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if low == high {
                write!(f, "{low}")?;
            } else {
                write!(f, "{low}-{high}")?;
            }
        }
        Ok(())
    }
}

impl Serialize for CpuList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_and_prints() {
        let list = CpuList::parse("0-47,96-143\n").unwrap_or_default();
        assert_eq!(list.count(), 96);
        assert!(list.contains(100) && !list.contains(48));
        assert_eq!(list.to_string(), "0-47,96-143");
        assert_eq!(CpuList::parse("").map(|l| l.count()), Ok(0));
        assert!(CpuList::parse("3-1").is_err());
        assert!(CpuList::parse("a").is_err());
    }
}
