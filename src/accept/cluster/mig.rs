//! The MIG devices a GPU model gets from a mig-parted configuration
//! (`mig-profiles.csv` beside this file: NVIDIA's MIG profile tables, with
//! their source and version), so layer 2 can check the node's MIG
//! resources by arithmetic: GPUs × instances per GPU, as one
//! `nvidia.com/gpu` (single strategy) or per profile (mixed).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::fault::table::{self, Meta, TableError};

const TABLE: &str = include_str!("mig-profiles.csv");
const COLUMNS: [&str; 3] = ["model", "config", "devices"];

/// The MIG profile tables.
#[derive(Debug, Clone)]
pub struct MigTable {
    pub meta: Meta,
    /// (model, configuration) → instances per GPU by profile (`1g.10gb` → 7).
    rows: BTreeMap<(String, String), BTreeMap<String, u32>>,
}

/// The built-in table, parsed once.
pub fn table() -> &'static MigTable {
    static T: OnceLock<MigTable> = OnceLock::new();
    T.get_or_init(|| parse(TABLE).expect("the built-in MIG profile table parses (tested)"))
}

pub fn parse(text: &str) -> Result<MigTable, TableError> {
    let (meta, raw) = table::parse("mig-profiles.csv", text, &COLUMNS)?;
    let mut rows = BTreeMap::new();
    for r in raw {
        let bad = |message: String| TableError {
            table: meta.name.to_owned(),
            line: r.line,
            message,
        };
        let mut devices = BTreeMap::new();
        for part in r.field(2).split(';') {
            let (profile, n) = part
                .split_once('=')
                .ok_or_else(|| bad(format!("`{part}` is not profile=count")))?;
            let n: u32 = n
                .parse()
                .ok()
                .filter(|n| (1..=7).contains(n))
                .ok_or_else(|| bad(format!("`{n}` is not 1 to 7 instances")))?;
            if devices.insert(profile.to_owned(), n).is_some() {
                return Err(bad(format!("profile {profile} is listed twice")));
            }
        }
        let key = (r.field(0).to_owned(), r.field(1).to_owned());
        if rows.insert(key, devices).is_some() {
            return Err(bad(format!(
                "{} {} is listed twice",
                r.field(0),
                r.field(1)
            )));
        }
    }
    Ok(MigTable { meta, rows })
}

impl MigTable {
    /// The instances per GPU, by profile, that `config` creates on `model`.
    pub fn devices(&self, model: &str, config: &str) -> Option<&BTreeMap<String, u32>> {
        self.rows.get(&(model.to_owned(), config.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_parses() {
        let t = parse(TABLE).unwrap();
        assert_eq!(t.devices("H100 SXM", "all-1g.10gb").unwrap()["1g.10gb"], 7);
        assert_eq!(t.devices("H100 SXM", "all-balanced").unwrap().len(), 3);
        assert!(t.devices("H100 SXM", "all-1g.18gb").is_none());
        assert!(t.meta.source.contains("mig-user-guide"));
    }

    #[test]
    fn bad_rows_name_their_line() {
        let head = "# source: s\n# version: v\n# read: r\nmodel,config,devices\n";
        let e = parse(&format!("{head}H100 SXM,all-1g.10gb,1g.10gb=9\n")).unwrap_err();
        assert_eq!(e.line, 5);
        let e = parse(&format!("{head}H100 SXM,all-1g.10gb,1g.10gb\n")).unwrap_err();
        assert!(e.message.contains("profile=count"));
    }
}
