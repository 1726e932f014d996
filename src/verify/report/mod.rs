//! The outcome of one `nodeimg verify` run and its renderings: human text, JSON
//! (versioned schema), JUnit XML, Prometheus text-file collector format, TAP, and a
//! one-line summary for Node Problem Detector. The acceptance record is in [`record`].
//!
//! Every format renders the same [`Report`]; none of them decides the exit code, which
//! comes from [`Report::outcome`] alone.

pub mod catalog;
pub mod json;
pub mod junit;
pub mod prometheus;
pub mod record;
pub mod since;
pub mod summary;
pub mod tap;
pub mod text;

use crate::fault::Severity;
use crate::verify::checks::{CheckResult, Verdict};
use serde::Serialize;

/// `schema` of the JSON report; bumped on an incompatible change.
pub const SCHEMA: &str = "nodeimg.dev/verify-report/v1";

/// The overall result.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Outcome {
    /// No critical check failed or was unreadable.
    Pass,
    Fail,
    /// Failed, but an operator's break-glass file lets the node start anyway.
    Overridden,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlueprintRef {
    pub name: String,
    pub version: String,
    pub id: String,
    pub file: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    /// Not passed, but of warning severity (not blocking).
    pub warnings: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub schema: String,
    pub nodeimg_version: String,
    pub blueprint: BlueprintRef,
    pub hostname: String,
    pub phase: String,
    /// The `--checks` patterns that selected the checks (within `phase`); empty when every
    /// check of the phase ran. Not the checks themselves: those are `results`.
    pub check_selection: Vec<String>,
    pub started_at: String,
    /// `started_at` as Unix seconds (Prometheus timestamps).
    pub started_at_unix: u64,
    pub duration_ms: u64,
    pub outcome: Outcome,
    /// The operator's reason, when a break-glass file overrode a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub break_glass: Option<String>,
    pub counts: Counts,
    pub results: Vec<CheckResult>,
    /// What changed since the node's last passing record (a failing run with `--record`
    /// beside one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_last_good: Option<since::SinceLastGood>,
}

impl Report {
    /// Builds the report; the outcome follows from the results and the break-glass reason.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        blueprint: BlueprintRef,
        hostname: String,
        phase: &str,
        check_selection: Vec<String>,
        started_at_unix: u64,
        duration_ms: u64,
        break_glass: Option<String>,
        results: Vec<CheckResult>,
    ) -> Self {
        let mut counts = Counts {
            total: results.len(),
            ..Counts::default()
        };
        for result in &results {
            match (result.verdict, result.severity) {
                (Verdict::Pass, _) => counts.passed += 1,
                (_, Severity::Warning) => counts.warnings += 1,
                (Verdict::Fail, Severity::Critical) => counts.failed += 1,
                (Verdict::Error, Severity::Critical) => counts.errors += 1,
            }
        }
        let blocked = results.iter().any(CheckResult::blocks);
        let outcome = match (blocked, &break_glass) {
            (false, _) => Outcome::Pass,
            (true, None) => Outcome::Fail,
            (true, Some(_)) => Outcome::Overridden,
        };
        Report {
            schema: SCHEMA.to_owned(),
            nodeimg_version: env!("CARGO_PKG_VERSION").to_owned(),
            blueprint,
            hostname,
            phase: phase.to_owned(),
            check_selection,
            started_at: crate::time::rfc3339(started_at_unix),
            started_at_unix,
            duration_ms,
            outcome,
            break_glass: if blocked { break_glass } else { None },
            counts,
            results,
            since_last_good: None,
        }
    }

    /// Whether any critical check failed or could not be read.
    pub fn blocked(&self) -> bool {
        self.results.iter().any(CheckResult::blocks)
    }
}

/// A report format; its name is the `--format` value.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum Format {
    Text,
    Json,
    Junit,
    Prometheus,
    Tap,
    /// One line (Node Problem Detector).
    Summary,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Text,
        Format::Json,
        Format::Junit,
        Format::Prometheus,
        Format::Tap,
        Format::Summary,
    ];

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// File extension for golden files and evidence.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text | Format::Summary => "txt",
            Format::Json => "json",
            Format::Junit => "xml",
            Format::Prometheus => "prom",
            Format::Tap => "tap",
        }
    }
}

/// Renders `report` in `format`; the text ends with a newline.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => text::render(report),
        Format::Json => json::render(report),
        Format::Junit => junit::render(report),
        Format::Prometheus => prometheus::render(report),
        Format::Tap => tap::render(report),
        Format::Summary => summary::render(report),
    }
}
