//! A failure that needs a person takes the node out of scheduling with nothing the site
//! adds: node-problem-detector's `NodeimgServiceRequired` rule keeps an NFD feature file
//! while it fails, the rendered NodeFeatureRule (`remediation/isolation.yaml`) turns the
//! feature into a NoSchedule taint, and the rendered NFD values start nfd-master with
//! taints enabled and let nfd-worker stay on the tainted node. The rule's script is run
//! here with `/bin/sh` (a stand-in answers for verify), and the file it writes is read as
//! nfd-worker's local source reads feature files; its feature must be the one the rule
//! matches.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::support::{Variant, cluster_file, npd_health_monitor, rendered};
use nodeimg::render::Rendered;
use serde_json::Value;

const RULE: &str = "remediation/isolation.yaml";
const NFD: &str = "nfd-values.yaml";
const FEATURE_DIR: &str = "/etc/kubernetes/node-feature-discovery/features.d";

/// The taint of the rendered rule, and the feature it matches: (taint, feature, value).
fn rule(r: &Rendered) -> (Value, String, String) {
    let doc: Value = cluster_file(r, RULE);
    assert_eq!(doc["apiVersion"], "nfd.k8s-sigs.io/v1alpha1");
    assert_eq!(doc["kind"], "NodeFeatureRule");
    let rules = doc["spec"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1, "{doc:#}");
    let taints = rules[0]["taints"].as_array().unwrap();
    assert_eq!(taints.len(), 1, "{doc:#}");
    let matches = rules[0]["matchFeatures"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "{doc:#}");
    assert_eq!(matches[0]["feature"], "local.feature");
    let exprs = matches[0]["matchExpressions"].as_object().unwrap();
    assert_eq!(exprs.len(), 1, "{doc:#}");
    let (feature, expr) = exprs.iter().next().unwrap();
    assert_eq!(expr["op"], "In", "{doc:#}");
    let values = expr["value"].as_array().unwrap();
    assert_eq!(values.len(), 1, "{doc:#}");
    (
        taints[0].clone(),
        feature.clone(),
        values[0].as_str().unwrap().to_owned(),
    )
}

/// core/v1 toleration matching: an empty key with `Exists` tolerates everything;
/// otherwise equal keys, an equal or empty effect, an equal value under `Equal`.
fn tolerates(list: &Value, taint: &Value) -> bool {
    list.as_array().into_iter().flatten().any(|t| {
        let op = t["operator"].as_str().unwrap_or("Equal");
        let key = t["key"].as_str().unwrap_or("");
        let effect_ok =
            t["effect"].as_str().unwrap_or("").is_empty() || t["effect"] == taint["effect"];
        effect_ok
            && match op {
                "Exists" => key.is_empty() || key == taint["key"],
                _ => key == taint["key"] && t["value"] == taint["value"],
            }
    })
}

/// The service rule's shell script in the rendered NPD values.
fn service_script(r: &Rendered) -> String {
    let text = String::from_utf8(
        r.cluster
            .file("node-problem-detector-values.yaml")
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    let monitor = npd_health_monitor(&text);
    let rule = monitor["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["condition"] == "NodeimgServiceRequired")
        .expect("the service rule");
    rule["args"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

/// The features of a feature file as nfd-worker's local source reads it (node-feature-
/// discovery `docs/usage/customization-guide.md`, "Local feature source"): `# +no-label`
/// puts what follows in `local.feature` only; other comments are skipped; `name[=value]`,
/// the value `true` when left out. Returns (local.feature, local.label) entries.
/// A feature: its name and value.
type Feature = (String, String);

fn nfd_features(text: &str) -> (Vec<Feature>, Vec<Feature>) {
    let (mut features, mut labels) = (Vec::new(), Vec::new());
    let mut no_label = false;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(c) = line.strip_prefix('#') {
            if c.trim() == "+no-label" {
                no_label = true;
            }
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, "true"));
        let kv = (k.to_owned(), v.to_owned());
        features.push(kv.clone());
        if !no_label {
            labels.push(kv);
        }
    }
    (features, labels)
}

/// The service script of `r`, with verify answered by a stand-in that exits with the code
/// in `<state>/rc`, and the node's folders moved under `dir`.
struct Plugin {
    script: String,
    state: std::path::PathBuf,
    features: std::path::PathBuf,
}

impl Plugin {
    fn new(r: &Rendered, dir: &Path) -> Self {
        let stand_in = dir.join("nodeimg");
        std::fs::write(
            &stand_in,
            "#!/bin/sh\necho \"FAIL 1 of 8\"\nexit \"$(cat \"$STATE/rc\")\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
        let features = dir.join("features.d");
        let script = service_script(r);
        assert!(script.contains(FEATURE_DIR), "{script}");
        let script = script
            .replace("/usr/local/bin/nodeimg", stand_in.to_str().unwrap())
            .replace(
                "/var/lib/nodeimg/evidence",
                dir.join("evidence").to_str().unwrap(),
            )
            .replace(FEATURE_DIR, features.to_str().unwrap());
        assert!(
            !script.contains("/var/lib/nodeimg") && !script.contains(FEATURE_DIR),
            "{script}"
        );
        Plugin {
            script,
            state: dir.to_owned(),
            features,
        }
    }

    /// One run of the rule whose verify exits `rc`; the rule's own exit code.
    fn run(&self, rc: i32) -> Option<i32> {
        std::fs::write(self.state.join("rc"), rc.to_string()).unwrap();
        std::process::Command::new("/bin/sh")
            .args(["-c", &self.script])
            .env("STATE", &self.state)
            .output()
            .unwrap()
            .status
            .code()
    }

    /// The feature files the rule keeps (dot files, which NFD ignores, left out).
    fn files(&self) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir(&self.features) else {
            return Vec::new();
        };
        let mut v: Vec<String> = dir
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

#[test]
fn a_failure_that_needs_a_person_taints_the_node_through_nfd() {
    let cases = [
        (
            "h100-sxm-ubuntu",
            Variant::of("h100-sxm-ubuntu").remove("rollout.remediation.repair"),
        ),
        ("h100-sxm-ubuntu", Variant::of("h100-sxm-ubuntu")),
        ("mi300x-rhel", Variant::of("mi300x-rhel")),
    ];
    for (name, v) in cases {
        let r = rendered(&v.load());
        let (taint, feature, value) = rule(&r);
        assert_eq!(taint["key"], "nodeimg.dev/service-required", "{name}");
        assert_eq!(
            taint["effect"], "NoSchedule",
            "{name}: out of scheduling, running pods stay"
        );
        assert_eq!(taint["value"], name);
        assert_eq!(value, name);
        // NFD as rendered: the master sets taints, the worker stays on the tainted node.
        let nfd: Value = cluster_file(&r, NFD);
        assert_eq!(nfd["master"]["enableTaints"], true, "{name}: {nfd:#}");
        assert!(
            tolerates(&nfd["worker"]["tolerations"], &taint),
            "{name}: {nfd:#}"
        );
        // NPD keeps running there too (it lifts the taint).
        let npd: Value = cluster_file(&r, "node-problem-detector-values.yaml");
        assert!(tolerates(&npd["tolerations"], &taint), "{name}");
        // The service rule writes the feature the NodeFeatureRule matches.
        let script = service_script(&r);
        assert!(
            script.contains(&format!("{FEATURE_DIR}/{feature}")),
            "{name}: {script}"
        );
        if name == "mi300x-rhel" {
            // Its rules wait for the operator's driver phase (systemctl): not run here.
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let p = Plugin::new(&r, dir.path());
        assert_eq!(p.run(1), Some(1));
        assert_eq!(p.files(), std::slice::from_ref(&feature), "{name}");
        let text = std::fs::read_to_string(p.features.join(&feature)).unwrap();
        let (features, labels) = nfd_features(&text);
        assert_eq!(
            features,
            [(feature.clone(), value.clone())],
            "{name}: {text}"
        );
        assert!(
            labels.is_empty(),
            "{name}: a feature, never a node label: {text}"
        );
    }
    // No accelerators, no health rules: nothing to isolate by.
    let r = rendered(&Variant::of("cpu-minimal").load());
    assert!(r.cluster.file(RULE).is_none());
}

#[test]
fn the_taint_lifts_only_on_a_pass_after_a_reboot() {
    let r = rendered(
        &Variant::of("h100-sxm-ubuntu")
            .remove("rollout.remediation.repair")
            .load(),
    );
    let (_, feature, _) = rule(&r);
    let dir = tempfile::tempdir().unwrap();
    let p = Plugin::new(&r, dir.path());
    assert_eq!(p.run(0), Some(0));
    assert!(p.files().is_empty(), "a healthy node keeps no feature");
    assert_eq!(p.run(1), Some(1));
    assert_eq!(p.files(), std::slice::from_ref(&feature));
    // Passing again without a reboot since the failure: the node stays out.
    assert_eq!(p.run(0), Some(0));
    assert_eq!(
        p.files(),
        std::slice::from_ref(&feature),
        "a fault that comes and goes"
    );
    // The failure predates this boot (as after a person's service or the reboot rung).
    let file = p.features.join(&feature);
    let before_boot = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(before_boot)
        .unwrap();
    assert_eq!(p.run(2), Some(2));
    assert_eq!(
        p.files(),
        std::slice::from_ref(&feature),
        "an unknown verdict changes nothing"
    );
    assert_eq!(p.run(0), Some(0));
    assert!(p.files().is_empty(), "a pass after a reboot lifts it");
    // A failure after the reboot renews the file's time: a later pass keeps it.
    assert_eq!(p.run(1), Some(1));
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(before_boot)
        .unwrap();
    assert_eq!(p.run(1), Some(1));
    assert_eq!(p.run(0), Some(0));
    assert_eq!(p.files(), [feature], "the last failure came after the boot");
}

#[test]
#[ignore = "needs ../shared/corpus/k8s-schemas"]
fn the_isolation_rule_validates_against_the_nfd_crd() {
    let text = std::fs::read_to_string(
        crate::support::k8s_schema::dir()
            .join("crds/node-feature-discovery/v0.19.0/nfd-api-crds.yaml"),
    )
    .unwrap();
    use serde::Deserialize;
    let crd = serde_yaml::Deserializer::from_str(&text)
        .map(|d| Value::deserialize(d).unwrap())
        .find(|d| d["spec"]["names"]["kind"] == "NodeFeatureRule")
        .expect("the NodeFeatureRule CRD");
    let version = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "v1alpha1")
        .unwrap();
    let mut schema = version["schema"]["openAPIV3Schema"].clone();
    crate::support::k8s_schema::tighten(&mut schema);
    let v = jsonschema::draft4::new(&schema).unwrap();
    for name in ["h100-sxm-ubuntu", "mi300x-rhel"] {
        let r = rendered(&Variant::of(name).load());
        let doc: Value = cluster_file(&r, RULE);
        let e = crate::support::k8s_schema::errors(&v, &doc);
        assert!(e.is_empty(), "{name}: {e:?}");
        // The validator can fail: a misspelled taint field.
        let mut bad = doc.clone();
        bad["spec"]["rules"][0]["taints"][0]["efect"] = "NoSchedule".into();
        assert!(!crate::support::k8s_schema::errors(&v, &bad).is_empty());
    }
}
