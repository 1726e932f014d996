//! Property tests of the rollout planner and simulator over many generated fleets (zones,
//! racks, SKUs, budgets, failure rates, node faults of every class): no simulated moment has
//! more nodes of a failure domain taken by the rollout than its budget, a failing canary
//! stops everything, a halted rollout leaves every node on the previous image, on an
//! accepted new one or off to repair, and remediation keeps its rules (`faults::check` on
//! the run's trace: no node is rebooted for hardware faults past the recovery ladder's
//! `maxReboots` within its window, none returns without a passing acceptance, a driver
//! fault is rebooted at most once, `maxUnhealthy` holds); and balanced
//! waves are as many as greedy packing's, keep every budget and cap, never grow the largest
//! wave, and differ in size by at most one node where the domains allow it (one
//! failure-domain key: every domain can spread over greedy's waves).

use nodeimg::blueprint::model::rollout::Budget;
use nodeimg::diff::impact::Impact;
use nodeimg::rollout::faults::{self, Class, Faults, What};
use nodeimg::rollout::plan::{self, Settings};
use nodeimg::rollout::simulate::{self, Durations, Failures, Image, Input, Shape};
use proptest::prelude::*;

fn budget() -> impl Strategy<Value = Budget> {
    prop_oneof![
        (1u32..4).prop_map(Budget::Nodes),
        (1u32..60).prop_map(|p| Budget::Percent(format!("{p}%").parse().unwrap())),
    ]
}

fn impact() -> impl Strategy<Value = Impact> {
    prop_oneof![
        Just(Impact::Live),
        Just(Impact::Drain),
        Just(Impact::Reboot)
    ]
}

/// Faults per node per day of each class (often none, sometimes many), the
/// NodeHealthCheck limit, the recovery odds and the ladder's limits.
fn faults() -> impl Strategy<Value = Faults> {
    let rate = prop_oneof![Just(0.0), 0.0f64..0.2, 0.5f64..3.0];
    (
        [rate.clone(), rate.clone(), rate.clone(), rate],
        1usize..6,
        (0.0f64..=1.0, 0.0f64..=1.0, 0.2f64..=1.0, 1u32..4),
        (60.0f64..1200.0, 60.0f64..1800.0),
        (0u32..4, 3600.0f64..(7.0 * 86_400.0), 0.0f64..=1.0),
    )
        .prop_map(
            |(
                rates,
                max_unhealthy,
                (restart, reboot, repair, attempts),
                (window, timeout),
                (max_reboots, ladder_window, reboot_clears_hardware),
            )| {
                Faults {
                    rates: Class::ALL.into_iter().zip(rates).collect(),
                    max_unhealthy,
                    restart_window: window,
                    reboot_timeout: timeout,
                    restart_clears: restart,
                    reboot_clears: reboot,
                    repair_clears: repair,
                    repair_attempts: attempts,
                    max_reboots,
                    ladder_window,
                    reboot_clears_hardware,
                }
            },
        )
}

fn input() -> impl Strategy<Value = Input> {
    (
        (1usize..400, 1usize..5, 1usize..20, 1usize..4),
        (budget(), 1usize..3, proptest::option::of(1usize..40)),
        impact(),
        (0.0f64..0.05, 0.0f64..0.05, any::<bool>()),
        faults(),
        any::<u64>(),
    )
        .prop_map(
            |(
                (nodes, zones, per_rack, skus),
                (budget, canaries, max),
                impact,
                (apply, accept, canary),
                faults,
                seed,
            )| Input {
                shape: Shape {
                    nodes,
                    zones,
                    nodes_per_rack: per_rack,
                    skus,
                },
                settings: Settings {
                    canaries_per_sku: canaries,
                    budget,
                    max_wave_size: max,
                },
                impact,
                durations: Durations::default(),
                failures: Failures {
                    apply,
                    accept,
                    canary,
                },
                faults,
                trace: true,
                seed,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_budget_holds_and_every_node_ends_old_or_accepted(input in input()) {
        let r = simulate::run(&input);
        prop_assert!(r.over_budget.is_empty(), "{:?}", r.over_budget);
        for d in &r.domains {
            prop_assert!(d.peak <= d.budget, "{}={}: {} > {}", d.key, d.value, d.peak, d.budget);
        }
        prop_assert!(
            r.final_images.values().all(|i| *i != Image::UnacceptedNew),
            "a node is left on an unaccepted new image"
        );
        prop_assert_eq!(r.accepted_new + r.old + r.off_to_repair, input.shape.nodes);
        if r.halted.is_none() {
            // On the previous image only a node NodeHealthCheck held back for good, which
            // its wave left out.
            prop_assert!(r.old <= r.remediation.held_back, "{} old", r.old);
            prop_assert_eq!(r.waves_completed, r.waves);
        }
        // No simulated node is rebooted past the ladder's limit.
        let broken = faults::check_with(
            &r.trace,
            input.shape.nodes,
            input.faults.max_unhealthy,
            input.faults.max_reboots,
            input.faults.ladder_window,
        );
        prop_assert!(broken.is_empty(), "{:?}", &broken[..broken.len().min(5)]);
        // Every fault ends: in service again (or kept, if transient), off to repair, or
        // held back for good by NodeHealthCheck.
        let mut open = 0;
        for c in &r.remediation.classes {
            open += c.faults - c.back_in_service - c.off_to_repair - c.pod_restarts;
            if c.class.is_some_and(Class::hardware) && input.faults.max_reboots == 0 {
                prop_assert_eq!(c.reboots, 0);
            }
        }
        prop_assert_eq!(open, r.remediation.held_back);
    }

    #[test]
    fn a_failing_canary_stops_everything(mut input in input()) {
        input.failures.canary = true;
        let r = simulate::run(&input);
        let h = r.halted.as_ref().expect("a failing canary halts");
        prop_assert!(h.canary);
        prop_assert_eq!(h.wave, 0);
        // Nothing beyond the first canary wave was touched.
        let first = simulate::Planned::of(&input).waves[0].len();
        prop_assert!(r.accepted_new < first);
        prop_assert_eq!(r.old, input.shape.nodes - r.accepted_new - r.off_to_repair);
    }
}

/// The checks every balanced plan passes; returns its non-canary wave sizes.
fn check_balanced(
    fleet: &nodeimg::rollout::fleet::Fleet,
    settings: &Settings,
) -> Result<Vec<usize>, TestCaseError> {
    let (w, c) = plan::waves(fleet, settings);
    let (g, gc) = plan::greedy_waves(fleet, settings);
    prop_assert_eq!(c, gc);
    prop_assert_eq!(&w[..c], &g[..gc], "canary waves are not balanced");
    prop_assert_eq!(w.len(), g.len(), "balanced waves, greedy {:?}", g);
    let largest = |x: &[Vec<usize>]| x.iter().map(Vec::len).max().unwrap_or(0);
    prop_assert!(largest(&w[c..]) <= largest(&g[gc..]));
    let mut all = w.concat();
    all.sort();
    prop_assert_eq!(all, (0..fleet.members.len()).collect::<Vec<_>>());
    let sizes = fleet.domain_sizes();
    for wave in &w {
        prop_assert!(settings.max_wave_size.is_none_or(|m| wave.len() <= m));
        for (k, m) in sizes.iter().enumerate() {
            for (value, n) in m {
                let taken = wave
                    .iter()
                    .filter(|&&i| fleet.members[i].domains[k] == *value)
                    .count();
                prop_assert!(
                    taken <= settings.budget.of(*n),
                    "{}={}: {}",
                    k,
                    value,
                    taken
                );
            }
        }
    }
    Ok(w[c..].iter().map(Vec::len).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn balanced_waves_keep_greedys_count_and_the_budget(
        (nodes, zones, per_rack, skus) in (1usize..500, 1usize..6, 1usize..24, 1usize..4),
        (budget, canaries, max) in (budget(), 1usize..3, proptest::option::of(1usize..60)),
    ) {
        let fleet = simulate::synthetic_fleet(&Shape { nodes, zones, nodes_per_rack: per_rack, skus });
        let settings = Settings { canaries_per_sku: canaries, budget, max_wave_size: max };
        check_balanced(&fleet, &settings)?;
    }

    /// One failure-domain key, domains of any sizes: greedy's wave count lets every domain
    /// spread over the waves, so the sizes differ by at most one.
    #[test]
    fn balanced_waves_differ_by_at_most_one_over_one_key(
        zones in proptest::collection::vec(1usize..80, 1..8),
        (budget, canaries, max) in (budget(), 1usize..3, proptest::option::of(1usize..60)),
    ) {
        let members = zones
            .iter()
            .enumerate()
            .flat_map(|(z, n)| (0..*n).map(move |i| (z, i)))
            .enumerate()
            .map(|(i, (z, _))| nodeimg::rollout::fleet::Member {
                name: format!("n{i:04}"),
                hostname: format!("n{i:04}"),
                sku: "h100".into(),
                domains: vec![format!("zone-{z}")],
            })
            .collect();
        let fleet = nodeimg::rollout::fleet::Fleet { keys: vec!["zone".into()], members };
        let settings = Settings { canaries_per_sku: canaries, budget, max_wave_size: max };
        let sizes = check_balanced(&fleet, &settings)?;
        let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
        if let (Some(lo), Some(hi)) = (lo, hi) {
            prop_assert!(hi - lo <= 1, "{:?}", sizes);
        }
    }
}

/// The shrunk case `cc 417c3ef7…`: nine nodes in one zone, budget one node, device faults
/// at 2.65 per node per day and `maxUnhealthy` 2. Node 3 breaks while two others are
/// remediated, so NodeHealthCheck holds it back and its wave leaves it out; days later the
/// ladder's reboot clears it while it still runs the previous image. Readmission judges it
/// against its wave's image, so it returns only after a repair reimaged it: a completed
/// rollout leaves on the previous image only the nodes still held back.
#[test]
fn a_node_its_wave_left_out_returns_only_on_its_waves_image() {
    let input = Input {
        shape: Shape {
            nodes: 9,
            zones: 1,
            nodes_per_rack: 2,
            skus: 1,
        },
        settings: Settings {
            canaries_per_sku: 1,
            budget: Budget::Nodes(1),
            max_wave_size: None,
        },
        impact: Impact::Reboot,
        durations: Durations::default(),
        failures: Failures {
            apply: 0.004122732379006419,
            accept: 0.021715666186812588,
            canary: false,
        },
        faults: Faults {
            rates: [
                (Class::Transient, 1.2358395302704601),
                (Class::DriverDaemon, 0.0),
                (Class::Device, 2.6486885232408293),
                (Class::Link, 0.0),
            ]
            .into_iter()
            .collect(),
            max_unhealthy: 2,
            restart_window: 60.0,
            reboot_timeout: 696.3476330052845,
            restart_clears: 0.0,
            reboot_clears: 0.0,
            repair_clears: 0.2,
            repair_attempts: 1,
            max_reboots: 1,
            ladder_window: 422330.9116144139,
            reboot_clears_hardware: 0.31556820531076585,
        },
        trace: true,
        seed: 18069414883935876142,
    };
    let r = simulate::run(&input);
    assert!(r.halted.is_none(), "{:?}", r.halted);
    // Node 3 was held back and never upgraded by its wave, then rebooted by the ladder.
    let of = |n: usize| r.trace.iter().filter(move |s| s.node == n).map(|s| s.what);
    assert!(
        of(3).any(|w| matches!(w, What::Waits(_))),
        "{:?}",
        of(3).collect::<Vec<_>>()
    );
    assert!(!of(3).any(|w| w == What::Upgrade));
    assert!(of(3).any(|w| w == What::Reboot));
    // Every node its wave left out is in service again only after a repair reimaged it.
    for n in 0..input.shape.nodes {
        if of(n).any(|w| w == What::Upgrade) {
            continue;
        }
        let mut reimaged = false;
        for w in of(n) {
            match w {
                What::Repaired => reimaged = true,
                What::InService => assert!(reimaged, "node {n}: {:?}", of(n).collect::<Vec<_>>()),
                _ => {}
            }
        }
    }
    assert_ne!(r.final_images["gpu-00003"], Image::Old);
    assert!(r.old <= r.remediation.held_back, "{} old", r.old);
}
