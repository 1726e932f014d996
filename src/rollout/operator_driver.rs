//! A GPU driver the NVIDIA GPU Operator owns, bumped by the change, staged like any driver
//! change: canaries first, acceptance between waves. The image does not carry that driver;
//! the operator's upgrade controller replaces it by the rendered `driver.upgradePolicy`,
//! and it would do so on every node as soon as the new operator values are applied. The
//! controller leaves out a node labelled `nvidia.com/gpu-driver-upgrade.skip=true`
//! (NVIDIA/k8s-operator-libs `pkg/upgrade/consts.go`, `UpgradeSkipNodeLabelKeyFmt` with the
//! driver name `gpu`; GPU Operator documentation, "Skipping Driver Upgrades"), and marks a
//! node it finished `nvidia.com/gpu-driver-upgrade-state=upgrade-done`. So the plan holds
//! every node of the rollout with that label before the values are applied, and each wave
//! releases its own nodes after its image is applied; the gate then asks each node's
//! acceptance record for the new driver, so a node the operator did not upgrade (still
//! held, `upgrade-failed`) halts the rollout as a failed acceptance does.
//!
//! One operator release, and so one set of values, serves every node class of the cluster:
//! `helm upgrade` bumps the driver on every node the operator manages, and the hold covers
//! only the nodes of this plan. The nodes of `--nodes` that `--selector` left out are
//! counted by class ([`OperatorDriver::unheld`]) and `rollout plan` warns with them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::blueprint::Spec;
use crate::blueprint::model::{DriverAuthority, Vendor};

/// The node label that keeps the operator's upgrade controller off a node.
pub const SKIP_LABEL: &str = "nvidia.com/gpu-driver-upgrade.skip";
/// The node label the upgrade controller keeps a node's upgrade state in, and the state
/// of a finished upgrade.
pub const STATE_LABEL: &str = "nvidia.com/gpu-driver-upgrade-state";
pub const DONE: &str = "upgrade-done";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorDriver {
    /// The driver versions of the old and new blueprint.
    pub from: String,
    pub to: String,
    /// Before `helm upgrade` with the new operator values: every node of the plan held out
    /// of the operator's upgrades, one command per wave.
    pub hold: Vec<String>,
    /// Per wave (by index), after its image is applied: its nodes released to the operator.
    pub release: Vec<String>,
    /// The label a node carries once the operator upgraded it.
    pub done: String,
    /// Nodes of `--nodes` outside the plan (left out by `--selector`), by the selector's
    /// label (`key=value`, `key unset`): the operator upgrades them too, unheld.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unheld: BTreeMap<String, usize>,
}

impl OperatorDriver {
    /// The warning `rollout plan` prints: the hold covers this plan's nodes only.
    pub fn warning(&self, held: usize) -> String {
        let mut w = format!(
            "one GPU operator release serves every node class: `helm upgrade` with the new \
             values upgrades the driver on every node the operator manages, and driver-hold.sh \
             holds only the {held} node(s) of this plan"
        );
        if self.unheld.is_empty() {
            w.push_str("; hold any other class's nodes too, or roll them in the same change");
        } else {
            let classes: Vec<String> = self
                .unheld
                .iter()
                .map(|(class, n)| format!("{class}: {n}"))
                .collect();
            w.push_str(&format!(
                "; not held, of --nodes: {} — hold them too ({SKIP_LABEL}=true), or roll them in the same change",
                classes.join(", ")
            ));
        }
        w
    }
}

/// The driver versions (old, new) where the NVIDIA GPU operator owns the driver on both
/// sides and the change bumps it; `None` otherwise (the image carries the driver, or the
/// operator is AMD's, which has no hold: [`super::unstaged_driver`]).
pub fn bump(old: &Spec, new: &Spec) -> Option<(String, String)> {
    bump_of(Vendor::Nvidia, old, new)
}

/// The driver versions (old, new) where `vendor`'s GPU operator owns the driver on both
/// sides and the change bumps it.
pub fn bump_of(vendor: Vendor, old: &Spec, new: &Spec) -> Option<(String, String)> {
    let driver = |s: &Spec| {
        let a = s.accelerators.as_ref()?;
        if a.vendor != vendor || a.driver.authority != DriverAuthority::Operator {
            return None;
        }
        a.driver.version.exact().map(|v| v.to_string())
    };
    let (from, to) = (driver(old)?, driver(new)?);
    (from != to).then_some((from, to))
}

/// The files `rollout plan --output` writes for it: `driver-hold.sh`, and one
/// `wave-NNN-driver.sh` per wave; `held`: how many nodes the plan holds.
pub fn scripts(d: &OperatorDriver, held: usize) -> Vec<(String, String)> {
    let script = |what: &str, lines: &[String]| {
        format!("#!/bin/sh\n# {what}\nset -e\n{}\n", lines.join("\n"))
    };
    let mut files = vec![(
        "driver-hold.sh".to_owned(),
        script(
            &format!(
                "Before `helm upgrade` with the new GPU operator values (driver {} -> {}): \
                 hold every node of the plan out of the operator's driver upgrades.\n# WARNING: {}",
                d.from,
                d.to,
                d.warning(held)
            ),
            &d.hold,
        ),
    )];
    for (i, release) in d.release.iter().enumerate() {
        files.push((
            format!("wave-{i:03}-driver.sh"),
            script(
                &format!(
                    "After wave-{i:03}.yaml: the wave's nodes to the GPU operator, which drains each \
                     and installs driver {}; then wait for {} on them, and accept.",
                    d.to, d.done
                ),
                std::slice::from_ref(release),
            ),
        ));
    }
    files
}

/// `s` as one shell word (node names are DNS names; anything else is quoted).
fn word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn label(nodes: &[String], change: &str) -> String {
    let names: Vec<String> = nodes.iter().map(|n| word(n)).collect();
    format!(
        "kubectl label node --overwrite {} {change}",
        names.join(" ")
    )
}

/// The staging of a driver bump from `from` to `to` over the waves' nodes, in wave order.
pub fn stage<'a>(
    waves: impl Iterator<Item = &'a [String]> + Clone,
    from: &str,
    to: &str,
) -> OperatorDriver {
    OperatorDriver {
        from: from.to_owned(),
        to: to.to_owned(),
        hold: waves
            .clone()
            .map(|nodes| label(nodes, &format!("{SKIP_LABEL}=true")))
            .collect(),
        release: waves
            .map(|nodes| label(nodes, &format!("{SKIP_LABEL}-")))
            .collect(),
        done: format!("{STATE_LABEL}={DONE}"),
        unheld: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(word("gpu-001.example"), "gpu-001.example");
        assert_eq!(word("a b"), "'a b'");
        assert_eq!(word("it's"), r"'it'\''s'");
    }
}
