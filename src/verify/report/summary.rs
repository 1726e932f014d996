//! One line for Node Problem Detector's custom plugin (which keeps the first line of
//! stdout as the condition message): `PASS 12/12 checks (phase health)` or
//! `FAIL 2/12: gpu.xid[0000:73:00.0], gpu.row-remap.pending[0000:b3:00.0] (phase health)`.

use super::{Outcome, Report};
use crate::verify::checks::CheckResult;

pub fn render(report: &Report) -> String {
    let blocking: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.blocks())
        .map(CheckResult::name)
        .collect();
    let total = report.counts.total;
    match report.outcome {
        Outcome::Pass => format!("PASS {total}/{total} checks (phase {})\n", report.phase),
        Outcome::Fail | Outcome::Overridden => format!(
            "{} {}/{total}: {} (phase {})\n",
            if report.outcome == Outcome::Fail {
                "FAIL"
            } else {
                "OVERRIDDEN"
            },
            blocking.len(),
            blocking.join(", "),
            report.phase
        ),
    }
}
