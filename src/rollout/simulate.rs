//! `nodeimg rollout simulate`: a discrete-event simulation of a rollout plan over a
//! synthetic fleet — zones of racks of nodes, several SKUs — with a duration per phase
//! (drawn between a minimum and a maximum) and failures injected at given rates. The same
//! seed gives the same run. It reports the total time, the peak number of unavailable
//! nodes in every failure domain against its budget, and where the rollout halted.
//!
//! The model follows the rendered manifests: waves run one after another, every node of a
//! wave at once (the Plan's `concurrency` is the wave size); a node is unavailable from its
//! cordon until it is accepted (a live-only change never cordons); after the last node of a
//! wave the gate runs; a failed node halts the rollout, and the failed nodes are returned
//! to the previous image in waves under the same budget, so that a halted rollout leaves
//! every node on the previous image or on an accepted new one.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use serde::Serialize;

use super::fleet::{Fleet, Member};
use super::plan::{Settings, Steps, waves};
use crate::diff::impact::Impact;

/// The failure-domain keys of the synthetic fleet.
pub const ZONE: &str = "topology.kubernetes.io/zone";
pub const RACK: &str = "nodeimg.dev/rack";

/// The shape of the synthetic fleet.
#[derive(Debug, Clone, Serialize)]
pub struct Shape {
    pub nodes: usize,
    pub zones: usize,
    pub nodes_per_rack: usize,
    pub skus: usize,
}

/// Seconds a phase takes: uniform between the two.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Span {
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Durations {
    pub drain: Span,
    pub apply: Span,
    pub reboot: Span,
    pub accept: Span,
    pub gate: Span,
    pub rollback: Span,
}

impl Default for Durations {
    fn default() -> Self {
        let s = |min, max| Span { min, max };
        Durations {
            drain: s(60.0, 600.0),
            apply: s(60.0, 300.0),
            reboot: s(300.0, 900.0),
            // Layers 2–5: inventory, smoke Pod, DCGM level 3, NCCL, the framework job.
            accept: s(1800.0, 3600.0),
            gate: s(30.0, 120.0),
            rollback: s(900.0, 1800.0),
        }
    }
}

/// Probabilities per node.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Failures {
    /// The upgrade Job fails (drain timeout, the applier fails).
    pub apply: f64,
    /// The node fails acceptance on the new image.
    pub accept: f64,
    /// Force the first canary to fail acceptance.
    pub canary: bool,
}

#[derive(Debug, Clone)]
pub struct Input {
    pub shape: Shape,
    pub settings: Settings,
    pub impact: Impact,
    pub durations: Durations,
    pub failures: Failures,
    pub seed: u64,
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
}

#[derive(Debug, Clone, Serialize)]
pub struct Peak {
    pub key: String,
    pub value: String,
    pub nodes: usize,
    pub budget: usize,
    pub peak: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Halt {
    pub wave: usize,
    pub canary: bool,
    /// When the gate halted, seconds from the start.
    pub at_seconds: f64,
    pub failed: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub seed: u64,
    pub shape: Shape,
    pub impact: Impact,
    pub waves: usize,
    pub canary_waves: usize,
    pub waves_completed: usize,
    pub total_seconds: f64,
    pub halted: Option<Halt>,
    pub accepted_new: usize,
    pub old: usize,
    pub rolled_back: usize,
    /// Most nodes unavailable at once, fleet-wide.
    pub peak_unavailable: usize,
    /// Per failure domain, sorted by key and value.
    pub domains: Vec<Peak>,
    pub events: usize,
    /// Where each node ended, by name.
    #[serde(skip)]
    pub final_images: BTreeMap<String, Image>,
    /// Any domain whose peak exceeded its budget (empty unless the planner is wrong).
    pub over_budget: Vec<String>,
}

/// SplitMix64: small, fast and the same everywhere, so a seed reproduces a run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A duration drawn uniformly from `s`, seconds.
    pub fn span(&mut self, s: Span) -> f64 {
        s.min + (s.max - s.min) * self.unit()
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The node's upgrade Job starts (cordon and drain first when the change needs it).
    Start(usize),
    Drained(usize),
    Applied(usize),
    Rebooted(usize),
    Judged(usize),
    /// The gate after the current wave.
    Gate,
    RollbackStart(usize),
    RolledBack(usize),
}

struct Sim<'a> {
    fleet: &'a Fleet,
    input: &'a Input,
    steps: Steps,
    rng: Rng,
    now: f64,
    seq: u64,
    queue: BinaryHeap<Reverse<(u64, u64, Event)>>,
    image: Vec<Image>,
    failed: Vec<bool>,
    unavailable: Vec<bool>,
    /// Current and peak unavailable nodes per domain `[key][value index]`.
    down: Vec<Vec<usize>>,
    peak: Vec<Vec<usize>>,
    down_total: usize,
    peak_total: usize,
    /// Domain value index of each node per key.
    slot: Vec<Vec<usize>>,
    events: usize,
}

/// Time is kept in milliseconds so that the queue orders exactly.
fn ms(seconds: f64) -> u64 {
    (seconds * 1000.0).round().max(0.0) as u64
}

impl Sim<'_> {
    fn at(&mut self, delay: f64, e: Event) {
        self.seq += 1;
        self.queue
            .push(Reverse((ms(self.now) + ms(delay), self.seq, e)));
    }

    fn set_down(&mut self, i: usize, down: bool) {
        if self.unavailable[i] == down {
            return;
        }
        self.unavailable[i] = down;
        for k in 0..self.slot[i].len() {
            let v = self.slot[i][k];
            if down {
                self.down[k][v] += 1;
                self.peak[k][v] = self.peak[k][v].max(self.down[k][v]);
            } else {
                self.down[k][v] -= 1;
            }
        }
        if down {
            self.down_total += 1;
            self.peak_total = self.peak_total.max(self.down_total);
        } else {
            self.down_total -= 1;
        }
    }

    /// Runs queued events until none is left; returns how many nodes of `wave` failed.
    fn drain_queue(&mut self, pending: &mut usize) {
        while let Some(Reverse((t, _, e))) = self.queue.pop() {
            self.now = t as f64 / 1000.0;
            self.events += 1;
            let d = &self.input.durations;
            match e {
                Event::Start(i) => {
                    if self.steps.cordon {
                        self.set_down(i, true);
                    }
                    if self.steps.drain {
                        let t = self.rng.span(d.drain);
                        self.at(t, Event::Drained(i));
                    } else {
                        self.at(0.0, Event::Drained(i));
                    }
                }
                Event::Drained(i) => {
                    let t = self.rng.span(d.apply);
                    if self.rng.chance(self.input.failures.apply) {
                        // The Job failed: the node stays cordoned, its image in doubt.
                        self.set_down(i, true);
                        self.failed[i] = true;
                        self.image[i] = Image::UnacceptedNew;
                        self.at(t, Event::Judged(i));
                    } else {
                        self.at(t, Event::Applied(i));
                    }
                }
                Event::Applied(i) => {
                    self.image[i] = Image::UnacceptedNew;
                    if self.steps.reboot {
                        let t = self.rng.span(d.reboot);
                        self.at(t, Event::Rebooted(i));
                    } else {
                        self.at(0.0, Event::Rebooted(i));
                    }
                }
                Event::Rebooted(i) => {
                    let t = self.rng.span(d.accept);
                    if self.rng.chance(self.input.failures.accept) {
                        self.failed[i] = true;
                    }
                    self.at(t, Event::Judged(i));
                }
                Event::Judged(i) => {
                    if self.failed[i] {
                        // Kept out of service: cordoned until returned.
                        self.set_down(i, true);
                    } else {
                        self.image[i] = Image::AcceptedNew;
                        self.set_down(i, false);
                    }
                    *pending -= 1;
                    if *pending == 0 {
                        let t = self.rng.span(d.gate);
                        self.at(t, Event::Gate);
                    }
                }
                Event::Gate => {}
                Event::RollbackStart(i) => {
                    self.set_down(i, true);
                    let t = self.rng.span(d.rollback);
                    self.at(t, Event::RolledBack(i));
                }
                Event::RolledBack(i) => {
                    self.image[i] = Image::Old;
                    self.failed[i] = false;
                    self.set_down(i, false);
                    *pending -= 1;
                }
            }
        }
    }
}

/// A plan over a fleet: its waves (indices into the fleet's members, in order) and how
/// many of the first waves are canaries.
#[derive(Debug, Clone)]
pub struct Planned {
    pub fleet: Fleet,
    pub waves: Vec<Vec<usize>>,
    pub canary_waves: usize,
}

impl Planned {
    /// The synthetic fleet of `input` and the plan [`run`] simulates on it.
    pub fn of(input: &Input) -> Self {
        Planned::on(synthetic_fleet(&input.shape), &input.settings)
    }

    /// The plan over a given fleet.
    pub fn on(fleet: Fleet, settings: &Settings) -> Self {
        let (waves, canary_waves) = waves(&fleet, settings);
        Planned {
            fleet,
            waves,
            canary_waves,
        }
    }
}

/// Runs the simulation.
pub fn run(input: &Input) -> Report {
    simulate(&Planned::of(input), input)
}

/// Runs the simulation of a plan.
pub fn simulate(planned: &Planned, input: &Input) -> Report {
    let Planned {
        fleet,
        waves: plan,
        canary_waves,
    } = planned;
    let canary_waves = *canary_waves;
    let sizes = fleet.domain_sizes();
    let index: Vec<BTreeMap<&str, usize>> = sizes
        .iter()
        .map(|m| m.keys().enumerate().map(|(i, v)| (*v, i)).collect())
        .collect();
    let n = fleet.members.len();
    let mut sim = Sim {
        fleet,
        input,
        steps: Steps::of(input.impact),
        rng: Rng::new(input.seed),
        now: 0.0,
        seq: 0,
        queue: BinaryHeap::new(),
        image: vec![Image::Old; n],
        failed: vec![false; n],
        unavailable: vec![false; n],
        down: sizes.iter().map(|m| vec![0; m.len()]).collect(),
        peak: sizes.iter().map(|m| vec![0; m.len()]).collect(),
        down_total: 0,
        peak_total: 0,
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
        events: 0,
    };
    let mut halted = None;
    let mut completed = 0;
    for (w, nodes) in plan.iter().enumerate() {
        let mut pending = nodes.len();
        for &i in nodes {
            sim.at(0.0, Event::Start(i));
        }
        if w == 0
            && input.failures.canary
            && let Some(&first) = nodes.first()
        {
            sim.failed[first] = true;
        }
        sim.drain_queue(&mut pending);
        let failed: Vec<usize> = nodes.iter().copied().filter(|&i| sim.failed[i]).collect();
        if failed.is_empty() {
            completed += 1;
            continue;
        }
        halted = Some(Halt {
            wave: w,
            canary: w < canary_waves,
            at_seconds: sim.now,
            failed: failed
                .iter()
                .map(|&i| sim.fleet.members[i].name.clone())
                .collect(),
        });
        // Return the failed nodes to the previous image, in waves under the budget.
        let sub = Fleet {
            keys: fleet.keys.clone(),
            members: failed.iter().map(|&i| fleet.members[i].clone()).collect(),
        };
        let (back, _) = waves(
            &sub,
            &Settings {
                canaries_per_sku: 0,
                ..input.settings.clone()
            },
        );
        for wave in back {
            let mut pending = wave.len();
            for j in wave {
                sim.at(0.0, Event::RollbackStart(failed[j]));
            }
            sim.drain_queue(&mut pending);
        }
        break;
    }
    let mut domains = Vec::new();
    let mut over_budget = Vec::new();
    for (k, key) in fleet.keys.iter().enumerate() {
        for (v, (value, size)) in sizes[k].iter().enumerate() {
            let budget = input.settings.budget.of(*size);
            let peak = sim.peak[k][v];
            if peak > budget {
                over_budget.push(format!("{key}={value}: {peak} > {budget}"));
            }
            domains.push(Peak {
                key: key.clone(),
                value: (*value).to_owned(),
                nodes: *size,
                budget,
                peak,
            });
        }
    }
    let count = |im: Image| sim.image.iter().filter(|x| **x == im).count();
    let rolled_back = halted.as_ref().map_or(0, |h| h.failed.len());
    Report {
        seed: input.seed,
        shape: input.shape.clone(),
        impact: input.impact,
        waves: plan.len(),
        canary_waves,
        waves_completed: completed,
        total_seconds: sim.now,
        accepted_new: count(Image::AcceptedNew),
        old: count(Image::Old),
        rolled_back,
        halted,
        peak_unavailable: sim.peak_total,
        domains,
        events: sim.events,
        final_images: fleet
            .members
            .iter()
            .zip(&sim.image)
            .map(|(m, im)| (m.name.clone(), *im))
            .collect(),
        over_budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blueprint::model::rollout::Budget;

    fn input(seed: u64, accept: f64, canary: bool) -> Input {
        Input {
            shape: Shape {
                nodes: 200,
                zones: 3,
                nodes_per_rack: 8,
                skus: 2,
            },
            settings: Settings {
                canaries_per_sku: 1,
                budget: Budget::Nodes(2),
                max_wave_size: None,
            },
            impact: Impact::Reboot,
            durations: Durations::default(),
            failures: Failures {
                apply: 0.0,
                accept,
                canary,
            },
            seed,
        }
    }

    #[test]
    fn same_seed_same_run() {
        let a = run(&input(7, 0.01, false));
        let b = run(&input(7, 0.01, false));
        assert_eq!(a.total_seconds, b.total_seconds);
        assert_eq!(a.final_images, b.final_images);
    }

    #[test]
    fn clean_run_accepts_everyone() {
        let r = run(&input(1, 0.0, false));
        assert!(r.halted.is_none());
        assert_eq!(r.accepted_new, 200);
        assert_eq!(r.waves_completed, r.waves);
        assert!(r.over_budget.is_empty());
        assert!(
            r.domains.iter().any(|d| d.peak == d.budget),
            "the budget is used"
        );
    }

    #[test]
    fn a_failing_canary_stops_everything() {
        let r = run(&input(1, 0.0, true));
        let h = r.halted.expect("halted");
        assert!(h.canary && h.wave == 0);
        assert_eq!(r.accepted_new + r.old, 200);
        assert!(r.accepted_new <= 2, "only canaries ran");
    }
}
