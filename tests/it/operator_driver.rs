//! A driver the GPU operator owns rolls like an image: the operator values
//! bound its upgrades by the rollout's budgets (one failure domain's wave
//! budget at a time, never more than a wave) and drain each node first within
//! the rollout's drain timeout; `diff` says so.

use crate::support::*;
use nodeimg::diff::{compare, impact::Impact};
use serde_json::{Value, json};

fn operator_driver() -> Variant {
    Variant::of("h100-sxm-ubuntu")
        .set("accelerators.driver.authority", json!("operator"))
        .set(
            "accelerators.operator.manages",
            json!([
                "driver",
                "device-plugin",
                "dcgm-exporter",
                "gpu-feature-discovery"
            ]),
        )
}

fn policy(v: &Variant) -> Value {
    let values: Value = cluster_file(&rendered(&v.load()), "gpu-operator-values.yaml");
    values["driver"]["upgradePolicy"].clone()
}

#[test]
fn operator_driver_upgrades_follow_the_rollout_budgets() {
    // The example: waveBudget 1, maxWaveSize 16, drainTimeout 45m.
    let p = policy(&operator_driver());
    assert_eq!(p["autoUpgrade"], true);
    assert_eq!(p["maxParallelUpgrades"], 1);
    assert_eq!(p["maxUnavailable"], 1);
    assert_eq!(
        p["drain"],
        json!({"enable": true, "force": false, "timeoutSeconds": 2700, "deleteEmptyDir": true})
    );
    // A larger budget per domain, capped by the wave size.
    let p = policy(
        &operator_driver()
            .set("rollout.waveBudget", json!(4))
            .set("rollout.maxWaveSize", json!(3)),
    );
    assert_eq!(p["maxParallelUpgrades"], 3);
    // A share of a domain: the operator cannot see domains, so one node.
    let p = policy(&operator_driver().set("rollout.waveBudget", json!("25%")));
    assert_eq!(p["maxParallelUpgrades"], 1);
    // A preinstalled driver: the operator rolls none.
    let values: Value = cluster_file(
        &rendered(&example("h100-sxm-ubuntu")),
        "gpu-operator-values.yaml",
    );
    assert!(values["driver"].get("upgradePolicy").is_none());
}

#[test]
fn diff_names_the_policy_a_driver_bump_rolls_by() {
    let old = operator_driver().load();
    let new = operator_driver()
        .set("accelerators.driver.version", json!("580.126.09"))
        .set(
            "accelerators.interconnect.fabricManager.version",
            json!("580.126.09"),
        )
        .load();
    let r = compare(&old, &rendered(&old), &new, &rendered(&new));
    let f = r
        .fields
        .iter()
        .find(|f| f.path == "accelerators.driver.version")
        .expect("driver changed");
    assert_eq!(f.impact, Impact::Live);
    assert!(f.why.contains("driver.upgradePolicy"), "{}", f.why);
}
