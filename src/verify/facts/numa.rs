//! NUMA nodes: which are online, each node's CPUs and memory, and its hugepage pools.
//!
//! GPU↔NIC affinity checks compare a device's `numa_node` with these nodes, and the
//! firmware policy (NPS, sub-NUMA clustering) shows up as the node count.

use super::attribute;
use super::cpu_list::CpuList;
use super::hugepages::{self, HugePagePool};
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumaNode {
    pub id: u32,
    pub cpus: Fact<CpuList>,
    /// `Node N MemTotal` from `nodeN/meminfo`, in kB.
    pub mem_total_kb: Fact<u64>,
    pub hugepages: Fact<Vec<HugePagePool>>,
}

pub fn collect(host: &dyn Host) -> Fact<Vec<NumaNode>> {
    let online = attribute::parsed(host, "/sys/devices/system/node/online", CpuList::parse);
    online.map(|nodes| {
        nodes
            .cpus()
            .map(|id| {
                let dir = format!("/sys/devices/system/node/node{id}");
                NumaNode {
                    id,
                    cpus: attribute::parsed(host, &format!("{dir}/cpulist"), CpuList::parse),
                    mem_total_kb: attribute::text(host, &format!("{dir}/meminfo"))
                        .and_then(|text| node_mem_total(&text, &dir)),
                    hugepages: hugepages::collect_pools(host, &format!("{dir}/hugepages")),
                }
            })
            .collect()
    })
}

/// `Node 0 MemTotal:       263856344 kB`.
fn node_mem_total(text: &str, dir: &str) -> Fact<u64> {
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if let (Some("Node"), Some(_), Some("MemTotal:"), Some(value)) =
            (words.next(), words.next(), words.next(), words.next())
        {
            return match value.parse() {
                Ok(kb) => Fact::Known(kb),
                Err(e) => Fact::unknown(format!("{dir}/meminfo: MemTotal {value:?}: {e}")),
            };
        }
    }
    Fact::unknown(format!("{dir}/meminfo has no MemTotal line"))
}
