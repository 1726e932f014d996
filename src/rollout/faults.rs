//! Node faults in `rollout simulate` and the remediation the rendered manifests set up for
//! each class (`cluster/remediation/`, `render::context::remediation`):
//!
//! - **transient** (an application error): no node condition; the workload's controller
//!   restarts its Pod and the node stays in service;
//! - **driver-daemon**: systemd and the operators' DaemonSets restart the daemon; when the
//!   condition still holds after `daemonRestartWindow`, NodeHealthCheck reboots the node
//!   once (Self Node Remediation), for at most `rebootTimeout`; the node returns only after
//!   acceptance passes again, else it goes to the repair queue;
//! - **device** and **link**: the recovery ladder ([`crate::fault::ladder`]): NodeHealthCheck
//!   reboots the node (the reset of the GPU or the fabric comes with it), and a reboot that
//!   does not clear the fault is followed by another only while the node had fewer than
//!   [`Faults::max_reboots`] within [`Faults::ladder_window`]; past that, verify on the
//!   node asks for service and the repair template cordons the node and queues it for
//!   repair — never a reboot loop; after the repair (the node is reimaged with the image
//!   its wave targets) it returns only when acceptance passes, and after
//!   [`Faults::repair_attempts`] failed repairs it is off to repair for good (taken out of
//!   the fleet).
//!
//! NodeHealthCheck starts a remediation only while at most `maxUnhealthy` of the nodes it
//! selects are unhealthy; the others wait. Faults arrive per node and class as Poisson
//! processes (a rate per node per day) and strike nodes in service.
//!
//! [`check`] replays a run's [`Step`] trace and reports every broken rule; the property tests
//! run it on many generated fleets, independent of the simulator's own bookkeeping.

use std::collections::BTreeMap;

use serde::Serialize;

/// A fault class, as the health checks and the remediation manifests name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Transient,
    DriverDaemon,
    Device,
    Link,
}

impl Class {
    pub const ALL: [Class; 4] = [
        Class::Transient,
        Class::DriverDaemon,
        Class::Device,
        Class::Link,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Transient => "transient",
            Class::DriverDaemon => "driver-daemon",
            Class::Device => "device",
            Class::Link => "link",
        }
    }

    /// A broken device or link: rebooted at most `maxReboots` times within the ladder's
    /// window, then repaired.
    pub fn hardware(self) -> bool {
        matches!(self, Class::Device | Class::Link)
    }

    /// The NodeHealthCheck that acts on the class (none for a transient fault).
    pub fn group(self) -> Option<Group> {
        match self {
            Class::Transient => None,
            Class::DriverDaemon => Some(Group::DriverDaemon),
            Class::Device | Class::Link => Some(Group::DeviceLink),
        }
    }
}

impl std::str::FromStr for Class {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Class::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "`{s}` is not a fault class ({})",
                    Class::ALL.map(Class::as_str).join(", ")
                )
            })
    }
}

/// One rendered NodeHealthCheck (`nodehealthcheck-<group>.yaml`); `maxUnhealthy` counts
/// the unhealthy nodes of each separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    DriverDaemon,
    DeviceLink,
}

impl Group {
    pub const ALL: [Group; 2] = [Group::DriverDaemon, Group::DeviceLink];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// The fault model of a simulation.
#[derive(Debug, Clone, Serialize)]
pub struct Faults {
    /// Faults per node per day, by class (absent: none).
    pub rates: BTreeMap<Class, f64>,
    /// NodeHealthCheck `maxUnhealthy`, in nodes (the blueprint's, resolved on the fleet).
    pub max_unhealthy: usize,
    /// `rollout.remediation.daemonRestartWindow`, seconds.
    pub restart_window: f64,
    /// `rollout.remediation.rebootTimeout`, seconds.
    pub reboot_timeout: f64,
    /// How likely a daemon restart clears a driver or daemon fault within the window.
    pub restart_clears: f64,
    /// How likely the one reboot clears it (acceptance passes afterwards).
    pub reboot_clears: f64,
    /// How likely acceptance passes after a repair.
    pub repair_clears: f64,
    /// Repairs before a node is off to repair for good.
    pub repair_attempts: u32,
    /// `rollout.remediation.maxReboots`: reboots for device and link faults within the
    /// window before the node goes to service.
    pub max_reboots: u32,
    /// `rollout.remediation.ladderWindow`, seconds.
    pub ladder_window: f64,
    /// How likely a reboot clears a device or link fault (acceptance passes afterwards).
    pub reboot_clears_hardware: f64,
}

impl Default for Faults {
    /// No faults; the recovery odds and windows of the blueprint defaults.
    fn default() -> Self {
        Faults {
            rates: BTreeMap::new(),
            max_unhealthy: 1,
            restart_window: 600.0,
            reboot_timeout: 1800.0,
            restart_clears: 0.8,
            reboot_clears: 0.9,
            repair_clears: 0.95,
            repair_attempts: 3,
            max_reboots: crate::fault::ladder::DEFAULT_REBOOTS,
            ladder_window: crate::fault::ladder::DEFAULT_WINDOW_S as f64,
            reboot_clears_hardware: 0.5,
        }
    }
}

impl Faults {
    pub fn rate(&self, c: Class) -> f64 {
        self.rates.get(&c).copied().unwrap_or(0.0)
    }
}

/// What happened to a node, in the order it happened (the trace [`check`] reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum What {
    /// A fault struck the node (in service).
    Fault(Class),
    /// The workload's Pod was restarted; the node stayed in service.
    PodRestarted,
    /// A daemon restart cleared the fault within the window.
    Restarted,
    /// The condition holds long enough: the group's NodeHealthCheck counts the node.
    Unhealthy(Group),
    /// NodeHealthCheck held the remediation back: too many unhealthy nodes.
    Waits(Group),
    /// NodeHealthCheck started the remediation.
    Remediate(Group),
    /// Self Node Remediation rebooted the node.
    Reboot,
    /// Cordoned and queued for repair, evidence kept.
    ToRepair,
    /// Repaired and reimaged.
    Repaired,
    /// Acceptance after recovery passed.
    Accepted,
    /// Acceptance after recovery failed.
    AcceptFailed,
    /// No longer counted unhealthy (accepted again, or taken out of the fleet).
    Healthy(Group),
    /// Schedulable again, running work.
    InService,
    /// Taken out of service by the rollout (its cordon).
    Upgrade,
    /// Off to repair for good: out of the fleet.
    OffToRepair,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Step {
    pub at_ms: u64,
    pub node: usize,
    pub what: What,
}

/// [`check_with`] under the default ladder limits.
pub fn check(trace: &[Step], nodes: usize, max_unhealthy: usize) -> Vec<String> {
    let d = Faults::default();
    check_with(trace, nodes, max_unhealthy, d.max_reboots, d.ladder_window)
}

/// The rules a remediation must keep, checked on a trace of `nodes` nodes that all start
/// in service: a node leaves and returns to service in turn; a node back from a hardware
/// fault or from a remediation reboot passed acceptance first; a node is rebooted for
/// hardware faults at most `max_reboots` times within any `ladder_window` seconds (the
/// recovery ladder: never a reboot loop); a driver fault is rebooted at most once;
/// NodeHealthCheck starts a remediation only while at most `max_unhealthy` nodes of its
/// group are unhealthy; every node ends in service, off to repair, or held back by
/// NodeHealthCheck (more nodes unhealthy than `maxUnhealthy`: it remediates none of them,
/// a person must). Returns what is broken, empty when nothing.
pub fn check_with(
    trace: &[Step],
    nodes: usize,
    max_unhealthy: usize,
    max_reboots: u32,
    ladder_window: f64,
) -> Vec<String> {
    let window_ms = (ladder_window * 1000.0).round().max(0.0) as u64;
    #[derive(Clone, Default)]
    struct Node {
        out: bool,
        fault: Option<Class>,
        reboots: u32,
        /// When the node was rebooted for hardware faults, across faults.
        hardware_reboots: Vec<u64>,
        /// The last acceptance outcome since the fault.
        accepted: bool,
        gone: bool,
        /// Held back by NodeHealthCheck and not remediated since.
        waiting: bool,
    }
    let mut out = Vec::new();
    let mut state = vec![Node::default(); nodes];
    let mut unhealthy = [0usize; 2];
    let mut last = 0;
    for s in trace {
        let mut bad = |why: &str| out.push(format!("node {} at {} ms: {why}", s.node, s.at_ms));
        if s.at_ms < last {
            bad("time runs backwards");
        }
        last = s.at_ms;
        let n = &mut state[s.node];
        if n.gone {
            bad("an event after the node left the fleet");
        }
        match s.what {
            What::Fault(c) => {
                if n.out {
                    bad("a fault struck a node out of service");
                }
                if c != Class::Transient {
                    n.out = true;
                    n.fault = Some(c);
                    n.reboots = 0;
                    n.accepted = false;
                }
            }
            What::PodRestarted => {
                if n.out {
                    bad("a Pod restart on a node out of service");
                }
            }
            What::Restarted => {
                if n.fault != Some(Class::DriverDaemon) || n.reboots > 0 {
                    bad("a daemon restart cleared what is not a fresh driver or daemon fault");
                }
                n.accepted = true;
            }
            What::Unhealthy(g) => unhealthy[g.index()] += 1,
            What::Healthy(g) => {
                if unhealthy[g.index()] == 0 {
                    bad("healthy again without having been unhealthy");
                }
                unhealthy[g.index()] = unhealthy[g.index()].saturating_sub(1);
            }
            What::Waits(_) => n.waiting = true,
            What::Remediate(g) => {
                n.waiting = false;
                if unhealthy[g.index()] > max_unhealthy {
                    bad(&format!(
                        "a remediation started while {} nodes were unhealthy (maxUnhealthy {max_unhealthy})",
                        unhealthy[g.index()]
                    ));
                }
            }
            What::Reboot => {
                n.reboots += 1;
                if n.fault.is_some_and(Class::hardware) {
                    n.hardware_reboots.push(s.at_ms);
                    let recent = n
                        .hardware_reboots
                        .iter()
                        .filter(|&&t| s.at_ms - t <= window_ms)
                        .count();
                    if recent > max_reboots as usize {
                        bad(&format!(
                            "rebooted {recent} times for hardware faults within the ladder window (maxReboots {max_reboots})"
                        ));
                    }
                } else if n.reboots > 1 {
                    bad("a driver or daemon fault was rebooted more than once");
                }
                n.accepted = false;
            }
            What::ToRepair | What::Repaired => n.accepted = false,
            What::Accepted => n.accepted = true,
            What::AcceptFailed => n.accepted = false,
            What::InService => {
                if !n.out {
                    bad("returned to service while in service");
                }
                if n.fault.is_some() && !n.accepted {
                    bad("returned to service after a fault without passing acceptance");
                }
                n.out = false;
                n.fault = None;
            }
            What::Upgrade => {
                if n.out {
                    bad("the rollout took a node already out of service");
                }
                n.out = true;
            }
            What::OffToRepair => {
                n.gone = true;
            }
        }
    }
    for (i, n) in state.iter().enumerate() {
        if n.out && !n.gone && !n.waiting {
            out.push(format!(
                "node {i} ends out of service, neither off to repair nor held back by maxUnhealthy"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(steps: &[(usize, What)]) -> Vec<Step> {
        steps
            .iter()
            .enumerate()
            .map(|(t, &(node, what))| Step {
                at_ms: t as u64,
                node,
                what,
            })
            .collect()
    }

    #[test]
    fn the_checker_sees_each_broken_rule() {
        use What::*;
        let good = at(&[
            (0, Fault(Class::Device)),
            (0, Unhealthy(Group::DeviceLink)),
            (0, Remediate(Group::DeviceLink)),
            (0, ToRepair),
            (0, Repaired),
            (0, Accepted),
            (0, Healthy(Group::DeviceLink)),
            (0, InService),
        ]);
        assert!(check(&good, 1, 1).is_empty(), "{:?}", check(&good, 1, 1));
        let no_acceptance = at(&[(0, Fault(Class::Link)), (0, Repaired), (0, InService)]);
        assert!(check(&no_acceptance, 1, 1)[0].contains("without passing acceptance"));
        let rebooted = at(&[
            (0, Fault(Class::Device)),
            (0, Reboot),
            (0, Reboot),
            (0, Accepted),
            (0, InService),
        ]);
        assert!(
            check(&rebooted, 1, 1).is_empty(),
            "two reboots: the ladder's default"
        );
        let e = check_with(&rebooted, 1, 1, 1, 3600.0);
        assert!(e[0].contains("maxReboots 1"), "{e:?}");
        let looping = at(&[
            (0, Fault(Class::Link)),
            (0, Reboot),
            (0, Reboot),
            (0, Reboot),
            (0, Accepted),
            (0, InService),
        ]);
        assert!(check(&looping, 1, 1)[0].contains("3 times"));
        let twice = at(&[
            (0, Fault(Class::DriverDaemon)),
            (0, Reboot),
            (0, Reboot),
            (0, Accepted),
            (0, InService),
        ]);
        assert!(check(&twice, 1, 1)[0].contains("more than once"));
        let over = at(&[
            (0, Fault(Class::Device)),
            (1, Fault(Class::Link)),
            (0, Unhealthy(Group::DeviceLink)),
            (1, Unhealthy(Group::DeviceLink)),
            (1, Remediate(Group::DeviceLink)),
        ]);
        let e = check(&over, 2, 1);
        assert!(e[0].contains("maxUnhealthy 1"), "{e:?}");
        assert!(e.iter().any(|e| e.contains("ends out of service")));
    }
}
