//! Validation of rendered Kubernetes objects against the published schemas vendored in
//! the corpus (`../shared/corpus/k8s-schemas`), kubeconform-style: core kinds against
//! yannh's standalone-strict JSON schemas, custom resources against their CRD's
//! `openAPIV3Schema` tightened with `additionalProperties: false`, so that a misspelled
//! field fails in both. One helper for every suite that checks manifests (acceptance
//! workloads, rollout Plans, remediation).

use std::path::PathBuf;

use serde_json::Value;

/// The vendored schemas; a suite that needs them fails, not skips, without them.
pub fn dir() -> PathBuf {
    let dir = super::root().join("../shared/corpus/k8s-schemas");
    assert!(
        dir.is_dir(),
        "{} is missing: the schema suite needs the corpus",
        dir.display()
    );
    dir
}

/// `additionalProperties: false` on every object schema with `properties`, except where
/// the API server keeps unknown fields — what kubeconform does to CRD schemas, so that a
/// misspelled field fails as the core schemas make it fail.
pub fn tighten(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let preserve = o
                .get("x-kubernetes-preserve-unknown-fields")
                .is_some_and(|p| p == true);
            if o.contains_key("properties") && !preserve && !o.contains_key("additionalProperties")
            {
                o.insert("additionalProperties".into(), Value::Bool(false));
            }
            o.values_mut().for_each(tighten);
        }
        Value::Array(a) => a.iter_mut().for_each(tighten),
        _ => {}
    }
}

/// The vendored CRDs, by API group and kind.
const CRDS: &[(&str, &str, &str)] = &[
    (
        "kubeflow.org",
        "MPIJob",
        "crds/mpi-operator/v0.8.0/kubeflow.org_mpijobs.yaml",
    ),
    (
        "jobset.x-k8s.io",
        "JobSet",
        "crds/jobset/v0.12.0/jobset.x-k8s.io_jobsets.yaml",
    ),
    (
        "upgrade.cattle.io",
        "Plan",
        "crds/system-upgrade-controller/v0.20.1/upgrade.cattle.io_plans.yaml",
    ),
    (
        "remediation.medik8s.io",
        "NodeHealthCheck",
        "crds/node-healthcheck-operator/v0.12.0/remediation.medik8s.io_nodehealthchecks.yaml",
    ),
];

/// The tightened `openAPIV3Schema` of `version` (the first served one when `None`) of the
/// CRD in `file`, which must define `kind`.
pub fn crd_schema(file: &str, kind: &str, version: Option<&str>) -> Value {
    let text = std::fs::read_to_string(dir().join(file)).unwrap();
    let crd: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(crd["spec"]["names"]["kind"], kind, "{file}");
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let v = match version {
        Some(want) => versions
            .iter()
            .find(|v| v["name"] == want)
            .unwrap_or_else(|| panic!("{file} has no version {want}")),
        None => &versions[0],
    };
    let mut schema = v["schema"]["openAPIV3Schema"].clone();
    tighten(&mut schema);
    schema
}

/// A validator for the CRD in `file` (its first version).
pub fn crd_validator(file: &str, kind: &str) -> jsonschema::Validator {
    jsonschema::draft4::new(&crd_schema(file, kind, None)).unwrap()
}

/// The schema of `apiVersion`/`kind` (and whether it is a CRD's), or `None` when none is
/// vendored. `core` names the standalone-strict set (`v1.36.0-standalone-strict`).
pub fn schema_for(core: &str, api_version: &str, kind: &str) -> Option<(Value, bool)> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if let Some((_, _, file)) = CRDS.iter().find(|(g, k, _)| *g == group && *k == kind) {
        return Some((crd_schema(file, kind, Some(version)), true));
    }
    let first = group.split('.').next().unwrap_or("");
    let name = if group.is_empty() {
        format!("{}-{version}.json", kind.to_lowercase())
    } else {
        format!("{}-{first}-{version}.json", kind.to_lowercase())
    };
    if let Ok(text) = std::fs::read_to_string(dir().join("core").join(core).join(name)) {
        return Some((serde_json::from_str(&text).unwrap(), false));
    }
    namespaced_rbac(core, api_version, kind).map(|s| (s, false))
}

/// Role and RoleBinding, which the corpus does not vendor, from their cluster-scoped
/// twins: in rbac/v1 (k8s.io/api/rbac/v1/types.go) a Role is a ClusterRole without
/// `aggregationRule`, and a RoleBinding has a ClusterRoleBinding's fields (`roleRef`,
/// `subjects`). The `kind` is the namespaced one; a Role's `aggregationRule` is refused
/// (the strict schemas refuse unknown fields).
fn namespaced_rbac(core: &str, api_version: &str, kind: &str) -> Option<Value> {
    let twin = match (api_version, kind) {
        ("rbac.authorization.k8s.io/v1", "Role") => "ClusterRole",
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => "ClusterRoleBinding",
        _ => return None,
    };
    let (mut schema, _) = schema_for(core, api_version, twin)?;
    schema["properties"]["kind"]["enum"] = Value::from(vec![kind]);
    if kind == "Role" {
        schema["properties"]
            .as_object_mut()?
            .remove("aggregationRule");
    }
    Some(schema)
}

/// What is wrong with `doc`, one `path: problem` line each.
pub fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Problems of one object against the schema of its kind; `Err` names a kind without a
/// vendored schema.
pub fn validate(core: &str, doc: &Value) -> Result<Vec<String>, String> {
    let api = doc["apiVersion"].as_str().unwrap();
    let kind = doc["kind"].as_str().unwrap();
    let (schema, crd) = schema_for(core, api, kind).ok_or(format!("{api} {kind}"))?;
    let validator = if crd {
        jsonschema::draft4::new(&schema)
    } else {
        jsonschema::draft202012::new(&schema)
    }
    .unwrap();
    Ok(errors(&validator, doc))
}
