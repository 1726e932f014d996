//! Rules for `rollout`: budgets and limits serde cannot bound, the applier pinned by
//! digest, a repair template that must not reboot, and a warning when GPUs or RDMA NICs
//! have no repair template (their device and link faults would then cordon nothing).

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::RawBlueprint;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let Some(r) = &bp.rollout else { return };
    for (field, message) in r.problems() {
        out.error("rollout", &p(&field), message);
    }
    let hardware = bp.accelerators.is_some() || bp.network.nics.iter().any(|n| n.rdma);
    if hardware && r.remediation.repair.is_none() {
        out.warning(
            "remediation-repair",
            &p("rollout.remediation"),
            "no `repair` template: device and link faults get their node conditions and \
             evidence, but nothing cordons the node (NodeHealthCheck is rendered only with a \
             remediator that never reboots); name the site's repair queue in \
             rollout.remediation.repair, or cordon by hand",
        );
    }
}
