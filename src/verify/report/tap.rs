//! TAP version 14: one test point per check and subject, with a YAML block of expected,
//! observed, evidence, fault and action for every one that did not pass. Warnings that
//! did not pass are `# TODO` points, which TAP consumers do not count as failures.

use super::Report;
use crate::fault::Severity;
use crate::verify::checks::Verdict;
use std::fmt::Write;

pub fn render(report: &Report) -> String {
    let mut out = String::from("TAP version 14\n");
    let _ = writeln!(out, "1..{}", report.results.len());
    for (index, result) in report.results.iter().enumerate() {
        let number = index + 1;
        if result.verdict == Verdict::Pass {
            let _ = writeln!(out, "ok {number} - {}", result.name());
            continue;
        }
        let todo = if result.severity == Severity::Warning {
            " # TODO warning, not blocking"
        } else {
            ""
        };
        let _ = writeln!(out, "not ok {number} - {}{todo}", result.name());
        let _ = writeln!(out, "  ---");
        let _ = writeln!(out, "  verdict: {}", result.verdict);
        let _ = writeln!(out, "  expected: {}", yaml_string(&result.expected));
        let _ = writeln!(out, "  observed: {}", yaml_string(&result.observed));
        let _ = writeln!(out, "  evidence:");
        for item in &result.evidence {
            let _ = writeln!(out, "    - {}", yaml_string(item));
        }
        let _ = writeln!(out, "  fault: {}", result.fault);
        let _ = writeln!(out, "  action: {}", result.action);
        let _ = writeln!(out, "  ...");
    }
    out
}

/// A double-quoted YAML scalar (JSON string syntax is valid YAML).
fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}
