//! Typed views of the Kubernetes objects nodeimg reads — Nodes, Pods and RuntimeClasses —
//! parsed once from what `kubectl get -o json` prints or the API server returns, and the
//! client that fetches them (`api`, behind the default `kube` feature so the verifier built into
//! every node image can leave the HTTP/TLS stack out).
//!
//! Objects are read leniently (a Node has many fields nodeimg does not use and every
//! Kubernetes release adds some), but the fields a check reads are typed: quantities are
//! Kubernetes quantities, taint effects and condition statuses are enums, and a value
//! that does not parse is an error naming the object and the field.

#[cfg(feature = "kube")]
pub mod api;
pub mod node;
pub mod pod;
pub mod runtime_class;

pub use node::{Condition, ConditionStatus, Node, NodeInfo, NodeStatus, NodeTaint};
pub use pod::Pod;
pub use runtime_class::RuntimeClass;

use crate::line_error::LineError;
use serde::Deserialize;

/// `kind: List` / `NodeList` / `PodList`: only the items matter.
#[derive(Deserialize)]
struct List<T> {
    items: Vec<T>,
}

/// The objects of a single object or a list, with a JSON error located by line.
pub(crate) fn objects<T: for<'de> Deserialize<'de>>(
    text: &str,
    what: &str,
) -> Result<Vec<T>, LineError> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| LineError::new(e.line(), format!("not JSON: {e}")))?;
    let is_list = value.get("items").is_some()
        && value
            .get("kind")
            .and_then(|k| k.as_str())
            .is_some_and(|k| k.ends_with("List"));
    // Parsed again from the text (not the value) so that errors keep their line.
    if is_list {
        serde_json::from_str::<List<T>>(text)
            .map(|l| l.items)
            .map_err(|e| LineError::new(e.line(), format!("not a list of {what}s: {e}")))
    } else {
        serde_json::from_str::<T>(text)
            .map(|one| vec![one])
            .map_err(|e| LineError::new(e.line(), format!("not a {what}: {e}")))
    }
}
