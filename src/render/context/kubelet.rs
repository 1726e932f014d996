//! `kubelet`: the kubelet's configuration and flags. The typed fields
//! nodeimg sets ([`Fields`]), then `extraConfig` laid over them (which may
//! override the secure defaults, never the typed fields — validation
//! refuses those keys).
//!
//! Where the configuration goes decides whether it survives joining:
//! `kubeadm join` writes `/var/lib/kubelet/config.yaml` itself (from the
//! cluster's `kubelet-config` ConfigMap), so from Kubernetes 1.28 nodeimg
//! writes a drop-in, `/etc/kubernetes/kubelet.conf.d/50-nodeimg.conf`, that
//! the kubelet merges over that file (`--config-dir`, KEP-3983: alpha 1.28
//! behind `KubeletConfigDropInDir`, beta and on by default 1.30, GA 1.35;
//! kubernetes.io/docs/reference/node/kubelet-config-directory-merging/).
//! Older kubelets get `/var/lib/kubelet/config.yaml`, for bootstraps that
//! do not write it. The flags (`--config-dir`, `--node-labels`) go in a
//! kubelet unit drop-in.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::RenderError;
use crate::blueprint::model::*;
use crate::blueprint::reservation::Resolved;
use crate::blueprint::value::{LabelValue, TaintEffect};
use crate::blueprint::{Blueprint, resolve};

#[derive(Debug, Clone, Serialize)]
pub struct Kubelet {
    /// The KubeletConfiguration fields, as written (typed fields merged
    /// with `extraConfig`).
    pub fields: Map<String, Value>,
    pub version: String,
    /// The kubelet reads drop-ins from `--config-dir` (1.28 and later).
    pub drop_in: bool,
    /// Layer path of the configuration file nodeimg writes.
    pub config_path: &'static str,
    /// Flags nodeimg adds to the kubelet's command line.
    pub flags: Vec<String>,
}

/// The drop-in directory (`--config-dir`) and nodeimg's file in it; the
/// kubelet reads `*.conf` files there in lexical order over `--config`.
pub const CONFIG_DIR: &str = "/etc/kubernetes/kubelet.conf.d";
pub const DROP_IN: &str = "etc/kubernetes/kubelet.conf.d/50-nodeimg.conf";
/// The file kubeadm (and most bootstraps) pass as `--config`.
pub const CONFIG_FILE: &str = "var/lib/kubelet/config.yaml";

/// systemd-resolved's upstream resolv.conf: the real resolvers, not the
/// 127.0.0.53 stub, which loops back into CoreDNS (coredns.io/plugins/loop;
/// kubeadm sets the same path on resolved hosts).
pub const RESOLVED_RESOLV_CONF: &str = "/run/systemd/resolve/resolv.conf";

/// The KubeletConfiguration fields nodeimg decides.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fields<'a> {
    // Secure defaults a production node wants; extraConfig may override them.
    pub authentication: Value,
    pub authorization: Value,
    pub read_only_port: u16,
    pub rotate_certificates: bool,
    #[serde(rename = "serverTLSBootstrap")]
    pub server_tls_bootstrap: bool,
    pub protect_kernel_defaults: bool,
    pub container_runtime_endpoint: String,
    pub cgroup_driver: CgroupDriver,
    pub max_pods: u32,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub kube_reserved: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub system_reserved: BTreeMap<&'static str, String>,
    pub eviction_hard: BTreeMap<&'static str, String>,
    pub cpu_manager_policy: CpuManagerPolicy,
    pub topology_manager_policy: TopologyManagerPolicy,
    pub topology_manager_scope: TopologyManagerScope,
    pub memory_manager_policy: MemoryManagerPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforce_node_allocatable: Option<[&'static str; 1]>,
    #[serde(rename = "failCgroupV1", skip_serializing_if = "Option::is_none")]
    pub fail_cgroup_v1: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub register_with_taints: Vec<Taint<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, Value>,
    #[serde(rename = "clusterDNS", skip_serializing_if = "Vec::is_empty")]
    pub cluster_dns: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_domain: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolv_conf: Option<&'static str>,
}

/// A `registerWithTaints` entry (core/v1 Taint).
#[derive(Debug, Clone, Serialize)]
pub struct Taint<'a> {
    pub key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<&'a str>,
    pub effect: TaintEffect,
}

/// kubelet's `kubeReserved` / `systemReserved` map: the entries `explain`
/// and `diff` show, under kubelet's names.
fn reserved(res: &Resolved) -> BTreeMap<&'static str, String> {
    res.entries()
        .into_iter()
        .map(|e| (e.kubelet, e.value))
        .collect()
}

/// The typed fields of `bp`.
pub fn fields(bp: &Blueprint) -> Fields<'_> {
    let s = bp.spec();
    let k = &s.kubernetes.kubelet;
    let r = resolve::kubelet(s);
    let statics = k.cpu_manager_policy == CpuManagerPolicy::Static
        || k.memory_manager_policy == MemoryManagerPolicy::Static;
    let dra = s.kubernetes.device_injection.mode == InjectionMode::Dra
        && s.kubernetes.version.minor() < 34;
    Fields {
        authentication: serde_json::json!({"anonymous": {"enabled": false}, "webhook": {"enabled": true}, "x509": {"clientCAFile": "/etc/kubernetes/pki/ca.crt"}}),
        authorization: serde_json::json!({"mode": "Webhook"}),
        read_only_port: 0,
        rotate_certificates: true,
        server_tls_bootstrap: true,
        protect_kernel_defaults: true,
        container_runtime_endpoint: format!(
            "unix://{}/containerd.sock",
            s.runtime.containerd.state
        ),
        cgroup_driver: k.cgroup_driver,
        max_pods: r.max_pods,
        kube_reserved: reserved(&r.kube_reserved),
        system_reserved: reserved(&r.system_reserved),
        eviction_hard: r
            .eviction_hard
            .iter()
            .map(|(sig, t, _)| (sig.as_str(), t.to_string()))
            .collect(),
        cpu_manager_policy: k.cpu_manager_policy,
        topology_manager_policy: k.topology_manager_policy,
        topology_manager_scope: k.topology_manager_scope,
        memory_manager_policy: k.memory_manager_policy,
        enforce_node_allocatable: statics.then_some(["pods"]),
        fail_cgroup_v1: (s.os.cgroup == CgroupMode::V1).then_some(false),
        register_with_taints: s
            .kubernetes
            .taints
            .iter()
            .map(|t| Taint {
                key: t.key.as_str(),
                value: t.value.as_ref().map(LabelValue::as_str),
                effect: t.effect,
            })
            .collect(),
        cluster_dns: k.cluster_dns.iter().map(|ip| ip.to_string()).collect(),
        cluster_domain: k.cluster_domain.as_ref().map(|d| d.as_str()),
        resolv_conf: (!s.os.distro.is_rhel_family()).then_some(RESOLVED_RESOLV_CONF),
        feature_gates: if dra {
            BTreeMap::from([("DynamicResourceAllocation".to_string(), Value::Bool(true))])
        } else {
            BTreeMap::new()
        },
    }
}

pub(super) fn of(bp: &Blueprint) -> Result<Kubelet, RenderError> {
    let s = bp.spec();
    let typed = serde_json::to_value(fields(bp)).map_err(|e| RenderError::Context {
        what: "kubelet configuration",
        message: e.to_string(),
    })?;
    let Value::Object(mut f) = typed else {
        return Err(RenderError::Context {
            what: "kubelet configuration",
            message: "the typed fields are not a mapping".into(),
        });
    };
    for (key, v) in &s.kubernetes.kubelet.extra_config {
        // featureGates from extraConfig add to those nodeimg sets.
        if let (Some(Value::Object(have)), Value::Object(add)) = (f.get_mut(key), v)
            && key == "featureGates"
        {
            have.extend(add.clone());
            continue;
        }
        f.insert(key.clone(), v.clone());
    }
    let v = &s.kubernetes.version;
    let drop_in = v.major() > 1 || v.minor() >= 28;
    let mut flags = Vec::new();
    if drop_in {
        flags.push(format!("--config-dir={CONFIG_DIR}"));
        if v.major() == 1 && v.minor() < 30 {
            flags.push("--feature-gates=KubeletConfigDropInDir=true".to_string());
        }
    }
    let mut labels: Vec<String> = s
        .kubernetes
        .labels
        .iter()
        .map(|(k, v)| format!("{}={}", k.as_str(), v.as_str()))
        .collect();
    // The labels that select the GPUs' sharing (the MIG manager's
    // configuration, the device plugin's sharing key).
    labels.extend(
        s.sharing_labels()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}")),
    );
    if !labels.is_empty() {
        flags.push(format!("--node-labels={}", labels.join(",")));
    }
    Ok(Kubelet {
        fields: f,
        version: v.to_string(),
        drop_in,
        config_path: if drop_in { DROP_IN } else { CONFIG_FILE },
        flags,
    })
}
