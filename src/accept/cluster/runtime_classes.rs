//! Layer 2, the RuntimeClasses: the cluster holds each one the blueprint renders
//! (`cluster/runtime-classes/<handler>-<class>.yaml`) with its handler, and its scheduling
//! admits this node — a Pod that names it must be able to land here. A missing one leaves
//! Pods that name it rejected at admission; a wrong handler starts them under another
//! runtime (or fails at sandbox creation); a node selector the node does not satisfy keeps
//! them off it.

use super::Out;
use crate::blueprint;
use crate::blueprint::runtime_classes;
use crate::fault::{Action, FaultClass};
use crate::k8s::{Node, RuntimeClass};
use crate::verify::checks::catalog::cluster as spec;

pub(super) fn runtime_classes(
    out: &mut Out<'_>,
    blueprint: &blueprint::Spec,
    node: &Node,
    have: Option<&[RuntimeClass]>,
) {
    let want = runtime_classes::of(blueprint);
    if want.is_empty() {
        return;
    }
    let Some(have) = have else {
        out.push(
            &spec::RUNTIME_CLASSES,
            None,
            "the cluster's RuntimeClasses are known (a RuntimeClass list)",
            None,
            want.iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            "no RuntimeClass list given (--runtime-classes FILE, or read from the API)".into(),
            FaultClass::DriverDaemon,
            Action::None,
        );
        return;
    };
    for w in &want {
        let expected = format!(
            "handler {}{}",
            w.handler,
            if w.node_selector.is_empty() {
                String::new()
            } else {
                format!(
                    ", nodeSelector {}",
                    w.node_selector
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            }
        );
        let found = have.iter().find(|h| h.name == w.name);
        let (pass, observed) = match found {
            None => (
                false,
                format!(
                    "absent (the cluster has: {})",
                    if have.is_empty() {
                        "none".to_owned()
                    } else {
                        have.iter()
                            .map(|h| format!("{} → {}", h.name, h.handler))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            ),
            Some(h) => {
                let mut wrong = Vec::new();
                if h.handler != w.handler {
                    wrong.push(format!("handler {}", h.handler));
                }
                let off: Vec<String> = h
                    .node_selector
                    .iter()
                    .filter(|(k, v)| node.labels.get(*k) != Some(*v))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                if !off.is_empty() {
                    wrong.push(format!(
                        "nodeSelector {} that {} does not carry",
                        off.join(","),
                        node.name
                    ));
                }
                let missing: Vec<&str> = w
                    .node_selector
                    .keys()
                    .filter(|k| !h.node_selector.contains_key(*k))
                    .map(String::as_str)
                    .collect();
                if !missing.is_empty() {
                    wrong.push(format!(
                        "no nodeSelector on {} (Pods may land on nodes without the handler)",
                        missing.join(",")
                    ));
                }
                if wrong.is_empty() {
                    (true, format!("handler {}", h.handler))
                } else {
                    (false, wrong.join("; "))
                }
            }
        };
        out.push(
            &spec::RUNTIME_CLASS,
            Some(w.name.as_str()),
            "the cluster holds the node class's RuntimeClass with its handler and scheduling",
            Some(pass),
            expected,
            observed,
            FaultClass::DriverDaemon,
            Action::None,
        );
    }
}
