//! The remediation policy the simulation follows, as the rendered manifests run it
//! ([`crate::rollout::faults`]): faults strike nodes in service by class; a transient one
//! restarts the workload's Pod; a driver or daemon fault is cleared by a daemon restart
//! within its window or counted by its NodeHealthCheck and rebooted once; a device or link
//! fault climbs the recovery ladder: rebooted while the node had fewer than `maxReboots`
//! within the ladder's window, then (as verify on the node then asks for service) the
//! repair queue; a driver reboot that did not clear it goes there too; NodeHealthCheck
//! holds remediations back while more than `maxUnhealthy` of its nodes are unhealthy, and
//! a node returns to service only after acceptance passes again, judged against the image
//! its wave targets: one its wave left out and a reboot cleared on the previous image is
//! refused and queued for repair, whose reimage brings the wave's image.

use super::Sim;
use super::fleet::{Health, Image};
use super::queue::Event;
use crate::rollout::faults::{Class, Group, What};

/// A node's fault while it is handled.
#[derive(Debug, Clone, Copy)]
pub(super) struct Case {
    class: Class,
    since: f64,
    /// In the repair queue rather than automatic recovery.
    repair: bool,
    repairs: u32,
    /// The remediation reboot took longer than `rebootTimeout`.
    timed_out: bool,
    waiting_since: Option<f64>,
    /// Counted unhealthy by its NodeHealthCheck.
    counted: bool,
    /// Repaired and reimaged, its acceptance running.
    accepting: bool,
}

impl Case {
    /// In automatic recovery: a driver or daemon fault that a daemon restart or the one
    /// reboot may still clear, a hardware fault in the ladder's reboots (not held back by
    /// NodeHealthCheck, not in the repair queue), or back from its repair with its
    /// acceptance running. A wave waits for such a node instead of leaving it out (a node
    /// reimaged just before its wave came would otherwise stay on the previous image).
    pub(super) fn recovering(&self) -> bool {
        ((self.class == Class::DriverDaemon || self.class.hardware()) && !self.repair
            || self.accepting)
            && self.waiting_since.is_none()
    }
}

impl Sim<'_> {
    /// A fault event: a fault striking, and the node's recovery as the rendered remediation
    /// runs it.
    pub(super) fn remediation(&mut self, e: Event) {
        let d = &self.input.durations;
        let f = &self.input.faults;
        match e {
            Event::Fault(c) => self.fault(c),
            Event::DaemonRestarted(i) => {
                self.count(Class::DriverDaemon).daemon_restarts += 1;
                self.note(i, What::Restarted);
                self.back(i);
            }
            Event::Detected(i) => {
                let Some(g) = self.cases[i].and_then(|c| c.class.group()) else {
                    return;
                };
                self.unhealthy[g.index()] += 1;
                self.note(i, What::Unhealthy(g));
                if let Some(c) = &mut self.cases[i] {
                    c.counted = true;
                }
                if self.unhealthy[g.index()] <= f.max_unhealthy {
                    self.remediate(i, g);
                } else {
                    self.waited += 1;
                    self.note(i, What::Waits(g));
                    if let Some(c) = &mut self.cases[i] {
                        c.waiting_since = Some(self.now);
                    }
                    self.waiting[g.index()].push_back(i);
                    self.leave_out(i);
                }
            }
            Event::RemediationRebooted(i) => {
                if self.cases[i].is_some_and(|c| c.timed_out) {
                    // NodeHealthCheck's timeout: the remediation failed; a person takes it.
                    self.queue_repair(i);
                } else {
                    let t = self.rng.span(d.accept);
                    self.at(t, Event::Reaccepted(i));
                }
            }
            Event::Repaired(i) => {
                let Some(c) = &mut self.cases[i] else { return };
                c.repairs += 1;
                c.accepting = true;
                let class = c.class;
                self.count(class).repairs += 1;
                self.note(i, What::Repaired);
                // The repair reimages the node with the image its wave targets.
                self.nodes.image[i] = self.target(i);
                let t = self.rng.span(d.accept);
                self.at(t, Event::Reaccepted(i));
            }
            Event::Reaccepted(i) => {
                let Some(c) = self.cases[i] else { return };
                if let Some(c) = &mut self.cases[i] {
                    c.accepting = false;
                }
                let p = if c.repair {
                    f.repair_clears
                } else if c.class.hardware() {
                    f.reboot_clears_hardware
                } else {
                    f.reboot_clears
                };
                let cleared = self.rng.chance(p);
                if cleared && self.missed_its_wave(i) {
                    // Cleared, but still on the previous image after its wave left it out
                    // (held back by NodeHealthCheck then): readmission judges it against
                    // the image its wave targets and refuses it. It stays out, and the
                    // repair queue's reimage brings it to its wave's image.
                    self.note(i, What::AcceptFailed);
                    self.queue_repair(i);
                } else if cleared {
                    self.note(i, What::Accepted);
                    if self.nodes.image[i] == Image::UnacceptedNew {
                        self.nodes.image[i] = Image::AcceptedNew;
                    }
                    self.back(i);
                } else {
                    self.note(i, What::AcceptFailed);
                    if !c.repair && c.class.hardware() {
                        // The reboot did not clear it: the next rung of the ladder,
                        // another reboot or, past the limit, service; a new remediation,
                        // so NodeHealthCheck's maxUnhealthy holds it as any other.
                        let g = Group::DeviceLink;
                        if self.unhealthy[g.index()] <= f.max_unhealthy {
                            self.remediate(i, g);
                        } else {
                            self.waited += 1;
                            self.note(i, What::Waits(g));
                            if let Some(c) = &mut self.cases[i] {
                                c.waiting_since = Some(self.now);
                            }
                            self.waiting[g.index()].push_back(i);
                            self.leave_out(i);
                        }
                    } else if !c.repair {
                        self.queue_repair(i);
                    } else if c.repairs < f.repair_attempts {
                        // Back to the repair queue: the wave does not wait for that.
                        self.leave_out(i);
                        self.note(i, What::ToRepair);
                        let t = self.rng.span(d.repair);
                        self.at(t, Event::Repaired(i));
                    } else {
                        self.retire(i);
                    }
                }
            }
            _ => unreachable!("not a remediation event: {e:?}"),
        }
    }

    /// A fault of class `c` strikes a node drawn at random, if it is in service (thinning
    /// keeps the rate per node in service).
    pub(super) fn fault(&mut self, c: Class) {
        if self.ending {
            return;
        }
        let n = self.nodes.health.len();
        let rate = self.input.faults.rate(c) * n as f64 / 86_400.0;
        let next = self.rng.exponential(rate);
        self.at(next, Event::Fault(c));
        let i = self.rng.below(n);
        if self.nodes.health[i] != Health::InService {
            return;
        }
        self.count(c).faults += 1;
        self.note(i, What::Fault(c));
        if c == Class::Transient {
            self.count(c).pod_restarts += 1;
            self.note(i, What::PodRestarted);
            return;
        }
        self.nodes.health[i] = Health::Faulty;
        self.nodes.set_down(i, false, true);
        self.cases[i] = Some(Case {
            class: c,
            since: self.now,
            repair: false,
            repairs: 0,
            timed_out: false,
            waiting_since: None,
            counted: false,
            accepting: false,
        });
        let d = &self.input.durations;
        let f = &self.input.faults;
        let detect = self.rng.span(d.detect);
        if c == Class::DriverDaemon {
            // NodeHealthCheck counts the node once the condition held for the window.
            let held = detect + f.restart_window;
            let restart = self.rng.span(d.daemon_restart);
            if restart < f.restart_window && self.rng.chance(f.restart_clears) {
                self.at(restart, Event::DaemonRestarted(i));
            } else {
                self.at(held, Event::Detected(i));
            }
        } else {
            // The device-link NodeHealthCheck's duration: 60 s.
            self.at(detect + 60.0, Event::Detected(i));
        }
    }

    /// NodeHealthCheck starts the remediation of node `i`.
    fn remediate(&mut self, i: usize, g: Group) {
        self.note(i, What::Remediate(g));
        let Some(c) = &mut self.cases[i] else { return };
        if let Some(since) = c.waiting_since.take() {
            self.longest_wait = self.longest_wait.max(self.now - since);
        }
        let class = c.class;
        let f = &self.input.faults;
        let now = self.now;
        let recent = self.hardware_reboots[i]
            .iter()
            .filter(|&&t| now - t <= f.ladder_window)
            .count();
        // The ladder: a hardware fault gets a reboot while the node had fewer than
        // maxReboots within the window; past that, verify on the node asks for service.
        let reboot =
            class == Class::DriverDaemon || (class.hardware() && recent < f.max_reboots as usize);
        if reboot {
            let t = self.rng.span(self.input.durations.reboot);
            let timeout = self.input.faults.reboot_timeout;
            if let Some(c) = &mut self.cases[i] {
                c.timed_out = t > timeout;
            }
            if class.hardware() {
                self.hardware_reboots[i].push(now);
            }
            self.count(class).reboots += 1;
            self.note(i, What::Reboot);
            self.at(t.min(timeout), Event::RemediationRebooted(i));
        } else {
            self.queue_repair(i);
        }
    }

    fn queue_repair(&mut self, i: usize) {
        let Some(c) = &mut self.cases[i] else { return };
        c.repair = true;
        let class = c.class;
        self.count(class).to_repair += 1;
        self.note(i, What::ToRepair);
        self.leave_out(i);
        let t = self.rng.span(self.input.durations.repair);
        self.at(t, Event::Repaired(i));
    }

    /// The running wave stops waiting for node `i` (no longer in automatic recovery): its
    /// repair, or a person, brings it to its wave's image.
    pub(super) fn leave_out(&mut self, i: usize) {
        if std::mem::take(&mut self.wave_waits[i]) {
            self.waited_by_wave -= 1;
            self.left_out_by_wave += 1;
            let gate = self.rng.span(self.input.durations.gate);
            self.one_done(gate);
        }
    }

    /// No longer counted by the group's NodeHealthCheck: start what waited, if it may.
    fn healthy(&mut self, i: usize, g: Group) {
        self.unhealthy[g.index()] -= 1;
        self.note(i, What::Healthy(g));
        while self.unhealthy[g.index()] <= self.input.faults.max_unhealthy
            && let Some(j) = self.waiting[g.index()].pop_front()
        {
            self.remediate(j, g);
        }
    }

    /// Back in service after the fault.
    fn back(&mut self, i: usize) {
        let Some(c) = self.cases[i].take() else {
            return;
        };
        self.node_seconds_lost += self.now - c.since;
        self.count(c.class).back_in_service += 1;
        // A daemon restart clears the fault before NodeHealthCheck counted the node.
        if c.counted
            && let Some(g) = c.class.group()
        {
            self.healthy(i, g);
        }
        self.nodes.health[i] = Health::InService;
        self.nodes.set_down(i, false, false);
        self.note(i, What::InService);
        if std::mem::take(&mut self.wave_waits[i]) {
            self.step(Event::Start(i));
        }
    }

    /// Off to repair for good: out of the fleet, no longer counted by NodeHealthCheck.
    fn retire(&mut self, i: usize) {
        self.leave_out(i);
        let Some(c) = self.cases[i].take() else {
            return;
        };
        self.node_seconds_lost += self.now - c.since;
        self.count(c.class).off_to_repair += 1;
        self.nodes.image[i] = Image::Repair;
        if c.counted
            && let Some(g) = c.class.group()
        {
            self.healthy(i, g);
        }
        self.note(i, What::OffToRepair);
    }
}
