//! Layer 4, the AMD GPU Operator's test runner (AMD's counterpart of `dcgmi diag`): the
//! blueprint's RVS recipe ran on every GPU, every test action of its latest run
//! succeeded, and the run's own verdict is `TestPassed`. A failed action is the GPU's
//! fault, to service (a PCIe or peer bandwidth recipe, `pebb`/`pbqt`, points at the link
//! instead, as DCGM's `pcie` plugin does); a run past its time limit is `incomplete`: it
//! says nothing about the GPUs that did not finish.

use super::context::{Ctx, F, at, not_run};
use crate::accept::input::{Input, Output};
use crate::accept::test_runner::{Reason, RunnerEvent};
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{Layer, Verdict};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// Fault class and action of a failing action of `recipe`: the PCIe bandwidth and
/// peer-to-peer qualification recipes load the links, every other recipe the GPU.
fn fault(recipe: &str) -> (FaultClass, Action) {
    if recipe.starts_with("pebb") || recipe.starts_with("pbqt") {
        (FaultClass::Link, Action::RebootNode)
    } else {
        (FaultClass::Device, Action::Service)
    }
}

pub(super) fn test_runner(ctx: &mut Ctx<'_>, inputs: &[Input]) {
    const RECIPE: F = F {
        id: Cow::Borrowed("test-runner.recipe"),
        layer: Layer::Interconnect,
        summary: "the AMD test runner ran the blueprint's RVS recipe",
        fault: FaultClass::Device,
        action: Action::None,
    };
    const GPUS: F = F {
        id: Cow::Borrowed("test-runner.gpus"),
        layer: Layer::Interconnect,
        summary: "the AMD test runner tested every GPU of the blueprint",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    let events: Vec<(&Path, &RunnerEvent)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::TestRunner(e) => Some(e.iter().map(move |e| (i.path.as_path(), e))),
            _ => None,
        })
        .flatten()
        .collect();
    if events.is_empty() {
        not_run(
            ctx,
            Test::TestRunner,
            &RECIPE,
            "the AMD test runner (its events)",
        );
        return;
    }
    let want = ctx.policy.test_runner_recipe.clone();
    // The latest run of the recipe: a run after a repair speaks for the node, not the
    // failure before it. Events without a time count in their order.
    let latest = events
        .iter()
        .enumerate()
        .filter(|(_, (_, e))| e.recipe.as_deref() == Some(want.as_str()))
        .max_by_key(|(i, (_, e))| (e.time.clone(), *i))
        .map(|(_, pe)| *pe);
    let Some((path, run)) = latest else {
        let ran: Vec<String> = events
            .iter()
            .map(|(_, e)| {
                e.recipe
                    .clone()
                    .unwrap_or_else(|| "(no recipe label)".into())
            })
            .collect();
        ctx.push(
            &RECIPE,
            None,
            Verdict::Incomplete,
            format!("recipe {want}"),
            format!("only {}", ran.join(", ")),
            events.iter().map(|(p, e)| at(p, e.line)).collect(),
        );
        return;
    };
    let evidence = vec![at(path, run.line)];
    ctx.push(
        &RECIPE,
        None,
        Verdict::Pass,
        format!("recipe {want}"),
        format!(
            "recipe {want}, {} iteration(s), {}",
            run.iterations.len(),
            run.reason.as_str()
        ),
        evidence.clone(),
    );
    let tested = run.tested();
    let want_gpus = ctx.gpus() as usize;
    ctx.push(
        &GPUS,
        None,
        if tested.len() >= want_gpus {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        format!("{want_gpus} GPUs"),
        format!("{} GPUs in the results", tested.len()),
        evidence.clone(),
    );
    let (fault, action) = fault(&want);
    // Each test action over every GPU and iteration: its failures, and results that are
    // neither success nor failure.
    let mut actions: BTreeMap<&str, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for iteration in &run.iterations {
        for r in &iteration.results {
            let entry = actions.entry(r.action.as_str()).or_default();
            let gpu = run.gpu(&r.kfd);
            if r.failed() && !entry.0.contains(&gpu) {
                entry.0.push(gpu);
            } else if !r.failed() && !r.passed() {
                entry.1.push(format!("{}: {}", gpu, r.result));
            }
        }
    }
    for (action_name, (failed, odd)) in &actions {
        let f = F {
            id: Cow::Owned(format!("test-runner.{action_name}")),
            layer: Layer::Interconnect,
            summary: "an RVS test action of the recipe succeeded on every GPU",
            fault,
            action,
        };
        let (verdict, observed) = if !failed.is_empty() {
            (Verdict::Fail, format!("failure on {}", failed.join(", ")))
        } else if !odd.is_empty() {
            (Verdict::Incomplete, odd.join("; "))
        } else {
            (Verdict::Pass, "success on every GPU".to_owned())
        };
        ctx.push(&f, None, verdict, "success", observed, evidence.clone());
    }
    let any_failed = actions.values().any(|(failed, _)| !failed.is_empty());
    let f = F {
        id: Cow::Borrowed("test-runner.run"),
        layer: Layer::Interconnect,
        summary: "the AMD test runner's run passed (its event's reason)",
        fault,
        action,
    };
    let (verdict, observed) = match &run.reason {
        Reason::Passed if any_failed => (
            Verdict::Fail,
            "TestPassed, but a test action failed".to_owned(),
        ),
        Reason::Passed if run.iterations.is_empty() => (
            Verdict::Incomplete,
            "TestPassed without a result".to_owned(),
        ),
        Reason::Passed => (Verdict::Pass, "TestPassed".to_owned()),
        Reason::Failed => (Verdict::Fail, "TestFailed".to_owned()),
        Reason::TimedOut => (
            Verdict::Incomplete,
            "TestTimedOut: an iteration ran past acceptance.testRunner.timeoutSeconds".to_owned(),
        ),
        Reason::Other(word) => (
            Verdict::Incomplete,
            format!("{word} (not a reason the runner documents)"),
        ),
    };
    ctx.push(&f, None, verdict, "TestPassed", observed, evidence);
}
