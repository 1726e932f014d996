//! `test_runner`: the AMD GPU Operator's test runner configuration (`config.json`), the
//! one file both of its triggers read.
//!
//! The runner reads `TestConfig.GPU_HEALTH_CHECK.TestLocationTrigger.global.TestParameters`
//! keyed by its trigger: `AUTO_UNHEALTHY_GPU_WATCH` for the DaemonSet the DeviceConfig's
//! `testRunner` starts (it tests a GPU the metrics exporter reports unhealthy), `MANUAL`
//! for a Job that sets `TEST_TRIGGER=MANUAL` (the acceptance run). Only the first test case
//! of a trigger runs. Format: ROCm/gpu-operator `docs/test/auto-unhealthy-device-test.md`
//! and `docs/test/manual-test.md` (v1.2.2, the first release documenting the runner that
//! the v1.2.0 CRD configures); the ConfigMap's key must be `config.json`.

use crate::blueprint::model::acceptance::TestRunner;
use serde_json::json;

/// The trigger of the operator's own DaemonSet.
pub const AUTO: &str = "AUTO_UNHEALTHY_GPU_WATCH";
/// The trigger of a Job that runs the image itself.
pub const MANUAL: &str = "MANUAL";

/// `config.json` for one trigger, indented for a ConfigMap's block scalar.
pub fn config_json(settings: &TestRunner, trigger: &str) -> String {
    let case = json!({
        "Recipe": settings.recipe,
        "Iterations": settings.iterations,
        "StopOnFailure": true,
        "TimeoutSeconds": settings.timeout_seconds,
    });
    let config = json!({
        "TestConfig": {
            "GPU_HEALTH_CHECK": {
                "TestLocationTrigger": {
                    "global": {
                        "TestParameters": {
                            trigger: {"TestCases": [case]}
                        }
                    }
                }
            }
        }
    });
    serde_json::to_string_pretty(&config).expect("a JSON value serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipe_is_the_triggers_first_test_case() {
        let s = TestRunner {
            recipe: "iet_single".into(),
            iterations: 2,
            timeout_seconds: 900,
        };
        let v: serde_json::Value = serde_json::from_str(&config_json(&s, MANUAL)).unwrap();
        let case = &v["TestConfig"]["GPU_HEALTH_CHECK"]["TestLocationTrigger"]["global"]["TestParameters"]
            ["MANUAL"]["TestCases"][0];
        assert_eq!(case["Recipe"], "iet_single");
        assert_eq!(case["Iterations"], 2);
        assert_eq!(case["TimeoutSeconds"], 900);
    }
}
