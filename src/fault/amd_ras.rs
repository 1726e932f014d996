//! AMD Instinct RAS signals (`amd-ras.csv` beside this file, with its sources and the date
//! they were read): the amdgpu driver's error counters and bad-page list in sysfs and its
//! RAS and GPU-reset messages in the kernel log, each with the action AMD documents.
//!
//! The signals are a closed set nodeimg reads ([`Signal`]); the table says what each one
//! means, and a test keeps the two in step, so a row cannot be missing or left over.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use strum::VariantArray;

use super::table::{self, Meta, TableError};
use super::{Action, FaultClass, Judgement, Severity};

const TABLE: &str = include_str!("amd-ras.csv");
const COLUMNS: [&str; 6] = [
    "signal",
    "found",
    "class",
    "action",
    "severity",
    "reference",
];

/// A RAS signal nodeimg reads from amdgpu.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Signal {
    /// `ue:` of a `<block>_err_count` file.
    Ue,
    /// `de:` (deferred) of a `<block>_err_count` file.
    De,
    /// `ce:` of a `<block>_err_count` file.
    Ce,
    BadPageReserved,
    BadPagePending,
    BadPageUnreservable,
    LogUe,
    LogDe,
    LogCe,
    LogBadPageThreshold,
    LogBadPageNearThreshold,
    LogReset,
    LogResetSucceeded,
    LogResetFailed,
    LogThrottled,
}

impl Signal {
    pub fn names() -> Vec<&'static str> {
        Signal::VARIANTS.iter().map(|&s| s.into()).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub signal: Signal,
    /// Where the signal is read, as the table writes it.
    pub found: String,
    pub judgement: Judgement,
    /// What AMD documents, in short.
    pub reference: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct AmdRasCatalog {
    pub meta: Meta,
    rows: BTreeMap<Signal, Row>,
}

/// The built-in table, parsed once.
pub fn catalog() -> &'static AmdRasCatalog {
    static CATALOG: OnceLock<AmdRasCatalog> = OnceLock::new();
    CATALOG.get_or_init(|| parse(TABLE).expect("the built-in AMD RAS table parses (tested)"))
}

pub fn parse(text: &str) -> Result<AmdRasCatalog, TableError> {
    let (meta, raw) = table::parse("amd-ras.csv", text, &COLUMNS)?;
    let mut rows = BTreeMap::new();
    for r in raw {
        let signal: Signal = r.parsed(&meta, 0, "signal", "one nodeimg reads")?;
        let fault: FaultClass = r.parsed(&meta, 2, "class", "a fault class")?;
        let action: Action = r.parsed(&meta, 3, "action", "an action")?;
        let severity: Severity = r.parsed(&meta, 4, "severity", "a severity")?;
        let row = Row {
            signal,
            found: r.field(1).to_owned(),
            judgement: Judgement {
                fault,
                action,
                severity,
            },
            reference: r.field(5).to_owned(),
            line: r.line,
        };
        if rows.insert(signal, row).is_some() {
            return Err(r.error(&meta, format!("signal {signal} is listed twice")));
        }
    }
    if let Some(missing) = Signal::VARIANTS.iter().find(|s| !rows.contains_key(s)) {
        return Err(TableError {
            table: meta.name.to_owned(),
            line: text.lines().count(),
            message: format!("no row for signal {missing}"),
        });
    }
    Ok(AmdRasCatalog { meta, rows })
}

impl AmdRasCatalog {
    /// Every signal has a row (checked when parsed).
    pub fn row(&self, signal: Signal) -> Option<&Row> {
        self.rows.get(&signal)
    }

    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.values()
    }
}

/// The judgement of a signal.
pub fn judge(signal: Signal) -> Judgement {
    catalog().row(signal).map_or(
        // Unreachable: parse requires a row per signal. Fail closed all the same.
        Judgement::of(FaultClass::Device, Action::Service),
        |r| r.judgement,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signal_has_a_row() {
        let c = parse(TABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.rows().count(), Signal::VARIANTS.len());
        assert!(
            c.meta
                .source
                .contains("docs.kernel.org/gpu/amdgpu/ras.html")
        );
        assert_eq!(judge(Signal::Ue).action, Action::ResetGpu);
        assert_eq!(judge(Signal::LogResetFailed).action, Action::RebootNode);
        assert_eq!(judge(Signal::BadPageUnreservable).action, Action::Service);
        assert_eq!(judge(Signal::Ce).severity, Severity::Warning);
    }

    #[test]
    fn a_table_without_a_signal_is_refused() {
        let cut: String = TABLE
            .lines()
            .filter(|l| !l.starts_with("log-throttled,"))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = parse(&cut).unwrap_err();
        assert!(e.message.contains("log-throttled"), "{e}");
    }
}
