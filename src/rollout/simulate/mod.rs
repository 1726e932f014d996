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
//! leaves out a node in the repair queue or held back by NodeHealthCheck: the repair
//! reimages it with the image its wave targets, and acceptance decides its return. A node
//! left out that a later reboot clears still runs the previous image; acceptance judges a
//! node against the image its wave targets, so it is refused and goes to repair too (a
//! completed rollout leaves on the previous image only the nodes still held back). The
//! rollout's budget counts the nodes the rollout takes; the peaks with faults are reported
//! beside it. After the last wave no new fault arrives and the remediations under way run
//! to their end (`settled_seconds`).
//!
//! The event queue is `queue.rs`, the fleet model (the synthetic fleet, each node's state,
//! the unavailable nodes per domain) `fleet.rs`, and the two policies it simulates
//! `waves.rs` (the rollout) and `remediation.rs` (the fault handling); `input.rs` and
//! `report.rs` are what it takes and gives, `rng.rs` its seeded draws. This file runs the
//! waves, the gates and a halt's return, and gathers the report.

mod fleet;
mod input;
mod queue;
mod remediation;
mod report;
mod rng;
mod waves;

pub use fleet::{Image, RACK, ZONE, synthetic_fleet};
pub use input::{Durations, Failures, Input, Shape, Span};
pub use report::{ClassCount, Halt, Peak, Remediation, Report};
pub use rng::Rng;

use std::collections::{BTreeMap, VecDeque};

use super::faults::{Class, Step, What};
use super::fleet::Fleet;
use super::plan::{Settings, Steps, waves};
use fleet::Nodes;
use queue::{Event, Queue, ms};
use remediation::Case;

/// One run: the event queue, the fleet model, and the policies' own state (the waves',
/// and remediation's).
struct Sim<'a> {
    input: &'a Input,
    steps: Steps,
    rng: Rng,
    now: f64,
    queue: Queue,
    nodes: Nodes,
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

impl Sim<'_> {
    fn at(&mut self, delay: f64, e: Event) {
        self.queue.push(ms(self.now) + ms(delay), e);
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

    /// Runs events until the running wave's gate (or the end of a rollback wave), or with
    /// `until_gate` false until no event is left.
    fn run(&mut self, until_gate: bool) {
        while let Some((t, e)) = self.queue.pop() {
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
        match e {
            Event::Gate => {}
            Event::Start(_)
            | Event::Drained(_)
            | Event::Applied(_)
            | Event::Rebooted(_)
            | Event::Judged(_)
            | Event::RollbackStart(_)
            | Event::RolledBack(_) => self.rollout(e),
            Event::Fault(_)
            | Event::DaemonRestarted(_)
            | Event::Detected(_)
            | Event::RemediationRebooted(_)
            | Event::Repaired(_)
            | Event::Reaccepted(_) => self.remediation(e),
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
        queue: Queue::default(),
        nodes: Nodes::new(fleet, &sizes),
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
            sim.nodes.failed[first] = true;
        }
        for &i in nodes {
            sim.begin(i);
        }
        sim.run(true);
        let failed: Vec<usize> = nodes
            .iter()
            .copied()
            .filter(|&i| sim.nodes.failed[i])
            .collect();
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
    let out_at_rollout_end = sim.nodes.faults_out;
    // No new fault; what is under way runs to its end.
    sim.ending = true;
    sim.run(false);
    let settled_seconds = sim.now.max(total_seconds);
    let mut domains = Vec::new();
    let mut over_budget = Vec::new();
    for (k, key) in fleet.keys.iter().enumerate() {
        for (v, (value, size)) in sizes[k].iter().enumerate() {
            let budget = input.settings.budget.of(*size);
            let peak = sim.nodes.rollout.peak[k][v];
            if peak > budget {
                over_budget.push(format!("{key}={value}: {peak} > {budget}"));
            }
            domains.push(Peak {
                key: key.clone(),
                value: (*value).to_owned(),
                nodes: *size,
                budget,
                peak,
                peak_with_faults: sim.nodes.all.peak[k][v],
            });
        }
    }
    let count = |im: Image| sim.nodes.image.iter().filter(|x| **x == im).count();
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
        peak_unavailable: sim.nodes.rollout.peak_total,
        peak_unavailable_with_faults: sim.nodes.all.peak_total,
        domains,
        remediation: Remediation {
            max_unhealthy: input.faults.max_unhealthy,
            classes,
            waited: sim.waited,
            longest_wait_seconds: sim.longest_wait,
            waited_by_wave: sim.waited_by_wave,
            left_out_by_wave: sim.left_out_by_wave,
            peak_out_of_service: sim.nodes.peak_faults_out,
            node_hours_lost: sim.node_seconds_lost / 3600.0,
            out_at_rollout_end,
            held_back: sim.waiting.iter().map(VecDeque::len).sum(),
            settled_seconds,
        },
        events: sim.events,
        final_images: fleet
            .members
            .iter()
            .zip(&sim.nodes.image)
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
    use crate::diff::impact::Impact;
    use crate::rollout::faults::Faults;

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
