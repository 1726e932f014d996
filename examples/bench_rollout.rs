//! Speed of `nodeimg rollout simulate`: planning and the discrete-event simulation of a
//! 10,000-node fleet (and 1,000 and 50,000), against the obvious alternative — a
//! time-stepped simulation that advances every node of the running wave once per simulated
//! second — on the same plan and the same duration spans. Both take the fleet and the plan
//! from `rollout::simulate` ([`Planned`]); only the way time advances differs. Planning is
//! timed against greedy packing alone, with the largest and smallest waves of each. Last,
//! the 10,000-node run again with node faults of every class (remediation events). Run
//! with `scripts/bench-rollout`.

use std::time::Instant;

use nodeimg::blueprint::model::rollout::Budget;
use nodeimg::diff::impact::Impact;
use nodeimg::rollout::faults::Class;
use nodeimg::rollout::faults::Faults;
use nodeimg::rollout::plan::{self, Settings, Steps};
use nodeimg::rollout::simulate::{self, Durations, Failures, Input, Planned, Rng, Shape};

fn input(nodes: usize) -> Input {
    Input {
        shape: Shape {
            nodes,
            zones: 4,
            nodes_per_rack: 16,
            skus: 3,
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
            accept: 0.0,
            canary: false,
        },
        faults: Faults::default(),
        trace: false,
        seed: 42,
    }
}

/// The alternative: one tick per simulated second; each node of the wave counts down the
/// phase it is in (the phases the change's impact needs). Returns the simulated seconds.
fn stepped(planned: &Planned, input: &Input) -> u64 {
    let d = &input.durations;
    let steps = Steps::of(input.impact);
    let mut rng = Rng::new(input.seed);
    let mut t = 0u64;
    for wave in &planned.waves {
        // Remaining seconds of each phase: drain, apply, reboot, accept.
        let mut left: Vec<[u64; 4]> = wave
            .iter()
            .map(|_| {
                let mut draw = |on: bool, s| if on { rng.span(s).round() as u64 } else { 0 };
                [
                    draw(steps.drain, d.drain),
                    draw(true, d.apply),
                    draw(steps.reboot, d.reboot),
                    draw(true, d.accept),
                ]
            })
            .collect();
        loop {
            let mut busy = false;
            for phases in left.iter_mut() {
                if let Some(p) = phases.iter_mut().find(|p| **p > 0) {
                    *p -= 1;
                    busy = true;
                }
            }
            if !busy {
                break;
            }
            t += 1;
        }
        t += rng.span(d.gate).round() as u64;
    }
    t
}

fn spread(waves: &[Vec<usize>]) -> String {
    let sizes = waves.iter().map(Vec::len);
    format!(
        "{}–{}",
        sizes.clone().min().unwrap_or(0),
        sizes.max().unwrap_or(0)
    )
}

fn main() {
    println!(
        "| nodes | waves | greedy plan | balanced plan | wave sizes greedy → balanced | event-driven | time-stepped (1 s) | ratio | simulated |"
    );
    println!("|---:|---:|---:|---:|---|---:|---:|---:|---|");
    for nodes in [1_000, 10_000, 50_000] {
        let inp = input(nodes);
        let fleet = simulate::synthetic_fleet(&inp.shape);
        let t = Instant::now();
        let (greedy, gc) = plan::greedy_waves(&fleet, &inp.settings);
        let greedy_t = t.elapsed();
        let t0 = Instant::now();
        let planned = Planned::on(fleet, &inp.settings);
        let plan_t = t0.elapsed();
        assert!(planned.waves.len() <= greedy.len());
        let t1 = Instant::now();
        let r = simulate::simulate(&planned, &inp);
        let des = t1.elapsed();
        assert!(r.over_budget.is_empty() && r.halted.is_none());
        assert_eq!(r.accepted_new, nodes);
        let (step, step_secs) = if nodes <= 10_000 {
            let t2 = Instant::now();
            let s = stepped(&planned, &inp);
            (Some(t2.elapsed()), Some(s))
        } else {
            (None, None)
        };
        println!(
            "| {nodes} | {} | {:.1} ms | {:.1} ms | {} → {} | {:.1} ms ({} events) | {} | {} | {:.1} d{} |",
            planned.waves.len(),
            greedy_t.as_secs_f64() * 1e3,
            plan_t.as_secs_f64() * 1e3,
            spread(&greedy[gc..]),
            spread(&planned.waves[planned.canary_waves..]),
            des.as_secs_f64() * 1e3,
            r.events,
            step.map_or("not run".into(), |s| format!(
                "{:.0} ms",
                s.as_secs_f64() * 1e3
            )),
            step.map_or("".into(), |s| format!(
                "{:.0}×",
                s.as_secs_f64() / des.as_secs_f64()
            )),
            r.total_seconds / 86400.0,
            step_secs.map_or(String::new(), |s| format!(
                " (stepped {:.1} d)",
                s as f64 / 86400.0
            )),
        );
    }
    // Faults of every class at once, on the 10,000-node plan.
    let mut inp = input(10_000);
    for (c, rate) in [
        (Class::Transient, 0.05),
        (Class::DriverDaemon, 0.005),
        (Class::Device, 0.001),
        (Class::Link, 0.001),
    ] {
        inp.faults.rates.insert(c, rate);
    }
    inp.faults.max_unhealthy = 100;
    let planned = Planned::of(&inp);
    let t = Instant::now();
    let r = simulate::simulate(&planned, &inp);
    let el = t.elapsed();
    let faults: usize = r.remediation.classes.iter().map(|c| c.faults).sum();
    println!(
        "\nWith faults (10000 nodes, transient 0.05, driver-daemon 0.005, device and link 0.001 per node-day, maxUnhealthy 100): {:.1} ms, {} events, {} faults, {:.0} node-hours lost, peak {} out for faults",
        el.as_secs_f64() * 1e3,
        r.events,
        faults,
        r.remediation.node_hours_lost,
        r.remediation.peak_out_of_service
    );
}
