//! Layer 5, the framework: the framework Job's steps (devices, tensor, load, collective,
//! multinode, inference, checkpoint), each passed or not (a failing step is a
//! `transient-application` fault: restart it), and the training and inference figures it
//! printed, recorded for the next record's regression check.

use super::context::{Ctx, F, at, not_run, probe_steps, step_verdict};
use crate::accept::input::Input;
use crate::accept::probe::{Step, Suite};
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::path::Path;

/// The steps of the framework Job.
pub const FRAMEWORK_STEPS: &[&str] = &[
    "devices",
    "tensor",
    "load",
    "collective",
    "multinode",
    "inference",
    "checkpoint",
];

pub(super) fn framework(
    ctx: &mut Ctx<'_>,
    inputs: &[Input],
) -> (Run<record::Framework>, Run<record::Framework>) {
    const STEP: F = F {
        id: Cow::Borrowed("framework"),
        layer: Layer::Framework,
        summary: "a framework step passed",
        fault: FaultClass::TransientApplication,
        action: Action::RestartApp,
    };
    let steps = probe_steps(inputs, Suite::Framework);
    if steps.is_empty() {
        not_run(
            ctx,
            Test::Framework,
            &STEP,
            "the framework Job (probe suite framework)",
        );
        let reason = "no framework Job output among the inputs";
        return (Run::not_run(reason), Run::not_run(reason));
    }
    let mut training = Vec::new();
    let mut inference = Vec::new();
    let mut train_ev = Vec::new();
    let mut infer_ev = Vec::new();
    for name in FRAMEWORK_STEPS {
        let found: Vec<&(&Path, &Step)> = steps.iter().filter(|(_, s)| s.name == *name).collect();
        let fault = if *name == "devices" {
            FaultClass::DriverDaemon
        } else {
            FaultClass::TransientApplication
        };
        let f = F {
            id: Cow::Owned(format!("framework.{name}")),
            layer: Layer::Framework,
            summary: "a framework step passed",
            fault,
            action: if fault == FaultClass::DriverDaemon {
                Action::RestartDaemon
            } else {
                Action::RestartApp
            },
        };
        if found.is_empty() {
            ctx.push(
                &f,
                None,
                Verdict::Incomplete,
                "the step ran and passed",
                "not in the output",
                steps.iter().map(|(p, s)| at(p, s.line)).take(1).collect(),
            );
            continue;
        }
        // Several ranks may report a step: the worst counts.
        let worst = found
            .iter()
            .min_by_key(|(_, s)| s.status)
            .expect("non-empty");
        let (path, step) = (worst.0, worst.1);
        let (verdict, observed) = step_verdict(step);
        let ev = vec![at(path, step.line)];
        ctx.push(
            &f,
            step.rank.map(|r| format!("rank {r}")),
            verdict,
            "pass",
            observed,
            ev.clone(),
        );
        // Figures from the first reporter of each step.
        let (fpath, first) = (found[0].0, found[0].1);
        step_figures(ctx, "framework", name, fpath, first);
        let entry = record::FrameworkStep {
            name: (*name).to_owned(),
            status: format!("{:?}", step.status).to_lowercase(),
            seconds: first.seconds,
            metrics: first.metrics.clone(),
            error: step.error.clone(),
        };
        if *name == "inference" {
            inference.push(entry);
            infer_ev.extend(ev);
        } else {
            training.push(entry);
            train_ev.extend(ev);
        }
    }
    let wrap = |steps: Vec<record::FrameworkStep>, evidence: Vec<String>, what: &str| {
        if steps.is_empty() {
            Run::not_run(format!("the framework output has no {what} step"))
        } else {
            Run::Done(record::Framework { steps, evidence })
        }
    };
    (
        wrap(training, train_ev, "training"),
        wrap(inference, infer_ev, "inference"),
    )
}

/// A probe step's figures, `FAMILY.STEP.seconds` and `FAMILY.STEP.METRIC`,
/// from the report of `step` in `path`: times and latencies are better
/// lower, rates better higher.
pub(super) fn step_figures(ctx: &mut Ctx<'_>, family: &str, name: &str, path: &Path, step: &Step) {
    if let Some(s) = step.seconds {
        ctx.figure(
            format!("{family}.{name}.seconds"),
            s,
            "s",
            false,
            at(path, step.line),
        );
    }
    for (metric, value) in &step.metrics {
        let lower =
            metric.ends_with("seconds") || metric.ends_with("_ms") || metric.contains("latency");
        ctx.figure(
            format!("{family}.{name}.{metric}"),
            *value,
            metric_unit(metric),
            !lower,
            at(path, step.line),
        );
    }
}

fn metric_unit(metric: &str) -> &'static str {
    if metric.ends_with("seconds") {
        "s"
    } else if metric.ends_with("_ms") {
        "ms"
    } else if metric.contains("tflops") {
        "TFLOPS"
    } else if metric.contains("gbps") || metric.contains("busbw") {
        "GB/s"
    } else if metric == "tokens_per_second" {
        "tokens/s"
    } else {
        ""
    }
}
