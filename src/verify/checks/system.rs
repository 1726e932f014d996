//! Node-wide checks: a time sync daemon is running.

use super::catalog::system::*;
use super::{Inputs, Observation, Results};
use crate::verify::fact::Fact;

/// Units that keep the clock in sync.
pub const TIME_UNITS: &[&str] = &["chrony", "chronyd", "systemd-timesyncd"];

pub fn evaluate(input: &Inputs, out: &mut Results) {
    if input.blueprint.system.time_sync.is_some() {
        time_sync(input, out);
    }
}

fn time_sync(input: &Inputs, out: &mut Results) {
    let observation = match &input.facts.runtime {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(runtime) => {
            let states: Vec<(&str, &Fact<String>)> = TIME_UNITS
                .iter()
                .filter_map(|u| runtime.units.get(*u).map(|s| (*u, s)))
                .collect();
            let active: Vec<&str> = states
                .iter()
                .filter(|(_, s)| s.known().is_some_and(|s| s == "active"))
                .map(|(u, _)| *u)
                .collect();
            if !active.is_empty() {
                Observation::value(format!("{} active", active.join(", ")), true)
            } else if let Some(reason) = states.iter().find_map(|(_, s)| s.reason()) {
                Observation::unknown(reason.to_owned())
            } else if states.is_empty() {
                Observation::unknown("the time sync units' states were not collected")
            } else {
                let shown: Vec<String> = states
                    .iter()
                    .map(|(u, s)| format!("{u} {}", s.known().map_or("?", String::as_str)))
                    .collect();
                Observation::value(shown.join(", "), false)
            }
        }
    };
    out.record(
        &TIME_SYNC,
        None,
        format!("one of {} active", TIME_UNITS.join(", ")),
        observation,
        TIME_UNITS
            .iter()
            .map(|u| format!("systemctl is-active -- {u}"))
            .collect(),
    );
}
