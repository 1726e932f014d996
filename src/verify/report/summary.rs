//! One line for Node Problem Detector's custom plugin (which keeps the first line of
//! stdout as the condition message): `PASS 12/12 checks (phase health)` or
//! `FAIL 2/12, reboot-node: gpu.xid[0000:73:00.0] reboot-node, gpu.row-remap.pending[0000:b3:00.0]
//! reset-gpu (phase health)`: the blocking checks, each with the action it asks for, and the
//! worst action first, in the words the record and the remediation use. Checks blocked by
//! another (see [`blocked`](crate::verify::checks::blocked)) are counted, not named:
//! `FAIL 30/60, service: gpu.count service, 29 more blocked by gpu.count (phase boot)`.

use super::{Outcome, Report};
use crate::fault::Action;

pub fn render(report: &Report) -> String {
    let blocking: Vec<_> = report.results.iter().filter(|r| r.blocks()).collect();
    let total = report.counts.total;
    let worst = blocking
        .iter()
        .map(|r| r.action)
        .max()
        .unwrap_or(Action::None);
    // The roots by name; the checks they explain counted after them.
    let mut names: Vec<String> = blocking
        .iter()
        .filter(|r| r.blocked_by.is_none())
        .map(|r| format!("{} {}", r.name(), r.action))
        .collect();
    let mut roots: Vec<&str> = blocking.iter().filter_map(|r| r.blocked_by).collect();
    roots.dedup();
    let dependent = blocking.iter().filter(|r| r.blocked_by.is_some()).count();
    if dependent > 0 {
        roots.sort_unstable();
        roots.dedup();
        names.push(format!("{dependent} more blocked by {}", roots.join(", ")));
    }
    match report.outcome {
        Outcome::Pass => format!("PASS {total}/{total} checks (phase {})\n", report.phase),
        Outcome::Fail | Outcome::Overridden => format!(
            "{} {}/{total}, {worst}: {}{} (phase {})\n",
            if report.outcome == Outcome::Fail {
                "FAIL"
            } else {
                "OVERRIDDEN"
            },
            blocking.len(),
            names.join(", "),
            report
                .since_last_good
                .as_ref()
                .map(|s| format!("; since the last good record: {}", s.line()))
                .unwrap_or_default(),
            report.phase
        ),
    }
}
