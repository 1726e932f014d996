//! `nodeimg verify --list-checks`: every check of the table with its phases, severity,
//! fault class and action, as aligned text or as JSON (one object per check).

use crate::verify::checks::{CATALOG, Phase, Spec, blocked, remedy};
use serde::Serialize;
use std::fmt::Write;

#[derive(Serialize)]
struct Entry<'a> {
    #[serde(flatten)]
    spec: &'a Spec,
    phases: Vec<Phase>,
}

/// One line per check: id, phases, severity, fault class, action, summary.
pub fn text() -> String {
    let phases = |spec: &Spec| {
        spec.phases()
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    let width = CATALOG.iter().map(|s| s.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:width$}  {:13}  {:8}  {:21}  {:18}  SUMMARY",
        "ID", "PHASES", "SEVERITY", "FAULT", "ACTION"
    );
    for spec in CATALOG {
        let _ = writeln!(
            out,
            "{:width$}  {:13}  {:8}  {:21}  {:18}  {}",
            spec.id,
            phases(spec),
            spec.severity.to_string(),
            spec.fault.to_string(),
            spec.action.to_string(),
            spec.summary
        );
    }
    out.push_str(
        "\nDriver checks also run in the boot phase when the image carries the driver; \
         --phase all runs every check.\n",
    );
    out
}

/// A JSON array of `{id, summary, severity, fault, action, stage, health, phases}`.
pub fn json() -> String {
    let entries: Vec<Entry> = CATALOG
        .iter()
        .map(|spec| Entry {
            spec,
            phases: spec.phases(),
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&entries)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render the check list: {e}\"}}"));
    text.push('\n');
    text
}

/// `nodeimg verify --explain ID`: one check's runbook, or `None` for an unknown id.
pub fn explain(id: &str) -> Option<String> {
    let spec = remedy::spec(id)?;
    let mut out = String::new();
    let phases: Vec<&str> = spec.phases().iter().map(|p| p.as_str()).collect();
    let _ = writeln!(out, "{}: {}", spec.id, spec.summary);
    let _ = writeln!(
        out,
        "  severity {}, fault {}, action {}, phases {}",
        spec.severity,
        spec.fault,
        spec.action,
        phases.join(",")
    );
    let roots: Vec<&str> = blocked::DEPENDS
        .iter()
        .filter(|(_, dependents)| dependents.iter().any(|d| std::ptr::eq(*d, spec)))
        .map(|(root, _)| root.id)
        .collect();
    if !roots.is_empty() {
        let _ = writeln!(
            out,
            "  blocked by: {} (when that fails, fix it first)",
            roots.join(", ")
        );
    }
    let blocks: Vec<&str> = blocked::DEPENDS
        .iter()
        .filter(|(root, _)| std::ptr::eq(*root, spec))
        .flat_map(|(_, dependents)| dependents.iter().map(|d| d.id))
        .collect();
    if !blocks.is_empty() {
        let _ = writeln!(out, "  blocks: {}", blocks.join(", "));
    }
    let _ = writeln!(out, "  remedy: {}", remedy::of(spec));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_every_check_once() {
        let text = text();
        for spec in CATALOG {
            assert_eq!(
                text.lines()
                    .filter(|l| l.split_whitespace().next() == Some(spec.id))
                    .count(),
                1,
                "{}",
                spec.id
            );
        }
        let json: serde_json::Value =
            serde_json::from_str(&json()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(json.as_array().map(Vec::len), Some(CATALOG.len()));
        assert_eq!(json[0]["id"], "os.distro");
        assert_eq!(json[0]["phases"], serde_json::json!(["boot"]));
    }
}
