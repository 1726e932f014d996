//! What every check family sees (the blueprint, the facts, the compatibility matrix) and
//! the one way they record a verdict, so every result has the same shape and an unknown
//! fact always becomes an error verdict.

use super::matcher::Expect;
use super::{Action, CheckResult, Spec, Verdict};
use crate::blueprint::compat::Matrix;
use crate::blueprint::model::RawBlueprint;
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;
use std::fmt::Display;

/// What was observed for one check: a value and whether it meets the expectation, or
/// why it is unknown.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    Value { text: String, pass: bool },
    Unknown(String),
}

impl Observation {
    pub fn value(text: impl Into<String>, pass: bool) -> Self {
        Observation::Value {
            text: text.into(),
            pass,
        }
    }

    pub fn unknown(reason: impl Into<String>) -> Self {
        Observation::Unknown(reason.into())
    }

    /// A fact judged by `pass`; unknown stays unknown.
    pub fn of<T>(fact: &Fact<T>, show: impl Fn(&T) -> String, pass: impl Fn(&T) -> bool) -> Self {
        match fact {
            Fact::Known(value) => Observation::value(show(value), pass(value)),
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        }
    }
}

pub struct Context<'a> {
    pub blueprint: &'a RawBlueprint,
    pub facts: &'a Facts,
    pub matrix: &'a Matrix,
    results: Vec<CheckResult>,
}

impl<'a> Context<'a> {
    pub fn new(blueprint: &'a RawBlueprint, facts: &'a Facts, matrix: &'a Matrix) -> Self {
        Context {
            blueprint,
            facts,
            matrix,
            results: Vec::new(),
        }
    }

    pub fn into_results(self) -> Vec<CheckResult> {
        self.results
    }

    /// Records one verdict. The recommended action is the spec's when the check did not
    /// pass, `none` otherwise.
    pub fn record(
        &mut self,
        spec: &Spec,
        subject: Option<String>,
        expected: impl Display,
        observation: Observation,
        evidence: Vec<String>,
    ) -> &mut CheckResult {
        let (verdict, observed) = match observation {
            Observation::Value { text, pass: true } => (Verdict::Pass, text),
            Observation::Value { text, pass: false } => (Verdict::Fail, text),
            Observation::Unknown(reason) => (Verdict::Error, format!("unknown: {reason}")),
        };
        self.results.push(CheckResult {
            id: spec.id.to_owned(),
            subject,
            summary: spec.summary.to_owned(),
            severity: spec.severity,
            verdict,
            expected: expected.to_string(),
            observed,
            evidence,
            fault: spec.fault,
            action: if verdict == Verdict::Pass {
                Action::None
            } else {
                spec.action
            },
            stage: spec.stage,
        });
        let last = self.results.len() - 1;
        &mut self.results[last]
    }

    /// Judges a fact's text against an expectation.
    pub fn expect<T: Display>(
        &mut self,
        spec: &Spec,
        subject: Option<String>,
        expect: &Expect,
        fact: &Fact<T>,
        evidence: Vec<String>,
    ) -> &mut CheckResult {
        let observation = match fact {
            Fact::Known(value) => {
                let text = value.to_string();
                match expect.matches(&text) {
                    Ok(pass) => Observation::value(text, pass),
                    Err(why) => Observation::unknown(why),
                }
            }
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        };
        self.record(spec, subject, expect, observation, evidence)
    }
}
