//! Node-wide checks: a time sync daemon is running, and the machine has the capacity the
//! blueprint declares (`kubernetes.capacity`), which kubelet's reservations and the
//! scheduler's view of the node are computed from.
//!
//! CPUs compare exactly: `capacity.cpu` is the logical CPUs the kernel has online, which
//! is what kubelet advertises. Memory compares with a tolerance: kubelet advertises
//! `MemTotal`, which is the installed memory less what firmware keeps and the kernel
//! reserves at boot (its image, the `struct page` array at 64 bytes per 4 KiB page, or
//! 1.6 %, and a crash kernel), typically 1.5 to 3 % below the installed size. So
//! `MemTotal` must lie between [`MEMORY_BELOW`] below and [`MEMORY_ABOVE`] above the
//! declared size: either the installed size or a measured `MemTotal` may be declared,
//! and a missing DIMM of 16 or fewer (6 % or more) fails.

use super::catalog::system::*;
use super::{Inputs, Observation, Results};
use crate::verify::fact::Fact;

/// How far below the declared memory `MemTotal` may be (percent).
pub const MEMORY_BELOW: i128 = 5;
/// How far above the declared memory `MemTotal` may be (percent).
pub const MEMORY_ABOVE: i128 = 2;

/// Units that keep the clock in sync.
pub const TIME_UNITS: &[&str] = &["chrony", "chronyd", "systemd-timesyncd"];

pub fn evaluate(input: &Inputs, out: &mut Results) {
    if input.blueprint.system.time_sync.is_some() {
        time_sync(input, out);
    }
    capacity(input, out);
}

fn capacity(input: &Inputs, out: &mut Results) {
    let declared = &input.blueprint.kubernetes.capacity;
    let want = declared.cpu as usize;
    out.record(
        &CAPACITY_CPU,
        None,
        format!("{want} (kubernetes.capacity.cpu)"),
        Observation::of(&input.facts.cpus.online_count, usize::to_string, |n| {
            *n == want
        }),
        vec!["/sys/devices/system/cpu/online".to_owned()],
    );
    let bytes = declared.memory.units_ceil();
    let low = bytes * (100 - MEMORY_BELOW) / 100;
    let high = bytes * (100 + MEMORY_ABOVE) / 100;
    out.record(
        &CAPACITY_MEMORY,
        None,
        format!(
            "MemTotal within -{MEMORY_BELOW} %/+{MEMORY_ABOVE} % of {} (kubernetes.capacity.memory)",
            declared.memory
        ),
        Observation::of(
            &input.facts.memory.total_kb,
            |kb| {
                let observed = i128::from(*kb) * 1024;
                let percent = if bytes > 0 { observed * 1000 / bytes } else { 0 };
                format!(
                    "{:.1} GiB ({}.{} % of declared)",
                    observed as f64 / f64::from(1u32 << 30),
                    percent / 10,
                    percent % 10
                )
            },
            |kb| (low..=high).contains(&(i128::from(*kb) * 1024)),
        ),
        vec!["/proc/meminfo".to_owned()],
    );
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
