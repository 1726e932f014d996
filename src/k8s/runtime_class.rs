//! RuntimeClasses as far as layer 2 needs them: the name, the handler and the scheduling
//! a Pod that names one gets. Read from `kubectl get runtimeclasses -o json` (a
//! `RuntimeClassList` or `List`), one RuntimeClass, or the API
//! (`GET /apis/node.k8s.io/v1/runtimeclasses`).

use crate::line_error::LineError;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeClass {
    pub name: String,
    pub handler: String,
    /// `scheduling.nodeSelector`: merged into the selector of every Pod that names it.
    pub node_selector: BTreeMap<String, String>,
    /// `scheduling.tolerations` as `key:effect` (`Exists`) or `key=value:effect`.
    pub tolerations: Vec<String>,
}

#[derive(Deserialize)]
struct Raw {
    metadata: RawMeta,
    handler: String,
    #[serde(default)]
    scheduling: Option<RawScheduling>,
}

#[derive(Deserialize)]
struct RawMeta {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawScheduling {
    #[serde(default)]
    node_selector: Option<BTreeMap<String, String>>,
    #[serde(default)]
    tolerations: Option<Vec<RawToleration>>,
}

#[derive(Deserialize)]
struct RawToleration {
    #[serde(default)]
    key: String,
    #[serde(default)]
    operator: Option<String>,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    effect: String,
}

/// Every RuntimeClass of a list (or the one object) in `text`.
pub fn parse(text: &str) -> Result<Vec<RuntimeClass>, LineError> {
    let raws: Vec<Raw> = super::objects(text, "RuntimeClass")?;
    Ok(raws
        .into_iter()
        .map(|r| {
            let s = r.scheduling.unwrap_or_default();
            RuntimeClass {
                name: r.metadata.name,
                handler: r.handler,
                node_selector: s.node_selector.unwrap_or_default(),
                tolerations: s
                    .tolerations
                    .unwrap_or_default()
                    .into_iter()
                    .map(|t| match (t.operator.as_deref(), t.value) {
                        (Some("Exists"), _) | (_, None) => format!("{}:{}", t.key, t.effect),
                        (_, Some(v)) => format!("{}={v}:{}", t.key, t.effect),
                    })
                    .collect(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_as_kubectl_prints_it() {
        let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"},
  {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata-h100"}, "handler": "kata",
   "scheduling": {"nodeSelector": {"pool": "h100"}, "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}
]}"#;
        let rc = parse(text).unwrap();
        assert_eq!(rc.len(), 2);
        assert_eq!(
            (rc[0].name.as_str(), rc[0].handler.as_str()),
            ("nvidia", "nvidia")
        );
        assert!(rc[0].node_selector.is_empty());
        assert_eq!(rc[1].node_selector["pool"], "h100");
        assert_eq!(rc[1].tolerations, ["nvidia.com/gpu:NoSchedule"]);
        // A RuntimeClass without a handler is not one (the API server requires it).
        let err = parse(r#"{"kind": "RuntimeClass", "metadata": {"name": "x"}}"#).unwrap_err();
        assert!(err.message.contains("handler"), "{}", err.message);
    }
}
