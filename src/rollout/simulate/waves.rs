//! The rollout policy the simulation follows, as the rendered manifests run it: a wave
//! reaches each of its nodes at once (a node in automatic recovery is waited for, one in
//! repair is left out), each goes through cordon, drain, apply, reboot and acceptance as
//! the change's impact needs, the gate runs after the wave's last node, and a failed node
//! is returned to the previous image.

use super::Sim;
use super::fleet::{Health, Image};
use super::queue::Event;
use crate::rollout::faults::What;

impl Sim<'_> {
    /// The image a node gets when its repair reimages it: the new one once its wave has
    /// started, unless the rollout halted.
    pub(super) fn target(&self, i: usize) -> Image {
        if !self.halted && self.wave_of[i] < self.started {
            Image::UnacceptedNew
        } else {
            Image::Old
        }
    }

    /// Node `i` is on the previous image though its wave has started and does not wait
    /// for it: the wave left it out (out for a fault it did not recover from by then), and
    /// only a reimage brings it to the image the wave targets.
    pub(super) fn missed_its_wave(&self, i: usize) -> bool {
        self.nodes.image[i] == Image::Old
            && self.target(i) == Image::UnacceptedNew
            && !self.wave_waits[i]
    }

    pub(super) fn one_done(&mut self, gate: f64) {
        self.pending -= 1;
        if self.pending == 0 {
            self.at(gate, Event::Gate);
        }
    }

    /// The running wave reaches node `i`.
    pub(super) fn begin(&mut self, i: usize) {
        match (self.nodes.health[i], self.cases[i]) {
            // Started at once: a fault at the same moment must not strike it first.
            (Health::InService, _) => self.step(Event::Start(i)),
            (Health::Faulty, Some(c)) if c.recovering() => {
                self.wave_waits[i] = true;
                self.waited_by_wave += 1;
            }
            _ => {
                self.left_out_by_wave += 1;
                let gate = self.rng.span(self.input.durations.gate);
                self.one_done(gate);
            }
        }
    }

    /// A rollout event: a node through drain, apply, reboot and acceptance, or back to the
    /// previous image after a halt.
    pub(super) fn rollout(&mut self, e: Event) {
        let d = &self.input.durations;
        match e {
            Event::Start(i) => {
                self.nodes.health[i] = Health::Upgrading;
                self.note(i, What::Upgrade);
                if self.steps.cordon {
                    self.nodes.set_down(i, true, true);
                }
                if self.steps.drain {
                    let t = self.rng.span(d.drain);
                    self.at(t, Event::Drained(i));
                } else {
                    self.at(0.0, Event::Drained(i));
                }
            }
            Event::Drained(i) => {
                let t = self.rng.span(d.apply);
                if self.rng.chance(self.input.failures.apply) {
                    // The Job failed: the node stays cordoned, its image in doubt.
                    self.nodes.set_down(i, true, true);
                    self.nodes.failed[i] = true;
                    self.nodes.image[i] = Image::UnacceptedNew;
                    self.at(t, Event::Judged(i));
                } else {
                    self.at(t, Event::Applied(i));
                }
            }
            Event::Applied(i) => {
                self.nodes.image[i] = Image::UnacceptedNew;
                if self.steps.reboot {
                    let t = self.rng.span(d.reboot);
                    self.at(t, Event::Rebooted(i));
                } else {
                    self.at(0.0, Event::Rebooted(i));
                }
            }
            Event::Rebooted(i) => {
                let t = self.rng.span(d.accept);
                if self.rng.chance(self.input.failures.accept) {
                    self.nodes.failed[i] = true;
                }
                self.at(t, Event::Judged(i));
            }
            Event::Judged(i) => {
                if self.nodes.failed[i] {
                    // Kept out of service: cordoned until returned.
                    self.nodes.set_down(i, true, true);
                } else {
                    self.nodes.image[i] = Image::AcceptedNew;
                    self.nodes.set_down(i, true, false);
                    self.nodes.health[i] = Health::InService;
                    self.note(i, What::InService);
                }
                let gate = self.rng.span(d.gate);
                self.one_done(gate);
            }
            Event::RollbackStart(i) => {
                self.nodes.set_down(i, true, true);
                let t = self.rng.span(d.rollback);
                self.at(t, Event::RolledBack(i));
            }
            Event::RolledBack(i) => {
                self.nodes.image[i] = Image::Old;
                self.nodes.failed[i] = false;
                self.nodes.set_down(i, true, false);
                self.nodes.health[i] = Health::InService;
                self.note(i, What::InService);
                self.one_done(0.0);
            }
            _ => unreachable!("not a rollout event: {e:?}"),
        }
    }
}
