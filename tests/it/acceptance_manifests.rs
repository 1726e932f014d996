//! The rendered acceptance workloads (`cluster/acceptance/`): which ones each example
//! blueprint renders, that every Pod lands only on gated nodes of its blueprint, runs a
//! pinned image and gets the node's GPUs through the declared path, and — in the opt-in
//! corpus suite — that every manifest validates against the published schema of its kind,
//! kubeconform-style: core kinds against yannh's standalone-strict schemas, MPIJob and
//! JobSet against their CRDs' `openAPIV3Schema` tightened with `additionalProperties: false`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::{root, variant::Variant};
use nodeimg::blueprint::model::acceptance::pinned;
use nodeimg::render::{Templates, render};
use serde_json::{Value, json};

/// The diagnostics of a variant that does not load, as `path: message` lines.
fn refused(v: &Variant) -> String {
    v.try_load()
        .expect_err("refused")
        .iter()
        .map(|d| format!("{}: {}", d.path, d.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `cluster/acceptance/*` of a blueprint, each file parsed as one YAML document.
fn acceptance(v: &Variant) -> BTreeMap<String, Value> {
    let bp = v.load();
    let rendered = render(&bp, &Templates::embedded()).unwrap_or_else(|e| panic!("{e}"));
    rendered
        .cluster
        .files()
        .filter_map(|(path, _, bytes)| {
            let name = path.strip_prefix("acceptance/")?;
            let doc: Value = serde_yaml::from_slice(bytes)
                .unwrap_or_else(|e| panic!("{path}: {e}\n{}", String::from_utf8_lossy(bytes)));
            Some((name.to_owned(), doc))
        })
        .collect()
}

fn names(docs: &BTreeMap<String, Value>) -> Vec<(&str, &str)> {
    docs.iter()
        .map(|(n, d)| (n.as_str(), d["kind"].as_str().unwrap()))
        .collect()
}

/// Every Pod spec in an object (a Pod's `spec`, a Job's template, each MPIJob replica's,
/// each JobSet replicated Job's), with its path.
fn pod_specs<'a>(v: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(o) => {
            if o.contains_key("containers") {
                out.push((at.clone(), v));
            }
            for (k, x) in o {
                pod_specs(x, format!("{at}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pod_specs(x, format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn examples_render_the_workloads_that_apply_to_them() {
    let h100 = acceptance(&Variant::of("h100-sxm-ubuntu"));
    assert_eq!(
        names(&h100),
        vec![
            ("dcgm-diag-job.yaml", "Job"),
            ("framework-job.yaml", "Job"),
            ("framework-multinode.yaml", "MPIJob"),
            ("namespace.yaml", "Namespace"),
            ("nccl-job.yaml", "Job"),
            ("nccl-multinode.yaml", "MPIJob"),
            ("nvbandwidth-job.yaml", "Job"),
            ("rdma-pair.yaml", "MPIJob"),
            ("scripts.yaml", "ConfigMap"),
            ("smoke-pod.yaml", "Pod"),
        ]
    );
    // AMD: no DCGM, no nvbandwidth; JobSet for the multi-node runs; the blueprint leaves
    // the multi-node all-reduce out.
    let mi300x = acceptance(&Variant::of("mi300x-rhel"));
    assert_eq!(
        names(&mi300x),
        vec![
            ("framework-job.yaml", "Job"),
            ("framework-multinode.yaml", "JobSet"),
            ("namespace.yaml", "Namespace"),
            ("nccl-job.yaml", "Job"),
            ("rdma-pair.yaml", "JobSet"),
            ("scripts.yaml", "ConfigMap"),
            ("smoke-pod.yaml", "Pod"),
        ]
    );
    assert!(acceptance(&Variant::of("cpu-minimal")).is_empty());
    // Without images nothing renders (nodeimg never picks an image for you).
    let bare = Variant::of("h100-sxm-ubuntu").set("acceptance", json!({"dcgm": {"level": 2}}));
    assert!(acceptance(&bare).is_empty());
    // The DCGM level reaches the command line.
    let level2 = Variant::of("h100-sxm-ubuntu").set("acceptance.dcgm.level", json!(2));
    let dcgm = &acceptance(&level2)["dcgm-diag-job.yaml"];
    let command = dcgm["spec"]["template"]["spec"]["containers"][0]["command"][2]
        .as_str()
        .unwrap();
    assert!(command.ends_with("dcgmi diag -r 2 -j"), "{command}");
}

#[test]
fn every_pod_is_gated_pinned_and_gets_every_gpu() {
    for (bp, labels, resource) in [
        (
            "h100-sxm-ubuntu",
            vec![("platform.example.com/node-class", "h100-sxm")],
            "nvidia.com/gpu",
        ),
        ("mi300x-rhel", vec![], "amd.com/gpu"),
    ] {
        let docs = acceptance(&Variant::of(bp));
        for (file, doc) in &docs {
            let mut specs = Vec::new();
            pod_specs(doc, file.clone(), &mut specs);
            for (at, spec) in specs {
                let containers = spec["containers"].as_array().unwrap();
                for c in containers {
                    let image = c["image"].as_str().unwrap();
                    assert!(pinned(image).is_ok(), "{at}: {image}");
                }
                // MPI launchers only start the ranks: they may run anywhere.
                if containers[0]["name"] == "launcher" {
                    assert!(c_has_no_gpu(containers), "{at}: a launcher holds GPUs");
                    continue;
                }
                let selector = &spec["nodeSelector"];
                assert_eq!(selector["nodeimg.dev/acceptance"], "run", "{at}");
                for (k, v) in &labels {
                    assert_eq!(selector[*k], *v, "{at}");
                }
                if bp == "h100-sxm-ubuntu" {
                    assert_eq!(
                        spec["tolerations"][0],
                        serde_json::json!({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}),
                        "{at}"
                    );
                }
                let gpus = &containers[0]["resources"]["limits"][resource];
                // The RDMA pair holds GPUs only for GPUDirect; the rest always does.
                if !file.starts_with("rdma") || bp == "h100-sxm-ubuntu" {
                    assert_eq!(gpus, 8, "{at}: {resource}");
                }
            }
        }
    }
}

fn c_has_no_gpu(containers: &[Value]) -> bool {
    containers.iter().all(|c| c.get("resources").is_none())
}

#[test]
fn dra_blueprints_claim_the_devices() {
    let dra = Variant::of("h100-sxm-ubuntu").set("kubernetes.deviceInjection.mode", json!("dra"));
    let docs = acceptance(&dra);
    let claim = &docs["gpu-claim.yaml"];
    assert_eq!(claim["apiVersion"], "resource.k8s.io/v1");
    assert_eq!(claim["kind"], "ResourceClaimTemplate");
    let request = &claim["spec"]["spec"]["devices"]["requests"][0];
    assert_eq!(request["exactly"]["deviceClassName"], "gpu.nvidia.com");
    assert_eq!(request["exactly"]["count"], 8);
    let smoke = &docs["smoke-pod.yaml"]["spec"];
    assert_eq!(
        smoke["resourceClaims"][0]["resourceClaimTemplateName"],
        "nodeimg-acceptance-gpus"
    );
    assert_eq!(
        smoke["containers"][0]["resources"],
        serde_json::json!({"claims": [{"name": "gpus"}]})
    );
}

#[test]
fn jobset_engine_is_refused_for_the_multi_node_all_reduce() {
    let jobset = Variant::of("h100-sxm-ubuntu").set("acceptance.multiNode.engine", json!("jobset"));
    let err = refused(&jobset);
    assert!(err.starts_with("acceptance.multiNode.engine: "), "{err}");
    // Listing the tests without it is the way out.
    let listed = jobset.set(
        "acceptance.tests",
        json!(["kubernetes", "smoke", "nccl", "rdma", "framework"]),
    );
    assert!(listed.try_load().is_ok());
    // An unpinned image is refused with its field.
    let unpinned = Variant::of("h100-sxm-ubuntu").set(
        "acceptance.images.framework",
        json!("registry.gpu.example.com/acceptance/pytorch:25.10-py3"),
    );
    let err = refused(&unpinned);
    assert!(err.starts_with("acceptance.images.framework: "), "{err}");
    // A test the hardware cannot run is refused with its index.
    let dcgm_on_amd = Variant::of("mi300x-rhel").set("acceptance.tests[1]", json!("dcgm"));
    let err = refused(&dcgm_on_amd);
    assert!(err.starts_with("acceptance.tests[1]: "), "{err}");
}

/// The probe and the RDMA script as the ConfigMap carries them.
fn scripts() -> (String, String) {
    let docs = acceptance(&Variant::of("h100-sxm-ubuntu"));
    let data = &docs["scripts.yaml"]["data"];
    (
        data["probe.py"].as_str().unwrap().to_owned(),
        data["rdma-pair.sh"].as_str().unwrap().to_owned(),
    )
}

#[test]
#[ignore = "needs python3 and sh (the scripts the workloads run)"]
fn the_scripts_the_workloads_run_compile() {
    let (probe, rdma) = scripts();
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("probe.py");
    std::fs::write(&py, &probe).unwrap();
    let out = std::process::Command::new("python3")
        .args(["-m", "py_compile"])
        .arg(&py)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sh = dir.path().join("rdma-pair.sh");
    std::fs::write(&sh, &rdma).unwrap();
    let out = std::process::Command::new("sh")
        .arg("-n")
        .arg(&sh)
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The probe's lines are the format `nodeimg accept` reads: an unknown suite is
    // refused before torch is imported.
    let out = std::process::Command::new("python3")
        .arg(&py)
        .arg("bogus")
        .output()
        .expect("python3");
    assert!(!out.status.success());
}

// ---- the opt-in schema suite -------------------------------------------------------

fn schemas_dir() -> PathBuf {
    let dir = root().join("../shared/corpus/k8s-schemas");
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
fn tighten(v: &mut Value) {
    match v {
        Value::Object(o) => {
            let preserve = o
                .get("x-kubernetes-preserve-unknown-fields")
                .is_some_and(|p| p == true);
            if o.contains_key("properties") && !preserve && !o.contains_key("additionalProperties")
            {
                o.insert("additionalProperties".into(), Value::Bool(false));
            }
            for x in o.values_mut() {
                tighten(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tighten),
        _ => {}
    }
}

/// The schema of `apiVersion`/`kind`, or `None` when none is vendored.
fn schema_for(dir: &Path, core: &str, api_version: &str, kind: &str) -> Option<(Value, bool)> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let crd = match (group, kind) {
        ("kubeflow.org", "MPIJob") => Some("crds/mpi-operator/v0.8.0/kubeflow.org_mpijobs.yaml"),
        ("jobset.x-k8s.io", "JobSet") => Some("crds/jobset/v0.12.0/jobset.x-k8s.io_jobsets.yaml"),
        _ => None,
    };
    if let Some(file) = crd {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let crd: Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(crd["spec"]["names"]["kind"], kind);
        let mut schema = crd["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == version)
            .unwrap_or_else(|| panic!("{file} has no version {version}"))["schema"]
            ["openAPIV3Schema"]
            .clone();
        tighten(&mut schema);
        return Some((schema, true));
    }
    let first = group.split('.').next().unwrap_or("");
    let name = if group.is_empty() {
        format!("{}-{version}.json", kind.to_lowercase())
    } else {
        format!("{}-{first}-{version}.json", kind.to_lowercase())
    };
    let path = dir.join("core").join(core).join(name);
    let text = std::fs::read_to_string(path).ok()?;
    Some((serde_json::from_str(&text).unwrap(), false))
}

/// Problems of one object against its schema; `Err` when no schema is vendored.
fn validate(dir: &Path, core: &str, doc: &Value) -> Result<Vec<String>, String> {
    let api = doc["apiVersion"].as_str().unwrap();
    let kind = doc["kind"].as_str().unwrap();
    let (schema, crd) = schema_for(dir, core, api, kind).ok_or(format!("{api} {kind}"))?;
    let validator = if crd {
        jsonschema::draft4::new(&schema)
    } else {
        jsonschema::draft202012::new(&schema)
    }
    .unwrap();
    Ok(validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect())
}

/// Kinds rendered without a vendored schema (DRA's ResourceClaimTemplate: the corpus
/// holds no resource.k8s.io schema); checked by the default tests above instead.
const UNVALIDATED: &[&str] = &["ResourceClaimTemplate"];

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn acceptance_manifests_validate_against_their_published_schemas() {
    let dir = schemas_dir();
    let h100 = Variant::of("h100-sxm-ubuntu");
    let variants = [
        ("h100-sxm-ubuntu", h100.clone()),
        ("mi300x-rhel", Variant::of("mi300x-rhel")),
        (
            "h100 with DRA",
            h100.clone()
                .set("kubernetes.deviceInjection.mode", json!("dra")),
        ),
        (
            "h100 with JobSet",
            h100.clone()
                .set("acceptance.multiNode.engine", json!("jobset"))
                .set(
                    "acceptance.tests",
                    json!([
                        "kubernetes",
                        "smoke",
                        "dcgm",
                        "nvbandwidth",
                        "nccl",
                        "rdma",
                        "framework"
                    ]),
                ),
        ),
    ];
    let mut problems = Vec::new();
    let mut checked = 0;
    for core in ["v1.34.2-standalone-strict", "v1.36.0-standalone-strict"] {
        for (what, variant) in &variants {
            for (file, doc) in acceptance(variant) {
                match validate(&dir, core, &doc) {
                    Ok(errors) => {
                        checked += 1;
                        problems.extend(
                            errors
                                .into_iter()
                                .map(|e| format!("{what} {file} ({core}): {e}")),
                        );
                    }
                    Err(_) if UNVALIDATED.contains(&doc["kind"].as_str().unwrap()) => {}
                    Err(kind) => {
                        problems.push(format!("{what} {file}: no vendored schema for {kind}"))
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 40, "only {checked} manifests checked");

    // The check can fail: a misspelled field in a core kind and in a CRD kind.
    let docs = acceptance(&h100);
    let mut job = docs["nccl-job.yaml"].clone();
    job["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always".into();
    assert!(
        !validate(&dir, "v1.36.0-standalone-strict", &job)
            .unwrap()
            .is_empty()
    );
    let mut mpijob = docs["nccl-multinode.yaml"].clone();
    mpijob["spec"]["slotsPerWorkerTypo"] = 1.into();
    assert!(
        !validate(&dir, "v1.36.0-standalone-strict", &mpijob)
            .unwrap()
            .is_empty()
    );
    let mut mpijob = docs["nccl-multinode.yaml"].clone();
    mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]
        ["limitz"] = serde_json::json!({});
    assert!(
        !validate(&dir, "v1.36.0-standalone-strict", &mpijob)
            .unwrap()
            .is_empty()
    );
}

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn the_validator_accepts_the_upstream_samples() {
    // Known-good inputs: the samples each project ships with its CRD.
    let dir = schemas_dir();
    let mut seen = 0;
    for sub in [
        "crds/mpi-operator/v0.8.0/samples",
        "crds/jobset/v0.12.0/samples",
    ] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for doc in serde_yaml::Deserializer::from_str(&text) {
                let doc: Value = serde::Deserialize::deserialize(doc).unwrap();
                if doc.is_null() {
                    continue;
                }
                let errors = validate(&dir, "v1.36.0-standalone-strict", &doc).unwrap();
                assert!(errors.is_empty(), "{}: {errors:?}", path.display());
                seen += 1;
            }
        }
    }
    assert!(seen >= 2, "{seen} samples");
}
