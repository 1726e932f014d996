//! A GPU's health between its events: clocks held down by the hardware and temperature
//! margins (NVIDIA, from `nvidia-smi -q -x`), and amdgpu's RAS error counts and retired
//! pages (AMD, from sysfs).
//!
//! - `gpu.clocks.hw-slowdown`: HW slowdown, HW thermal slowdown or HW power brake active
//!   while the GPU is not idle, or (in the health phase) the hardware throttle counters
//!   (`clocks_event_reasons_counters`: `hw_therm_slowdown`, `hw_power_brake`) grown since
//!   the last run: check the cooling or power (NVIDIA's CHECK_MECHANICALS reading of a
//!   power or thermal fault). The driver's own software caps (power cap, sync boost,
//!   application clocks) are settings, not faults.
//! - `gpu.temperature.margin`: the GPU above its slowdown margin (`gpu_temp_tlimit`
//!   against `gpu_temp_slow_tlimit_threshold`, or the absolute `gpu_temp_slow_threshold`
//!   on older drivers) and the memory below `gpu_temp_max_mem_threshold`. A warning: at
//!   the limit the hardware slows down, which the slowdown check blocks on.
//! - `gpu.ras.errors`: new uncorrectable, deferred or corrected errors in any RAS block's
//!   `<block>_err_count` (since the last run in the health phase, since the driver loaded
//!   otherwise), judged by AMD's RAS table.
//! - `gpu.ras.bad-pages`: retired VRAM pages, by flag; a page the driver could not reserve
//!   sends the GPU to service.

use std::collections::BTreeMap;

use super::catalog::gpu::{HW_SLOWDOWN, RAS_BAD_PAGES, RAS_ERRORS, TEMPERATURE};
use super::{Inputs, Observation, Results};
use crate::fault::Judgement;
use crate::fault::amd_ras::{self, Signal};
use crate::fault::overrides::Catalog;
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;
use crate::verify::facts::gpu::Gpu;
use crate::verify::facts::nvidia_smi::NvidiaGpu;
use crate::verify::history::History;

const NVIDIA_SMI: &str = "nvidia-smi -q -x";
/// The hardware reasons that hold the clocks down.
const HW_REASONS: [&str; 3] = [
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
];
/// The hardware throttle counters (microseconds since the driver loaded).
const HW_COUNTERS: [&str; 2] = ["hw_therm_slowdown", "hw_power_brake"];

fn counter_key(kind: &str, gpu: &Gpu, name: &str) -> String {
    format!("{kind}:{}:{name}", gpu.address)
}

/// How much a cumulative counter grew since the last run (all of it without one, or
/// when it went down: the driver reloaded).
fn growth(memory: Option<&crate::verify::history::Memory<'_>>, key: &str, now: u64) -> u64 {
    match memory.and_then(|m| m.history.counters.get(key)) {
        Some(before) if *before <= now => now - before,
        _ => now,
    }
}

/// `gpu.clocks.hw-slowdown` and `gpu.temperature.margin` of one NVIDIA GPU.
pub fn nvidia(input: &Inputs, out: &mut Results, gpu: &Gpu, entry: &Fact<&NvidiaGpu>) {
    let subject = || Some(gpu.address.to_string());
    let evidence = || vec![NVIDIA_SMI.to_owned()];
    let slowdown = entry.clone().and_then(|g| match &g.clock_event_reasons {
        Fact::Known(reasons) => {
            let idle = reasons.get("gpu_idle").copied().unwrap_or(false);
            let active: Vec<&str> = HW_REASONS
                .iter()
                .copied()
                .filter(|r| reasons.get(*r).copied().unwrap_or(false))
                .collect();
            let mut held: Vec<String> = if idle {
                Vec::new()
            } else {
                active.iter().map(|r| format!("{r} active")).collect()
            };
            // Growth between runs only means something with a previous run.
            if let (Some(memory), Fact::Known(counters)) =
                (input.memory.as_ref(), &g.clock_event_counters_us)
            {
                for name in HW_COUNTERS {
                    let Some(now) = counters.get(name) else {
                        continue;
                    };
                    let key = counter_key("throttle", gpu, name);
                    if memory.history.counters.contains_key(&key) {
                        let grew = growth(Some(memory), &key, *now);
                        if grew > 0 {
                            held.push(format!(
                                "{name} +{:.1} s since the last run",
                                grew as f64 / 1e6
                            ));
                        }
                    }
                }
            }
            Fact::Known(if held.is_empty() {
                Observation::value(
                    if idle && !active.is_empty() {
                        "idle"
                    } else {
                        "none"
                    },
                    true,
                )
            } else {
                Observation::value(held.join(", "), false)
            })
        }
        Fact::Unknown { reason } => Fact::unknown(reason.clone()),
    });
    let observation = match slowdown {
        Fact::Known(o) => o,
        Fact::Unknown { reason } => Observation::unknown(reason),
    };
    out.record(
        &HW_SLOWDOWN,
        subject(),
        "no hardware slowdown, thermal slowdown or power brake",
        observation,
        evidence(),
    );

    let margin = entry.clone().map(temperature);
    let observation = match margin {
        Fact::Known(o) => o,
        Fact::Unknown { reason } => Observation::unknown(reason),
    };
    let result = out.record(
        &TEMPERATURE,
        subject(),
        "below the slowdown limits",
        observation,
        evidence(),
    );
    result.severity = TEMPERATURE.severity;
}

/// The GPU's and the memory's temperature against their limits.
fn temperature(g: &NvidiaGpu) -> Observation {
    let t = &g.temperature_limits;
    let mut parts = Vec::new();
    let mut pass = true;
    match (
        &t.tlimit_margin_c,
        &t.slowdown_margin_c,
        &g.temperature_c,
        &t.slowdown_c,
    ) {
        (Fact::Known(margin), Fact::Known(slow), _, _) => {
            pass &= margin > slow;
            parts.push(format!(
                "GPU {margin} C from T.Limit (slowdown at {slow} C{})",
                match &t.shutdown_margin_c {
                    Fact::Known(shut) => format!(", shutdown at {shut} C"),
                    Fact::Unknown { .. } => String::new(),
                }
            ));
        }
        (_, _, Fact::Known(temp), Fact::Known(slow)) => {
            pass &= temp < slow;
            parts.push(format!("GPU {temp} C (slowdown at {slow} C)"));
        }
        _ => {}
    }
    if let (Fact::Known(mem), Fact::Known(max)) = (&g.memory_temperature_c, &t.memory_max_c) {
        pass &= mem < max;
        parts.push(format!("memory {mem} C (limit {max} C)"));
    }
    if parts.is_empty() {
        Observation::unknown(
            "the driver reports no temperature limit (gpu_temp_tlimit, gpu_temp_slow_threshold, gpu_temp_max_mem_threshold)",
        )
    } else {
        Observation::value(parts.join(", "), pass)
    }
}

/// `gpu.ras.errors` and `gpu.ras.bad-pages` of one AMD GPU.
pub fn amd(input: &Inputs, out: &mut Results, gpu: &Gpu) {
    let subject = || Some(gpu.address.to_string());
    let dir = format!("/sys/bus/pci/devices/{}/ras", gpu.address);
    let ras = input
        .facts
        .gpus
        .amd_ras
        .get(&gpu.address)
        .cloned()
        .unwrap_or_else(|| Fact::unknown(format!("{dir} was not read")));
    let memory = input.memory.as_ref();
    let judged = |signal: Signal| -> (Judgement, Option<String>) {
        let base = amd_ras::judge(signal);
        match input.overrides.find(Catalog::AmdRas, &signal.to_string()) {
            Some(o) => (o.judgement(Some(base)), Some(o.source.clone())),
            None => (base, None),
        }
    };
    let mut worst: Option<Judgement> = None;
    let observation = match &ras {
        Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        Fact::Known(r) if !r.supported => {
            Observation::value("RAS not enabled (no ras folder)", true)
        }
        Fact::Known(r) => {
            let mut parts = Vec::new();
            for (block, count) in &r.blocks {
                for (signal, value) in [
                    (Signal::Ue, Some(count.ue)),
                    (Signal::De, count.de),
                    (Signal::Ce, Some(count.ce)),
                ] {
                    let Some(value) = value else { continue };
                    let grew = growth(
                        memory,
                        &format!("ras:{}:{block}:{signal}", gpu.address),
                        value,
                    );
                    if grew == 0 {
                        continue;
                    }
                    let (j, over) = judged(signal);
                    worst = Some(worst.map_or(j, |w| w.worse(j)));
                    parts.push(format!(
                        "{block} {signal} +{grew} ({}{})",
                        j.action,
                        over.map(|s| format!("; site override: {s}"))
                            .unwrap_or_default()
                    ));
                }
            }
            if parts.is_empty() {
                Observation::value("none", true)
            } else {
                Observation::value(parts.join(", "), false)
            }
        }
    };
    let result = out.record(
        &RAS_ERRORS,
        subject(),
        "no new RAS errors",
        observation,
        vec![format!("{dir}/*_err_count")],
    );
    if let Some(w) = worst {
        (result.fault, result.action, result.severity) = (w.fault, w.action, w.severity);
    }

    let mut worst: Option<Judgement> = None;
    let observation = match ras.and_then(|r| r.bad_pages.clone()) {
        Fact::Unknown { reason } => Observation::unknown(reason),
        Fact::Known(pages) => {
            let mut parts = Vec::new();
            let mut failing = false;
            for (signal, n, flag) in [
                (Signal::BadPageUnreservable, pages.unreservable, "F"),
                (Signal::BadPagePending, pages.pending, "P"),
                (Signal::BadPageReserved, pages.reserved, "R"),
            ] {
                if n == 0 {
                    continue;
                }
                let grew = growth(memory, &format!("badpages:{}:{flag}", gpu.address), n);
                let (j, _) = judged(signal);
                // What is new (or could not be reserved at all) is a finding; pages
                // retired before are the record.
                if grew > 0 || signal == Signal::BadPageUnreservable {
                    failing = true;
                    worst = Some(worst.map_or(j, |w| w.worse(j)));
                    parts.push(format!("{n} {flag} ({})", j.action));
                } else {
                    parts.push(format!("{n} {flag}"));
                }
            }
            if parts.is_empty() {
                Observation::value("none retired", true)
            } else {
                Observation::value(parts.join(", "), !failing)
            }
        }
    };
    let result = out.record(
        &RAS_BAD_PAGES,
        subject(),
        "every retired page reserved",
        observation,
        vec![format!("{dir}/gpu_vram_bad_pages")],
    );
    if let Some(w) = worst {
        (result.fault, result.action, result.severity) = (w.fault, w.action, w.severity);
    }
}

/// Keeps this run's cumulative counters for the next one.
pub fn remember_counters(history: &mut History, facts: &Facts) {
    let mut counters: BTreeMap<String, u64> = BTreeMap::new();
    for gpu in &facts.gpus.gpus {
        if let Some(Fact::Known(g)) = &gpu.nvidia
            && let Fact::Known(c) = &g.clock_event_counters_us
        {
            for name in HW_COUNTERS {
                if let Some(v) = c.get(name) {
                    counters.insert(counter_key("throttle", gpu, name), *v);
                }
            }
        }
        if let Some(Fact::Known(r)) = facts.gpus.amd_ras.get(&gpu.address) {
            for (block, count) in &r.blocks {
                counters.insert(format!("ras:{}:{block}:ue", gpu.address), count.ue);
                counters.insert(format!("ras:{}:{block}:ce", gpu.address), count.ce);
                if let Some(de) = count.de {
                    counters.insert(format!("ras:{}:{block}:de", gpu.address), de);
                }
            }
            if let Fact::Known(p) = &r.bad_pages {
                counters.insert(format!("badpages:{}:R", gpu.address), p.reserved);
                counters.insert(format!("badpages:{}:P", gpu.address), p.pending);
                counters.insert(format!("badpages:{}:F", gpu.address), p.unreservable);
            }
        }
    }
    for (k, v) in counters {
        history.counter(&k, v);
    }
}
