//! Pods on a node, as far as layer 2 needs them: which component a Pod runs (by its
//! labels, name and images), whether it runs and is ready. Read from `kubectl get pods
//! -A -o json --field-selector spec.nodeName=NODE` or the API.

use crate::line_error::LineError;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    pub namespace: String,
    pub name: String,
    pub node: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// `Running`, `Pending`, `Succeeded`, `Failed`, `Unknown`.
    pub phase: String,
    /// The `Ready` condition is `True`.
    pub ready: bool,
    pub images: Vec<String>,
    /// Kind of the controlling owner (`DaemonSet`, `Job`, ...).
    pub owner: Option<String>,
}

#[derive(Deserialize)]
struct RawPod {
    metadata: RawMeta,
    #[serde(default)]
    spec: RawSpec,
    #[serde(default)]
    status: RawStatus,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMeta {
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    owner_references: Vec<RawOwner>,
}

#[derive(Deserialize)]
struct RawOwner {
    kind: String,
    #[serde(default)]
    controller: bool,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawSpec {
    node_name: Option<String>,
    #[serde(default)]
    containers: Vec<RawContainer>,
}

#[derive(Deserialize)]
struct RawContainer {
    #[serde(default)]
    image: String,
}

#[derive(Deserialize, Default)]
struct RawStatus {
    #[serde(default)]
    phase: String,
    #[serde(default)]
    conditions: Vec<RawCondition>,
}

#[derive(Deserialize)]
struct RawCondition {
    #[serde(rename = "type")]
    kind: String,
    status: String,
}

/// Every Pod in a Pod or a list of Pods.
pub fn parse(text: &str) -> Result<Vec<Pod>, LineError> {
    let raws: Vec<RawPod> = super::objects(text, "Pod")?;
    Ok(raws
        .into_iter()
        .map(|r| Pod {
            namespace: r.metadata.namespace,
            name: r.metadata.name,
            node: r.spec.node_name,
            labels: r.metadata.labels,
            phase: r.status.phase,
            ready: r
                .status
                .conditions
                .iter()
                .any(|c| c.kind == "Ready" && c.status == "True"),
            images: r.spec.containers.into_iter().map(|c| c.image).collect(),
            owner: r
                .metadata
                .owner_references
                .iter()
                .find(|o| o.controller)
                .or(r.metadata.owner_references.first())
                .map(|o| o.kind.clone()),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_of_a_list() {
        let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
          {"metadata": {"name": "nvidia-device-plugin-daemonset-x", "namespace": "gpu-operator",
                        "labels": {"app": "nvidia-device-plugin-daemonset"},
                        "ownerReferences": [{"kind": "DaemonSet", "controller": true, "name": "d", "uid": "u", "apiVersion": "apps/v1"}]},
           "spec": {"nodeName": "gpu-node-01", "containers": [{"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.18.1"}]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}]}"#;
        let pods = parse(text).unwrap();
        assert_eq!(pods.len(), 1);
        assert!(pods[0].ready);
        assert_eq!(pods[0].owner.as_deref(), Some("DaemonSet"));
        assert_eq!(pods[0].node.as_deref(), Some("gpu-node-01"));
    }
}
