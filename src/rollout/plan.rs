//! The rollout plan: canaries per hardware SKU first, then waves, where no wave takes more
//! than the budget from any failure domain. What each node goes through follows from
//! `diff`'s impact: a live-only change is applied without cordon or drain, a drain change
//! cordons and drains, a reboot change also reboots. Between waves stands a gate (the
//! acceptance records of the wave, see [`super::gate`]); a failed gate halts the rollout and
//! the plan names the rollback: the previous image, kept.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fleet::Fleet;
use super::operator_driver::OperatorDriver;
use super::unstaged_driver::UnstagedDriver;
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
    /// Whether the new and old images were checked against the trust policy.
    #[serde(default)]
    pub image_check: ImageCheck,
    /// A driver bump the GPU operator rolls, staged by these waves; the gate asks each
    /// node's record for its new version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_driver: Option<OperatorDriver>,
    /// A driver bump the GPU operator rolls that these waves cannot stage (the AMD GPU
    /// operator has no per-node hold); the gate does not ask for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unstaged_driver: Option<UnstagedDriver>,
}

/// Whether the images were checked against the trust policy before the Plans were made.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum ImageCheck {
    /// Neither blueprint nor `--trust-policy` names keys: nothing was checked.
    #[default]
    NoPolicy,
    /// A trusted key signed each image (key ids).
    Verified {
        policy: String,
        new_key: String,
        old_key: String,
    },
    /// Checking was skipped on request (`--skip-image-verification`): nothing vouches for
    /// either image; the nodes' own check (apply, verify) is all that is left.
    Skipped { policy: String },
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
    let budgets = budgets(fleet, &settings.budget);
    let (first, rest) = canaries(fleet, settings);
    let max = settings.max_wave_size;
    let mut out = pack(fleet, first, &budgets, max);
    let canary_waves = out.len();
    out.extend(balanced(fleet, rest, &budgets, max));
    (out, canary_waves)
}

/// The waves greedy packing alone gives (what [`waves`] balances without adding a wave).
pub fn greedy_waves(fleet: &Fleet, settings: &Settings) -> (Vec<Vec<usize>>, usize) {
    let budgets = budgets(fleet, &settings.budget);
    let (first, rest) = canaries(fleet, settings);
    let max = settings.max_wave_size;
    let mut out = pack(fleet, first, &budgets, max);
    let canary_waves = out.len();
    out.extend(pack(fleet, rest, &budgets, max));
    (out, canary_waves)
}

/// Each domain's budget in nodes: `[key index][value]`.
fn budgets<'a>(fleet: &'a Fleet, budget: &Budget) -> Vec<BTreeMap<&'a str, usize>> {
    fleet
        .domain_sizes()
        .iter()
        .map(|m| m.iter().map(|(v, n)| (*v, budget.of(*n))).collect())
        .collect()
}

/// The canaries (the first `canaries_per_sku` nodes of each SKU, spread over domains) and
/// the rest, as indexes into the fleet's members.
fn canaries(fleet: &Fleet, settings: &Settings) -> (Vec<usize>, Vec<usize>) {
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
    (0..fleet.members.len()).partition(|i| canary[*i])
}

/// The waves of `nodes`, as many as greedy packing needs, but as even as the budgets allow.
/// Greedy packing fills every wave to the budget and can leave small last waves, which
/// puts more nodes out at once than needed for no shorter a rollout. The balanced split
/// ([`Groups::split`]) works on groups of nodes that share every failure domain, not on
/// single nodes, and first tries the even split (`n / waves` nodes per wave, one more for the
/// first `n % waves`), then the smallest uniform cap that keeps the wave count; when neither
/// fits (or the greedy waves already differ by at most one node), the greedy waves stand.
fn balanced(
    fleet: &Fleet,
    nodes: Vec<usize>,
    budgets: &[BTreeMap<&str, usize>],
    max: Option<usize>,
) -> Vec<Vec<usize>> {
    let greedy = pack(fleet, nodes.clone(), budgets, max);
    let (n, w) = (nodes.len(), greedy.len());
    let largest = greedy.iter().map(Vec::len).max().unwrap_or(0);
    let smallest = greedy.iter().map(Vec::len).min().unwrap_or(0);
    if w <= 1 || largest - smallest <= 1 {
        return greedy;
    }
    let groups = Groups::of(fleet, &nodes, budgets);
    let (base, extra) = (n / w, n % w);
    if let Some(even) = groups.split(w, |k| base + usize::from(k < extra)) {
        return even;
    }
    // The smallest uniform cap that keeps `w` waves.
    let (mut lo, mut hi) = (n.div_ceil(w) + 1, largest);
    let mut best = None;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        match groups.split(w, |_| mid) {
            Some(p) => {
                best = Some(p);
                hi = mid - 1;
            }
            None => lo = mid + 1,
        }
    }
    best.unwrap_or(greedy)
}

/// Nodes grouped by their failure domains (every node of a group has the same value of
/// every key), so that a wave is cut by arithmetic on group and domain counts instead of
/// testing node after node.
struct Groups<'a> {
    fleet: &'a Fleet,
    /// The nodes of each group, in name order.
    nodes: Vec<Vec<usize>>,
    /// The domains of each group, one per failure-domain key.
    domains: Vec<Vec<usize>>,
    /// The groups of each domain.
    of_domain: Vec<Vec<usize>>,
    /// The key index of each domain.
    key: Vec<usize>,
    /// Most nodes one wave takes from each domain.
    budget: Vec<usize>,
    /// How many domains each key has.
    values: Vec<usize>,
}

impl<'a> Groups<'a> {
    fn of(fleet: &'a Fleet, nodes: &[usize], budgets: &[BTreeMap<&str, usize>]) -> Self {
        let mut domain_ids: BTreeMap<(usize, &str), usize> = BTreeMap::new();
        let mut group_ids: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
        let mut g = Groups {
            fleet,
            nodes: Vec::new(),
            domains: Vec::new(),
            of_domain: Vec::new(),
            key: Vec::new(),
            budget: Vec::new(),
            values: vec![0; budgets.len()],
        };
        let mut sorted = nodes.to_vec();
        sorted.sort_by(|a, b| fleet.members[*a].name.cmp(&fleet.members[*b].name));
        for i in sorted {
            let ds: Vec<usize> = fleet.members[i]
                .domains
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let next = domain_ids.len();
                    *domain_ids.entry((k, v.as_str())).or_insert_with(|| {
                        g.key.push(k);
                        g.budget.push(budgets[k][v.as_str()]);
                        g.of_domain.push(Vec::new());
                        g.values[k] += 1;
                        next
                    })
                })
                .collect();
            let next = group_ids.len();
            let id = *group_ids.entry(ds.clone()).or_insert_with(|| {
                for &d in &ds {
                    g.of_domain[d].push(next);
                }
                g.nodes.push(Vec::new());
                g.domains.push(ds);
                next
            });
            g.nodes[id].push(i);
        }
        g
    }

    /// At most `waves` waves of all nodes, wave `k` taking up to `target(k)` nodes, no
    /// domain more than its budget; `None` when the nodes do not fit. Each wave first takes
    /// what a domain must give now to finish in the waves left (its remaining nodes beyond
    /// `budget × (waves left − 1)`), then fills up round the groups, each giving at first
    /// its share (`remaining / waves left`), then whatever fits.
    fn split(&self, waves: usize, target: impl Fn(usize) -> usize) -> Option<Vec<Vec<usize>>> {
        let groups = self.nodes.len();
        let mut cut = Cut {
            next: vec![0; groups],
            rem: vec![0; self.budget.len()],
            left: vec![0; self.budget.len()],
            full: vec![0; self.values.len()],
            want: 0,
            wave: Vec::new(),
        };
        for (g, ds) in self.domains.iter().enumerate() {
            for &d in ds {
                cut.rem[d] += self.nodes[g].len();
            }
        }
        let mut total: usize = self.nodes.iter().map(Vec::len).sum();
        let mut cursor = 0;
        let mut out = Vec::new();
        for k in 0..waves {
            if total == 0 {
                break;
            }
            let after = waves - k - 1;
            cut.want = target(k).min(total);
            cut.left.copy_from_slice(&self.budget);
            cut.full.fill(0);
            cut.wave = Vec::with_capacity(cut.want);
            // What each domain must give in this wave.
            for d in 0..self.budget.len() {
                for &g in &self.of_domain[d] {
                    let must = cut.rem[d].saturating_sub(after * self.budget[d]);
                    if must == 0 || cut.want == 0 {
                        break;
                    }
                    self.take(&mut cut, g, must);
                }
                if cut.rem[d] > after * self.budget[d] {
                    return None;
                }
            }
            // Then round the groups from where the last wave stopped.
            for share in [true, false] {
                for _ in 0..groups {
                    let saturated = cut.full.iter().zip(&self.values).any(|(f, v)| f == v);
                    if cut.want == 0 || saturated {
                        break;
                    }
                    let g = cursor;
                    cursor = (cursor + 1) % groups;
                    let most = if share {
                        (self.nodes[g].len() - cut.next[g]).div_ceil(after + 1)
                    } else {
                        usize::MAX
                    };
                    self.take(&mut cut, g, most);
                }
            }
            let mut wave = std::mem::take(&mut cut.wave);
            if wave.is_empty() {
                return None;
            }
            total -= wave.len();
            wave.sort_by(|a, b| {
                self.fleet.members[*a]
                    .name
                    .cmp(&self.fleet.members[*b].name)
            });
            out.push(wave);
        }
        (total == 0).then_some(out)
    }

    /// Takes up to `most` nodes of group `g` into the wave being cut, as many as its
    /// domains' budgets left and the wave's target allow.
    fn take(&self, cut: &mut Cut, g: usize, most: usize) {
        let ds = &self.domains[g];
        let a = ds
            .iter()
            .map(|&d| cut.left[d])
            .min()
            .unwrap_or(usize::MAX)
            .min(self.nodes[g].len() - cut.next[g])
            .min(most)
            .min(cut.want);
        if a == 0 {
            return;
        }
        let from = cut.next[g];
        cut.wave.extend_from_slice(&self.nodes[g][from..from + a]);
        cut.next[g] += a;
        cut.want -= a;
        for &d in ds {
            cut.rem[d] -= a;
            cut.left[d] -= a;
            if cut.left[d] == 0 {
                cut.full[self.key[d]] += 1;
            }
        }
    }
}

/// The state of [`Groups::split`]: per group the next node to take, per domain the nodes
/// remaining and the budget left in this wave, per key how many domains are full.
struct Cut {
    next: Vec<usize>,
    rem: Vec<usize>,
    left: Vec<usize>,
    full: Vec<usize>,
    /// Nodes the wave being cut still wants.
    want: usize,
    wave: Vec<usize>,
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
        image_check: ImageCheck::NoPolicy,
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
        operator_driver: None,
        unstaged_driver: None,
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
        // 20 nodes per zone, 25 % = 5 per zone, capped at 7 per wave: the 38 after the
        // canaries in six waves of 6 or 7.
        assert_eq!(sizes(&w[1..]), [7, 7, 6, 6, 6, 6], "{w:?}");
    }

    fn sizes(w: &[Vec<usize>]) -> Vec<usize> {
        w.iter().map(Vec::len).collect()
    }

    #[test]
    fn waves_are_balanced_without_adding_one() {
        // A wave cap: greedy leaves 7, 7, 7, 7, 7, 3; balanced, six waves of 6 or 7.
        let f = fleet(40, 2, 1);
        let s = Settings {
            canaries_per_sku: 2,
            budget: Budget::Nodes(5),
            max_wave_size: Some(7),
        };
        let (g, _) = greedy_waves(&f, &s);
        let (w, _) = waves(&f, &s);
        assert_eq!(sizes(&g[1..]), [7, 7, 7, 7, 7, 3]);
        assert_eq!(sizes(&w[1..]), [7, 7, 6, 6, 6, 6]);
        // One big zone (30 nodes) and a small one (10), 5 per zone: the big zone needs six
        // waves; greedy fills the first two from both zones and leaves four of 5.
        let mut f = fleet(40, 1, 1);
        for (i, m) in f.members.iter_mut().enumerate() {
            m.domains = vec![if i < 30 { "a" } else { "b" }.to_owned()];
        }
        let s = Settings {
            canaries_per_sku: 1,
            budget: Budget::Nodes(5),
            max_wave_size: None,
        };
        let (g, _) = greedy_waves(&f, &s);
        let (w, _) = waves(&f, &s);
        assert_eq!(sizes(&g[1..]), [10, 10, 5, 5, 5, 4]);
        assert_eq!(sizes(&w[1..]), [7, 7, 7, 6, 6, 6]);
        for wave in &w {
            let a = wave.iter().filter(|&&i| i < 30).count();
            assert!(a <= 5 && wave.len() - a <= 5, "{wave:?}");
        }
        let mut all = w.concat();
        all.sort();
        assert_eq!(all, (0..40).collect::<Vec<_>>());
    }
}
