//! What the health phase remembers between its runs (`verify --phase health`, run by
//! node-problem-detector every few minutes): a file under `/var/lib/nodeimg/` that
//! survives reboots.
//!
//! - **Cursor**: per health rule (its phase and `--checks`), where in this boot's kernel
//!   log the last run stopped, so an event is judged once: an application's Xid from
//!   yesterday does not keep a node degraded forever. An event whose finding needs a reset
//!   or a reboot holds the cursor back: it is judged again on every run until the node
//!   reboots (a new boot has a new kernel log), so its condition stays until it is dealt
//!   with. The boot phase keeps no cursor: it judges the current boot.
//! - **Occurrences**: when each finding (a code on a device) was judged, for the repeat
//!   rules of [`crate::fault::escalation`]; a storm is one occurrence.
//! - **Counters**: cumulative counters read at the last run (hardware throttle time, AMD
//!   RAS error counts), so that growth between runs is what is judged.
//! - **Attempts**: the recovery ladder's reboots and resets ([`crate::fault::ladder`]): a
//!   boot that begins while a finding asked for a reset or a reboot is a reboot attempt.
//!
//! Everything is bounded: occurrences and attempts older than their window are forgotten,
//! and each list keeps at most a fixed number of entries.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::fault::ladder::{Attempts, Limits};
use crate::verify::facts::kernel_log::Cursor;

/// The file, under the root verify inspects.
pub const FILE: &str = "/var/lib/nodeimg/health-history.json";
/// The file's format version.
pub const VERSION: u32 = 1;
/// Occurrences kept per finding.
const KEEP: usize = 32;
/// Findings remembered at most (the most recent kept).
const FINDINGS: usize = 1024;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct History {
    pub version: u32,
    /// The boot the cursors and the pending flags are of.
    #[serde(default)]
    pub boot_id: Option<String>,
    /// Per health rule (its selection, [`consumer`]).
    #[serde(default)]
    pub rules: BTreeMap<String, RuleState>,
    /// Unix seconds of each judged occurrence, by finding key (`xid:94@0000:33:00.0`).
    #[serde(default)]
    pub occurrences: BTreeMap<String, Vec<u64>>,
    /// The last kernel-log sequence number judged per finding key, in this boot: an event
    /// read again (its cursor held back) is not a new occurrence.
    #[serde(default)]
    pub judged_seq: BTreeMap<String, u64>,
    /// Cumulative counters at the last run, by key.
    #[serde(default)]
    pub counters: BTreeMap<String, u64>,
    #[serde(default)]
    pub attempts: Attempts,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleState {
    /// Where the next run of this rule starts reading this boot's kernel log.
    #[serde(default)]
    pub cursor: Cursor,
    /// The last run had a failing finding that asks for a reset or a reboot.
    #[serde(default)]
    pub pending: bool,
}

/// The key of a health rule: its phase, check patterns and actions, so that each rule
/// keeps its own cursor (the overall rule and the per-class and per-rung rules read the
/// same log).
pub fn consumer(phase: &str, patterns: &[String], actions: &[crate::fault::Action]) -> String {
    let mut key = phase.to_owned();
    if !patterns.is_empty() {
        key = format!("{key}:{}", patterns.join(","));
    }
    if !actions.is_empty() {
        let names: Vec<String> = actions.iter().map(ToString::to_string).collect();
        key = format!("{key}@{}", names.join(","));
    }
    key
}

/// Why a history file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryError(pub String);

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl History {
    pub fn parse(text: &str) -> Result<History, HistoryError> {
        let h: History =
            serde_json::from_str(text).map_err(|e| HistoryError(format!("{FILE}: {e}")))?;
        if h.version != VERSION {
            return Err(HistoryError(format!(
                "{FILE}: version {} (this nodeimg writes {VERSION})",
                h.version
            )));
        }
        Ok(h)
    }

    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_owned());
        text.push('\n');
        text
    }

    /// Starts a run in boot `boot_id` at `now`: a new boot drops the cursors and judged
    /// positions (a new kernel log), and counts as a reboot attempt when a rule's last run
    /// left a finding that asked for a reset or a reboot. Returns whether the boot changed.
    pub fn begin(&mut self, boot_id: Option<&str>, now: u64, limits: &Limits) -> bool {
        self.version = VERSION;
        let changed = match (self.boot_id.as_deref(), boot_id) {
            (Some(had), Some(now_id)) => had != now_id,
            (None, Some(_)) => !self.rules.is_empty(),
            (_, None) => false,
        };
        if changed {
            if self.rules.values().any(|r| r.pending) {
                self.attempts.note_reboot(now);
            }
            self.rules.clear();
            self.judged_seq.clear();
            self.counters.clear();
        }
        if let Some(id) = boot_id {
            self.boot_id = Some(id.to_owned());
        }
        self.attempts.prune(now, limits);
        let keep = crate::fault::escalation::longest_window_s().max(limits.window_s);
        for times in self.occurrences.values_mut() {
            times.retain(|t| *t <= now && now - t <= keep);
        }
        self.occurrences.retain(|_, t| !t.is_empty());
        changed
    }

    /// This rule's cursor in the current boot.
    pub fn cursor(&self, consumer: &str) -> Option<Cursor> {
        self.rules.get(consumer).map(|r| r.cursor)
    }

    /// Earlier occurrences of a finding.
    pub fn earlier(&self, key: &str) -> &[u64] {
        self.occurrences.get(key).map_or(&[], Vec::as_slice)
    }

    /// Notes one occurrence of `key` at `now`, unless the event that makes it (its last
    /// sequence number `seq`) was judged already.
    pub fn occurred(&mut self, key: &str, seq: Option<u64>, now: u64) {
        if let Some(seq) = seq {
            if self.judged_seq.get(key).is_some_and(|had| *had >= seq) {
                return;
            }
            if self.judged_seq.len() >= FINDINGS && !self.judged_seq.contains_key(key) {
                return;
            }
            self.judged_seq.insert(key.to_owned(), seq);
        }
        if self.occurrences.len() >= FINDINGS && !self.occurrences.contains_key(key) {
            return;
        }
        let times = self.occurrences.entry(key.to_owned()).or_default();
        times.push(now);
        if times.len() > KEEP {
            times.remove(0);
        }
    }

    /// Sets a counter; returns what it was.
    pub fn counter(&mut self, key: &str, value: u64) -> Option<u64> {
        if self.counters.len() >= FINDINGS && !self.counters.contains_key(key) {
            return None;
        }
        self.counters.insert(key.to_owned(), value)
    }

    /// Ends a rule's run: where its next run starts, and whether a finding asked for a
    /// reset or a reboot.
    pub fn end(&mut self, consumer: &str, cursor: Cursor, pending: bool) {
        self.rules
            .insert(consumer.to_owned(), RuleState { cursor, pending });
    }
}

/// What the checks read of the history: it, the time, and the ladder's limits and the
/// reboots made within them.
#[derive(Debug, Clone, Copy)]
pub struct Memory<'a> {
    pub history: &'a History,
    pub now: u64,
    pub limits: Limits,
}

impl Memory<'_> {
    pub fn reboots(&self) -> u32 {
        self.history.attempts.reboots_within(self.now, &self.limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_boot_after_a_pending_finding_is_a_reboot_attempt() {
        let limits = Limits::default();
        let mut h = History::default();
        assert!(!h.begin(Some("a"), 1000, &limits));
        h.end(
            "health",
            Cursor {
                seq: Some(7),
                micros: None,
            },
            true,
        );
        assert!(!h.begin(Some("a"), 1100, &limits));
        assert_eq!(h.cursor("health").and_then(|c| c.seq), Some(7));
        assert!(h.begin(Some("b"), 1200, &limits));
        assert_eq!(h.attempts.reboots, vec![1200]);
        assert_eq!(h.cursor("health"), None);
        // A boot without a pending finding is not an attempt.
        h.end("health", Cursor::default(), false);
        assert!(h.begin(Some("c"), 1300, &limits));
        assert_eq!(h.attempts.reboots.len(), 1);
        let back = History::parse(&h.to_text()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, h);
    }

    #[test]
    fn an_event_read_again_is_not_a_new_occurrence() {
        let mut h = History::default();
        h.occurred("xid:13@x", Some(10), 100);
        h.occurred("xid:13@x", Some(10), 200);
        h.occurred("xid:13@x", Some(11), 300);
        assert_eq!(h.earlier("xid:13@x"), &[100, 300]);
        assert!(History::parse("{\"version\": 9}").is_err());
        assert!(History::parse("{\"version\": 1, \"extra\": 1}").is_err());
    }
}
