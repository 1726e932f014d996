//! What a simulation is given: the synthetic fleet's shape, the plan's settings and the
//! change's impact, each phase's duration range, the failure probabilities of the upgrade,
//! the node faults and their remediation, and the seed.

use serde::Serialize;

use super::super::faults::Faults;
use super::super::plan::Settings;
use crate::diff::impact::Impact;

/// The shape of the synthetic fleet.
#[derive(Debug, Clone, Serialize)]
pub struct Shape {
    pub nodes: usize,
    pub zones: usize,
    pub nodes_per_rack: usize,
    pub skus: usize,
}

/// Seconds a phase takes: uniform between the two.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Span {
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Durations {
    pub drain: Span,
    pub apply: Span,
    pub reboot: Span,
    pub accept: Span,
    pub gate: Span,
    pub rollback: Span,
    /// From a fault to the condition: node-problem-detector runs the health plugin every
    /// 5 minutes (the rendered `invoke_interval`).
    pub detect: Span,
    /// A daemon restart by systemd or the operator's DaemonSet; it clears the fault only
    /// when it ends within `daemonRestartWindow`.
    pub daemon_restart: Span,
    /// The repair queue: the ticket, the hardware swap, the reimage.
    pub repair: Span,
}

impl Default for Durations {
    fn default() -> Self {
        let s = |min, max| Span { min, max };
        Durations {
            drain: s(60.0, 600.0),
            apply: s(60.0, 300.0),
            reboot: s(300.0, 900.0),
            // Layers 2–5: inventory, smoke Pod, DCGM level 3, NCCL, the framework job.
            accept: s(1800.0, 3600.0),
            gate: s(30.0, 120.0),
            rollback: s(900.0, 1800.0),
            detect: s(0.0, 300.0),
            daemon_restart: s(10.0, 300.0),
            // One to five days.
            repair: s(86_400.0, 432_000.0),
        }
    }
}

/// Probabilities per node.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Failures {
    /// The upgrade Job fails (drain timeout, the applier fails).
    pub apply: f64,
    /// The node fails acceptance on the new image.
    pub accept: f64,
    /// Force the first canary to fail acceptance.
    pub canary: bool,
}

#[derive(Debug, Clone)]
pub struct Input {
    pub shape: Shape,
    pub settings: Settings,
    pub impact: Impact,
    pub durations: Durations,
    pub failures: Failures,
    /// Node faults and their remediation.
    pub faults: Faults,
    /// Keep every node's steps in [`Report::trace`](super::Report::trace) (for
    /// [`faults::check`](crate::rollout::faults::check)).
    pub trace: bool,
    pub seed: u64,
}
