//! Hugepage pools (`hugepages-<size>kB/{nr_hugepages,free_hugepages}`), system-wide under
//! `/sys/kernel/mm/hugepages` and per NUMA node.
//!
//! The blueprint's `boot.hugepages` reserves pages at boot; the pool shows whether the
//! reservation happened (a fragmented machine may get fewer pages than asked).

use super::attribute;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HugePagePool {
    pub size_kb: u64,
    pub total: Fact<u64>,
    pub free: Fact<u64>,
}

/// Every `hugepages-<size>kB` directory under `dir`; a missing `dir` means no pools.
pub fn collect_pools(host: &dyn Host, dir: &str) -> Fact<Vec<HugePagePool>> {
    attribute::list(host, dir, true).map(|names| {
        names
            .iter()
            .filter_map(|name| {
                let size_kb = name
                    .strip_prefix("hugepages-")?
                    .strip_suffix("kB")?
                    .parse()
                    .ok()?;
                let pool = format!("{dir}/{name}");
                Some(HugePagePool {
                    size_kb,
                    total: attribute::parsed(
                        host,
                        &format!("{pool}/nr_hugepages"),
                        attribute::decimal,
                    ),
                    free: attribute::parsed(
                        host,
                        &format!("{pool}/free_hugepages"),
                        attribute::decimal,
                    ),
                })
            })
            .collect()
    })
}
