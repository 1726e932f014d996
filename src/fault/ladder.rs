//! The bounded recovery ladder: restart (the application or the daemon), reset (the GPU or
//! the fabric), reboot, service. The node's own automation climbs it; the rung past the
//! last automatic one is service, where the node stays cordoned for a person. Reboots are
//! counted per node and kept across reboots (the health phase's state under
//! `/var/lib/nodeimg/`), so a fault that a reboot does not clear never reboots the node
//! more than [`Limits::reboots`] times within [`Limits::window_s`]: then the action is
//! `service`, and the NodeHealthCheck that reboots no longer acts on it.
//!
//! The defaults are gpud's (github.com/leptonai/gpud, components/accelerator/nvidia/xid):
//! `DefaultRebootThreshold = 2` reboots for a fault that asks for a reboot before
//! "hardware inspection", counted over its event lookback, `DefaultRetention` = 3 days.
//! A blueprint sets its own (`rollout.remediation.maxReboots`, `ladderWindow`); NodeHealthCheck
//! and `rollout simulate` read the same numbers.

use serde::{Deserialize, Serialize};

use super::Action;

/// Reboots for a fault before the node goes to service.
pub const DEFAULT_REBOOTS: u32 = 2;
/// The window the reboots are counted in: 3 days.
pub const DEFAULT_WINDOW_S: u64 = 3 * 24 * 3600;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub reboots: u32,
    pub window_s: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            reboots: DEFAULT_REBOOTS,
            window_s: DEFAULT_WINDOW_S,
        }
    }
}

/// The recovery attempts made on a node, by rung: unix seconds of each.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Attempts {
    /// Boots that began while a finding asked for a reset or a reboot.
    #[serde(default)]
    pub reboots: Vec<u64>,
    /// Resets the node saw done (a driver's own reset in the kernel log, or a reset-level
    /// finding that came back).
    #[serde(default)]
    pub resets: Vec<u64>,
}

/// At most this many attempts of a rung are remembered (the oldest go first).
const KEEP: usize = 64;

impl Attempts {
    pub fn note_reboot(&mut self, at: u64) {
        push(&mut self.reboots, at);
    }

    pub fn note_reset(&mut self, at: u64) {
        push(&mut self.resets, at);
    }

    /// Reboots within the window before `now`.
    pub fn reboots_within(&self, now: u64, limits: &Limits) -> u32 {
        count(&self.reboots, now, limits.window_s)
    }

    pub fn resets_within(&self, now: u64, limits: &Limits) -> u32 {
        count(&self.resets, now, limits.window_s)
    }

    /// Forgets what is older than the window.
    pub fn prune(&mut self, now: u64, limits: &Limits) {
        let keep = |t: &u64| *t <= now && now - *t <= limits.window_s;
        self.reboots.retain(keep);
        self.resets.retain(keep);
    }
}

fn push(list: &mut Vec<u64>, at: u64) {
    list.push(at);
    if list.len() > KEEP {
        list.remove(0);
    }
}

fn count(list: &[u64], now: u64, window: u64) -> u32 {
    list.iter()
        .filter(|&&t| t <= now && now - t <= window)
        .count() as u32
}

/// Whether automation may still act on a finding with this action, or it is the
/// service rung's: a reset or a reboot is on the ladder; past the reboot limit, the next
/// rung is service.
pub fn rung(action: Action, reboots: u32, limits: &Limits) -> Action {
    if (Action::ResetGpu..=Action::RebootNode).contains(&action) && reboots >= limits.reboots {
        Action::Service
    } else {
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_reboot_limit_the_node_goes_to_service() {
        let l = Limits::default();
        assert_eq!(rung(Action::RebootNode, 0, &l), Action::RebootNode);
        assert_eq!(rung(Action::ResetGpu, 1, &l), Action::ResetGpu);
        assert_eq!(rung(Action::ResetGpu, 2, &l), Action::Service);
        assert_eq!(rung(Action::RestartApp, 9, &l), Action::RestartApp);
        assert_eq!(
            rung(Action::CheckCoolingPower, 9, &l),
            Action::CheckCoolingPower
        );
    }

    #[test]
    fn attempts_are_counted_in_the_window_and_bounded() {
        let l = Limits::default();
        let mut a = Attempts::default();
        let now = 10 * DEFAULT_WINDOW_S;
        a.note_reboot(now - DEFAULT_WINDOW_S - 1);
        a.note_reboot(now - 10);
        assert_eq!(a.reboots_within(now, &l), 1);
        a.prune(now, &l);
        assert_eq!(a.reboots.len(), 1);
        for i in 0..200 {
            a.note_reset(now - 200 + i);
        }
        assert_eq!(a.resets.len(), KEEP);
    }
}
