//! The Node object: identity, labels, taints, capacity and allocatable, conditions,
//! node info and runtime handlers. Read from a `Node`, a `List`/`NodeList` of them
//! (`kubectl get nodes -o json`), or a bare label map (`kubectl get node -o json | jq
//! .metadata.labels`), which gives a Node without status.

use crate::blueprint::value::Quantity;
use crate::line_error::LineError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub taints: Vec<NodeTaint>,
    pub unschedulable: bool,
    /// Absent when only the labels were given.
    pub status: Option<NodeStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeTaint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

impl std::fmt::Display for NodeTaint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.value {
            Some(v) => write!(f, "{}={v}:{}", self.key, self.effect),
            None => write!(f, "{}:{}", self.key, self.effect),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodeStatus {
    pub capacity: BTreeMap<String, Quantity>,
    pub allocatable: BTreeMap<String, Quantity>,
    pub conditions: Vec<Condition>,
    pub node_info: Option<NodeInfo>,
    /// `status.runtimeHandlers[].name` (Kubernetes 1.30+).
    pub runtime_handlers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    #[serde(default)]
    pub kubelet_version: String,
    #[serde(default)]
    pub container_runtime_version: String,
    #[serde(default)]
    pub kernel_version: String,
    #[serde(default)]
    pub os_image: String,
    #[serde(default)]
    pub architecture: String,
    #[serde(default)]
    pub system_uuid: String,
    #[serde(default)]
    pub boot_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    #[serde(rename = "type")]
    pub kind: String,
    pub status: ConditionStatus,
    pub reason: Option<String>,
    pub message: Option<String>,
}

// Raw shapes, as the API serves them.

#[derive(Deserialize)]
struct RawNode {
    kind: Option<String>,
    metadata: RawMeta,
    #[serde(default)]
    spec: RawSpec,
    status: Option<RawStatus>,
}

#[derive(Deserialize)]
struct RawMeta {
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
struct RawSpec {
    #[serde(default)]
    taints: Vec<RawTaint>,
    #[serde(default)]
    unschedulable: bool,
}

#[derive(Deserialize)]
struct RawTaint {
    key: String,
    value: Option<String>,
    effect: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawStatus {
    #[serde(default)]
    capacity: BTreeMap<String, String>,
    #[serde(default)]
    allocatable: BTreeMap<String, String>,
    #[serde(default)]
    conditions: Vec<RawCondition>,
    node_info: Option<NodeInfo>,
    #[serde(default)]
    runtime_handlers: Vec<RawHandler>,
}

#[derive(Deserialize)]
struct RawCondition {
    #[serde(rename = "type")]
    kind: String,
    status: String,
    reason: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct RawHandler {
    #[serde(default)]
    name: String,
}

/// Every Node in `kubectl get node(s) -o json` output (or an API response body).
pub fn parse(text: &str) -> Result<Vec<Node>, LineError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| LineError::new(e.line(), format!("not JSON: {e}")))?;
    let is_object = value.get("metadata").is_some() || value.get("items").is_some();
    if !is_object {
        // A bare label map.
        let labels: BTreeMap<String, String> = serde_json::from_value(value).map_err(|e| {
            LineError::new(
                1,
                format!("neither a Node, a list of Nodes nor a label map: {e}"),
            )
        })?;
        let name = labels
            .get("kubernetes.io/hostname")
            .cloned()
            .ok_or_else(|| {
                LineError::new(
                    1,
                    "a label map without `kubernetes.io/hostname`: which node?",
                )
            })?;
        return Ok(vec![Node {
            name,
            labels,
            annotations: BTreeMap::new(),
            taints: Vec::new(),
            unschedulable: false,
            status: None,
        }]);
    }
    let raws: Vec<RawNode> = super::objects(text, "Node")?;
    raws.into_iter().map(|r| node(r, text)).collect()
}

/// The line of the last of `keys` (JSON strings), each searched after the previous one:
/// `["gpu-node-01", "capacity", "memory"]` finds that node's capacity entry. Falls back to
/// the deepest key found.
fn locate(text: &str, keys: &[&str]) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0;
    let mut found = 0;
    for key in keys {
        let needle = format!("\"{key}\"");
        match lines[from..].iter().position(|l| l.contains(&needle)) {
            Some(i) => {
                found = from + i + 1;
                // The next key may sit on the same line (`"capacity": {"memory": ...`).
                from += i;
            }
            None => break,
        }
    }
    found
}

fn node(raw: RawNode, text: &str) -> Result<Node, LineError> {
    let name = raw.metadata.name;
    let at = locate(text, &[&name]);
    if let Some(kind) = raw.kind.as_deref().filter(|k| *k != "Node") {
        return Err(LineError::new(
            at,
            format!("`{name}` is a {kind}, not a Node"),
        ));
    }
    let status = match raw.status {
        None => None,
        Some(s) => {
            let quantities = |map: BTreeMap<String, String>, field: &str| {
                map.into_iter()
                    .map(|(k, v)| {
                        v.parse::<Quantity>().map(|q| (k.clone(), q)).map_err(|e| {
                            LineError::new(
                                locate(text, &[&name, field, &k]).max(at),
                                format!("node {name}: status.{field}.{k}: {e}"),
                            )
                        })
                    })
                    .collect::<Result<BTreeMap<_, _>, _>>()
            };
            let conditions = s
                .conditions
                .into_iter()
                .map(|c| {
                    let status = match c.status.as_str() {
                        "True" => ConditionStatus::True,
                        "False" => ConditionStatus::False,
                        "Unknown" => ConditionStatus::Unknown,
                        other => {
                            return Err(LineError::new(
                                at,
                                format!("node {name}: condition {}: status `{other}` is not True, False or Unknown", c.kind),
                            ));
                        }
                    };
                    Ok(Condition {
                        kind: c.kind,
                        status,
                        reason: c.reason,
                        message: c.message,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Some(NodeStatus {
                capacity: quantities(s.capacity, "capacity")?,
                allocatable: quantities(s.allocatable, "allocatable")?,
                conditions,
                node_info: s.node_info,
                runtime_handlers: s.runtime_handlers.into_iter().map(|h| h.name).collect(),
            })
        }
    };
    let taints = raw
        .spec
        .taints
        .into_iter()
        .map(|t| match t.effect.as_str() {
            "NoSchedule" | "PreferNoSchedule" | "NoExecute" => Ok(NodeTaint {
                key: t.key,
                value: t.value.filter(|v| !v.is_empty()),
                effect: t.effect,
            }),
            other => Err(LineError::new(
                at,
                format!("node {name}: taint {}: effect `{other}` is not NoSchedule, PreferNoSchedule or NoExecute", t.key),
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Node {
        name,
        labels: raw.metadata.labels,
        annotations: raw.metadata.annotations,
        taints,
        unschedulable: raw.spec.unschedulable,
        status,
    })
}

impl Node {
    pub fn condition(&self, kind: &str) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .iter()
            .find(|c| c.kind == kind)
    }

    pub fn capacity(&self, resource: &str) -> Option<&Quantity> {
        self.status.as_ref()?.capacity.get(resource)
    }

    pub fn allocatable(&self, resource: &str) -> Option<&Quantity> {
        self.status.as_ref()?.allocatable.get(resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODE: &str = r#"{
  "apiVersion": "v1",
  "kind": "Node",
  "metadata": {"name": "gpu-node-01", "labels": {"kubernetes.io/hostname": "gpu-node-01", "nvidia.com/gpu.count": "8"}},
  "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
  "status": {
    "capacity": {"cpu": "224", "memory": "2113638548Ki", "nvidia.com/gpu": "8", "hugepages-1Gi": "32Gi"},
    "allocatable": {"cpu": "223370m", "memory": "2110388372Ki", "nvidia.com/gpu": "8"},
    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
    "nodeInfo": {"kubeletVersion": "v1.34.2", "containerRuntimeVersion": "containerd://2.1.4"},
    "runtimeHandlers": [{"name": "nvidia"}]
  }
}"#;

    #[test]
    fn one_node() {
        let nodes = parse(NODE).unwrap();
        let n = &nodes[0];
        assert_eq!(n.name, "gpu-node-01");
        assert_eq!(n.taints[0].to_string(), "nvidia.com/gpu=present:NoSchedule");
        assert_eq!(n.allocatable("cpu").unwrap().millis_ceil(), 223_370);
        assert_eq!(n.capacity("nvidia.com/gpu").unwrap().units_ceil(), 8);
        assert_eq!(n.condition("Ready").unwrap().status, ConditionStatus::True);
        let info = n.status.as_ref().unwrap().node_info.as_ref().unwrap();
        assert_eq!(info.kubelet_version, "v1.34.2");
        assert_eq!(n.status.as_ref().unwrap().runtime_handlers, ["nvidia"]);
    }

    #[test]
    fn damaged_values_are_located() {
        let bad = NODE.replace(
            "\"memory\": \"2113638548Ki\"",
            "\"memory\": \"2113638548Kx\"",
        );
        let err = parse(&bad).unwrap_err();
        assert_eq!(err.line, 7, "{err}");
        assert!(err.message.contains("status.capacity.memory"), "{err}");
        let cut = &NODE[..NODE.len() / 2];
        assert!(parse(cut).unwrap_err().line > 1);
        let labels = r#"{"kubernetes.io/hostname": "a", "x": "y"}"#;
        let n = &parse(labels).unwrap()[0];
        assert_eq!(n.name, "a");
        assert!(n.status.is_none());
    }
}
