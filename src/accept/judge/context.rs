//! What judging every layer shares: the finding builder ([`Ctx`], a finding's fixed parts
//! [`F`]) that fills in the verdict, the action (only a failure has one) and the figures
//! for the next record's regression check; the rule that a required test without output
//! is `not-run`; how figures and evidence are printed. The layers' judges here and the
//! rails and storage judges beside `judge` all write through it, so it is a file of its
//! own that imports none of them.

use super::policy::Policy;
use crate::accept::input::{Input, Output};
use crate::accept::probe::{Step, StepStatus, Suite};
use crate::accept::threshold::Figure;
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{FigureValue, Finding, Layer, Verdict};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// Builds findings without repeating the fixed parts.
pub(in crate::accept) struct Ctx<'a> {
    pub(in crate::accept) policy: &'a Policy,
    /// The node being accepted, when known.
    pub(super) node: Option<&'a str>,
    pub(super) findings: Vec<Finding>,
    pub(super) figures: BTreeMap<String, FigureValue>,
}

/// The fixed parts of a finding: id, layer, summary, and the fault class and action a
/// failure points at.
pub(in crate::accept) struct F {
    pub(in crate::accept) id: Cow<'static, str>,
    pub(in crate::accept) layer: Layer,
    pub(in crate::accept) summary: &'static str,
    pub(in crate::accept) fault: FaultClass,
    pub(in crate::accept) action: Action,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(policy: &'a Policy, node: Option<&'a str>) -> Self {
        Ctx {
            policy,
            node,
            findings: Vec::new(),
            figures: BTreeMap::new(),
        }
    }

    pub(in crate::accept) fn push(
        &mut self,
        f: &F,
        subject: Option<String>,
        verdict: Verdict,
        expected: impl Into<String>,
        observed: impl Into<String>,
        evidence: Vec<String>,
    ) {
        self.findings.push(Finding {
            id: f.id.to_string(),
            layer: f.layer,
            subject,
            summary: f.summary.to_owned(),
            verdict,
            expected: expected.into(),
            observed: observed.into(),
            evidence,
            fault: f.fault,
            action: if verdict == Verdict::Fail {
                f.action
            } else {
                Action::None
            },
        });
    }

    pub(in crate::accept) fn figure(
        &mut self,
        key: String,
        value: f64,
        unit: &str,
        higher_is_better: bool,
        evidence: String,
    ) {
        self.figures.insert(
            key,
            FigureValue {
                value: round(value),
                unit: unit.to_owned(),
                higher_is_better,
                evidence,
            },
        );
    }

    pub(super) fn required(&self, test: Test) -> bool {
        self.policy.required.contains(&test)
    }

    pub(super) fn gpus(&self) -> u32 {
        self.policy.topology.gpus
    }

    /// A bandwidth at or above a threshold, or below it.
    pub(super) fn bandwidth(
        &mut self,
        f: &F,
        figure: Figure,
        subject: Option<String>,
        value: f64,
        scale: f64,
        evidence: Vec<String>,
    ) {
        match self.policy.threshold(figure).cloned() {
            Some(t) => {
                let want = t.value * scale;
                let verdict = if value >= want { Verdict::Pass } else { Verdict::Fail };
                self.push(
                    f,
                    subject,
                    verdict,
                    format!(">= {} {} ({})", fmt(want), t.unit, t.source),
                    format!("{} {}", fmt(value), t.unit),
                    evidence,
                );
            }
            None => self.push(
                f,
                subject,
                Verdict::Pass,
                format!(
                    "no absolute threshold for this topology (set {}); judged against the previous record",
                    figure.field()
                ),
                format!("{} {}", fmt(value), figure.unit()),
                evidence,
            ),
        }
    }
}

pub(super) fn round(v: f64) -> f64 {
    (v * 1e4).round() / 1e4
}

/// A figure as findings print it: two decimals at most, no trailing zeros.
pub(in crate::accept) fn fmt(v: f64) -> String {
    let s = format!("{:.2}", v);
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Evidence: `file:line`.
pub(in crate::accept) fn at(path: &Path, line: usize) -> String {
    format!("{}:{line}", path.display())
}

/// A required test with no output among the inputs is `not-run`, never a pass.
pub(super) fn not_run(ctx: &mut Ctx<'_>, test: Test, f: &F, tool: &str) -> bool {
    if ctx.required(test) {
        ctx.push(
            f,
            None,
            Verdict::NotRun,
            format!("an output of {tool}"),
            "none among the inputs",
            Vec::new(),
        );
    }
    false
}

/// The steps the acceptance probe reported for `suite`, with the file each came from.
pub(super) fn probe_steps(inputs: &[Input], suite: Suite) -> Vec<(&Path, &Step)> {
    inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Probe(steps) => Some(
                steps
                    .iter()
                    .filter(move |s| s.suite == suite)
                    .map(move |s| (i.path.as_path(), s)),
            ),
            _ => None,
        })
        .flatten()
        .collect()
}

/// A probe step's verdict, and what was observed: a skipped step is
/// incomplete, a failed one fails with its reason.
pub(super) fn step_verdict(step: &Step) -> (Verdict, String) {
    match step.status {
        StepStatus::Pass => (Verdict::Pass, "pass".to_owned()),
        StepStatus::Skip => (Verdict::Incomplete, "skipped".to_owned()),
        StepStatus::Fail => (
            Verdict::Fail,
            format!(
                "fail: {}",
                step.error.as_deref().unwrap_or("no reason given")
            ),
        ),
    }
}
