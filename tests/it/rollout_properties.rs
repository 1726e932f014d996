//! Property tests of the rollout planner and simulator over many generated fleets (zones,
//! racks, SKUs, budgets, failure rates): no simulated moment has more nodes of a failure
//! domain unavailable than its budget, a failing canary stops everything, and a halted
//! rollout leaves every node on the previous image or on an accepted new one.

use nodeimg::blueprint::model::rollout::Budget;
use nodeimg::diff::impact::Impact;
use nodeimg::rollout::plan::Settings;
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

fn input() -> impl Strategy<Value = Input> {
    (
        (1usize..400, 1usize..5, 1usize..20, 1usize..4),
        (budget(), 1usize..3, proptest::option::of(1usize..40)),
        impact(),
        (0.0f64..0.05, 0.0f64..0.05, any::<bool>()),
        any::<u64>(),
    )
        .prop_map(
            |(
                (nodes, zones, per_rack, skus),
                (budget, canaries, max),
                impact,
                (apply, accept, canary),
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
        prop_assert_eq!(r.accepted_new + r.old, input.shape.nodes);
        if r.halted.is_none() {
            prop_assert_eq!(r.accepted_new, input.shape.nodes);
            prop_assert_eq!(r.waves_completed, r.waves);
        }
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
        prop_assert_eq!(r.old, input.shape.nodes - r.accepted_new);
    }
}
