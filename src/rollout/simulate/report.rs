//! What a simulation reports: the total time, the peak unavailable nodes of every failure
//! domain against its budget, where the rollout halted, what remediation did with each
//! fault class, and (for the property tests) where each node ended and its steps.

use std::collections::BTreeMap;

use serde::Serialize;

use super::fleet::Image;
use super::input::Shape;
use crate::diff::impact::Impact;
use crate::rollout::faults::{Class, Step};

#[derive(Debug, Clone, Serialize)]
pub struct Peak {
    pub key: String,
    pub value: String,
    pub nodes: usize,
    pub budget: usize,
    /// Most nodes the rollout took at once.
    pub peak: usize,
    /// Most nodes unavailable at once, the rollout's and the faulty ones together.
    pub peak_with_faults: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Halt {
    pub wave: usize,
    pub canary: bool,
    /// When the gate halted, seconds from the start.
    pub at_seconds: f64,
    pub failed: Vec<String>,
}

/// What happened to the faults of one class.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClassCount {
    pub class: Option<Class>,
    /// Faults that struck a node in service.
    pub faults: usize,
    /// Transient: the workload's Pod restarted, the node stayed in service.
    pub pod_restarts: usize,
    /// Driver or daemon: cleared by a daemon restart within the window.
    pub daemon_restarts: usize,
    /// Rebooted by NodeHealthCheck: a driver or daemon fault once, a device or link fault
    /// up to maxReboots times within the ladder's window.
    pub reboots: usize,
    /// Cordoned and queued for repair (hardware; or a reboot that did not clear it).
    pub to_repair: usize,
    pub repairs: usize,
    /// Back in service after acceptance passed again.
    pub back_in_service: usize,
    /// Off to repair for good.
    pub off_to_repair: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Remediation {
    /// NodeHealthCheck `maxUnhealthy`, nodes per NodeHealthCheck.
    pub max_unhealthy: usize,
    pub classes: Vec<ClassCount>,
    /// Remediations NodeHealthCheck held back because too many nodes were unhealthy.
    pub waited: usize,
    pub longest_wait_seconds: f64,
    /// Nodes a wave waited for (in automatic recovery when the wave started).
    pub waited_by_wave: usize,
    /// Nodes a wave left out (in repair, or held back by NodeHealthCheck): upgraded by
    /// their repair, unless still held back when the run ends.
    pub left_out_by_wave: usize,
    /// Most nodes out of service for faults at once, fleet-wide.
    pub peak_out_of_service: usize,
    pub node_hours_lost: f64,
    /// Nodes still out for faults when the rollout ended.
    pub out_at_rollout_end: usize,
    /// Nodes NodeHealthCheck never remediated: more of its nodes than `maxUnhealthy` were
    /// unhealthy at once, so it held back every remediation; a person must act.
    pub held_back: usize,
    /// When the last remediation under way at the rollout's end was over.
    pub settled_seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub seed: u64,
    pub shape: Shape,
    pub impact: Impact,
    pub waves: usize,
    pub canary_waves: usize,
    pub waves_completed: usize,
    /// When the rollout ended (the last gate, or the last node returned after a halt).
    pub total_seconds: f64,
    pub halted: Option<Halt>,
    pub accepted_new: usize,
    pub old: usize,
    pub rolled_back: usize,
    /// Off to repair for good (out of the fleet).
    pub off_to_repair: usize,
    /// Most nodes the rollout took at once, fleet-wide.
    pub peak_unavailable: usize,
    /// Most nodes unavailable at once, rollout and faults together.
    pub peak_unavailable_with_faults: usize,
    /// Per failure domain, sorted by key and value.
    pub domains: Vec<Peak>,
    pub remediation: Remediation,
    pub events: usize,
    /// Where each node ended, by name.
    #[serde(skip)]
    pub final_images: BTreeMap<String, Image>,
    /// Every node's steps, when [`Input::trace`](super::Input::trace) asked for them (nodes
    /// by index).
    #[serde(skip)]
    pub trace: Vec<Step>,
    /// Any domain whose peak exceeded its budget (empty unless the planner is wrong).
    pub over_budget: Vec<String>,
}
