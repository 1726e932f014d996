//! The human report of an acceptance run: each layer's verdict, then every finding that
//! did not pass with what was expected, what was observed, the fault class and the
//! evidence, then the figures and the result.

use crate::verify::report::record::{AcceptanceRecord, Finding, Run, Verdict};
use std::fmt::Write;

fn layer_line(
    out: &mut String,
    n: u8,
    name: &str,
    run: &Run<crate::verify::report::record::LayerResult>,
) {
    let _ = match run {
        Run::Done(l) => writeln!(
            out,
            "layer {n} {name:<18} {} ({} checks)",
            l.result.as_str(),
            l.checks
        ),
        Run::NotRun { not_run } => writeln!(out, "layer {n} {name:<18} not run: {not_run}"),
    };
}

fn finding(out: &mut String, f: &Finding) {
    let _ = writeln!(
        out,
        "{:<10} {}  {}",
        f.verdict.as_str().to_uppercase(),
        f.name(),
        f.summary
    );
    let _ = writeln!(out, "           expected: {}", f.expected);
    let _ = writeln!(out, "           observed: {}", f.observed);
    if f.verdict == Verdict::Fail {
        let _ = writeln!(
            out,
            "           fault: {}, action: {}",
            serde_json::to_value(f.fault)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            serde_json::to_value(f.action)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        );
    }
    if !f.evidence.is_empty() {
        let _ = writeln!(out, "           evidence: {}", f.evidence.join(", "));
    }
}

/// The findings that did not pass (all of them when `verbose`), worst first, after a
/// blank line; nothing when none is shown.
pub fn findings(all: &[Finding], verbose: bool) -> String {
    let mut out = String::new();
    let mut shown: Vec<&Finding> = all
        .iter()
        .filter(|f| verbose || f.verdict != Verdict::Pass)
        .collect();
    shown.sort_by_key(|f| f.verdict);
    if !shown.is_empty() {
        out.push('\n');
    }
    for f in shown {
        finding(&mut out, f);
    }
    out
}

/// The report; `verbose` lists the passing findings too.
pub fn render(record: &AcceptanceRecord, verbose: bool) -> String {
    let mut out = String::new();
    let host = record
        .hostname
        .known()
        .map_or("(unknown node)", String::as_str);
    let b = &record.blueprint;
    let _ = writeln!(
        out,
        "nodeimg accept: {host} against {} {} ({})",
        b.name, b.version, b.id
    );
    let l = &record.layers;
    layer_line(&mut out, 1, "hardware/driver", &l.hardware_driver);
    layer_line(&mut out, 2, "kubernetes", &l.kubernetes);
    layer_line(&mut out, 3, "device/container", &l.device_container);
    layer_line(&mut out, 4, "interconnect", &l.interconnect);
    layer_line(&mut out, 5, "framework", &l.framework);
    out.push_str(&findings(&record.findings, verbose));
    if !record.figures.is_empty() {
        let _ = writeln!(out, "\nfigures:");
        for (key, v) in &record.figures {
            let _ = writeln!(out, "  {key:<48} {} {}", v.value, v.unit);
        }
    }
    let counts = |v: Verdict| record.findings.iter().filter(|f| f.verdict == v).count();
    let _ = writeln!(
        out,
        "\nresult: {} ({} passed, {} failed, {} incomplete, {} not run)",
        record.result.as_str(),
        counts(Verdict::Pass),
        counts(Verdict::Fail),
        counts(Verdict::Incomplete),
        counts(Verdict::NotRun)
    );
    out
}
