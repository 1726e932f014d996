//! CPUs: how many are online, the model and socket count (`/proc/cpuinfo`), and the SMT
//! state (`/sys/devices/system/cpu/smt/{control,active}`).
//!
//! The blueprint's firmware policy says whether SMT must be on; `control` tells what the
//! kernel allows (`on`, `off`, `forceoff`, `notsupported`, `notimplemented`) and `active`
//! whether sibling threads are actually running.

use super::attribute;
use super::cpu_list::CpuList;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cpus {
    pub online: Fact<CpuList>,
    pub online_count: Fact<usize>,
    /// `model name` of the first CPU in `/proc/cpuinfo` (absent on many arm64 kernels).
    pub model_name: Fact<String>,
    /// Distinct `physical id` values in `/proc/cpuinfo`.
    pub sockets: Fact<usize>,
    pub smt_control: Fact<SmtControl>,
    pub smt_active: Fact<bool>,
    /// The frequency governor of each cpufreq policy (`performance`, `powersave`,
    /// `schedutil`, ...) and how many policies use it; `None` when the kernel has no
    /// cpufreq driver, i.e. the firmware alone sets CPU frequencies.
    pub governors: Fact<Option<BTreeMap<String, usize>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SmtControl {
    On,
    Off,
    ForceOff,
    NotSupported,
    NotImplemented,
}

impl SmtControl {
    pub fn parse(raw: &str) -> Result<Self, String> {
        match raw {
            "on" => Ok(SmtControl::On),
            "off" => Ok(SmtControl::Off),
            "forceoff" => Ok(SmtControl::ForceOff),
            "notsupported" => Ok(SmtControl::NotSupported),
            "notimplemented" => Ok(SmtControl::NotImplemented),
            other => Err(format!("unknown SMT control state {other:?}")),
        }
    }
}

pub fn collect(host: &dyn Host) -> Cpus {
    let online = attribute::parsed(host, "/sys/devices/system/cpu/online", CpuList::parse);
    let online_count = online.as_ref().map(CpuList::count);
    let cpuinfo = attribute::text(host, "/proc/cpuinfo");
    let (model_name, sockets) = match &cpuinfo {
        Fact::Known(text) => parse_cpuinfo(text),
        Fact::Unknown { reason } => (Fact::unknown(reason.clone()), Fact::unknown(reason.clone())),
    };
    Cpus {
        online,
        online_count,
        model_name,
        sockets,
        smt_control: attribute::parsed(
            host,
            "/sys/devices/system/cpu/smt/control",
            SmtControl::parse,
        ),
        smt_active: attribute::parsed(
            host,
            "/sys/devices/system/cpu/smt/active",
            |raw| match raw {
                "1" => Ok(true),
                "0" => Ok(false),
                _ => Err("expected 0 or 1".to_owned()),
            },
        ),
        governors: governors(host),
    }
}

const CPUFREQ: &str = "/sys/devices/system/cpu/cpufreq";

/// `/sys/devices/system/cpu/cpufreq/policy*/scaling_governor`, one per frequency domain.
fn governors(host: &dyn Host) -> Fact<Option<BTreeMap<String, usize>>> {
    // Without `/sys/devices/system/cpu` nothing can be said; with it but without cpufreq
    // policies, no cpufreq driver is loaded.
    if let Fact::Unknown { reason } = attribute::list(host, "/sys/devices/system/cpu", false) {
        return Fact::unknown(reason);
    }
    attribute::list(host, CPUFREQ, true).and_then(|names| {
        let mut policies: Vec<&String> = names
            .iter()
            .filter(|n| {
                n.strip_prefix("policy")
                    .is_some_and(|i| i.parse::<u32>().is_ok())
            })
            .collect();
        policies.sort();
        if policies.is_empty() {
            return Fact::Known(None);
        }
        let mut counts = BTreeMap::new();
        for policy in policies {
            match attribute::text(host, &format!("{CPUFREQ}/{policy}/scaling_governor")) {
                Fact::Known(governor) => *counts.entry(governor).or_insert(0) += 1,
                Fact::Unknown { reason } => return Fact::unknown(reason),
            }
        }
        Fact::Known(Some(counts))
    })
}

fn parse_cpuinfo(text: &str) -> (Fact<String>, Fact<usize>) {
    let mut model = None;
    let mut sockets = BTreeSet::new();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "model name" if model.is_none() => model = Some(value.trim().to_owned()),
            "physical id" => {
                sockets.insert(value.trim().to_owned());
            }
            _ => {}
        }
    }
    let model = match model {
        Some(model) => Fact::Known(model),
        None => Fact::unknown("/proc/cpuinfo has no \"model name\""),
    };
    let sockets = if sockets.is_empty() {
        Fact::unknown("/proc/cpuinfo has no \"physical id\"")
    } else {
        Fact::Known(sockets.len())
    };
    (model, sockets)
}
