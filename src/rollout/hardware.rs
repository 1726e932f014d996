//! Nodes whose hardware labels contradict the blueprint: a plan for an H100 blueprint
//! must not roll onto nodes that GPU feature discovery labels `NVIDIA-H200`, nor an
//! 8-GPU image onto a 4-GPU node. The Node list given to `rollout plan` is checked
//! against the blueprint's accelerators before any wave is planned.
//!
//! The labels read are the ones NVIDIA's GPU feature discovery writes (the GPU Operator
//! deploys it): `nvidia.com/gpu.product`, the product name with its blanks as dashes
//! (`NVIDIA-H100-80GB-HBM3`, `NVIDIA-L40S`, with `-SHARED` or a MIG suffix under
//! sharing), and `nvidia.com/gpu.count`. A product contradicts the blueprint when the
//! model's first word (`H100` of `H100 SXM`) is not one of its dash-separated words, so
//! `L40` does not pass for `L40S` and a form factor the label leaves out (SXM) is not
//! asked for. The count is not judged under MIG, where discovery counts MIG devices. A
//! node without these labels is not judged (it may not run discovery); a blueprint
//! without accelerators contradicts a node labelled with a GPU product.

use crate::blueprint;
use crate::blueprint::model::{SharingMode, Vendor};
use crate::k8s::Node;

pub const PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
pub const COUNT_LABEL: &str = "nvidia.com/gpu.count";

/// One node's label against the blueprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contradiction {
    pub node: String,
    pub label: &'static str,
    pub value: String,
    /// What the blueprint declares, in words.
    pub declared: String,
}

impl std::fmt::Display for Contradiction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}={}, the blueprint declares {}",
            self.node, self.label, self.value, self.declared
        )
    }
}

/// Every contradiction between `nodes`' hardware labels and `blueprint`.
pub fn contradictions(nodes: &[Node], blueprint: &blueprint::Spec) -> Vec<Contradiction> {
    let mut out = Vec::new();
    for node in nodes {
        let product = node.labels.get(PRODUCT_LABEL);
        let count = node.labels.get(COUNT_LABEL);
        let Some(acc) = &blueprint.accelerators else {
            if let Some(p) = product {
                out.push(Contradiction {
                    node: node.name.clone(),
                    label: PRODUCT_LABEL,
                    value: p.clone(),
                    declared: "no accelerators".into(),
                });
            }
            continue;
        };
        if acc.vendor != Vendor::Nvidia {
            // Discovery's labels are NVIDIA's: an NVIDIA product on an AMD blueprint's node.
            if let Some(p) = product {
                out.push(Contradiction {
                    node: node.name.clone(),
                    label: PRODUCT_LABEL,
                    value: p.clone(),
                    declared: format!("{} {}", acc.vendor, acc.model.as_str()),
                });
            }
            continue;
        }
        let family = acc
            .model
            .as_str()
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_ascii_uppercase();
        if let Some(p) = product
            && !p.split('-').any(|word| word.to_ascii_uppercase() == family)
        {
            out.push(Contradiction {
                node: node.name.clone(),
                label: PRODUCT_LABEL,
                value: p.clone(),
                declared: format!("{} ({family})", acc.model.as_str()),
            });
        }
        if acc.sharing.mode() != SharingMode::Mig
            && let Some(c) = count
            && c.trim() != acc.count.to_string()
        {
            out.push(Contradiction {
                node: node.name.clone(),
                label: COUNT_LABEL,
                value: c.clone(),
                declared: format!("{} GPUs", acc.count),
            });
        }
    }
    out
}
