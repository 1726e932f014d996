//! NVIDIA's Xid catalog (`nvidia-xid.csv` beside this file, with its source and the date
//! it was read) and the judgement of one Xid event by it.
//!
//! The table is embedded and parsed once (the matrix's way: `include_str!` and a parser,
//! so the same reader names the line of a bad row in a test, and no code is generated);
//! a row that does not parse fails `every_row_parses`. An event's judgement is the row's
//! class and its immediate bucket's action ([`super::bucket`]); a code without a row, or a
//! row whose bucket gives nothing to go on, is [`Verdict::Unknown`]: reported with the
//! code and its line, never a guessed action.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::bucket::{Bucket, Resolution};
use super::table::{self, Meta, TableError};
use super::{FaultClass, Judgement};

const TABLE: &str = include_str!("nvidia-xid.csv");
const COLUMNS: [&str; 8] = [
    "code",
    "mnemonic",
    "description",
    "applies",
    "immediate",
    "investigatory",
    "xid154",
    "class",
];

/// One catalog row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub code: u32,
    pub mnemonic: String,
    pub description: String,
    /// The GPUs the catalog says the code applies to (`A100`, `H100`, `B100`, `GB200`).
    pub applies: Vec<String>,
    /// The immediate bucket as the catalog writes it, and parsed.
    pub immediate: String,
    pub bucket: Bucket,
    pub investigatory: String,
    /// The "Xid 154 linkage" (`R565`, `yes`), `-` for none.
    pub xid154: String,
    /// nodeimg's fault class for the code.
    pub class: FaultClass,
    /// Line in the table.
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct XidCatalog {
    pub meta: Meta,
    rows: BTreeMap<u32, Row>,
}

/// The built-in catalog, parsed once.
pub fn catalog() -> &'static XidCatalog {
    static CATALOG: OnceLock<XidCatalog> = OnceLock::new();
    CATALOG.get_or_init(|| parse(TABLE).expect("the built-in Xid catalog parses (tested)"))
}

pub fn parse(text: &str) -> Result<XidCatalog, TableError> {
    let (meta, raw) = table::parse("nvidia-xid.csv", text, &COLUMNS)?;
    let mut rows = BTreeMap::new();
    for r in raw {
        let code: u32 = r.parsed(&meta, 0, "code", "a number")?;
        let bucket = Bucket::parse(r.field(4)).ok_or_else(|| {
            r.error(
                &meta,
                format!("immediate bucket `{}` is not known", r.field(4)),
            )
        })?;
        let class: FaultClass = r.parsed(&meta, 7, "class", "a fault class")?;
        let applies = match r.field(3) {
            "-" => Vec::new(),
            list => list.split_whitespace().map(str::to_owned).collect(),
        };
        let row = Row {
            code,
            mnemonic: r.field(1).to_owned(),
            description: r.field(2).to_owned(),
            applies,
            immediate: r.field(4).to_owned(),
            bucket,
            investigatory: r.field(5).to_owned(),
            xid154: r.field(6).to_owned(),
            class,
            line: r.line,
        };
        if rows.insert(code, row).is_some() {
            return Err(r.error(&meta, format!("Xid {code} is listed twice")));
        }
    }
    Ok(XidCatalog { meta, rows })
}

impl XidCatalog {
    pub fn get(&self, code: u32) -> Option<&Row> {
        self.rows.get(&code)
    }

    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.values()
    }
}

/// What the catalog says about one Xid event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Judged(Judgement),
    /// Not in the catalog, or nothing in its row to go on: why.
    Unknown(String),
}

/// Judges one Xid event: `message` is its kernel-log text (Xid 154 and 144-150 read it),
/// `solo` whether no other Xid came on the same GPU among the events judged with it.
pub fn judge(code: u32, message: &str, solo: bool) -> Verdict {
    match catalog().get(code) {
        None => Verdict::Unknown(format!(
            "Xid {code} is not in NVIDIA's Xid catalog (a newer driver?)"
        )),
        Some(row) => match row.bucket.resolve(message, solo) {
            Resolution::Action(action, severity) => Verdict::Judged(Judgement {
                fault: row.class,
                action,
                severity,
            }),
            Resolution::Unknown(why) => {
                Verdict::Unknown(format!("Xid {code} {}: {why}", row.mnemonic))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::{Action, Severity};

    #[test]
    fn every_row_parses() {
        let c = parse(TABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.rows().count(), 172);
        assert!(
            c.meta
                .source
                .starts_with("https://docs.nvidia.com/deploy/xid-errors/")
        );
        assert!(!c.meta.read.is_empty() && !c.meta.version.is_empty());
        let first = c.rows().next().map(|r| r.code);
        assert_eq!(first, Some(1));
    }

    /// The cases of the issue: a contained ECC error is the application's, the catalog's
    /// IGNORE codes block nothing, the context-switch timeout needs a reset.
    #[test]
    fn the_catalogs_actions_not_a_guess() {
        let j = |code| match judge(code, "", true) {
            Verdict::Judged(j) => (j.fault, j.action, j.severity),
            Verdict::Unknown(why) => panic!("{why}"),
        };
        assert_eq!(
            j(94),
            (FaultClass::Device, Action::RestartApp, Severity::Warning)
        );
        assert_eq!(
            j(63),
            (FaultClass::Device, Action::Ignore, Severity::Warning)
        );
        assert_eq!(
            j(92),
            (FaultClass::Device, Action::Ignore, Severity::Warning)
        );
        assert_eq!(
            j(109),
            (FaultClass::Device, Action::ResetGpu, Severity::Critical)
        );
        assert_eq!(
            j(79),
            (FaultClass::Device, Action::RebootNode, Severity::Critical)
        );
        assert_eq!(
            j(13),
            (
                FaultClass::TransientApplication,
                Action::RestartApp,
                Severity::Warning
            )
        );
        assert_eq!(
            j(119),
            (
                FaultClass::DriverDaemon,
                Action::ResetGpu,
                Severity::Critical
            )
        );
        assert_eq!(
            j(74),
            (FaultClass::Link, Action::ResetGpu, Severity::Critical)
        );
        assert!(matches!(judge(9999, "", true), Verdict::Unknown(w) if w.contains("9999")));
        assert!(matches!(judge(167, "", true), Verdict::Unknown(w) if w.contains("no resolution")));
    }
}
