//! Human text: a headline, then the checks grouped by what needs attention first
//! (failed, unreadable, warnings), each with expected and observed values, evidence,
//! fault class and recommended action; passed checks last, one line each.
//!
//! Observed strings come from the machine (hostname, kernel release, device names, a
//! break-glass reason, a capture's hostname): every one is printed through [`safe`], so a
//! newline or an escape sequence in them cannot forge report lines or drive the terminal.

use super::{Outcome, Report};
use crate::fault::Severity;
use crate::verify::checks::{CheckResult, Verdict, blocked, remedy};
use std::borrow::Cow;
use std::fmt::Write;

/// `text` with control characters (newlines, ESC, DEL, C1) written as `\u{1b}`-style
/// escapes, so it stays on its line and prints as itself.
pub fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// Which results a section shows.
type Keep = fn(&CheckResult) -> bool;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let headline = match report.outcome {
        Outcome::Pass => "PASS",
        Outcome::Fail => "FAIL",
        Outcome::Overridden => "FAIL (overridden by break-glass)",
    };
    let _ = writeln!(
        out,
        "nodeimg verify: {headline}\n  blueprint {} {} ({})\n  node {}, phase {}{}",
        safe(&report.blueprint.name),
        safe(&report.blueprint.version),
        safe(&report.blueprint.id),
        safe(&report.hostname),
        report.phase,
        if report.check_selection.is_empty() {
            String::new()
        } else {
            format!(", checks {}", safe(&report.check_selection.join(",")))
        }
    );
    let c = &report.counts;
    let _ = writeln!(
        out,
        "  {} checks: {} passed, {} failed, {} unreadable, {} warnings",
        c.total, c.passed, c.failed, c.errors, c.warnings
    );
    if let Some(reason) = &report.break_glass {
        let _ = writeln!(out, "  break-glass: {}", safe(reason));
    }
    if let Some(since) = &report.since_last_good {
        let _ = writeln!(
            out,
            "\nSince the last passing record ({}, {}):",
            safe(&since.record),
            safe(&since.created_at)
        );
        if since.changed.is_empty() {
            let _ = writeln!(out, "  nothing in the software or firmware changed");
        }
        for change in &since.changed {
            let _ = writeln!(out, "  changed: {}", safe(change));
        }
        for check in &since.failing_since {
            let _ = writeln!(out, "  passed then: {}", safe(check));
        }
    }
    // The roots first: what to fix, and how many failures each one explains.
    let roots: Vec<&CheckResult> = blocked::roots(&report.results).collect();
    if !roots.is_empty() && roots.len() < report.results.iter().filter(|r| r.blocks()).count() {
        let _ = writeln!(out, "\nRoot causes ({}):", roots.len());
        for root in &roots {
            let n = blocked::blocked_by_count(&report.results, root.spec.id);
            let _ = writeln!(
                out,
                "  {} {}: {}{}",
                marker(root),
                safe(&root.name()),
                safe(&root.observed),
                if n > 0 {
                    format!(" ({n} check(s) blocked by it)")
                } else {
                    String::new()
                }
            );
        }
    }
    let sections: [(&str, Keep); 3] = [
        ("Failed", |r| {
            r.verdict == Verdict::Fail && r.severity == Severity::Critical
        }),
        ("Unreadable (fail closed)", |r| {
            r.verdict == Verdict::Error && r.severity == Severity::Critical
        }),
        ("Warnings (not blocking)", |r| {
            r.verdict != Verdict::Pass && r.severity == Severity::Warning
        }),
    ];
    for (title, keep) in sections {
        let chosen: Vec<&CheckResult> = report.results.iter().filter(|r| keep(r)).collect();
        if chosen.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title} ({}):", chosen.len());
        for result in chosen {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                marker(result),
                safe(&result.name()),
                result.summary()
            );
            let _ = writeln!(out, "      expected: {}", safe(&result.expected));
            let _ = writeln!(out, "      observed: {}", safe(&result.observed));
            let _ = writeln!(out, "      evidence: {}", safe(&result.evidence.join(", ")));
            match result.blocked_by {
                Some(root) => {
                    let _ = writeln!(out, "      blocked by {root}: fix that first");
                }
                None => {
                    let _ = writeln!(
                        out,
                        "      fault: {}, action: {}",
                        result.fault, result.action
                    );
                    let _ = writeln!(
                        out,
                        "      remedy: {} (nodeimg verify --explain {})",
                        remedy::of(result.spec),
                        result.id()
                    );
                }
            }
        }
    }
    let passed: Vec<&CheckResult> = report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Pass)
        .collect();
    if !passed.is_empty() {
        let _ = writeln!(out, "\nPassed ({}):", passed.len());
        for result in passed {
            let _ = writeln!(
                out,
                "  ok {}: {}",
                safe(&result.name()),
                safe(&result.observed)
            );
        }
    }
    out
}

fn marker(result: &CheckResult) -> &'static str {
    match (result.verdict, result.severity) {
        (Verdict::Pass, _) => "ok",
        (_, Severity::Warning) => "WARN",
        (Verdict::Fail, _) => "FAIL",
        (Verdict::Error, _) => "ERROR",
    }
}
