//! The fleet a rollout covers: each Node reduced to what planning reads — its name, the
//! `kubernetes.io/hostname` an engine selects it by, its hardware SKU and its failure
//! domains (one value per failure-domain label key; a node without the label shares one
//! "unlabelled" domain of that key, so a budget still holds for it).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::k8s::Node;

/// The value a node without a failure-domain or SKU label gets.
pub const UNLABELLED: &str = "(unlabelled)";

/// The label system-upgrade-controller (and the scheduler) select a node by.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    /// `kubernetes.io/hostname`, or the name when the label is missing.
    pub hostname: String,
    pub sku: String,
    /// One value per key of [`Fleet::keys`], in that order.
    pub domains: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fleet {
    /// The failure-domain label keys.
    pub keys: Vec<String>,
    pub members: Vec<Member>,
}

impl Fleet {
    /// The fleet of `nodes`, sorted by name; a node named twice is refused.
    pub fn from_nodes(
        nodes: &[Node],
        keys: &[String],
        sku_labels: &[String],
    ) -> Result<Self, String> {
        let mut seen = BTreeSet::new();
        let mut members = Vec::with_capacity(nodes.len());
        for n in nodes {
            if !seen.insert(n.name.as_str()) {
                return Err(format!("node {} is listed twice", n.name));
            }
            let label = |k: &str| n.labels.get(k).cloned();
            members.push(Member {
                name: n.name.clone(),
                hostname: label(HOSTNAME_LABEL).unwrap_or_else(|| n.name.clone()),
                sku: sku_labels
                    .iter()
                    .find_map(|k| label(k))
                    .unwrap_or_else(|| UNLABELLED.to_owned()),
                domains: keys
                    .iter()
                    .map(|k| label(k).unwrap_or_else(|| UNLABELLED.to_owned()))
                    .collect(),
            });
        }
        members.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Fleet {
            keys: keys.to_vec(),
            members,
        })
    }

    /// How many nodes each failure domain holds: `sizes[key index][value]`.
    pub fn domain_sizes(&self) -> Vec<BTreeMap<&str, usize>> {
        let mut sizes = vec![BTreeMap::new(); self.keys.len()];
        for m in &self.members {
            for (k, v) in m.domains.iter().enumerate() {
                *sizes[k].entry(v.as_str()).or_insert(0) += 1;
            }
        }
        sizes
    }

    /// Nodes per SKU.
    pub fn skus(&self) -> BTreeMap<&str, usize> {
        let mut out = BTreeMap::new();
        for m in &self.members {
            *out.entry(m.sku.as_str()).or_insert(0) += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_domains_and_skus() {
        let nodes = crate::k8s::node::parse(
            r#"{"kind": "NodeList", "items": [
              {"metadata": {"name": "b", "labels": {"topology.kubernetes.io/zone": "z1",
                "nvidia.com/gpu.product": "H100", "kubernetes.io/hostname": "b-host"}}},
              {"metadata": {"name": "a", "labels": {}}}]}"#,
        )
        .unwrap();
        let f = Fleet::from_nodes(
            &nodes,
            &["topology.kubernetes.io/zone".into()],
            &["nvidia.com/gpu.product".into()],
        )
        .unwrap();
        assert_eq!(f.members[0].name, "a");
        assert_eq!(f.members[0].domains, [UNLABELLED]);
        assert_eq!(f.members[1].hostname, "b-host");
        assert_eq!(f.members[1].sku, "H100");
        assert_eq!(f.domain_sizes()[0]["z1"], 1);
        let twice = [nodes[0].clone(), nodes[0].clone()];
        assert!(Fleet::from_nodes(&twice, &[], &[]).is_err());
    }
}
