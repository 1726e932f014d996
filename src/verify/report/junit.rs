//! JUnit XML: one `<testsuite>` per check family (the id's first word), one `<testcase>`
//! per check and subject. A failed critical check is a `<failure>`, an unreadable one an
//! `<error>`; a warning that did not pass stays a passing test case with the details in
//! `<system-out>`, as it does not fail verification.

use super::Report;
use crate::fault::Severity;
use crate::verify::checks::{CheckResult, Verdict};
use std::collections::BTreeMap;
use std::fmt::Write;

pub fn render(report: &Report) -> String {
    let mut families: BTreeMap<&str, Vec<&CheckResult>> = BTreeMap::new();
    for result in &report.results {
        let family = result.id().split('.').next().unwrap_or("checks");
        families.entry(family).or_default().push(result);
    }
    let counts = &report.counts;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"nodeimg verify {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\" timestamp=\"{}\">",
        escape(&report.blueprint.name),
        counts.total,
        counts.failed,
        counts.errors,
        seconds(report.duration_ms),
        escape(&report.started_at)
    );
    for (family, results) in families {
        let failures = results
            .iter()
            .filter(|r| r.verdict == Verdict::Fail && r.severity == Severity::Critical)
            .count();
        let errors = results
            .iter()
            .filter(|r| r.verdict == Verdict::Error && r.severity == Severity::Critical)
            .count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" hostname=\"{}\">",
            escape(family),
            results.len(),
            escape(&report.hostname)
        );
        for result in results {
            case(&mut out, result);
        }
        let _ = writeln!(out, "  </testsuite>");
    }
    out.push_str("</testsuites>\n");
    out
}

fn case(out: &mut String, result: &CheckResult) {
    let _ = write!(
        out,
        "    <testcase classname=\"nodeimg.{}\" name=\"{}\"",
        escape(result.id()),
        escape(&result.name())
    );
    if result.verdict == Verdict::Pass {
        out.push_str("/>\n");
        return;
    }
    out.push_str(">\n");
    let details = format!(
        "{}\nexpected: {}\nobserved: {}\nevidence: {}\nfault: {}\naction: {}",
        result.summary(),
        result.expected,
        result.observed,
        result.evidence.join(", "),
        result.fault,
        result.action
    );
    let message = format!("expected {}, observed {}", result.expected, result.observed);
    match (result.severity, result.verdict) {
        (Severity::Warning, _) => {
            let _ = writeln!(
                out,
                "      <system-out>warning (not blocking): {}</system-out>",
                escape(&details)
            );
        }
        (_, Verdict::Error) => {
            let _ = writeln!(
                out,
                "      <error message=\"{}\" type=\"{}\">{}</error>",
                escape(&message),
                result.fault,
                escape(&details)
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                escape(&message),
                result.fault,
                escape(&details)
            );
        }
    }
    out.push_str("    </testcase>\n");
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Escapes text for XML attributes and content; drops characters XML 1.0 cannot hold.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}
