//! Rules for `rollout`: budgets and limits serde cannot bound, the applier pinned by
//! digest, and a repair template that must not reboot.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::RawBlueprint;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let Some(r) = &bp.rollout else { return };
    for (field, message) in r.problems() {
        out.error("rollout", &p(&field), message);
    }
}
