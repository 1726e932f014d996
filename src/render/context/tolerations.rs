//! `tolerations`: what every cluster-side DaemonSet that must run on this
//! node (NFD worker, device plugin, node labeller, exporters, NPD) needs to
//! tolerate — one toleration per taint the node registers with
//! (`kubernetes.taints`, rendered as kubelet's `registerWithTaints`).
//!
//! A toleration with `operator: Exists` on the taint's key and effect
//! matches the taint whatever its value (core/v1 Toleration semantics), so
//! a value change on the node does not lock its own daemons out.

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::value::TaintEffect;

/// A core/v1 Toleration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Toleration {
    pub key: String,
    pub operator: &'static str,
    pub effect: TaintEffect,
}

pub(super) fn of(s: &Spec) -> Vec<Toleration> {
    s.kubernetes
        .taints
        .iter()
        .map(|t| Toleration {
            key: t.key.as_str().to_string(),
            operator: "Exists",
            effect: t.effect,
        })
        .collect()
}
