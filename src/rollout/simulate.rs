//! `nodeimg rollout simulate`: a discrete-event simulation of a rollout plan over a
//! synthetic fleet — zones of racks of nodes, several SKUs — with a duration per phase
//! (drawn between a minimum and a maximum), upgrade failures injected at given rates and
//! node faults arriving by class and handled as the rendered remediation does
//! ([`super::faults`]). The same seed gives the same run. It reports the total time, the
//! peak number of unavailable nodes in every failure domain against its budget, where the
//! rollout halted and what remediation did.
//!
//! The model follows the rendered manifests: waves run one after another, every node of a
//! wave at once (the Plan's `concurrency` is the wave size); a node is unavailable from its
//! cordon until it is accepted (a live-only change never cordons); after the last node of a
//! wave the gate runs; a failed node halts the rollout, and the failed nodes are returned
//! to the previous image in waves under the same budget, so that a halted rollout leaves
//! every node on the previous image, on an accepted new one, or off to repair.
//!
//! Faults strike nodes in service. A wave waits for a node of its own that is in automatic
//! recovery (a daemon restart, the one reboot of a driver fault, or the recovery ladder's
//! reboots of a hardware fault: bounded by the blueprint's windows and `maxReboots`), and
//! leaves out a node in the repair queue: the repair reimages it with the image its wave
//! targets, and acceptance decides its return. The rollout's budget counts the nodes the
//! rollout takes; the peaks with faults are reported beside it. After the last wave no new
//! fault arrives and the remediations under way run to their end (`settled_seconds`).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use serde::Serialize;

use super::faults::{Class, Faults, Group, Step, What};
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
    /// From a fault to the condition: node-problem-detector runs the health plugin every
    /// 5 minutes (the rendered `invoke_interval`).
    pub detect: Span,
    /// A daemon restart by systemd or the operator's DaemonSet; it clears the fault only
    /// when it ends within `daemonRestartWindow`.
    pub daemon_restart: Span,
    /// The repair queue: the ticket, the hardware swap, the reimage.
    pub repair: Span,
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
            detect: s(0.0, 300.0),
            daemon_restart: s(10.0, 300.0),
            // One to five days.
            repair: s(86_400.0, 432_000.0),
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
    /// Node faults and their remediation.
    pub faults: Faults,
    /// Keep every node's steps in [`Report::trace`] (for [`super::faults::check`]).
    pub trace: bool,
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
    /// Off to repair for good: out of the fleet, never in service again.
    Repair,
}

#[derive(Debug, Clone, Serialize)]
pub struct Peak {
    pub key: String,
    pub value: String,
    pub nodes: usize,
    pub budget: usize,
    /// Most nodes the rollout took at once.
    pub peak: usize,
    /// Most nodes unavailable at once, the rollout's and the faulty ones together.
    pub peak_with_faults: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Halt {
    pub wave: usize,
    pub canary: bool,
    /// When the gate halted, seconds from the start.
    pub at_seconds: f64,
    pub failed: Vec<String>,
}

/// What happened to the faults of one class.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClassCount {
    pub class: Option<Class>,
    /// Faults that struck a node in service.
    pub faults: usize,
    /// Transient: the workload's Pod restarted, the node stayed in service.
    pub pod_restarts: usize,
    /// Driver or daemon: cleared by a daemon restart within the window.
    pub daemon_restarts: usize,
    /// Rebooted by NodeHealthCheck: a driver or daemon fault once, a device or link fault
    /// up to maxReboots times within the ladder's window.
    pub reboots: usize,
    /// Cordoned and queued for repair (hardware; or a reboot that did not clear it).
    pub to_repair: usize,
    pub repairs: usize,
    /// Back in service after acceptance passed again.
    pub back_in_service: usize,
    /// Off to repair for good.
    pub off_to_repair: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Remediation {
    /// NodeHealthCheck `maxUnhealthy`, nodes per NodeHealthCheck.
    pub max_unhealthy: usize,
    pub classes: Vec<ClassCount>,
    /// Remediations NodeHealthCheck held back because too many nodes were unhealthy.
    pub waited: usize,
    pub longest_wait_seconds: f64,
    /// Nodes a wave waited for (in automatic recovery when the wave started).
    pub waited_by_wave: usize,
    /// Nodes a wave left out (in repair): upgraded by their repair.
    pub left_out_by_wave: usize,
    /// Most nodes out of service for faults at once, fleet-wide.
    pub peak_out_of_service: usize,
    pub node_hours_lost: f64,
    /// Nodes still out for faults when the rollout ended.
    pub out_at_rollout_end: usize,
    /// Nodes NodeHealthCheck never remediated: more of its nodes than `maxUnhealthy` were
    /// unhealthy at once, so it held back every remediation; a person must act.
    pub held_back: usize,
    /// When the last remediation under way at the rollout's end was over.
    pub settled_seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub seed: u64,
    pub shape: Shape,
    pub impact: Impact,
    pub waves: usize,
    pub canary_waves: usize,
    pub waves_completed: usize,
    /// When the rollout ended (the last gate, or the last node returned after a halt).
    pub total_seconds: f64,
    pub halted: Option<Halt>,
    pub accepted_new: usize,
    pub old: usize,
    pub rolled_back: usize,
    /// Off to repair for good (out of the fleet).
    pub off_to_repair: usize,
    /// Most nodes the rollout took at once, fleet-wide.
    pub peak_unavailable: usize,
    /// Most nodes unavailable at once, rollout and faults together.
    pub peak_unavailable_with_faults: usize,
    /// Per failure domain, sorted by key and value.
    pub domains: Vec<Peak>,
    pub remediation: Remediation,
    pub events: usize,
    /// Where each node ended, by name.
    #[serde(skip)]
    pub final_images: BTreeMap<String, Image>,
    /// Every node's steps, when [`Input::trace`] asked for them (nodes by index).
    #[serde(skip)]
    pub trace: Vec<Step>,
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

    /// The wait until the next event of a Poisson process of `rate` per second.
    fn exponential(&mut self, rate: f64) -> f64 {
        -(1.0 - self.unit()).ln() / rate
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n - 1)
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
    /// The gate after the current wave (or the end of a rollback wave).
    Gate,
    RollbackStart(usize),
    RolledBack(usize),
    /// The next fault of a class somewhere in the fleet.
    Fault(Class),
    /// A daemon restart cleared the node's driver or daemon fault.
    DaemonRestarted(usize),
    /// The condition held for the NodeHealthCheck's duration.
    Detected(usize),
    /// The remediation reboot is over (or timed out).
    RemediationRebooted(usize),
    Repaired(usize),
    /// Acceptance after recovery is over.
    Reaccepted(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Health {
    InService,
    /// Taken by the rollout (or being returned after a halt).
    Upgrading,
    /// Out for a fault (or off to repair for good).
    Faulty,
}

/// A node's fault while it is handled.
#[derive(Debug, Clone, Copy)]
struct Case {
    class: Class,
    since: f64,
    /// In the repair queue rather than automatic recovery.
    repair: bool,
    repairs: u32,
    /// The remediation reboot took longer than `rebootTimeout`.
    timed_out: bool,
    waiting_since: Option<f64>,
    /// Counted unhealthy by its NodeHealthCheck.
    counted: bool,
    /// Repaired and reimaged, its acceptance running.
    accepting: bool,
}

/// Unavailable nodes: now and at most, per domain `[key][value index]` and fleet-wide.
struct Load {
    down: Vec<Vec<usize>>,
    peak: Vec<Vec<usize>>,
    total: usize,
    peak_total: usize,
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

struct Sim<'a> {
    input: &'a Input,
    steps: Steps,
    rng: Rng,
    now: f64,
    seq: u64,
    queue: BinaryHeap<Reverse<(u64, u64, Event)>>,
    image: Vec<Image>,
    failed: Vec<bool>,
    health: Vec<Health>,
    /// Taken by the rollout / out for a fault.
    rollout_down: Vec<bool>,
    fault_down: Vec<bool>,
    rollout: Load,
    all: Load,
    faults_out: usize,
    peak_faults_out: usize,
    /// Domain value index of each node per key.
    slot: Vec<Vec<usize>>,
    /// The wave of each node, and how many waves have started.
    wave_of: Vec<usize>,
    started: usize,
    halted: bool,
    /// No new fault arrives (the rollout is over).
    ending: bool,
    /// Nodes of the running wave not yet judged (or returned, during a rollback).
    pending: usize,
    /// Nodes the running wave waits for (in automatic recovery).
    wave_waits: Vec<bool>,
    cases: Vec<Option<Case>>,
    /// When each node was rebooted for a hardware fault: the ladder counts them.
    hardware_reboots: Vec<Vec<f64>>,
    unhealthy: [usize; 2],
    waiting: [VecDeque<usize>; 2],
    counts: BTreeMap<Class, ClassCount>,
    waited: usize,
    longest_wait: f64,
    waited_by_wave: usize,
    left_out_by_wave: usize,
    node_seconds_lost: f64,
    trace: Option<Vec<Step>>,
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

    fn note(&mut self, node: usize, what: What) {
        if let Some(t) = &mut self.trace {
            t.push(Step {
                at_ms: ms(self.now),
                node,
                what,
            });
        }
    }

    fn count(&mut self, c: Class) -> &mut ClassCount {
        self.counts.entry(c).or_insert_with(|| ClassCount {
            class: Some(c),
            ..ClassCount::default()
        })
    }

    fn set_down(&mut self, i: usize, rollout: bool, down: bool) {
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

    /// The image a node gets when its repair reimages it: the new one once its wave has
    /// started, unless the rollout halted.
    fn target(&self, i: usize) -> Image {
        if !self.halted && self.wave_of[i] < self.started {
            Image::UnacceptedNew
        } else {
            Image::Old
        }
    }

    fn one_done(&mut self, gate: f64) {
        self.pending -= 1;
        if self.pending == 0 {
            self.at(gate, Event::Gate);
        }
    }

    /// The running wave reaches node `i`.
    fn begin(&mut self, i: usize) {
        match (self.health[i], self.cases[i]) {
            // Started at once: a fault at the same moment must not strike it first.
            (Health::InService, _) => self.step(Event::Start(i)),
            // In automatic recovery (a daemon restart, or a reboot of the ladder), or back
            // from its repair with its acceptance running: the wave waits for it (a node
            // reimaged just before its wave came would otherwise stay on the previous image).
            (Health::Faulty, Some(c))
                if ((c.class == Class::DriverDaemon || c.class.hardware()) && !c.repair
                    || c.accepting)
                    && c.waiting_since.is_none() =>
            {
                self.wave_waits[i] = true;
                self.waited_by_wave += 1;
            }
            _ => {
                self.left_out_by_wave += 1;
                let gate = self.rng.span(self.input.durations.gate);
                self.one_done(gate);
            }
        }
    }

    /// Runs events until the running wave's gate (or the end of a rollback wave), or with
    /// `until_gate` false until no event is left.
    fn run(&mut self, until_gate: bool) {
        while let Some(Reverse((t, _, e))) = self.queue.pop() {
            self.now = t as f64 / 1000.0;
            self.events += 1;
            if e == Event::Gate {
                if until_gate {
                    return;
                }
                continue;
            }
            self.step(e);
        }
    }

    fn step(&mut self, e: Event) {
        let d = &self.input.durations;
        let f = &self.input.faults;
        match e {
            Event::Start(i) => {
                self.health[i] = Health::Upgrading;
                self.note(i, What::Upgrade);
                if self.steps.cordon {
                    self.set_down(i, true, true);
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
                    self.set_down(i, true, true);
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
                    self.set_down(i, true, true);
                } else {
                    self.image[i] = Image::AcceptedNew;
                    self.set_down(i, true, false);
                    self.health[i] = Health::InService;
                    self.note(i, What::InService);
                }
                let gate = self.rng.span(d.gate);
                self.one_done(gate);
            }
            Event::Gate => {}
            Event::RollbackStart(i) => {
                self.set_down(i, true, true);
                let t = self.rng.span(d.rollback);
                self.at(t, Event::RolledBack(i));
            }
            Event::RolledBack(i) => {
                self.image[i] = Image::Old;
                self.failed[i] = false;
                self.set_down(i, true, false);
                self.health[i] = Health::InService;
                self.note(i, What::InService);
                self.one_done(0.0);
            }
            Event::Fault(c) => self.fault(c),
            Event::DaemonRestarted(i) => {
                self.count(Class::DriverDaemon).daemon_restarts += 1;
                self.note(i, What::Restarted);
                self.back(i);
            }
            Event::Detected(i) => {
                let Some(g) = self.cases[i].and_then(|c| c.class.group()) else {
                    return;
                };
                self.unhealthy[g.index()] += 1;
                self.note(i, What::Unhealthy(g));
                if let Some(c) = &mut self.cases[i] {
                    c.counted = true;
                }
                if self.unhealthy[g.index()] <= f.max_unhealthy {
                    self.remediate(i, g);
                } else {
                    self.waited += 1;
                    self.note(i, What::Waits(g));
                    if let Some(c) = &mut self.cases[i] {
                        c.waiting_since = Some(self.now);
                    }
                    self.waiting[g.index()].push_back(i);
                    self.leave_out(i);
                }
            }
            Event::RemediationRebooted(i) => {
                if self.cases[i].is_some_and(|c| c.timed_out) {
                    // NodeHealthCheck's timeout: the remediation failed; a person takes it.
                    self.queue_repair(i);
                } else {
                    let t = self.rng.span(d.accept);
                    self.at(t, Event::Reaccepted(i));
                }
            }
            Event::Repaired(i) => {
                let Some(c) = &mut self.cases[i] else { return };
                c.repairs += 1;
                c.accepting = true;
                let class = c.class;
                self.count(class).repairs += 1;
                self.note(i, What::Repaired);
                // The repair reimages the node with the image its wave targets.
                self.image[i] = self.target(i);
                let t = self.rng.span(d.accept);
                self.at(t, Event::Reaccepted(i));
            }
            Event::Reaccepted(i) => {
                let Some(c) = self.cases[i] else { return };
                if let Some(c) = &mut self.cases[i] {
                    c.accepting = false;
                }
                let p = if c.repair {
                    f.repair_clears
                } else if c.class.hardware() {
                    f.reboot_clears_hardware
                } else {
                    f.reboot_clears
                };
                if self.rng.chance(p) {
                    self.note(i, What::Accepted);
                    if self.image[i] == Image::UnacceptedNew {
                        self.image[i] = Image::AcceptedNew;
                    }
                    self.back(i);
                } else {
                    self.note(i, What::AcceptFailed);
                    if !c.repair && c.class.hardware() {
                        // The reboot did not clear it: the next rung of the ladder,
                        // another reboot or, past the limit, service; a new remediation,
                        // so NodeHealthCheck's maxUnhealthy holds it as any other.
                        let g = Group::DeviceLink;
                        if self.unhealthy[g.index()] <= f.max_unhealthy {
                            self.remediate(i, g);
                        } else {
                            self.waited += 1;
                            self.note(i, What::Waits(g));
                            if let Some(c) = &mut self.cases[i] {
                                c.waiting_since = Some(self.now);
                            }
                            self.waiting[g.index()].push_back(i);
                            self.leave_out(i);
                        }
                    } else if !c.repair {
                        self.queue_repair(i);
                    } else if c.repairs < f.repair_attempts {
                        // Back to the repair queue: the wave does not wait for that.
                        self.leave_out(i);
                        self.note(i, What::ToRepair);
                        let t = self.rng.span(d.repair);
                        self.at(t, Event::Repaired(i));
                    } else {
                        self.retire(i);
                    }
                }
            }
        }
    }

    /// A fault of class `c` strikes a node drawn at random, if it is in service (thinning
    /// keeps the rate per node in service).
    fn fault(&mut self, c: Class) {
        if self.ending {
            return;
        }
        let n = self.health.len();
        let rate = self.input.faults.rate(c) * n as f64 / 86_400.0;
        let next = self.rng.exponential(rate);
        self.at(next, Event::Fault(c));
        let i = self.rng.below(n);
        if self.health[i] != Health::InService {
            return;
        }
        self.count(c).faults += 1;
        self.note(i, What::Fault(c));
        if c == Class::Transient {
            self.count(c).pod_restarts += 1;
            self.note(i, What::PodRestarted);
            return;
        }
        self.health[i] = Health::Faulty;
        self.set_down(i, false, true);
        self.cases[i] = Some(Case {
            class: c,
            since: self.now,
            repair: false,
            repairs: 0,
            timed_out: false,
            waiting_since: None,
            counted: false,
            accepting: false,
        });
        let d = &self.input.durations;
        let f = &self.input.faults;
        let detect = self.rng.span(d.detect);
        if c == Class::DriverDaemon {
            // NodeHealthCheck counts the node once the condition held for the window.
            let held = detect + f.restart_window;
            let restart = self.rng.span(d.daemon_restart);
            if restart < f.restart_window && self.rng.chance(f.restart_clears) {
                self.at(restart, Event::DaemonRestarted(i));
            } else {
                self.at(held, Event::Detected(i));
            }
        } else {
            // The device-link NodeHealthCheck's duration: 60 s.
            self.at(detect + 60.0, Event::Detected(i));
        }
    }

    /// NodeHealthCheck starts the remediation of node `i`.
    fn remediate(&mut self, i: usize, g: Group) {
        self.note(i, What::Remediate(g));
        let Some(c) = &mut self.cases[i] else { return };
        if let Some(since) = c.waiting_since.take() {
            self.longest_wait = self.longest_wait.max(self.now - since);
        }
        let class = c.class;
        let f = &self.input.faults;
        let now = self.now;
        let recent = self.hardware_reboots[i]
            .iter()
            .filter(|&&t| now - t <= f.ladder_window)
            .count();
        // The ladder: a hardware fault gets a reboot while the node had fewer than
        // maxReboots within the window; past that, verify on the node asks for service.
        let reboot =
            class == Class::DriverDaemon || (class.hardware() && recent < f.max_reboots as usize);
        if reboot {
            let t = self.rng.span(self.input.durations.reboot);
            let timeout = self.input.faults.reboot_timeout;
            if let Some(c) = &mut self.cases[i] {
                c.timed_out = t > timeout;
            }
            if class.hardware() {
                self.hardware_reboots[i].push(now);
            }
            self.count(class).reboots += 1;
            self.note(i, What::Reboot);
            self.at(t.min(timeout), Event::RemediationRebooted(i));
        } else {
            self.queue_repair(i);
        }
    }

    fn queue_repair(&mut self, i: usize) {
        let Some(c) = &mut self.cases[i] else { return };
        c.repair = true;
        let class = c.class;
        self.count(class).to_repair += 1;
        self.note(i, What::ToRepair);
        self.leave_out(i);
        let t = self.rng.span(self.input.durations.repair);
        self.at(t, Event::Repaired(i));
    }

    /// The running wave stops waiting for node `i` (no longer in automatic recovery): its
    /// repair, or a person, brings it to its wave's image.
    fn leave_out(&mut self, i: usize) {
        if std::mem::take(&mut self.wave_waits[i]) {
            self.waited_by_wave -= 1;
            self.left_out_by_wave += 1;
            let gate = self.rng.span(self.input.durations.gate);
            self.one_done(gate);
        }
    }

    /// No longer counted by the group's NodeHealthCheck: start what waited, if it may.
    fn healthy(&mut self, i: usize, g: Group) {
        self.unhealthy[g.index()] -= 1;
        self.note(i, What::Healthy(g));
        while self.unhealthy[g.index()] <= self.input.faults.max_unhealthy
            && let Some(j) = self.waiting[g.index()].pop_front()
        {
            self.remediate(j, g);
        }
    }

    /// Back in service after the fault.
    fn back(&mut self, i: usize) {
        let Some(c) = self.cases[i].take() else {
            return;
        };
        self.node_seconds_lost += self.now - c.since;
        self.count(c.class).back_in_service += 1;
        // A daemon restart clears the fault before NodeHealthCheck counted the node.
        if c.counted
            && let Some(g) = c.class.group()
        {
            self.healthy(i, g);
        }
        self.health[i] = Health::InService;
        self.set_down(i, false, false);
        self.note(i, What::InService);
        if std::mem::take(&mut self.wave_waits[i]) {
            self.step(Event::Start(i));
        }
    }

    /// Off to repair for good: out of the fleet, no longer counted by NodeHealthCheck.
    fn retire(&mut self, i: usize) {
        self.leave_out(i);
        let Some(c) = self.cases[i].take() else {
            return;
        };
        self.node_seconds_lost += self.now - c.since;
        self.count(c.class).off_to_repair += 1;
        self.image[i] = Image::Repair;
        if c.counted
            && let Some(g) = c.class.group()
        {
            self.healthy(i, g);
        }
        self.note(i, What::OffToRepair);
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
    let mut wave_of = vec![usize::MAX; n];
    for (w, nodes) in plan.iter().enumerate() {
        for &i in nodes {
            wave_of[i] = w;
        }
    }
    let mut sim = Sim {
        input,
        steps: Steps::of(input.impact),
        rng: Rng::new(input.seed),
        now: 0.0,
        seq: 0,
        queue: BinaryHeap::new(),
        image: vec![Image::Old; n],
        failed: vec![false; n],
        health: vec![Health::InService; n],
        rollout_down: vec![false; n],
        fault_down: vec![false; n],
        rollout: Load::new(&sizes),
        all: Load::new(&sizes),
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
        wave_of,
        started: 0,
        halted: false,
        ending: false,
        pending: 0,
        wave_waits: vec![false; n],
        cases: vec![None; n],
        hardware_reboots: vec![Vec::new(); n],
        unhealthy: [0; 2],
        waiting: [VecDeque::new(), VecDeque::new()],
        counts: BTreeMap::new(),
        waited: 0,
        longest_wait: 0.0,
        waited_by_wave: 0,
        left_out_by_wave: 0,
        node_seconds_lost: 0.0,
        trace: input.trace.then(Vec::new),
        events: 0,
    };
    if n > 0 {
        for c in Class::ALL {
            let rate = input.faults.rate(c) * n as f64 / 86_400.0;
            if rate > 0.0 {
                let t = sim.rng.exponential(rate);
                sim.at(t, Event::Fault(c));
            }
        }
    }
    let mut halted = None;
    let mut completed = 0;
    for (w, nodes) in plan.iter().enumerate() {
        sim.started = w + 1;
        sim.pending = nodes.len();
        if w == 0
            && input.failures.canary
            && let Some(&first) = nodes.first()
        {
            sim.failed[first] = true;
        }
        for &i in nodes {
            sim.begin(i);
        }
        sim.run(true);
        let failed: Vec<usize> = nodes.iter().copied().filter(|&i| sim.failed[i]).collect();
        if failed.is_empty() {
            completed += 1;
            continue;
        }
        sim.halted = true;
        halted = Some(Halt {
            wave: w,
            canary: w < canary_waves,
            at_seconds: sim.now,
            failed: failed
                .iter()
                .map(|&i| fleet.members[i].name.clone())
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
            sim.pending = wave.len();
            for j in wave {
                sim.at(0.0, Event::RollbackStart(failed[j]));
            }
            sim.run(true);
        }
        break;
    }
    let total_seconds = sim.now;
    let out_at_rollout_end = sim.faults_out;
    // No new fault; what is under way runs to its end.
    sim.ending = true;
    sim.run(false);
    let settled_seconds = sim.now.max(total_seconds);
    let mut domains = Vec::new();
    let mut over_budget = Vec::new();
    for (k, key) in fleet.keys.iter().enumerate() {
        for (v, (value, size)) in sizes[k].iter().enumerate() {
            let budget = input.settings.budget.of(*size);
            let peak = sim.rollout.peak[k][v];
            if peak > budget {
                over_budget.push(format!("{key}={value}: {peak} > {budget}"));
            }
            domains.push(Peak {
                key: key.clone(),
                value: (*value).to_owned(),
                nodes: *size,
                budget,
                peak,
                peak_with_faults: sim.all.peak[k][v],
            });
        }
    }
    let count = |im: Image| sim.image.iter().filter(|x| **x == im).count();
    let rolled_back = halted.as_ref().map_or(0, |h| h.failed.len());
    let classes = Class::ALL
        .into_iter()
        .filter_map(|c| sim.counts.get(&c).cloned())
        .collect();
    Report {
        seed: input.seed,
        shape: input.shape.clone(),
        impact: input.impact,
        waves: plan.len(),
        canary_waves,
        waves_completed: completed,
        total_seconds,
        accepted_new: count(Image::AcceptedNew),
        old: count(Image::Old),
        off_to_repair: count(Image::Repair),
        rolled_back,
        halted,
        peak_unavailable: sim.rollout.peak_total,
        peak_unavailable_with_faults: sim.all.peak_total,
        domains,
        remediation: Remediation {
            max_unhealthy: input.faults.max_unhealthy,
            classes,
            waited: sim.waited,
            longest_wait_seconds: sim.longest_wait,
            waited_by_wave: sim.waited_by_wave,
            left_out_by_wave: sim.left_out_by_wave,
            peak_out_of_service: sim.peak_faults_out,
            node_hours_lost: sim.node_seconds_lost / 3600.0,
            out_at_rollout_end,
            held_back: sim.waiting.iter().map(VecDeque::len).sum(),
            settled_seconds,
        },
        events: sim.events,
        final_images: fleet
            .members
            .iter()
            .zip(&sim.image)
            .map(|(m, im)| (m.name.clone(), *im))
            .collect(),
        trace: sim.trace.take().unwrap_or_default(),
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
            faults: Faults::default(),
            trace: true,
            seed,
        }
    }

    fn faulty(seed: u64, class: Class, per_day: f64) -> Input {
        let mut i = input(seed, 0.0, false);
        i.faults.rates.insert(class, per_day);
        i
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

    fn steps_of(r: &Report, what: impl Fn(&What) -> bool) -> usize {
        r.trace.iter().filter(|s| what(&s.what)).count()
    }

    #[test]
    fn a_hardware_fault_climbs_the_ladder_and_returns_only_after_acceptance() {
        let mut inp = faulty(3, Class::Device, 0.05);
        inp.faults.max_unhealthy = 1000;
        let r = run(&inp);
        let c = &r.remediation.classes[0];
        assert_eq!(c.class, Some(Class::Device));
        assert!(c.faults > 5, "{c:?}");
        assert!(c.reboots > 0, "the reboot rung: {c:?}");
        assert!(c.to_repair > 0, "the service rung: {c:?}");
        assert!(c.repairs >= c.to_repair);
        assert_eq!(
            c.back_in_service + c.off_to_repair,
            c.faults,
            "every fault ends"
        );
        assert!(r.halted.is_none());
        assert_eq!(r.accepted_new + r.old + r.off_to_repair, 200);
        assert!(r.over_budget.is_empty());
        assert!(r.remediation.settled_seconds >= r.total_seconds);
        let e = super::super::faults::check(&r.trace, 200, 1000);
        assert!(e.is_empty(), "{e:?}");
        // A reboot that never clears it: exactly maxReboots, then repair.
        let mut never = inp.clone();
        never.faults.reboot_clears_hardware = 0.0;
        let r = run(&never);
        let c = &r.remediation.classes[0];
        assert_eq!(c.to_repair, c.faults, "{c:?}");
        assert!(c.reboots <= 2 * c.faults, "{c:?}");
        let e = super::super::faults::check(&r.trace, 200, 1000);
        assert!(e.is_empty(), "{e:?}");
        // maxReboots 0: straight to repair, never a reboot.
        let mut none = inp;
        none.faults.max_reboots = 0;
        let r = run(&none);
        assert_eq!(steps_of(&r, |w| *w == What::Reboot), 0);
        assert_eq!(
            r.remediation.classes[0].to_repair,
            r.remediation.classes[0].faults
        );
    }

    #[test]
    fn a_driver_fault_is_restarted_or_rebooted_once() {
        let mut inp = faulty(5, Class::DriverDaemon, 0.1);
        inp.faults.max_unhealthy = 1000;
        inp.faults.reboot_clears = 1.0;
        let r = run(&inp);
        let c = &r.remediation.classes[0];
        assert!(c.daemon_restarts > 0 && c.reboots > 0, "{c:?}");
        assert_eq!(c.daemon_restarts + c.reboots, c.faults);
        // Every reboot clears it (reboot_clears 1.0) unless it timed out: nothing loops.
        assert_eq!(c.back_in_service + c.off_to_repair, c.faults);
        let e = super::super::faults::check(&r.trace, 200, 1000);
        assert!(e.is_empty(), "{e:?}");
        // A transient fault keeps the node in service.
        let t = run(&faulty(5, Class::Transient, 0.1));
        let c = &t.remediation.classes[0];
        assert_eq!(c.pod_restarts, c.faults);
        assert_eq!(t.remediation.peak_out_of_service, 0);
        assert_eq!(t.accepted_new, 200);
    }

    #[test]
    fn max_unhealthy_holds_remediation_back() {
        let mut inp = faulty(9, Class::Link, 0.2);
        inp.faults.max_unhealthy = 1;
        let r = run(&inp);
        assert!(r.remediation.waited > 0, "{:?}", r.remediation);
        assert!(
            r.remediation.held_back > 0,
            "two held back: none remediated"
        );
        // A remediation held back starts once few enough nodes are unhealthy: with repairs
        // of 1–2 hours and a limit of 2, some seed shows it.
        inp.faults.max_unhealthy = 2;
        inp.durations.repair = Span {
            min: 3600.0,
            max: 7200.0,
        };
        let started_late = (0..20).any(|seed| {
            inp.seed = seed;
            let r = run(&inp);
            assert!(super::super::faults::check(&r.trace, 200, 2).is_empty());
            r.remediation.longest_wait_seconds > 0.0
        });
        assert!(started_late);
        let e = super::super::faults::check(&r.trace, 200, 1);
        assert!(e.is_empty(), "{e:?}");
        // The checker sees a limit lower than the one the run kept.
        let e = super::super::faults::check(&r.trace, 200, 0);
        assert!(e.iter().any(|e| e.contains("maxUnhealthy 0")), "{e:?}");
    }
}
