//! Power and clocks under load: the samples nvidia-smi or amd-smi took beside the framework
//! Job (a sustained matmul on every GPU), the NCCL Job and the multi-node PyTorch, JAX and
//! NCCL runs, per GPU. A multi-node log holds a section per node, each named: this node's
//! are judged as its GPUs, another node's are left to that node's acceptance (and, where
//! the node being accepted is not known, each node's GPUs are judged under its name).
//!
//! - `power.samples`: samples of every GPU of the blueprint were taken (the framework
//!   Job prints them on NVIDIA and AMD nodes; none is `incomplete`, never a pass).
//! - `power.peak`: under the matmul load each GPU drew at least the blueprint's
//!   `acceptance.thresholds.powerPeakFractionOfLimit` of its enforced power limit, by
//!   default [`POWER_PEAK_MIN_RATIO`](crate::accept::threshold::POWER_PEAK_MIN_RATIO),
//!   the pass rule of DCGM's targeted power test. A GPU that cannot reach it is held back
//!   by its cooling, its power feed or a failing part: `device`,
//!   check the cooling and power.
//! - `power.slowdown`: no clock event reason that points at the cooling or the power feed
//!   (hardware or thermal slowdown, the power brake; on AMD a thermal violation or PROCHOT;
//!   [`crate::accept::power::reasons`]) was active in any sample. The software power cap
//!   (AMD: package power tracking) at the limit is expected.
//!
//! Peak and mean power, the limit and the mean SM clock while loaded are recorded per GPU
//! (`power.gpu<i>.*`), so `accept compare` and the regression against the node's previous
//! record see a GPU that draws or clocks less after a driver or firmware change.

use super::context::{Ctx, F, at, fmt};
use crate::accept::input::{Input, Output};
use crate::accept::power::{Load, Sample, reasons};
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{Layer, Verdict};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Samples at or above this fraction of the limit count as loaded for the mean SM clock.
const LOADED_RATIO: f64 = 0.5;

fn f(id: &'static str, summary: &'static str) -> F {
    F {
        id: Cow::Borrowed(id),
        layer: Layer::Interconnect,
        summary,
        fault: FaultClass::Device,
        action: Action::CheckCoolingPower,
    }
}

pub(super) fn power(ctx: &mut Ctx<'_>, inputs: &[Input]) {
    let samples = f(
        "power.samples",
        "power, clocks and clock event reasons were sampled on every GPU under load",
    );
    let sets: Vec<(&Path, &crate::accept::power::Samples)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Power(s) => Some((i.path.as_path(), s)),
            _ => None,
        })
        .collect();
    // Both vendors' framework Jobs run the sampler.
    let gpus = ctx.policy.topology.vendor.is_some();
    if sets.is_empty() {
        if gpus && ctx.required(Test::Framework) {
            ctx.push(
                &samples,
                None,
                Verdict::Incomplete,
                "the framework Job's power samples (`# nodeimg power samples` after its probe lines)",
                "none among the inputs",
                Vec::new(),
            );
        }
        return;
    }
    // Whose GPUs each set's are: this node's (a section without a name, or with this
    // node's), another node's of a multi-node run (left to that node's acceptance), or,
    // when the node being accepted is not known and the sections name several, each
    // node's own.
    let named: BTreeSet<&str> = sets.iter().filter_map(|(_, s)| s.node.as_deref()).collect();
    let mut others: BTreeSet<&str> = BTreeSet::new();
    let mut owned: Vec<(Option<&str>, &Path, &crate::accept::power::Samples)> = Vec::new();
    for (path, s) in &sets {
        match (s.node.as_deref(), ctx.node) {
            (Some(n), Some(me)) if n != me => {
                others.insert(n);
            }
            (Some(n), None) if named.len() > 1 => owned.push((Some(n), path, s)),
            _ => owned.push((None, path, s)),
        }
    }
    let on = |node: Option<&str>| node.map(|n| format!(" on {n}")).unwrap_or_default();
    for (node, path, s) in &owned {
        if let Some((line, said)) = &s.error {
            ctx.push(
                &samples,
                node.map(|n| format!("node {n}")),
                Verdict::Incomplete,
                "nvidia-smi's or amd-smi's samples under the power sample section",
                format!("the sampler printed: {said}"),
                vec![at(path, *line)],
            );
        }
    }
    // Every sample per node and GPU, with its file and load.
    type Taken<'s> = Vec<(&'s Path, Load, &'s Sample)>;
    let mut by_gpu: BTreeMap<(Option<&str>, u32), Taken<'_>> = BTreeMap::new();
    for (node, path, s) in &owned {
        for sample in &s.samples {
            by_gpu
                .entry((*node, sample.index))
                .or_default()
                .push((path, s.load, sample));
        }
    }
    if by_gpu.is_empty() {
        return;
    }
    let want = ctx.gpus();
    let nodes: BTreeSet<Option<&str>> = by_gpu.keys().map(|k| k.0).collect();
    let left_out = if others.is_empty() {
        String::new()
    } else {
        format!(
            " (the samples of {} in the multi-node logs are theirs to judge)",
            others.iter().copied().collect::<Vec<_>>().join(", ")
        )
    };
    for node in nodes {
        let seen = by_gpu.keys().filter(|k| k.0 == node).count() as u32;
        let first = by_gpu
            .iter()
            .find(|(k, _)| k.0 == node)
            .and_then(|(_, v)| v.first())
            .expect("non-empty");
        ctx.push(
            &samples,
            node.map(|n| format!("node {n}")),
            if seen >= want {
                Verdict::Pass
            } else {
                Verdict::Incomplete
            },
            format!("{want} GPUs"),
            format!("{seen} GPUs{left_out}"),
            vec![at(first.0, first.2.line)],
        );
    }
    let peak_f = f(
        "power.peak",
        "the GPU reached its power limit's share under the matmul load",
    );
    let slow_f = f(
        "power.slowdown",
        "no hardware or thermal slowdown, no power brake while loaded",
    );
    for ((node, index), list) in &by_gpu {
        let subject = Some(format!("GPU {index}{}", on(*node)));
        // Slowdown, under any load.
        let bad: Vec<String> = list
            .iter()
            .flat_map(|(path, _, s)| {
                s.active
                    .iter()
                    .filter(|r| reasons::lookup(r).is_some_and(|x| x.cooling_power))
                    .map(move |r| {
                        format!(
                            "{r} at {}{}{}",
                            at(path, s.line),
                            s.temperature
                                .map(|t| format!(", {} °C", fmt(t)))
                                .unwrap_or_default(),
                            s.sm_clock
                                .map(|c| format!(", SM {} MHz", fmt(c)))
                                .unwrap_or_default()
                        )
                    })
            })
            .collect();
        ctx.push(
            &slow_f,
            subject.clone(),
            if bad.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
            "none active (hw_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown, sw_thermal_slowdown; on AMD amd.socket_thermal, amd.vr_thermal, amd.hbm_thermal, amd.prochot)",
            if bad.is_empty() {
                format!("{} samples, none active", list.len())
            } else {
                let n = bad.len();
                let mut shown: Vec<String> = bad.into_iter().take(3).collect();
                if n > 3 {
                    shown.push(format!("{} more", n - 3));
                }
                shown.join("; ")
            },
            vec![at(list[0].0, list[0].2.line)],
        );
        // Peak and mean power under the matmul load (or any load, recorded only).
        let gemm: Vec<&(&Path, Load, &Sample)> =
            list.iter().filter(|(_, l, _)| *l == Load::Gemm).collect();
        let loaded: Vec<&(&Path, Load, &Sample)> = if gemm.is_empty() {
            list.iter().collect()
        } else {
            gemm.clone()
        };
        let powered: Vec<(&Path, &Sample, f64)> = loaded
            .iter()
            .filter_map(|(p, _, s)| s.power.map(|w| (*p, *s, w)))
            .collect();
        let limit = loaded
            .iter()
            .filter_map(|(_, _, s)| s.limit)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let Some(&(ppath, psample, peak)) = powered.iter().max_by(|a, b| a.2.total_cmp(&b.2))
        else {
            continue;
        };
        let mean = powered.iter().map(|x| x.2).sum::<f64>() / powered.len() as f64;
        let key = |what: &str| match node {
            Some(n) => format!("power.{n}.gpu{index}.{what}"),
            None => format!("power.gpu{index}.{what}"),
        };
        let ev = at(ppath, psample.line);
        ctx.figure(key("peak_w"), peak, "W", true, ev.clone());
        ctx.figure(key("mean_w"), mean, "W", true, ev.clone());
        if let Some(limit) = limit {
            ctx.figure(key("limit_w"), limit, "W", true, ev.clone());
            let clocks: Vec<f64> = loaded
                .iter()
                .filter(|(_, _, s)| s.power.is_some_and(|w| w >= LOADED_RATIO * limit))
                .filter_map(|(_, _, s)| s.sm_clock)
                .collect();
            if !clocks.is_empty() {
                ctx.figure(
                    key("sm_clock_mhz"),
                    clocks.iter().sum::<f64>() / clocks.len() as f64,
                    "MHz",
                    true,
                    ev.clone(),
                );
            }
        }
        if gemm.is_empty() {
            continue;
        }
        match limit {
            Some(limit) if limit > 0.0 => {
                let ratio = peak / limit;
                let (least, source) = ctx.policy.power_peak;
                ctx.push(
                    &peak_f,
                    subject,
                    if ratio >= least {
                        Verdict::Pass
                    } else {
                        Verdict::Fail
                    },
                    format!(
                        ">= {} W ({} % of the {} W enforced limit, {source})",
                        fmt(limit * least),
                        fmt(least * 100.0),
                        fmt(limit)
                    ),
                    format!(
                        "peak {} W ({} % of the limit), mean {} W over {} samples",
                        fmt(peak),
                        fmt(ratio * 100.0),
                        fmt(mean),
                        powered.len()
                    ),
                    vec![ev],
                );
            }
            _ => ctx.push(
                &peak_f,
                subject,
                Verdict::Incomplete,
                "the GPU's enforced power limit among the samples",
                format!("peak {} W, no power limit reported", fmt(peak)),
                vec![ev],
            ),
        }
    }
}
