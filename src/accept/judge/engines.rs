//! Layer 5 beyond PyTorch: the JAX probe's steps (`probe-jax.py`, suite `jax`) and the
//! inference engine check (`serve-check.py`, suite `inference`). A step that failed is a
//! `transient-application` fault (restart it), as the PyTorch steps are; the engine's
//! time to first token and generation rate are judged against the blueprint's
//! `acceptance.thresholds` where it sets them, and always recorded for the regression
//! against the node's previous record.

use super::context::{Ctx, F, at, fmt, not_run, probe_steps, step_verdict};
use crate::accept::input::Input;
use crate::accept::probe::{Step, StepStatus, Suite};
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{Layer, Verdict};
use std::borrow::Cow;
use std::path::Path;

/// The steps of the single-node JAX Job; `multinode` is judged where it ran.
pub const JAX_STEPS: &[&str] = &["devices", "tensor", "collective"];

fn step_f(id: String) -> F {
    F {
        id: Cow::Owned(id),
        layer: Layer::Framework,
        summary: "a framework step passed",
        fault: FaultClass::TransientApplication,
        action: Action::RestartApp,
    }
}

/// The worst report of a step (several processes may print one), and the first.
fn worst<'a>(found: &[&'a (&'a Path, &'a Step)]) -> (&'a Path, &'a Step) {
    let w = found
        .iter()
        .min_by_key(|(_, s)| s.status)
        .expect("non-empty");
    (w.0, w.1)
}

/// Each step's verdict and its figures (`<family>.<step>.<metric>`).
fn steps(ctx: &mut Ctx<'_>, family: &str, steps: &[(&Path, &Step)], names: &[&str]) {
    let mut names: Vec<&str> = names.to_vec();
    for (_, s) in steps {
        if !names.contains(&s.name.as_str()) {
            names.push(s.name.as_str());
        }
    }
    for name in names {
        let found: Vec<&(&Path, &Step)> = steps.iter().filter(|(_, s)| s.name == name).collect();
        let f = step_f(format!("{family}.{name}"));
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
        let (path, step) = worst(&found);
        let (verdict, observed) = step_verdict(step);
        ctx.push(
            &f,
            None,
            verdict,
            "pass",
            observed,
            vec![at(path, step.line)],
        );
        let (fpath, first) = (found[0].0, found[0].1);
        super::framework::step_figures(ctx, family, name, fpath, first);
    }
}

pub(super) fn jax(ctx: &mut Ctx<'_>, inputs: &[Input]) {
    let found = probe_steps(inputs, Suite::Jax);
    if found.is_empty() {
        not_run(
            ctx,
            Test::Jax,
            &step_f("jax".into()),
            "the JAX Job (probe suite jax)",
        );
        return;
    }
    steps(ctx, "jax", &found, JAX_STEPS);
}

pub(super) fn inference(ctx: &mut Ctx<'_>, inputs: &[Input]) {
    let found = probe_steps(inputs, Suite::Inference);
    if found.is_empty() {
        not_run(
            ctx,
            Test::Inference,
            &step_f("inference".into()),
            "the inference Job (probe suite inference)",
        );
        return;
    }
    steps(ctx, "inference", &found, &["serve"]);
    let Some((path, serve)) = found
        .iter()
        .find(|(_, s)| s.name == "serve" && s.status == StepStatus::Pass)
    else {
        return;
    };
    let t = ctx.policy.inference;
    let ev = vec![at(path, serve.line)];
    for (id, metric, unit, bound, at_least, field) in [
        (
            "inference.tokens-per-second",
            "tokens_per_second",
            "tokens/s",
            t.0,
            true,
            "acceptance.thresholds.inferenceTokensPerSecond",
        ),
        (
            "inference.ttft",
            "ttft_ms",
            "ms",
            t.1,
            false,
            "acceptance.thresholds.inferenceTtftMs",
        ),
    ] {
        let f = F {
            id: Cow::Borrowed(id),
            layer: Layer::Framework,
            summary: if at_least {
                "the engine's generation rate reached the threshold"
            } else {
                "the engine's time to first token stayed within the threshold"
            },
            fault: FaultClass::TransientApplication,
            action: Action::RestartApp,
        };
        let Some(value) = serve.metrics.get(metric).copied() else {
            ctx.push(
                &f,
                None,
                Verdict::Incomplete,
                format!("`{metric}` in the serve step"),
                "not printed",
                ev.clone(),
            );
            continue;
        };
        match bound {
            Some(b) => {
                let ok = if at_least { value >= b } else { value <= b };
                ctx.push(
                    &f,
                    None,
                    if ok { Verdict::Pass } else { Verdict::Fail },
                    format!(
                        "{} {} {unit} ({field})",
                        if at_least { "at least" } else { "at most" },
                        fmt(b)
                    ),
                    format!("{} {unit}", fmt(value)),
                    ev.clone(),
                );
            }
            None => ctx.push(
                &f,
                None,
                Verdict::Pass,
                format!("no threshold (set {field}); judged against the previous record"),
                format!("{} {unit}", fmt(value)),
                ev.clone(),
            ),
        }
    }
}
