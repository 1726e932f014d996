//! A GPU driver the AMD GPU Operator owns, bumped by the change: the operator rolls it by
//! the DeviceConfig's `spec.driver.upgradePolicy` (one failure domain's wave budget of nodes
//! at a time, each drained, upgraded and rebooted), but the waves cannot stage it. Its
//! upgrade manager has no per-node hold: every node the DeviceConfig selects that is
//! schedulable and ready is a candidate, and the only node label it reads,
//! `operator.amd.com/gpu-driver-upgrade-state=upgrade-required`, restarts a failed upgrade
//! (ROCm/gpu-operator v1.5.1 `internal/controllers/upgrademgr.go` `HandleUpgrade`,
//! `isNodeReadyForUpgrade`; `docs/drivers/upgrading.md`, "Recovery From Upgrade Failure";
//! the same at v1.2.0, v1.3.1 and v1.4.0). Cordoning keeps a node out, but a cordoned node
//! takes no work, so that is no hold. So `helm upgrade` with the new values upgrades every
//! selected node at the policy's pace, beside the waves and their gate, and `rollout plan`
//! says so: the site rolls the driver in its own change, or turns the policy off and moves
//! each wave's nodes itself (the operator's manual upgrade: drain the node, then set its
//! `kmm.node.kubernetes.io/version-module.<namespace>.<deviceconfig>` label to the new
//! version).

use serde::{Deserialize, Serialize};

use crate::blueprint::Spec;
use crate::blueprint::model::Vendor;

/// The node label whose value selects the driver KMM loads on a node under the operator's
/// manual upgrade (`docs/drivers/upgrading.md`, "Update Node Labels"), with the
/// DeviceConfig's namespace and name after it.
pub const MODULE_VERSION_LABEL: &str = "kmm.node.kubernetes.io/version-module";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnstagedDriver {
    /// The driver versions of the old and new blueprint.
    pub from: String,
    pub to: String,
    /// Why the waves do not stage it, and what the site does instead.
    pub warning: String,
}

/// The AMD GPU Operator's driver bump, where it owns the driver on both sides; `None`
/// otherwise.
pub fn of(old: &Spec, new: &Spec) -> Option<UnstagedDriver> {
    let (from, to) = super::operator_driver::bump_of(Vendor::Amd, old, new)?;
    let warning = format!(
        "the AMD GPU Operator's driver upgrade manager holds no node back: `helm upgrade` \
         with the new values upgrades driver {from} -> {to} on every node its DeviceConfig \
         selects, by driver.upgradePolicy (maxParallelUpgrades: one failure domain's wave \
         budget at a time), beside these waves and their gate, which do not check the \
         driver. Roll the driver in a change of its own and accept its nodes before the \
         next image; or set driver.upgradePolicy.enable to false and, after each wave, drain \
         its nodes and label them {MODULE_VERSION_LABEL}.<namespace>.<deviceconfig>={to} \
         (the operator's manual upgrade)"
    );
    Some(UnstagedDriver { from, to, warning })
}
