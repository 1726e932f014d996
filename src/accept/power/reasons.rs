//! Which clock event reasons, active while a workload loads the GPU, point at the cooling
//! or the power feed (`clock-event-reasons.csv` beside this file: nvidia-smi's own
//! descriptions, with their source and driver version). The software power cap is what a
//! GPU at its power limit shows and is not a fault; hardware slowdown, thermal slowdown
//! and the power brake are.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::fault::table::{self, Meta, TableError};

const TABLE: &str = include_str!("clock-event-reasons.csv");
const COLUMNS: [&str; 3] = ["reason", "fault", "meaning"];

/// One reason: whether an active one fails the GPU, and what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub cooling_power: bool,
    pub meaning: String,
}

#[derive(Debug, Clone)]
pub struct Reasons {
    pub meta: Meta,
    pub by_name: BTreeMap<String, Reason>,
}

/// The built-in table, parsed once.
pub fn table() -> &'static Reasons {
    static T: OnceLock<Reasons> = OnceLock::new();
    T.get_or_init(|| parse(TABLE).expect("the built-in clock event reason table parses (tested)"))
}

pub fn parse(text: &str) -> Result<Reasons, TableError> {
    let (meta, raw) = table::parse("clock-event-reasons.csv", text, &COLUMNS)?;
    let mut by_name = BTreeMap::new();
    for r in raw {
        let cooling_power = match r.field(1) {
            "cooling-power" => true,
            "none" => false,
            other => return Err(r.error(&meta, format!("fault `{other}`: cooling-power or none"))),
        };
        let reason = Reason {
            cooling_power,
            meaning: r.field(2).to_owned(),
        };
        if by_name.insert(r.field(0).to_owned(), reason).is_some() {
            return Err(r.error(&meta, format!("{} is listed twice", r.field(0))));
        }
    }
    Ok(Reasons { meta, by_name })
}

impl Reasons {
    /// The reason called `name`, if the table knows it.
    pub fn get(&self, name: &str) -> Option<&Reason> {
        self.by_name.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_names_the_hardware_reasons() {
        let t = table();
        assert!(t.meta.source.contains("help-query-gpu"));
        assert!(t.get("hw_thermal_slowdown").unwrap().cooling_power);
        assert!(t.get("hw_power_brake_slowdown").unwrap().cooling_power);
        assert!(!t.get("sw_power_cap").unwrap().cooling_power);
        // Every reason the sampler asks for is in the table.
        for q in super::super::QUERY {
            if let Some(r) = q.strip_prefix("clocks_throttle_reasons.") {
                assert!(t.get(r).is_some(), "{r}");
            }
        }
        assert!(
            parse(&TABLE.replace(
                "sw_thermal_slowdown,cooling-power",
                "sw_thermal_slowdown,maybe"
            ))
            .is_err()
        );
    }
}
