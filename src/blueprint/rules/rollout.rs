//! Rules for `rollout`: budgets and limits serde cannot bound, the applier pinned by
//! digest, a repair template that must not reboot, and a warning when GPUs or RDMA NICs
//! have no repair template (a failure that needs a person then takes the node out of
//! scheduling, through the rendered NFD taint, but reaches no repair queue).

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
        // With GPUs, node-problem-detector's service rule and the NFD taint take the node
        // out by default (`render::context::remediation::Isolation`); RDMA NICs alone get
        // no health rules, so nothing isolates them.
        let message = if bp.accelerators.is_some() {
            "no `repair` template: a device or link fault the reboots did not clear (or one \
             that needs cooling, power or service) taints the node nodeimg.dev/service-required \
             (NoSchedule, set by NFD from remediation/isolation.yaml) and keeps its evidence, \
             but no repair queue is told; name the site's repair queue in \
             rollout.remediation.repair"
        } else {
            "no `repair` template: device and link faults get their node conditions and \
             evidence, but nothing cordons the node (NodeHealthCheck is rendered only with a \
             remediator that never reboots); name the site's repair queue in \
             rollout.remediation.repair, or cordon by hand"
        };
        out.warning("remediation-repair", &p("rollout.remediation"), message);
    }
}
