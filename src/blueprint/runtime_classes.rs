//! The RuntimeClasses a node class needs: one per runtime handler the rendered containerd
//! configuration declares beside `runc` (the default handler, which needs none) — `nvidia`
//! on NVIDIA nodes, `kata` and `runsc` from `runtime.containerd.extraRuntimes`.
//!
//! Each is named `<handler>-<class>` (`nvidia-h100-sxm-ubuntu`), never the bare handler:
//! the GPU Operator creates and owns a RuntimeClass `nvidia` (its `operator.runtimeClass`)
//! whenever it deploys the toolkit, and several node classes share one cluster, so a bare
//! name would have two writers. Its `scheduling` carries the class's labels as the node
//! selector and a toleration per registration taint, so a Pod that names it lands on this
//! class's nodes, whose containerd has the handler. Render writes them
//! (`cluster/runtime-classes/*.yaml`); `verify --phase cluster` checks the cluster holds
//! them, so both take them from here.

use super::Spec;
use super::model::{ExtraRuntime, Vendor};
use super::value::TaintEffect;
use serde::Serialize;
use std::collections::BTreeMap;

/// One `node.k8s.io/v1` RuntimeClass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeClass {
    /// `<handler>-<class>`.
    pub name: String,
    /// The `[…containerd.runtimes.<handler>]` table it selects.
    pub handler: &'static str,
    /// `scheduling.nodeSelector`: the class's `kubernetes.labels` (empty: no selector).
    pub node_selector: BTreeMap<String, String>,
    /// `scheduling.tolerations`: `Exists` on each registration taint's key and effect.
    pub tolerations: Vec<Toleration>,
}

/// A core/v1 Toleration that matches a taint whatever its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Toleration {
    pub key: String,
    pub operator: &'static str,
    pub effect: TaintEffect,
}

/// The runtime handlers containerd is given beside `runc`, in the config's order.
pub fn handlers(s: &Spec) -> Vec<&'static str> {
    let mut out = Vec::new();
    if s.accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        out.push("nvidia");
    }
    for r in &s.runtime.containerd.extra_runtimes {
        out.push(match r {
            ExtraRuntime::Kata => "kata",
            ExtraRuntime::Gvisor => "runsc",
        });
    }
    out
}

/// The RuntimeClasses of `s`, one per handler of [`handlers`].
pub fn of(s: &Spec) -> Vec<RuntimeClass> {
    let node_selector: BTreeMap<String, String> = s
        .kubernetes
        .labels
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.as_str().to_owned()))
        .collect();
    let tolerations: Vec<Toleration> = s
        .kubernetes
        .taints
        .iter()
        .map(|t| Toleration {
            key: t.key.as_str().to_owned(),
            operator: "Exists",
            effect: t.effect,
        })
        .collect();
    handlers(s)
        .into_iter()
        .map(|handler| RuntimeClass {
            name: format!("{handler}-{}", s.metadata.name.as_str()),
            handler,
            node_selector: node_selector.clone(),
            tolerations: tolerations.clone(),
        })
        .collect()
}
