//! Back in service after a remediation, only once acceptance passes again. The rendered
//! NodeHealthChecks keep a remediated node out (`healthyDelay: -1s`: NodeHealthCheck never
//! takes the node for healthy on its own) until the Node carries the annotation
//! [`CONFIRMED`], NodeHealthCheck's documented manual confirmation; it then removes the
//! remediation (the remediator uncordons) once the node's conditions are healthy, and
//! deletes the annotation. `nodeimg rollout readmit` judges the records of the recovered
//! nodes as the wave gate does ([`gate::judge_node`]) and writes that annotation, as
//! `kubectl annotate` commands, only for the nodes accepted again. nodeimg itself never
//! touches the cluster.

use std::collections::BTreeMap;

use serde::Serialize;

use super::gate::{self, NodeVerdict, Target};
use super::records::Read;

/// The Node annotation that lets NodeHealthCheck end a remediation held by a negative
/// `healthyDelay` (node-healthcheck-operator, `docs/configuration.md`).
pub const CONFIRMED: &str = "remediation.medik8s.io/manually-confirmed-healthy";

#[derive(Debug, Clone, Serialize)]
pub struct Readmit {
    /// The blueprint the nodes must be accepted on: `name version (id)`.
    pub blueprint: String,
    pub nodes: Vec<NodeVerdict>,
    /// One `kubectl annotate` per node accepted again.
    pub commands: Vec<String>,
}

/// `s` as one shell word (node names are DNS names; anything else is quoted).
fn word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '/'))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Judges `nodes` (every node with a record in `current` when empty) on their newest record
/// against `target`, and the annotation for each node accepted again; the annotation's
/// value is the accepting record's `createdAt`.
pub fn judge(
    target: &Target<'_>,
    blueprint: &str,
    nodes: &[String],
    current: &BTreeMap<String, Read>,
    previous: Option<&BTreeMap<String, Read>>,
) -> Readmit {
    let names: Vec<String> = if nodes.is_empty() {
        current.keys().cloned().collect()
    } else {
        nodes.to_vec()
    };
    let verdicts: Vec<NodeVerdict> = names
        .iter()
        .map(|n| gate::judge_node(target, n, n, current, previous))
        .collect();
    let commands = verdicts
        .iter()
        .filter(|v| v.accepted)
        .map(|v| {
            let at = current
                .get(&v.node)
                .map_or("", |r| r.record.created_at.as_str());
            format!(
                "kubectl annotate node {} {}={} --overwrite",
                word(&v.node),
                CONFIRMED,
                word(at)
            )
        })
        .collect();
    Readmit {
        blueprint: blueprint.to_owned(),
        nodes: verdicts,
        commands,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(word("gpu-001.example"), "gpu-001.example");
        assert_eq!(word("2026-12-01T10:00:00Z"), "2026-12-01T10:00:00Z");
        assert_eq!(word("a b'c"), r"'a b'\''c'");
        assert_eq!(word(""), "''");
    }
}
