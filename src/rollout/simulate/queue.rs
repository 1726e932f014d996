//! The event queue of the discrete-event simulation: what can happen to a node, to the
//! rollout and to the fleet, ordered by time in milliseconds (exact) and, at one time, by
//! the order events were scheduled, so that a seed gives one run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::rollout::faults::Class;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Event {
    /// The node's upgrade Job starts (cordon and drain first when the change needs it).
    Start(usize),
    Drained(usize),
    Applied(usize),
    Rebooted(usize),
    Judged(usize),
    /// The gate after the current wave (or the end of a rollback wave).
    Gate,
    RollbackStart(usize),
    RolledBack(usize),
    /// The next fault of a class somewhere in the fleet.
    Fault(Class),
    /// A daemon restart cleared the node's driver or daemon fault.
    DaemonRestarted(usize),
    /// The condition held for the NodeHealthCheck's duration.
    Detected(usize),
    /// The remediation reboot is over (or timed out).
    RemediationRebooted(usize),
    Repaired(usize),
    /// Acceptance after recovery is over.
    Reaccepted(usize),
}

/// Time is kept in milliseconds so that the queue orders exactly.
pub(super) fn ms(seconds: f64) -> u64 {
    (seconds * 1000.0).round().max(0.0) as u64
}

/// Events by time, then by the order they were scheduled.
#[derive(Default)]
pub(super) struct Queue {
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
}

impl Queue {
    /// Schedules `e` at `at_ms`.
    pub(super) fn push(&mut self, at_ms: u64, e: Event) {
        self.seq += 1;
        self.heap.push(Reverse((at_ms, self.seq, e)));
    }

    /// The next event and its time in milliseconds.
    pub(super) fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }
}
