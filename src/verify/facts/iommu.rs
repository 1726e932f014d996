//! IOMMU groups (`/sys/kernel/iommu_groups/N/{devices,type}`) and the domain type most
//! groups use.
//!
//! SR-IOV, Kata and passthrough need the IOMMU on; `identity` groups mean passthrough mode
//! (`iommu=pt`), `DMA`/`DMA-FQ` mean translated DMA. An empty groups directory is a
//! reading (IOMMU off), not a failure.

use super::attribute;
use super::pci_address::PciAddress;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Iommu {
    pub groups: Fact<Vec<IommuGroup>>,
    /// The domain type most groups have (`DMA`, `DMA-FQ`, `identity`, ...); unknown when
    /// there are no groups or there is a tie.
    pub default_domain_type: Fact<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IommuGroup {
    pub id: u32,
    pub devices: Vec<PciAddress>,
    pub domain_type: Fact<String>,
}

pub fn collect(host: &dyn Host) -> Iommu {
    let root = "/sys/kernel/iommu_groups";
    let groups = attribute::list(host, root, true).map(|names| {
        let mut groups: Vec<IommuGroup> = names
            .iter()
            .filter_map(|name| {
                let id = name.parse().ok()?;
                let dir = format!("{root}/{name}");
                let devices = host
                    .list_dir(std::path::Path::new(&format!("{dir}/devices")))
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|d| PciAddress::parse(d).ok())
                    .collect();
                Some(IommuGroup {
                    id,
                    devices,
                    domain_type: attribute::text(host, &format!("{dir}/type")),
                })
            })
            .collect();
        groups.sort_by_key(|group| group.id);
        groups
    });
    let default_domain_type = groups.as_ref().and_then(|groups| most_common_type(groups));
    Iommu {
        groups,
        default_domain_type,
    }
}

fn most_common_type(groups: &[IommuGroup]) -> Fact<String> {
    if groups.is_empty() {
        return Fact::unknown("no IOMMU groups: the IOMMU is off or absent");
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for group in groups {
        if let Some(kind) = group.domain_type.known() {
            *counts.entry(kind).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    ranked.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    match ranked.as_slice() {
        [] => Fact::unknown("no IOMMU group has a readable type"),
        [(first, n), (_, m), ..] if n == m => {
            Fact::unknown(format!("groups disagree: as many {first} as others ({n})"))
        }
        [(first, _), ..] => Fact::Known((*first).to_owned()),
    }
}
