//! The fleet model of a simulation: the synthetic fleet (zones of racks of nodes, SKUs in
//! blocks of racks), each node's image and health as the run goes, and the unavailable
//! nodes per failure domain against which the budget is checked — taken by the rollout
//! alone, and with the nodes out for faults.

use std::collections::BTreeMap;

use serde::Serialize;

use super::input::Shape;
use crate::rollout::fleet::{Fleet, Member};

/// The failure-domain keys of the synthetic fleet.
pub const ZONE: &str = "topology.kubernetes.io/zone";
pub const RACK: &str = "nodeimg.dev/rack";

/// The synthetic fleet: racks of `nodes_per_rack` nodes, racks spread over zones in turn,
/// SKUs in contiguous blocks of racks (a hall of one hardware generation).
pub fn synthetic_fleet(shape: &Shape) -> Fleet {
    let per_rack = shape.nodes_per_rack.max(1);
    let racks = shape.nodes.div_ceil(per_rack).max(1);
    let zones = shape.zones.max(1);
    let skus = shape.skus.max(1);
    let members = (0..shape.nodes)
        .map(|i| {
            let rack = i / per_rack;
            Member {
                name: format!("gpu-{i:05}"),
                hostname: format!("gpu-{i:05}"),
                sku: format!("sku-{}", rack * skus / racks),
                domains: vec![format!("zone-{}", rack % zones), format!("rack-{rack:04}")],
            }
        })
        .collect();
    Fleet {
        keys: vec![ZONE.to_owned(), RACK.to_owned()],
        members,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Image {
    /// Never touched, or returned to the previous image.
    Old,
    /// On the new image and accepted.
    AcceptedNew,
    /// On the new image, not accepted (only while the rollout runs).
    UnacceptedNew,
    /// Off to repair for good: out of the fleet, never in service again.
    Repair,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Health {
    InService,
    /// Taken by the rollout (or being returned after a halt).
    Upgrading,
    /// Out for a fault (or off to repair for good).
    Faulty,
}

/// Unavailable nodes: now and at most, per domain `[key][value index]` and fleet-wide.
pub(super) struct Load {
    down: Vec<Vec<usize>>,
    pub(super) peak: Vec<Vec<usize>>,
    total: usize,
    pub(super) peak_total: usize,
}

impl Load {
    fn new(sizes: &[BTreeMap<&str, usize>]) -> Self {
        Load {
            down: sizes.iter().map(|m| vec![0; m.len()]).collect(),
            peak: sizes.iter().map(|m| vec![0; m.len()]).collect(),
            total: 0,
            peak_total: 0,
        }
    }

    fn add(&mut self, slots: &[usize], down: bool) {
        for (k, &v) in slots.iter().enumerate() {
            if down {
                self.down[k][v] += 1;
                self.peak[k][v] = self.peak[k][v].max(self.down[k][v]);
            } else {
                self.down[k][v] -= 1;
            }
        }
        if down {
            self.total += 1;
            self.peak_total = self.peak_total.max(self.total);
        } else {
            self.total -= 1;
        }
    }
}

/// Each node's state in the run, and how many are unavailable: per failure domain and
/// fleet-wide, taken by the rollout alone and with the faulty ones.
pub(super) struct Nodes {
    pub(super) image: Vec<Image>,
    pub(super) failed: Vec<bool>,
    pub(super) health: Vec<Health>,
    /// Taken by the rollout / out for a fault.
    rollout_down: Vec<bool>,
    fault_down: Vec<bool>,
    pub(super) rollout: Load,
    pub(super) all: Load,
    pub(super) faults_out: usize,
    pub(super) peak_faults_out: usize,
    /// Domain value index of each node per key.
    slot: Vec<Vec<usize>>,
}

impl Nodes {
    /// Every node of `fleet` in service on the previous image; `sizes` are its domains.
    pub(super) fn new(fleet: &Fleet, sizes: &[BTreeMap<&str, usize>]) -> Self {
        let n = fleet.members.len();
        let index: Vec<BTreeMap<&str, usize>> = sizes
            .iter()
            .map(|m| m.keys().enumerate().map(|(i, v)| (*v, i)).collect())
            .collect();
        Nodes {
            image: vec![Image::Old; n],
            failed: vec![false; n],
            health: vec![Health::InService; n],
            rollout_down: vec![false; n],
            fault_down: vec![false; n],
            rollout: Load::new(sizes),
            all: Load::new(sizes),
            faults_out: 0,
            peak_faults_out: 0,
            slot: fleet
                .members
                .iter()
                .map(|m| {
                    m.domains
                        .iter()
                        .enumerate()
                        .map(|(k, v)| index[k][v.as_str()])
                        .collect()
                })
                .collect(),
        }
    }

    pub(super) fn set_down(&mut self, i: usize, rollout: bool, down: bool) {
        let before = self.rollout_down[i] || self.fault_down[i];
        if rollout {
            if self.rollout_down[i] == down {
                return;
            }
            self.rollout_down[i] = down;
            self.rollout.add(&self.slot[i], down);
        } else {
            if self.fault_down[i] == down {
                return;
            }
            self.fault_down[i] = down;
            if down {
                self.faults_out += 1;
                self.peak_faults_out = self.peak_faults_out.max(self.faults_out);
            } else {
                self.faults_out -= 1;
            }
        }
        let after = self.rollout_down[i] || self.fault_down[i];
        if before != after {
            self.all.add(&self.slot[i], after);
        }
    }
}
