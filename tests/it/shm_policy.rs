//! The rendered `/dev/shm` policy reaches the rendered smoke Pod: the Kyverno
//! ClusterPolicy (`cluster/shm-policy.yaml`) matches the Pod's kind, operation and
//! namespace, one of its preconditions holds for the Pod as rendered (a GPU limit, or a
//! DRA claim), and its emptyDir and mount do not collide with the Pod's own. So the smoke
//! Pod's `shm` report (judged by `nodeimg accept` as `smoke.shm`) measures the policy.
//!
//! The preconditions are evaluated here for exactly the JMESPath forms the template
//! writes; a form this evaluator does not know fails the test instead of passing.

use crate::support::*;
use serde_json::json;
use serde_yaml::Value;

fn cluster(r: &nodeimg::render::Rendered, path: &str) -> Value {
    cluster_file(r, path)
}

/// One precondition's key evaluated on `pod`, as Kyverno's JMESPath would.
fn key(pod: &Value, key: &str) -> Value {
    let list = regex::Regex::new(
        r#"^\{\{ length\(request\.object\.spec\.(containers|initContainers)\[\?resources\.limits\."([^"]+)"\] \|\| `\[\]`\) \}\}$"#,
    )
    .unwrap();
    let claims = "{{ length(request.object.spec.resourceClaims || `[]`) }}";
    let selector =
        regex::Regex::new(r#"^\{\{ request\.object\.spec\.nodeSelector\."([^"]+)" \|\| '' \}\}$"#)
            .unwrap();
    let empty = Vec::new();
    if let Some(c) = list.captures(key) {
        let n = pod["spec"][&c[1]]
            .as_sequence()
            .unwrap_or(&empty)
            .iter()
            .filter(|container| !container["resources"]["limits"][&c[2]].is_null())
            .count();
        Value::from(n as u64)
    } else if key == claims {
        Value::from(
            pod["spec"]["resourceClaims"]
                .as_sequence()
                .map_or(0, Vec::len) as u64,
        )
    } else if let Some(c) = selector.captures(key) {
        pod["spec"]["nodeSelector"][&c[1]]
            .as_str()
            .map_or(Value::from(""), Value::from)
    } else {
        panic!("a precondition this test cannot evaluate: {key}")
    }
}

/// Whether `policy`'s `dev-shm` rule mutates `pod` (created in `namespace`).
fn applies(policy: &Value, pod: &Value) -> bool {
    let rule = &policy["spec"]["rules"][0];
    let matched = rule["match"]["any"]
        .as_sequence()
        .expect("match.any")
        .iter()
        .any(|m| {
            let r = &m["resources"];
            let kinds = r["kinds"].as_sequence().expect("kinds");
            let ops = r["operations"].as_sequence().expect("operations");
            // A namespace or selector filter would have to be evaluated too.
            assert!(
                r["namespaces"].is_null()
                    && r["selector"].is_null()
                    && r["namespaceSelector"].is_null(),
                "{r:?}"
            );
            kinds.iter().any(|k| k.as_str() == Some("Pod"))
                && ops.iter().any(|o| o.as_str() == Some("CREATE"))
        });
    assert!(
        rule["exclude"].is_null(),
        "an exclude block: {:?}",
        rule["exclude"]
    );
    let pre = rule["preconditions"]["any"]
        .as_sequence()
        .expect("preconditions.any");
    matched
        && pre.iter().any(|p| {
            let got = key(pod, p["key"].as_str().expect("key"));
            match p["operator"].as_str() {
                Some("GreaterThan") => got.as_u64().unwrap() > p["value"].as_u64().unwrap(),
                Some("Equals") => got == p["value"],
                other => panic!("operator {other:?}"),
            }
        })
}

fn assert_reaches_smoke_pod(r: &nodeimg::render::Rendered, what: &str) {
    let policy = cluster(r, "shm-policy.yaml");
    let pod = cluster(r, "acceptance/smoke-pod.yaml");
    assert!(
        applies(&policy, &pod),
        "{what}: the shm policy skips the smoke Pod"
    );
    // The patch adds a volume and a /dev/shm mount the Pod does not already have (a
    // strategic merge on an existing name or mountPath would change the Pod's own).
    let patch = &policy["spec"]["rules"][0]["mutate"]["patchStrategicMerge"]["spec"];
    let volume = patch["volumes"][0]["name"].as_str().unwrap();
    let names: Vec<&str> = pod["spec"]["volumes"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert!(
        !names.contains(&volume),
        "{what}: {volume} collides with {names:?}"
    );
    for c in pod["spec"]["containers"].as_sequence().unwrap() {
        let mounts = c["volumeMounts"].as_sequence().cloned().unwrap_or_default();
        assert!(
            mounts
                .iter()
                .all(|m| m["mountPath"].as_str() != Some("/dev/shm")),
            "{what}: the smoke Pod mounts its own /dev/shm"
        );
    }
    // The smoke Pod sets no memory limit: a memory-backed emptyDir is sized the least
    // of its sizeLimit and the Pod's memory limit.
    for c in pod["spec"]["containers"].as_sequence().unwrap() {
        assert!(
            c["resources"]["limits"]["memory"].is_null(),
            "{what}: a memory limit caps /dev/shm"
        );
    }
}

#[test]
fn the_shm_policy_reaches_the_smoke_pod() {
    for name in ["h100-sxm-ubuntu", "mi300x-rhel"] {
        assert_reaches_smoke_pod(&rendered(&example(name)), name);
    }
    let dra = Variant::of("h100-sxm-ubuntu")
        .set("kubernetes.deviceInjection.mode", json!("dra"))
        .load();
    assert_reaches_smoke_pod(&rendered(&dra), "h100-sxm-ubuntu with DRA");
}

/// The evaluator can say no: a Pod without GPUs is not mutated, and neither is the smoke
/// Pod once its GPU limit is gone.
#[test]
fn the_shm_policy_leaves_pods_without_gpus_alone() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let policy = cluster(&r, "shm-policy.yaml");
    let mut pod = cluster(&r, "acceptance/smoke-pod.yaml");
    assert!(applies(&policy, &pod));
    pod["spec"]["containers"][0]["resources"] = Value::Null;
    assert!(!applies(&policy, &pod));
}
