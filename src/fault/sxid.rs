//! NVIDIA's NVSwitch SXid catalog (`nvidia-sxid.csv` beside this file: the SXid tables of
//! the Fabric Manager User Guide, with the guide's version and the date it was read) and
//! the judgement of one SXid event by it.
//!
//! An SXid is the NVSwitch driver's report of a switch or switch-port error; every
//! finding is a link fault. The action is the table's reading of the guide's recovery for
//! a bare-metal node; a code the guide does not list is an unknown SXid.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::OnceLock;

use super::table::{self, Meta, TableError};
use super::{Action, FaultClass, Judgement};

const TABLE: &str = include_str!("nvidia-sxid.csv");
const COLUMNS: [&str; 5] = ["code", "name", "table", "action", "recovery"];

/// Which of the guide's tables lists the code.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Kind {
    NonFatal,
    Fatal,
    AlwaysFatal,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub code: u32,
    pub name: String,
    pub kind: Kind,
    pub action: Action,
    /// The guide's recovery, in its words.
    pub recovery: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct SxidCatalog {
    pub meta: Meta,
    rows: BTreeMap<u32, Row>,
}

/// The built-in catalog, parsed once.
pub fn catalog() -> &'static SxidCatalog {
    static CATALOG: OnceLock<SxidCatalog> = OnceLock::new();
    CATALOG.get_or_init(|| parse(TABLE).expect("the built-in SXid catalog parses (tested)"))
}

pub fn parse(text: &str) -> Result<SxidCatalog, TableError> {
    let (meta, raw) = table::parse("nvidia-sxid.csv", text, &COLUMNS)?;
    let mut rows = BTreeMap::new();
    for r in raw {
        let code: u32 = r.parsed(&meta, 0, "code", "a number")?;
        let kind = Kind::from_str(r.field(2)).map_err(|_| {
            r.error(
                &meta,
                format!("table `{}` is not a table of the guide", r.field(2)),
            )
        })?;
        let action: Action = r.parsed(&meta, 3, "action", "an action")?;
        let row = Row {
            code,
            name: r.field(1).to_owned(),
            kind,
            action,
            recovery: r.field(4).to_owned(),
            line: r.line,
        };
        if rows.insert(code, row).is_some() {
            return Err(r.error(&meta, format!("SXid {code} is listed twice")));
        }
    }
    Ok(SxidCatalog { meta, rows })
}

impl SxidCatalog {
    pub fn get(&self, code: u32) -> Option<&Row> {
        self.rows.get(&code)
    }

    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.values()
    }
}

/// The judgement of one SXid event, or why there is none.
pub fn judge(code: u32) -> Result<Judgement, String> {
    catalog()
        .get(code)
        .map(|row| Judgement::of(FaultClass::Link, row.action))
        .ok_or_else(|| format!("SXid {code} is not in the Fabric Manager User Guide's SXid tables"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::Severity;

    #[test]
    fn every_row_parses_and_follows_its_table() {
        let c = parse(TABLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.rows().count(), 92);
        for row in c.rows() {
            // Always fatal to the fabric: the host restarts; a fatal SXid never passes.
            match row.kind {
                Kind::AlwaysFatal => assert_eq!(row.action, Action::RebootNode, "{}", row.code),
                Kind::Fatal => assert!(row.action >= Action::ResetFabric, "{}", row.code),
                Kind::NonFatal | Kind::Other => {}
            }
        }
    }

    #[test]
    fn sxid_12028_resets_the_fabric() {
        let j = judge(12028).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (j.fault, j.action, j.severity),
            (FaultClass::Link, Action::ResetFabric, Severity::Critical)
        );
        assert_eq!(judge(11012).map(|j| j.action), Ok(Action::Ignore));
        assert!(judge(30001).is_err());
    }
}
