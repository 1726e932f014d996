//! Repeats escalate: the same code on the same device, judged again within a window, asks
//! for the next step, as NVIDIA's catalog and the field's health tools do. A storm (the
//! same event thousands of times in one log) is one occurrence: occurrences are counted
//! per judged run, not per line.
//!
//! The rules, each with what it follows:
//!
//! | finding's action | repeats in the window | becomes | because |
//! | --- | --- | --- | --- |
//! | restart-app | 3 within 24 h | reset-gpu | NVIDIA's Xid catalog, WORKFLOW_XID_13 and WORKFLOW_XID_31: faults that repeat on the same GPU (by PCI id) are a possible hardware issue; a single one is the application's |
//! | reset-gpu | 2 within 24 h | reboot-node | NVIDIA's Xid catalog, Xid 119/120: "A GPU reset or node power cycle may be needed if the error persists"; Xid 74: a reset or a reboot clears it |
//!
//! A reboot that does not clear a fault is the recovery ladder's to count ([`super::ladder`]).

use super::Action;

/// One escalation rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub from: Action,
    pub repeats: u32,
    pub window_s: u64,
    pub to: Action,
    pub source: &'static str,
}

pub const DAY_S: u64 = 24 * 3600;

pub const RULES: [Rule; 2] = [
    Rule {
        from: Action::RestartApp,
        repeats: 3,
        window_s: DAY_S,
        to: Action::ResetGpu,
        source: "NVIDIA Xid catalog, WORKFLOW_XID_13/31: repeated on the same GPU, a possible hardware issue",
    },
    Rule {
        from: Action::ResetGpu,
        repeats: 2,
        window_s: DAY_S,
        to: Action::RebootNode,
        source: "NVIDIA Xid catalog, Xid 119/120: a node power cycle if the error persists after a GPU reset",
    },
];

/// The longest window any rule looks back: occurrences older than it can be forgotten.
pub fn longest_window_s() -> u64 {
    RULES.iter().map(|r| r.window_s).max().unwrap_or(0)
}

/// The action after escalation, given the unix times of this finding's earlier occurrences
/// (this one at `now` not included), and the rules that applied, in order. Rules chain:
/// the occurrences that made one rule apply are used up, and the next rule counts those
/// after them (the 3rd application fault asks for a reset, the 4th finds the reset did not
/// hold and asks for a reboot).
pub fn escalate(action: Action, earlier: &[u64], now: u64) -> (Action, Vec<&'static Rule>) {
    let mut action = action;
    let mut applied = Vec::new();
    let mut used = 0u32;
    for rule in &RULES {
        if action != rule.from {
            continue;
        }
        let recent = earlier
            .iter()
            .filter(|&&t| t <= now && now - t <= rule.window_s)
            .count() as u32;
        let count = (recent + 1).saturating_sub(used);
        if count >= rule.repeats {
            action = rule.to;
            applied.push(rule);
            used += rule.repeats - 1;
        }
    }
    (action, applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_third_application_fault_in_a_day_asks_for_a_reset() {
        let now = 10 * DAY_S;
        assert_eq!(escalate(Action::RestartApp, &[], now).0, Action::RestartApp);
        assert_eq!(
            escalate(Action::RestartApp, &[now - 100], now).0,
            Action::RestartApp
        );
        let (a, rules) = escalate(Action::RestartApp, &[now - 100, now - 50], now);
        assert_eq!((a, rules.len()), (Action::ResetGpu, 1));
        // Older than the window: forgotten.
        assert_eq!(
            escalate(Action::RestartApp, &[now - 2 * DAY_S, now - 50], now).0,
            Action::RestartApp
        );
    }

    #[test]
    fn a_reset_that_does_not_hold_asks_for_a_reboot() {
        let now = 10 * DAY_S;
        assert_eq!(escalate(Action::ResetGpu, &[], now).0, Action::ResetGpu);
        assert_eq!(
            escalate(Action::ResetGpu, &[now - 600], now).0,
            Action::RebootNode
        );
        // Chained: application faults that keep coming once a reset was asked for.
        let (a, rules) = escalate(Action::RestartApp, &[now - 3, now - 2, now - 1], now);
        assert_eq!((a, rules.len()), (Action::RebootNode, 2));
        assert_eq!(
            escalate(Action::Ignore, &[now - 1; 9], now).0,
            Action::Ignore
        );
    }
}
