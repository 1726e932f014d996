//! Fleet baselines (`nodeimg accept compare`): nodes of the same SKU against the fleet
//! median of each acceptance figure (NCCL bus bandwidth, perftest bandwidth, DCGM and
//! nvbandwidth figures, framework step times). A node worse than the median by more than
//! the tolerance is flagged with the figure and the median: the slow node that passes
//! every absolute threshold is the one that slows a 1,000-GPU job.

use std::collections::BTreeMap;

use serde::Serialize;

use super::records::Read;
use crate::verify::report::record::AcceptanceRecord;

/// The values of one figure across a SKU: node, record, value.
type Samples<'a> = Vec<(&'a String, &'a Read, f64)>;

/// Fewer nodes than this in a SKU make no median worth comparing against.
pub const MIN_PEERS: usize = 3;

#[derive(Debug, Clone, Serialize)]
pub struct Outlier {
    pub node: String,
    pub figure: String,
    pub value: f64,
    pub median: f64,
    pub unit: String,
    /// How much worse than the median, in percent (positive is worse).
    pub worse_percent: f64,
    pub record: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub figure: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub nodes: usize,
    pub median: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sku {
    pub sku: String,
    pub nodes: Vec<String>,
    pub figures: Vec<Figure>,
    /// Why this SKU was not compared, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub tolerance_percent: f64,
    pub skus: Vec<Sku>,
    pub outliers: Vec<Outlier>,
}

/// The hardware SKU a record names: GPU model and count, else the machine's product name.
pub fn sku_of(r: &AcceptanceRecord) -> String {
    let gpu = r.gpu.devices.first().and_then(|d| d.name.known().cloned());
    match gpu {
        Some(name) => format!("{} x{}", name, r.gpu.count),
        None => r
            .hardware
            .product
            .known()
            .cloned()
            .unwrap_or_else(|| "unknown".to_owned()),
    }
}

/// The median of `v` (not empty).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Compares the newest record of each node with the other nodes of its SKU.
pub fn compare(nodes: &BTreeMap<String, Read>, tolerance_percent: f64) -> Comparison {
    let mut by_sku: BTreeMap<String, Vec<(&String, &Read)>> = BTreeMap::new();
    for (name, read) in nodes {
        by_sku
            .entry(sku_of(&read.record))
            .or_default()
            .push((name, read));
    }
    let mut skus = Vec::new();
    let mut outliers = Vec::new();
    for (sku, members) in by_sku {
        let names: Vec<String> = members.iter().map(|(n, _)| (*n).clone()).collect();
        if members.len() < MIN_PEERS {
            skus.push(Sku {
                sku,
                nodes: names,
                figures: Vec::new(),
                skipped: Some(format!(
                    "{} node(s): a median needs at least {MIN_PEERS}",
                    members.len()
                )),
            });
            continue;
        }
        // Figure key → (unit, higher is better) → values.
        let mut figures: BTreeMap<(&str, &str, bool), Samples<'_>> = BTreeMap::new();
        for (name, read) in &members {
            for (key, f) in &read.record.figures {
                if f.value.is_finite() {
                    figures
                        .entry((key.as_str(), f.unit.as_str(), f.higher_is_better))
                        .or_default()
                        .push((name, read, f.value));
                }
            }
        }
        let mut out = Vec::new();
        for ((key, unit, higher), values) in figures {
            if values.len() < MIN_PEERS {
                continue;
            }
            let mut v: Vec<f64> = values.iter().map(|x| x.2).collect();
            let m = median(&mut v);
            out.push(Figure {
                figure: key.to_owned(),
                unit: unit.to_owned(),
                higher_is_better: higher,
                nodes: values.len(),
                median: m,
            });
            if m == 0.0 {
                continue;
            }
            for (name, read, value) in values {
                let change = (value - m) / m.abs() * 100.0;
                let worse = if higher { -change } else { change };
                if worse > tolerance_percent {
                    outliers.push(Outlier {
                        node: name.clone(),
                        figure: key.to_owned(),
                        value,
                        median: m,
                        unit: unit.to_owned(),
                        worse_percent: worse,
                        record: read.path.display().to_string(),
                    });
                }
            }
        }
        skus.push(Sku {
            sku,
            nodes: names,
            figures: out,
            skipped: None,
        });
    }
    outliers.sort_by(|a, b| {
        b.worse_percent
            .total_cmp(&a.worse_percent)
            .then_with(|| a.node.cmp(&b.node))
    });
    Comparison {
        tolerance_percent,
        skus,
        outliers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
