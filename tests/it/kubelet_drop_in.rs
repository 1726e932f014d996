//! The kubelet configuration survives `kubeadm join`: from Kubernetes 1.28
//! it is a `--config-dir` drop-in, merged over the `--config` file kubeadm
//! writes, and the flags that make the kubelet read it (and register the
//! node's labels) are in a kubelet unit drop-in.
//!
//! The merge is a typed mirror of the kubelet's drop-in merging (KEP-3983;
//! kubernetes.io/docs/reference/node/kubelet-config-directory-merging/):
//! structs and maps merge field by field and key by key, lists and scalars
//! are replaced whole, files apply in lexical order. The opt-in corpus test
//! replays the reference page's own examples through it.

use crate::support::*;
use serde_json::{Value, json};

/// One drop-in merged over `base`, as the kubelet merges it.
pub fn merge(base: &mut Value, drop_in: &Value) {
    match (base, drop_in) {
        (Value::Object(b), Value::Object(d)) => {
            for (k, v) in d {
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

/// `have` carries every leaf of `want` (objects by key, the rest equal).
fn holds(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => {
            w.iter().all(|(k, v)| h.get(k).is_some_and(|x| holds(x, v)))
        }
        _ => have == want,
    }
}

const DROP_IN: &str = "etc/kubernetes/kubelet.conf.d/50-nodeimg.conf";
const FLAGS: &str = "etc/systemd/system/kubelet.service.d/20-nodeimg-flags.conf";

/// What `kubeadm join` writes to /var/lib/kubelet/config.yaml (its
/// defaults for a cluster with the service CIDR 10.96.0.0/12, on a
/// systemd-resolved host).
fn kubeadm_config() -> Value {
    serde_yaml::from_str(
        r#"
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {cacheTTL: 0s, enabled: true}
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
authorization:
  mode: Webhook
  webhook: {cacheAuthorizedTTL: 0s, cacheUnauthorizedTTL: 0s}
cgroupDriver: systemd
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
healthzBindAddress: 127.0.0.1
resolvConf: /run/systemd/resolve/resolv.conf
rotateCertificates: true
staticPodPath: /etc/kubernetes/manifests
"#,
    )
    .unwrap()
}

fn yaml(r: &nodeimg::render::Rendered, path: &str) -> Value {
    serde_yaml::from_slice(
        r.layer
            .file(path)
            .unwrap_or_else(|| panic!("{path} not rendered")),
    )
    .unwrap()
}

fn flags(r: &nodeimg::render::Rendered) -> String {
    let text = std::str::from_utf8(r.layer.file(FLAGS).expect("flags drop-in")).unwrap();
    let env = text
        .lines()
        .find_map(|l| l.strip_prefix("Environment="))
        .expect("Environment=");
    let exec: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("ExecStart="))
        .collect();
    assert_eq!(exec[0], "ExecStart=", "the unit's ExecStart is reset first");
    assert!(exec[1].ends_with("$NODEIMG_KUBELET_ARGS"), "{}", exec[1]);
    assert!(exec[1].contains("$KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS"));
    env.trim_matches('"')
        .strip_prefix("NODEIMG_KUBELET_ARGS=")
        .unwrap()
        .to_string()
}

#[test]
fn the_configuration_survives_kubeadm_join() {
    let bp = example("h100-sxm-ubuntu");
    let r = rendered(&bp);
    assert!(
        r.layer.file("var/lib/kubelet/config.yaml").is_none(),
        "kubeadm join overwrites /var/lib/kubelet/config.yaml"
    );
    let ours = yaml(&r, DROP_IN);
    assert!(flags(&r).contains("--config-dir=/etc/kubernetes/kubelet.conf.d"));

    // Joining writes the --config file; the kubelet merges the drop-in over it.
    let mut effective = kubeadm_config();
    merge(&mut effective, &ours);
    let ctx = nodeimg::render::Context::new(&bp).unwrap();
    // Every value nodeimg sets is in effect (structs keep the base's
    // other fields: kubeadm's webhook cacheTTL stays beside ours).
    for (key, want) in &ctx.kubelet.fields {
        assert!(
            holds(&effective[key], want),
            "{key}: {} lacks {want}",
            effective[key]
        );
    }
    assert_eq!(effective["registerWithTaints"][0]["key"], "nvidia.com/gpu");
    assert_eq!(effective["cpuManagerPolicy"], "static");
    // kubeadm's fields the blueprint does not set stay.
    assert_eq!(effective["clusterDNS"], json!(["10.96.0.10"]));
    assert_eq!(effective["staticPodPath"], "/etc/kubernetes/manifests");
    assert_eq!(
        effective["authorization"]["webhook"]["cacheAuthorizedTTL"],
        "0s"
    );
}

#[test]
fn eviction_keeps_every_default_signal() {
    // The MI300X blueprint gives two signals; a partial map would set the
    // others to 0 (disabled).
    let r = rendered(&example("mi300x-rhel"));
    let ev = &yaml(&r, DROP_IN)["evictionHard"];
    for signal in [
        "memory.available",
        "nodefs.available",
        "nodefs.inodesFree",
        "imagefs.available",
        "imagefs.inodesFree",
    ] {
        assert!(ev.get(signal).is_some(), "{signal} missing: {ev}");
    }
    assert_eq!(ev["imagefs.inodesFree"], "5%");
    assert_eq!(ev["nodefs.available"], "10%");
}

#[test]
fn dns_follows_the_blueprint_and_the_distro_resolver() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    // Ubuntu resolves through systemd-resolved: the stub would loop CoreDNS.
    assert_eq!(
        yaml(&r, DROP_IN)["resolvConf"],
        "/run/systemd/resolve/resolv.conf"
    );
    let r = rendered(&example("mi300x-rhel"));
    assert!(yaml(&r, DROP_IN).get("resolvConf").is_none());
    let bp = Variant::of("mi300x-rhel")
        .set(
            "kubernetes.kubelet.clusterDNS",
            json!(["10.96.0.10", "fd00::a"]),
        )
        .set(
            "kubernetes.kubelet.clusterDomain",
            json!("gpu.cluster.local"),
        )
        .load();
    let k = yaml(&rendered(&bp), DROP_IN);
    assert_eq!(k["clusterDNS"], json!(["10.96.0.10", "fd00::a"]));
    assert_eq!(k["clusterDomain"], "gpu.cluster.local");
}

#[test]
fn labels_are_registered_by_the_node() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let args = flags(&r);
    let labels = args
        .split(' ')
        .find_map(|a| a.strip_prefix("--node-labels="))
        .expect("--node-labels");
    assert_eq!(labels, "platform.example.com/node-class=h100-sxm");
}

#[test]
fn kubelets_without_config_dir_get_the_config_file() {
    let bp = Variant::of("cpu-minimal")
        .set("kubernetes.version", json!("1.27.16"))
        .try_load();
    if let Ok(bp) = bp {
        let r = rendered(&bp);
        assert!(r.layer.file(DROP_IN).is_none());
        assert!(r.layer.file("var/lib/kubelet/config.yaml").is_some());
        assert!(
            r.layer
                .file(FLAGS)
                .is_none_or(|f| !String::from_utf8_lossy(f).contains("--config-dir"))
        );
    }
    // 1.28 and 1.29 have the drop-in directory behind a feature gate.
    let r = rendered(
        &Variant::of("cpu-minimal")
            .set("kubernetes.version", json!("1.29.8"))
            .load(),
    );
    let args = flags(&r);
    assert!(args.contains("--config-dir=") && args.contains("KubeletConfigDropInDir=true"));
}

#[test]
#[ignore = "corpus: the kubelet-config-directory-merging reference page"]
fn the_mirror_reproduces_the_reference_examples() {
    let page = std::fs::read_to_string(root().join(
        "../shared/corpus/k8s-schemas/kubelet-config-dir/kubelet-config-directory-merging.md",
    ))
    .expect("corpus page");
    let blocks: Vec<Value> = page
        .split("```yaml\n")
        .skip(1)
        .map(|b| serde_yaml::from_str(b.split("```").next().unwrap()).unwrap())
        .collect();
    assert_eq!(blocks.len() % 3, 0, "main, drop-in, result triples");
    assert!(blocks.len() >= 9);
    for t in blocks.chunks(3) {
        let mut main = t[0].clone();
        merge(&mut main, &t[1]);
        assert_eq!(main, t[2]);
    }
}
