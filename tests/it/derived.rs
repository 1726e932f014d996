//! The values nodeimg computes are listed alike by `explain` and compared
//! alike by `diff`, and they are what the renderer emits: every reserved
//! resource in the rendered kubelet configuration, the pid reservation
//! included, is one of `explain`'s computed values with the same value.

use std::path::Path;

use crate::support::*;
use nodeimg::diff::compare;
use serde_json::{Value, json};

/// `nodeimg explain --format json FILE`'s computed values: path → value.
fn explained(file: &Path) -> Vec<(String, String)> {
    let o = nodeimg(&[
        std::ffi::OsStr::new("explain"),
        std::ffi::OsStr::new("--format"),
        std::ffi::OsStr::new("json"),
        file.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["derived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The reserved resources in the rendered kubelet configuration, as
/// (blueprint path, value).
fn rendered_reservations(file: &Path) -> Vec<(String, String)> {
    let bp = nodeimg::blueprint::load_file(file, &nodeimg::blueprint::compat::Matrix::builtin())
        .unwrap()
        .blueprint;
    let r = rendered(&bp);
    let (_, _, bytes) = r
        .layer
        .files()
        .find(|(p, _, _)| *p == "etc/kubernetes/kubelet.conf.d/50-nodeimg.conf")
        .expect("a kubelet configuration");
    let config: serde_yaml::Value = serde_yaml::from_slice(bytes).unwrap();
    let mut out = Vec::new();
    for section in ["kubeReserved", "systemReserved"] {
        let Some(map) = config.get(section).and_then(|m| m.as_mapping()) else {
            continue;
        };
        for (k, v) in map {
            let key = k.as_str().unwrap();
            let field = if key == "ephemeral-storage" {
                "ephemeralStorage"
            } else {
                key
            };
            let value = match v {
                serde_yaml::Value::String(s) => s.clone(),
                other => serde_yaml::to_string(other).unwrap().trim().to_string(),
            };
            out.push((format!("kubernetes.kubelet.{section}.{field}"), value));
        }
    }
    out
}

#[test]
fn explain_lists_every_reservation_the_kubelet_is_given_pid_included() {
    let tmp = tempfile::tempdir().unwrap();
    // cpu-minimal with pid reservations on both sides (it has no overlay, so
    // it loads from anywhere).
    let v = Variant::of("cpu-minimal")
        .set("kubernetes.kubelet.kubeReserved.pid", json!(1000))
        .set("kubernetes.kubelet.systemReserved.pid", json!(500));
    let pid = v.write(&tmp.path().join("pid.yaml"));
    let mut files: Vec<_> = EXAMPLES
        .iter()
        .map(|n| root().join("blueprints").join(format!("{n}.yaml")))
        .collect();
    files.push(pid.clone());
    for file in &files {
        let derived = explained(file);
        let rendered = rendered_reservations(file);
        assert!(!rendered.is_empty(), "{}", file.display());
        for want in &rendered {
            assert!(
                derived.contains(want),
                "{}: the kubelet is given {} = {}, explain does not list it: {derived:?}",
                file.display(),
                want.0,
                want.1
            );
        }
    }
    let pids: Vec<_> = rendered_reservations(&pid)
        .into_iter()
        .filter(|(p, _)| p.ends_with(".pid"))
        .collect();
    let want = [
        ("kubernetes.kubelet.kubeReserved.pid", "1000"),
        ("kubernetes.kubelet.systemReserved.pid", "500"),
    ]
    .map(|(p, v)| (p.to_string(), v.to_string()));
    assert_eq!(pids, want);
}

#[test]
fn diff_compares_the_values_explain_lists() {
    // Explicit hard eviction for memory only: kubelet would set every other
    // signal to 0, so nodeimg writes kubelet's defaults for them out; they
    // stay as they were, and allocatable memory moves.
    let old = example("cpu-minimal");
    let new = Variant::of("cpu-minimal")
        .set(
            "kubernetes.kubelet.evictionHard",
            json!({"memory.available": "500Mi"}),
        )
        .load();
    let new_rendered = rendered(&new);
    let r = compare(&old, &rendered(&old), &new, &new_rendered);
    let computed: Vec<(&str, &str, &str)> = r
        .computed
        .iter()
        .map(|c| (c.path.as_str(), c.old.as_str(), c.new.as_str()))
        .collect();
    let (_, _, bytes) = new_rendered
        .layer
        .files()
        .find(|(p, _, _)| *p == "etc/kubernetes/kubelet.conf.d/50-nodeimg.conf")
        .expect("a kubelet drop-in");
    let config: serde_yaml::Value = serde_yaml::from_slice(bytes).unwrap();
    for (kept, value) in [
        ("nodefs.available", "10%"),
        ("nodefs.inodesFree", "5%"),
        ("imagefs.available", "15%"),
        ("imagefs.inodesFree", "5%"),
    ] {
        assert!(
            computed
                .iter()
                .all(|(p, _, _)| *p != format!("kubernetes.kubelet.evictionHard[{kept:?}]")),
            "{kept}: {computed:?}"
        );
        assert_eq!(
            config["evictionHard"][kept].as_str(),
            Some(value),
            "{kept} rendered"
        );
    }
    assert!(
        computed.iter().any(|(p, _, _)| *p == "allocatable.memory"),
        "{computed:?}"
    );
    // The explicit threshold is a field change; it is not repeated as a
    // computed one.
    let memory = "kubernetes.kubelet.evictionHard[\"memory.available\"]";
    assert!(r.fields.iter().any(|f| f.path == memory), "{:?}", r.fields);
    assert!(
        computed.iter().all(|(p, _, _)| *p != memory),
        "{computed:?}"
    );
}
