//! The node-problem-detector rules name the checks a node of their blueprint is judged by,
//! and no other: each fault class's rule (`verify --phase health --checks LIST`) is run, as
//! verify would run it, on the 8×H100 and the 8×MI300X fixture nodes. A list that selects
//! nothing there makes verify refuse the run (exit 2, NPD's Unknown: the condition is never
//! judged, and its NodeHealthCheck never acts); a check left out of every list is never
//! watched after join.

use std::collections::BTreeSet;

use crate::support::fixture_tree;
use crate::support::verify_fixture::{self, BLUEPRINT};
use crate::support::{Variant, npd_health_monitor, rendered};
use nodeimg::blueprint::Blueprint;
use nodeimg::blueprint::compat::Matrix;
use nodeimg::verify::Facts;
use nodeimg::verify::checks::{self, Phase, Selection, applies};

const NPD: &str = "node-problem-detector-values.yaml";

/// The per-class rules of the rendered NPD values: (condition, the `--checks` list).
fn class_rules(bp: &Blueprint) -> Vec<(String, Vec<String>)> {
    let r = rendered(bp);
    let text = String::from_utf8(r.cluster.file(NPD).expect("NPD values").to_vec()).unwrap();
    let monitor = npd_health_monitor(&text);
    monitor["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|rule| {
            let script = rule["args"].as_array()?.last()?.as_str()?;
            let list = script.split("--checks '").nth(1)?.split('\'').next()?;
            Some((
                rule["condition"].as_str().unwrap().to_owned(),
                list.split(',').map(str::to_owned).collect(),
            ))
        })
        .collect()
}

fn ids(bp: &Blueprint, facts: &Facts, patterns: &[String]) -> BTreeSet<&'static str> {
    let selection = Selection {
        phase: Phase::Health,
        patterns: patterns.to_vec(),
    };
    checks::evaluate(bp.spec(), facts, &Matrix::builtin(), &selection)
        .iter()
        .map(|r| r.id())
        .collect()
}

/// The H100 fixture node and its blueprint.
fn h100() -> (Blueprint, Facts) {
    let tree = verify_fixture::healthy_tree();
    let facts = verify_fixture::facts(&tree, &verify_fixture::healthy_xml());
    (verify_fixture::blueprint(BLUEPRINT), facts)
}

/// The MI300X example, its NICs left out (the fixture node has none), on the MI300X
/// fixture node.
fn mi300x() -> (Blueprint, Facts) {
    let tree = fixture_tree::mi300x_node();
    let facts = fixture_tree::mi300x_facts(&tree);
    let bp = Variant::of("mi300x-rhel")
        .set("network.nics", serde_json::json!([]))
        .remove("network.affinity")
        .remove("acceptance")
        .load();
    (bp, facts)
}

/// On the MI300X node the driver-daemon list was `gpu.fabric-manager.active` alone, which
/// verify cannot judge on an AMD node: every run was refused (exit 2), the condition stayed
/// Unknown. Its device list also named NVIDIA's ECC, row-remap and Xid counters.
#[test]
fn every_class_rule_judges_checks_its_node_has() {
    for (name, (bp, facts)) in [("h100", h100()), ("mi300x", mi300x())] {
        let rules = class_rules(&bp);
        assert!(rules.len() >= 2, "{name}: {rules:?}");
        let health = ids(&bp, &facts, &[]);
        let mut listed = BTreeSet::new();
        for (condition, list) in &rules {
            let judged = ids(&bp, &facts, list);
            // What `nodeimg verify` refuses with exit 2 (`--checks … selects no check`).
            assert!(
                !judged.is_empty(),
                "{name} {condition}: {list:?} selects no check on this node"
            );
            for id in list {
                // Row remapping and page retirement are alternatives: a GPU reports one.
                let alternative =
                    id == "gpu.retired-pages" && judged.contains("gpu.row-remap.pending");
                assert!(
                    judged.contains(id.as_str()) || alternative,
                    "{name} {condition}: {id} is listed but not judged on this node"
                );
                listed.insert(id.clone());
            }
        }
        for id in &health {
            assert!(
                listed.contains(*id),
                "{name}: {id} is a health check of this node but in no class rule"
            );
        }
    }
}

/// `applies` says the same as the checks themselves, row by row, on both fixture nodes.
#[test]
fn applies_matches_what_verify_judges() {
    for (name, (bp, facts)) in [("h100", h100()), ("mi300x", mi300x())] {
        let health = ids(&bp, &facts, &[]);
        for spec in checks::CATALOG.iter().filter(|s| s.health) {
            let alternative =
                spec.id == "gpu.retired-pages" && health.contains("gpu.row-remap.pending");
            assert_eq!(
                applies::applies(spec, bp.spec()),
                health.contains(spec.id) || alternative,
                "{name}: {}",
                spec.id
            );
        }
    }
    // An operator-owned NVIDIA driver: Fabric Manager runs in the operator's container.
    let bp = verify_fixture::blueprint(
        &BLUEPRINT.replace("authority: preinstalled", "authority: operator").replace(
            "  cuda: \"12.8\"\n",
            "  cuda: \"12.8\"\n  operator:\n    name: gpu-operator\n    version: v25.10.1\n    manages: [driver, device-plugin]\n",
        ),
    );
    assert!(!applies::applies(
        &checks::catalog::gpu::FABRIC_MANAGER,
        bp.spec()
    ));
    assert!(applies::applies(
        &checks::catalog::gpu::FABRIC_STATE,
        bp.spec()
    ));
}
