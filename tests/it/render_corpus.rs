//! Rendered files against real-world references in `../shared/corpus`
//! (an opt-in suite, run by `cargo test -- --ignored`; fails when the
//! folder is missing): containerd keys exist in upstream's full reference configs of
//! the same config version, kubelet fields exist in upstream's defaulted
//! KubeletConfiguration, the static CDI spec validates against the official
//! CDI schema, and the nvidia runtime entry matches a production node tool's.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::support::*;

fn corpus(sub: &str) -> PathBuf {
    let p = root().join("../shared/corpus").join(sub);
    assert!(p.exists(), "corpus path {} is missing", p.display());
    p
}

/// Every key path of a TOML document; runtime names become `<runtime>`.
fn toml_paths(v: &toml::Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let toml::Value::Table(t) = v {
        for (k, x) in t {
            let k = if prefix.ends_with(".runtimes") {
                "<runtime>"
            } else {
                k.as_str()
            };
            let p = if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            };
            out.insert(p.clone());
            toml_paths(x, &p, out);
        }
    }
}

fn paths_of(text: &str) -> BTreeSet<String> {
    let v: toml::Value = toml::from_str(text).unwrap();
    let mut out = BTreeSet::new();
    toml_paths(&v, "", &mut out);
    out
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn containerd_keys_exist_in_the_upstream_reference_of_their_version() {
    // Upstream's full reference, plus a production node tool's config of the
    // same version (upstream's v3 reference leaves out runc's SystemdCgroup).
    let reference = |v: u8| {
        let f = corpus(&format!(
            "containerd-config/containerd-upstream/EXTRACT_docs-cri-config.md__full-config-v{v}.toml"
        ));
        let mut p = paths_of(&std::fs::read_to_string(f).unwrap());
        let prod = corpus(&format!(
            "containerd-config/amazon-eks-ami/containerdv2-runtime-config-nvidia__expected-containerd-configv{v}.toml"
        ));
        p.extend(paths_of(&std::fs::read_to_string(prod).unwrap()));
        // The reference documents the top-level keys in prose, not in the
        // table; `containerd config default` of 1.7 lists them (`imports`)
        // and the transfer service, whose id and keys 2.x keeps.
        p.extend(["version", "root", "state"].map(String::from));
        let default17 = corpus(
            "containerd-config/containerd-upstream/integration_client_testdata_default-1.7.toml",
        );
        p.extend(
            paths_of(&std::fs::read_to_string(default17).unwrap())
                .into_iter()
                .filter(|k| {
                    k == "imports" || k.starts_with("plugins.io.containerd.transfer.v1.local")
                }),
        );
        p
    };
    let (v2, v3) = (reference(2), reference(3));
    let v17 = containerd_1_7();
    for (bp, want) in [
        (example("h100-sxm-ubuntu"), &v3),
        (v17, &v2),
        (example("mi300x-rhel"), &v2),
        (example("cpu-minimal"), &v2),
    ] {
        let r = rendered(&bp);
        let ours = paths_of(
            std::str::from_utf8(r.layer.file("etc/containerd/config.toml").unwrap()).unwrap(),
        );
        let unknown: Vec<&String> = ours.difference(want).collect();
        assert!(
            unknown.is_empty(),
            "{}: keys not in the upstream reference: {unknown:?}",
            bp.name()
        );
    }
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn kubelet_fields_exist_in_the_upstream_defaulted_configuration() {
    // Upstream's defaulted fixtures and a production node tool's configs.
    let mut known = BTreeSet::new();
    for dir in [
        "kubelet-config/kubernetes-upstream",
        "kubelet-config/amazon-eks-ami",
    ] {
        for e in std::fs::read_dir(corpus(dir)).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            if let Ok(serde_yaml::Value::Mapping(m)) =
                serde_yaml::from_str::<serde_yaml::Value>(&text)
            {
                known.extend(m.keys().filter_map(|k| k.as_str().map(String::from)));
            }
        }
    }
    assert!(
        known.len() > 80,
        "the reference files hold the KubeletConfiguration fields"
    );
    for name in EXAMPLES {
        let r = rendered(&example(name));
        let ours: serde_yaml::Mapping = serde_yaml::from_slice(
            r.layer
                .file("etc/kubernetes/kubelet.conf.d/50-nodeimg.conf")
                .unwrap(),
        )
        .unwrap();
        for k in ours.keys().filter_map(|k| k.as_str()) {
            // Documented v1beta1 fields that none of the reference files happen to set.
            let unset_by_default = [
                "registerWithTaints",
                "maxParallelImagePulls",
                "rotateCertificates",
            ];
            assert!(
                known.contains(k) || unset_by_default.contains(&k),
                "{name}: `{k}` is not a KubeletConfiguration field"
            );
        }
    }
}

/// Serves the schema's sibling `defs.json` to the validator (no network).
struct Defs(serde_json::Value);

impl jsonschema::Retrieve for Defs {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<serde_json::Value, Box<dyn std::error::Error + Send + Sync>> {
        if uri.as_str().ends_with("/defs.json") {
            Ok(self.0.clone())
        } else {
            Err(format!("unexpected reference {}", uri.as_str()).into())
        }
    }
}

fn cdi_validator() -> jsonschema::Validator {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(corpus("cdi/schema/schema.json")).unwrap())
            .unwrap();
    let defs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(corpus("cdi/schema/defs.json")).unwrap())
            .unwrap();
    jsonschema::options()
        .with_base_uri("file:///cdi/schema.json")
        .with_retriever(Defs(defs))
        .build(&schema)
        .unwrap()
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn static_cdi_spec_validates_against_the_official_schema() {
    let v = cdi_validator();
    // The validator itself: upstream's good vectors pass, bad ones fail.
    for (dir, good) in [
        ("cdi/schema-testdata/good", true),
        ("cdi/schema-testdata/bad", false),
    ] {
        for e in std::fs::read_dir(corpus(dir)).unwrap() {
            let p = e.unwrap().path();
            // A bad vector may not even be JSON (an empty file).
            let valid =
                serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&p).unwrap())
                    .is_ok_and(|doc| v.is_valid(&doc));
            assert_eq!(valid, good, "{}", p.display());
        }
    }
    let bp = example("mi300x-rhel");
    let r = rendered(&bp);
    let spec: serde_json::Value =
        serde_yaml::from_slice(r.layer.file("etc/cdi/amd.com-gpu.yaml").unwrap()).unwrap();
    let errors: Vec<String> = v.iter_errors(&spec).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let devices = spec["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 9, "8 GPUs and `all`");
    assert_eq!(
        devices[7]["containerEdits"]["deviceNodes"][0]["path"],
        "/dev/dri/renderD135"
    );
}

#[test]
#[ignore = "opt-in suite `corpus`: reads ../shared/corpus (cargo test -- --ignored)"]
fn nvidia_runtime_entry_matches_a_production_node_tool() {
    let f = corpus(
        "containerd-config/amazon-eks-ami/containerdv2-runtime-config-nvidia__expected-containerd-configv3.toml",
    );
    let eks: toml::Value = toml::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
    let r = rendered(&example("h100-sxm-ubuntu"));
    let ours: toml::Value = toml::from_str(
        std::str::from_utf8(r.layer.file("etc/containerd/config.toml").unwrap()).unwrap(),
    )
    .unwrap();
    let rt = |v: &toml::Value| {
        v["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]["nvidia"].clone()
    };
    let (a, b) = (rt(&eks), rt(&ours));
    assert_eq!(a["runtime_type"], b["runtime_type"]);
    assert_eq!(a["options"]["BinaryName"], b["options"]["BinaryName"]);
    assert_eq!(a["options"]["SystemdCgroup"], b["options"]["SystemdCgroup"]);
    // EKS makes `nvidia` the default (legacy injection); with CDI nodeimg
    // keeps runc as the default and `nvidia` as a handler only.
    assert_eq!(
        ours["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["default_runtime_name"]
            .as_str(),
        Some("runc")
    );
    // The sandbox image is pinned where EKS pins it.
    let pinned = |v: &toml::Value| {
        v["plugins"]["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"]
            .as_str()
            .map(|s| s.split(':').next().unwrap().to_string())
    };
    assert_eq!(pinned(&eks), pinned(&ours));
    assert!(pinned(&ours).is_some());
}
