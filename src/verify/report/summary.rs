//! One line for Node Problem Detector's custom plugin (which keeps the first line of
//! stdout as the condition message): `PASS 12/12 checks (phase health)` or
//! `FAIL 2/12, reboot-node: gpu.xid[0000:73:00.0] reboot-node, gpu.row-remap.pending[0000:b3:00.0]
//! reset-gpu (phase health)`: the blocking checks, each with the action it asks for, and the
//! worst action first, in the words the record and the remediation use.

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
    let names: Vec<String> = blocking
        .iter()
        .map(|r| format!("{} {}", r.name(), r.action))
        .collect();
    match report.outcome {
        Outcome::Pass => format!("PASS {total}/{total} checks (phase {})\n", report.phase),
        Outcome::Fail | Outcome::Overridden => format!(
            "{} {}/{total}, {worst}: {} (phase {})\n",
            if report.outcome == Outcome::Fail {
                "FAIL"
            } else {
                "OVERRIDDEN"
            },
            blocking.len(),
            names.join(", "),
            report.phase
        ),
    }
}
