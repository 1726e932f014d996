//! The rollout plan: canaries per hardware SKU first, then waves, where no wave takes more
//! than the budget from any failure domain. What each node goes through follows from
//! `diff`'s impact: a live-only change is applied without cordon or drain, a drain change
//! cordons and drains, a reboot change also reboots. Between waves stands a gate (the
//! acceptance records of the wave, see [`super::gate`]); a failed gate halts the rollout and
//! the plan names the rollback: the previous image, kept.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fleet::Fleet;
use crate::blueprint::model::rollout::Budget;
use crate::diff::impact::Impact;

/// What planning needs besides the fleet.
#[derive(Debug, Clone)]
pub struct Settings {
    pub canaries_per_sku: usize,
    pub budget: Budget,
    pub max_wave_size: Option<usize>,
}

/// One image: the blueprint it was built from and its reference by digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    pub blueprint: String,
    pub version: String,
    /// The blueprint id (what an acceptance record of this image names).
    pub id: String,
    /// `registry/repository@sha256:<digest>`.
    pub image: String,
}

/// What happens on each node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Steps {
    pub cordon: bool,
    pub drain: bool,
    pub reboot: bool,
}

impl Steps {
    pub fn of(impact: Impact) -> Self {
        Steps {
            cordon: impact >= Impact::Drain,
            drain: impact >= Impact::Drain,
            reboot: impact == Impact::Reboot,
        }
    }

    /// `cordon, drain, apply, reboot, verify at boot, accept`.
    pub fn describe(&self) -> String {
        let mut s = Vec::new();
        if self.cordon {
            s.push("cordon");
        }
        if self.drain {
            s.push("drain");
        }
        s.push("apply the image");
        if self.reboot {
            s.push("reboot");
            s.push("verify at boot (kubelet starts only if it passes)");
        }
        if self.cordon {
            s.push("uncordon");
        }
        s.push("acceptance");
        s.join(", ")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domain {
    /// The failure-domain label key.
    pub key: String,
    pub value: String,
    pub nodes: usize,
    /// Most nodes one wave takes from it.
    pub budget: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wave {
    pub index: usize,
    pub canary: bool,
    /// Node names.
    pub nodes: Vec<String>,
    /// `kubernetes.io/hostname` of each node, in the same order (what the engine selects).
    pub hostnames: Vec<String>,
    /// Nodes per SKU in this wave.
    pub skus: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rollback {
    /// The image nodes return to; keep it in the registry until the rollout is accepted.
    pub image: String,
    pub how: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub from: Side,
    pub to: Side,
    /// The fleet impact of the change; absent when nothing changed.
    pub impact: Option<Impact>,
    pub reasons: Vec<String>,
    pub steps: Steps,
    pub failure_domains: Vec<String>,
    /// The wave budget as the blueprint writes it.
    pub budget: String,
    pub domains: Vec<Domain>,
    pub skus: BTreeMap<String, usize>,
    pub waves: Vec<Wave>,
    /// How much worse than its previous record a node's figure may be (the gate's tolerance).
    pub tolerance_percent: f64,
    pub rollback: Rollback,
}

impl Plan {
    pub fn nodes(&self) -> usize {
        self.waves.iter().map(|w| w.nodes.len()).sum()
    }
}

/// The waves of `fleet`, as indexes into its members: canary waves first (the first
/// `canaries_per_sku` nodes of each SKU, spread over domains), then the rest. Every wave
/// respects each domain's budget and the size cap; every node is in exactly one wave.
pub fn waves(fleet: &Fleet, settings: &Settings) -> (Vec<Vec<usize>>, usize) {
    let sizes = fleet.domain_sizes();
    let budgets: Vec<BTreeMap<&str, usize>> = sizes
        .iter()
        .map(|m| {
            m.iter()
                .map(|(v, n)| (*v, settings.budget.of(*n)))
                .collect()
        })
        .collect();
    // Canaries: per SKU, nodes from domains no other canary uses yet.
    let mut by_sku: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, m) in fleet.members.iter().enumerate() {
        by_sku.entry(m.sku.as_str()).or_default().push(i);
    }
    let mut canary = vec![false; fleet.members.len()];
    // Domains canaries already take (of any SKU), so that the canaries fit few waves.
    let mut used: Vec<Vec<&str>> = vec![Vec::new(); fleet.keys.len()];
    for nodes in by_sku.values() {
        for _ in 0..settings.canaries_per_sku.min(nodes.len()) {
            let pick = nodes
                .iter()
                .filter(|i| !canary[**i])
                .min_by_key(|i| {
                    fleet.members[**i]
                        .domains
                        .iter()
                        .enumerate()
                        .filter(|(k, v)| used[*k].contains(&v.as_str()))
                        .count()
                })
                .copied();
            if let Some(i) = pick {
                canary[i] = true;
                for (k, v) in fleet.members[i].domains.iter().enumerate() {
                    used[k].push(v.as_str());
                }
            }
        }
    }
    let (first, rest): (Vec<usize>, Vec<usize>) =
        (0..fleet.members.len()).partition(|i| canary[*i]);
    let mut out = pack(fleet, first, &budgets, settings.max_wave_size);
    let canary_waves = out.len();
    out.extend(pack(fleet, rest, &budgets, settings.max_wave_size));
    (out, canary_waves)
}

/// Greedy packing: each wave takes, in an order that interleaves domains, every node whose
/// domains all have budget left in this wave.
fn pack(
    fleet: &Fleet,
    mut nodes: Vec<usize>,
    budgets: &[BTreeMap<&str, usize>],
    max: Option<usize>,
) -> Vec<Vec<usize>> {
    // Interleave: the n-th node of every domain combination before the (n+1)-th of any.
    let mut rank: BTreeMap<&[String], usize> = BTreeMap::new();
    let mut keyed: Vec<(usize, usize)> = nodes
        .iter()
        .map(|&i| {
            let r = rank.entry(&fleet.members[i].domains).or_insert(0);
            *r += 1;
            (*r, i)
        })
        .collect();
    keyed.sort();
    nodes = keyed.into_iter().map(|(_, i)| i).collect();
    let mut waves = Vec::new();
    while !nodes.is_empty() {
        let mut taken: Vec<BTreeMap<&str, usize>> = vec![BTreeMap::new(); budgets.len()];
        // Values of each key whose budget this wave has used up: once every value of one
        // key is full, no other node fits (each has a value of every key), and the rest
        // of the queue is kept as it is instead of tested node by node.
        let mut full = vec![0usize; budgets.len()];
        let mut wave = Vec::new();
        let mut rest = Vec::with_capacity(nodes.len());
        let mut queue = nodes.into_iter();
        for i in queue.by_ref() {
            let saturated = full.iter().zip(budgets).any(|(f, b)| *f == b.len());
            if saturated || max.is_some_and(|m| wave.len() >= m) {
                rest.push(i);
                break;
            }
            let d = &fleet.members[i].domains;
            let fits = d.iter().enumerate().all(|(k, v)| {
                taken[k].get(v.as_str()).copied().unwrap_or(0) < budgets[k][v.as_str()]
            });
            if !fits {
                rest.push(i);
                continue;
            }
            for (k, v) in d.iter().enumerate() {
                let t = taken[k].entry(v.as_str()).or_insert(0);
                *t += 1;
                if *t == budgets[k][v.as_str()] {
                    full[k] += 1;
                }
            }
            wave.push(i);
        }
        rest.extend(queue);
        nodes = rest;
        if wave.is_empty() {
            // Only when a budget is 0, which the blueprint rules refuse.
            break;
        }
        wave.sort_by(|a, b| fleet.members[*a].name.cmp(&fleet.members[*b].name));
        waves.push(wave);
    }
    waves
}

/// The whole plan.
pub fn plan(
    fleet: &Fleet,
    settings: &Settings,
    from: Side,
    to: Side,
    impact: Option<Impact>,
    reasons: Vec<String>,
    tolerance_percent: f64,
) -> Plan {
    let steps = Steps::of(impact.unwrap_or(Impact::Live));
    let (indexes, canaries) = if impact.is_some() {
        waves(fleet, settings)
    } else {
        (Vec::new(), 0)
    };
    let sizes = fleet.domain_sizes();
    let domains = fleet
        .keys
        .iter()
        .zip(&sizes)
        .flat_map(|(key, m)| {
            m.iter().map(|(value, n)| Domain {
                key: key.clone(),
                value: (*value).to_owned(),
                nodes: *n,
                budget: settings.budget.of(*n),
            })
        })
        .collect();
    let waves = indexes
        .iter()
        .enumerate()
        .map(|(index, w)| {
            let mut skus = BTreeMap::new();
            for &i in w {
                *skus.entry(fleet.members[i].sku.clone()).or_insert(0) += 1;
            }
            Wave {
                index,
                canary: index < canaries,
                nodes: w.iter().map(|&i| fleet.members[i].name.clone()).collect(),
                hostnames: w
                    .iter()
                    .map(|&i| fleet.members[i].hostname.clone())
                    .collect(),
                skus,
            }
        })
        .collect();
    let rollback = Rollback {
        image: from.image.clone(),
        how: format!(
            "stop: apply no further wave; apply rollback.yaml, which returns every node labelled \
             with the new image to {} ({}), with the same steps and the smallest domain budget \
             as concurrency",
            from.image, from.version
        ),
    };
    Plan {
        from,
        to,
        impact,
        reasons,
        steps,
        failure_domains: fleet.keys.clone(),
        budget: settings.budget.to_string(),
        domains,
        skus: fleet
            .skus()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
        waves,
        tolerance_percent,
        rollback,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fleet::Member;
    use super::*;

    fn fleet(n: usize, zones: usize, skus: usize) -> Fleet {
        Fleet {
            keys: vec!["zone".into()],
            members: (0..n)
                .map(|i| Member {
                    name: format!("n{i:03}"),
                    hostname: format!("n{i:03}"),
                    sku: format!("sku{}", i % skus),
                    domains: vec![format!("z{}", i % zones)],
                })
                .collect(),
        }
    }

    #[test]
    fn canaries_then_waves_within_budget() {
        let f = fleet(12, 3, 2);
        let s = Settings {
            canaries_per_sku: 1,
            budget: Budget::Nodes(1),
            max_wave_size: None,
        };
        let (w, canary) = waves(&f, &s);
        assert_eq!(canary, 1, "two canaries in different zones fit one wave");
        assert_eq!(w[0].len(), 2);
        let skus: Vec<&str> = w[0].iter().map(|&i| f.members[i].sku.as_str()).collect();
        assert_eq!(skus, ["sku0", "sku1"]);
        // Budget 1 per zone and 3 zones: every later wave holds at most 3 nodes.
        assert!(w[1..].iter().all(|w| w.len() <= 3));
        let mut all: Vec<usize> = w.concat();
        all.sort();
        assert_eq!(all, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn share_budget_and_cap() {
        let f = fleet(40, 2, 1);
        let s = Settings {
            canaries_per_sku: 2,
            budget: "25%"
                .parse::<crate::blueprint::value::Percent>()
                .map(Budget::Percent)
                .unwrap(),
            max_wave_size: Some(7),
        };
        let (w, canary) = waves(&f, &s);
        assert_eq!(canary, 1);
        assert_eq!(w[0].len(), 2);
        // 20 nodes per zone, 25 % = 5 per zone, capped at 7 per wave.
        let last = w.len() - 1;
        assert!(w[1..last].iter().all(|w| w.len() == 7), "{w:?}");
        assert!(w[last].len() <= 7);
    }
}
