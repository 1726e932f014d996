//! The rendered KubeletConfiguration deserialises into a typed mirror of the
//! upstream kubelet.config.k8s.io/v1beta1 fields nodeimg writes, with
//! `deny_unknown_fields`: a misspelt or misplaced field, or a value of the
//! wrong type, fails here.

use std::collections::BTreeMap;

use crate::support::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct KubeletConfiguration {
    api_version: String,
    kind: String,
    authentication: Authentication,
    authorization: Authorization,
    cgroup_driver: String,
    container_runtime_endpoint: String,
    cpu_manager_policy: String,
    enforce_node_allocatable: Option<Vec<String>>,
    eviction_hard: BTreeMap<String, String>,
    kube_reserved: Option<BTreeMap<String, String>>,
    system_reserved: Option<BTreeMap<String, String>>,
    max_pods: i32,
    memory_manager_policy: String,
    protect_kernel_defaults: bool,
    read_only_port: i32,
    register_with_taints: Option<Vec<Taint>>,
    rotate_certificates: bool,
    #[serde(rename = "serverTLSBootstrap")]
    server_tls_bootstrap: bool,
    topology_manager_policy: String,
    topology_manager_scope: String,
    fail_cgroup_v1: Option<bool>,
    feature_gates: Option<BTreeMap<String, bool>>,
    #[serde(rename = "clusterDNS")]
    cluster_dns: Option<Vec<String>>,
    cluster_domain: Option<String>,
    resolv_conf: Option<String>,
    // extraConfig fields used by the examples
    serialize_image_pulls: Option<bool>,
    max_parallel_image_pulls: Option<i32>,
    container_log_max_size: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct Authentication {
    anonymous: Enabled,
    webhook: Enabled,
    x509: X509,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Enabled {
    enabled: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct X509 {
    #[serde(rename = "clientCAFile")]
    client_ca_file: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Authorization {
    mode: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Taint {
    key: String,
    value: Option<String>,
    effect: String,
}

#[test]
fn every_example_deserialises_into_the_typed_mirror() {
    for name in EXAMPLES {
        let r = rendered(&example(name));
        let k: KubeletConfiguration = serde_yaml::from_slice(
            r.layer
                .file("etc/kubernetes/kubelet.conf.d/50-nodeimg.conf")
                .unwrap(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(k.kind, "KubeletConfiguration");
        assert_eq!(k.api_version, "kubelet.config.k8s.io/v1beta1");
        let q = |s: &str| s.parse::<nodeimg::blueprint::value::Quantity>().unwrap();
        for res in [&k.kube_reserved, &k.system_reserved].into_iter().flatten() {
            for v in res.values() {
                q(v);
            }
        }
        for (signal, v) in &k.eviction_hard {
            assert!(v.ends_with('%') || q(v).nanos() > 0, "{name}: {signal}={v}");
        }
    }
    let r = rendered(&example("h100-sxm-ubuntu"));
    let k: KubeletConfiguration = serde_yaml::from_slice(
        r.layer
            .file("etc/kubernetes/kubelet.conf.d/50-nodeimg.conf")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(k.max_pods, 110);
    assert_eq!(k.kube_reserved.unwrap()["cpu"], "630m");
    let t = &k.register_with_taints.unwrap()[0];
    assert_eq!(
        (t.key.as_str(), t.value.as_deref(), t.effect.as_str()),
        ("nvidia.com/gpu", Some("present"), "NoSchedule")
    );
}
