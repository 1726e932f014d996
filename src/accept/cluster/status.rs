//! Layer 2, the node's state: the Ready and pressure conditions, and the runtime handlers
//! containerd was given (`status.runtimeHandlers`).

use super::Out;
use crate::blueprint;
use crate::fault::{Action, FaultClass};
use crate::k8s::{ConditionStatus, Node};
use crate::verify::checks::catalog::cluster as spec;

pub(super) fn conditions(out: &mut Out<'_>, node: &Node) {
    let checks: &[(&str, ConditionStatus, bool, FaultClass)] = &[
        (
            "Ready",
            ConditionStatus::True,
            true,
            FaultClass::DriverDaemon,
        ),
        (
            "MemoryPressure",
            ConditionStatus::False,
            true,
            FaultClass::OsMemoryDisk,
        ),
        (
            "DiskPressure",
            ConditionStatus::False,
            true,
            FaultClass::OsMemoryDisk,
        ),
        (
            "PIDPressure",
            ConditionStatus::False,
            true,
            FaultClass::OsMemoryDisk,
        ),
        (
            "NetworkUnavailable",
            ConditionStatus::False,
            false,
            FaultClass::DriverDaemon,
        ),
    ];
    for (kind, want, required, fault) in checks {
        let c = node.condition(kind);
        if c.is_none() && !required {
            continue;
        }
        let observed = c.map_or_else(
            || "absent".to_owned(),
            |c| {
                format!(
                    "{:?}{}",
                    c.status,
                    c.reason
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                )
            },
        );
        out.push(
            &spec::CONDITION,
            Some(kind),
            "the node is ready and under no pressure",
            Some(c.is_some_and(|c| c.status == *want)),
            format!("{want:?}"),
            observed,
            *fault,
            Action::RestartDaemon,
        );
    }
}

pub(super) fn handlers(out: &mut Out<'_>, blueprint: &blueprint::Spec, node: &Node) {
    let want = crate::blueprint::runtime_classes::handlers(blueprint);
    let have = node.status.as_ref().map(|s| &s.runtime_handlers);
    // status.runtimeHandlers exists from Kubernetes 1.30.
    let reported = have.is_some_and(|h| !h.is_empty());
    for handler in want {
        let found = have.is_some_and(|h| h.iter().any(|x| x == handler));
        out.push(
            &spec::RUNTIME_HANDLER,
            Some(handler),
            "containerd offers the runtime handler RuntimeClasses name",
            if reported { Some(found) } else { None },
            "listed in status.runtimeHandlers".into(),
            if reported {
                have.map(|h| h.join(", ")).unwrap_or_default()
            } else {
                "status.runtimeHandlers absent (Kubernetes before 1.30?)".into()
            },
            FaultClass::DriverDaemon,
            Action::RestartDaemon,
        );
    }
}
