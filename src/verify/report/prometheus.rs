//! Prometheus text exposition for node_exporter's text-file collector
//! (`--collector.textfile.directory`): per-check results, counts, the overall result, the
//! break-glass state, when verify last ran and how long it took.
//!
//! `nodeimg_verify_check_passed{id,subject,severity,verdict,fault,action,phase}` is 1 for
//! a pass and 0 otherwise; `nodeimg_verify_success` is 1 when nothing blocks the node.

use super::{Outcome, Report};
use std::fmt::Write;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let phase = label(&report.phase);
    let blueprint = label(&report.blueprint.name);
    let _ = writeln!(
        out,
        "# HELP nodeimg_verify_success 1 when no critical check failed or was unreadable.\n# TYPE nodeimg_verify_success gauge\nnodeimg_verify_success{{blueprint=\"{blueprint}\",phase=\"{phase}\"}} {}",
        u8::from(report.outcome == Outcome::Pass)
    );
    let _ = writeln!(
        out,
        "# HELP nodeimg_verify_break_glass 1 when a break-glass file overrode a failure.\n# TYPE nodeimg_verify_break_glass gauge\nnodeimg_verify_break_glass{{blueprint=\"{blueprint}\",phase=\"{phase}\"}} {}",
        u8::from(report.outcome == Outcome::Overridden)
    );
    let c = &report.counts;
    let _ = writeln!(
        out,
        "# HELP nodeimg_verify_checks Checks by result.\n# TYPE nodeimg_verify_checks gauge"
    );
    for (result, count) in [
        ("passed", c.passed),
        ("failed", c.failed),
        ("unreadable", c.errors),
        ("warning", c.warnings),
    ] {
        let _ = writeln!(
            out,
            "nodeimg_verify_checks{{phase=\"{phase}\",result=\"{result}\"}} {count}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP nodeimg_verify_last_run_timestamp_seconds When verify started (Unix time).\n# TYPE nodeimg_verify_last_run_timestamp_seconds gauge\nnodeimg_verify_last_run_timestamp_seconds{{phase=\"{phase}\"}} {}",
        report.started_at_unix
    );
    let _ = writeln!(
        out,
        "# HELP nodeimg_verify_duration_seconds How long verify took.\n# TYPE nodeimg_verify_duration_seconds gauge\nnodeimg_verify_duration_seconds{{phase=\"{phase}\"}} {}.{:03}",
        report.duration_ms / 1000,
        report.duration_ms % 1000
    );
    let _ = writeln!(
        out,
        "# HELP nodeimg_verify_check_passed 1 when the check passed, 0 when it failed or was unreadable.\n# TYPE nodeimg_verify_check_passed gauge"
    );
    for result in &report.results {
        let _ = writeln!(
            out,
            "nodeimg_verify_check_passed{{id=\"{}\",subject=\"{}\",severity=\"{}\",verdict=\"{}\",fault=\"{}\",action=\"{}\",phase=\"{phase}\"}} {}",
            label(result.id()),
            label(result.subject.as_deref().unwrap_or("")),
            result.severity,
            result.verdict,
            result.fault,
            result.action,
            u8::from(result.verdict == crate::verify::checks::Verdict::Pass)
        );
    }
    out
}

/// Escapes a label value: backslash, double quote and newline.
pub fn label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
