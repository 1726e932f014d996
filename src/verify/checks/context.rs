//! What every check family reads ([`Inputs`]: the blueprint, the facts, the compatibility
//! matrix, and what is derived from them once) and where it writes ([`Results`]: the one
//! way to record a verdict, so every result has the same shape and an unknown fact always
//! becomes an error verdict). Keeping the two apart lets a family borrow the facts while
//! it records.

use super::matcher::{Expect, Judged};
use super::{CheckResult, Spec, Verdict};
use crate::blueprint;
use crate::blueprint::compat::Matrix;
use crate::fault::Action;
use crate::fault::overrides::Overrides;
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;
use crate::verify::facts::kernel_log::{DeviceEvents, KernelLog};
use crate::verify::history::Memory;
use std::collections::BTreeMap;
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

    /// "All devices identical": unknown when any value is; otherwise the distinct values,
    /// most common first, as `value ×count`, passing when there is exactly one. Values
    /// compare as their type does (versions as versions).
    pub fn all_identical<'v, T: Ord + Display + 'v>(
        values: impl IntoIterator<Item = &'v Fact<T>>,
    ) -> Self {
        let mut counts: BTreeMap<&T, usize> = BTreeMap::new();
        for value in values {
            match value {
                Fact::Known(value) => *counts.entry(value).or_default() += 1,
                Fact::Unknown { reason } => return Observation::unknown(reason.clone()),
            }
        }
        let mut ranked: Vec<(&T, usize)> = counts.into_iter().collect();
        ranked.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
        let text = ranked
            .iter()
            .map(|(value, count)| format!("{value} ×{count}"))
            .collect::<Vec<_>>()
            .join(", ");
        Observation::value(text, ranked.len() == 1)
    }
}

/// What the checks read: the blueprint, the facts and the matrix, plus the kernel log's
/// device events indexed by PCI device once for every per-device check.
pub struct Inputs<'a> {
    pub blueprint: &'a blueprint::Spec,
    pub facts: &'a Facts,
    pub matrix: &'a Matrix,
    /// Xid, SXid, amdgpu RAS and fallen-off-the-bus events by device; unknown when the
    /// log could not be read.
    pub device_events: Fact<DeviceEvents<'a>>,
    /// The site's overrides of the vendor fault catalogs (the matrix's `faults`).
    pub overrides: Overrides,
    /// What the health phase's earlier runs left; `None` in the other phases.
    pub memory: Option<Memory<'a>>,
}

impl<'a> Inputs<'a> {
    pub fn new(blueprint: &'a blueprint::Spec, facts: &'a Facts, matrix: &'a Matrix) -> Self {
        let device_events = match &facts.kernel_log {
            Some(Fact::Known(log)) => Fact::Known(KernelLog::by_device(log)),
            Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
            None => Fact::unknown("the kernel log was not read"),
        };
        Inputs {
            blueprint,
            facts,
            matrix,
            device_events,
            overrides: matrix.fault_overrides(),
            memory: None,
        }
    }
}

/// The results recorded so far, in the order the checks ran.
#[derive(Debug, Default)]
pub struct Results {
    results: Vec<CheckResult>,
}

impl Results {
    pub fn into_vec(self) -> Vec<CheckResult> {
        self.results
    }

    /// Records one verdict. The recommended action is the spec's when the check did not
    /// pass, `none` otherwise.
    pub fn record(
        &mut self,
        spec: &'static Spec,
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
        let index = self.results.len();
        self.results.push(CheckResult {
            spec,
            subject,
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
        });
        &mut self.results[index]
    }

    /// Judges a fact against an expectation.
    pub fn expect<T: Judged>(
        &mut self,
        spec: &'static Spec,
        subject: Option<String>,
        expect: &Expect,
        fact: &Fact<T>,
        evidence: Vec<String>,
    ) -> &mut CheckResult {
        let observation = match fact {
            Fact::Known(value) => match value.judged_by(expect) {
                Ok(pass) => Observation::value(value.to_string(), pass),
                Err(why) => Observation::unknown(why),
            },
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
        };
        self.record(spec, subject, expect, observation, evidence)
    }

    /// A per-device check the blueprint asks for when there is no device to check: an
    /// error verdict that says so, never a silent pass.
    pub fn nothing_to_check(
        &mut self,
        spec: &'static Spec,
        expected: impl Display,
        why: &str,
        evidence: Vec<String>,
    ) -> &mut CheckResult {
        self.record(
            spec,
            None,
            expected,
            Observation::unknown(format!("not checked: {why}")),
            evidence,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_values() {
        let known = |s: &str| Fact::Known(s.to_owned());
        assert_eq!(
            Observation::all_identical(&[known("a"), known("a")]),
            Observation::value("a ×2", true)
        );
        assert_eq!(
            Observation::all_identical(&[known("a"), known("b"), known("a")]),
            Observation::value("a ×2, b ×1", false)
        );
        assert_eq!(
            Observation::all_identical(&[known("a"), Fact::unknown("gone")]),
            Observation::unknown("gone")
        );
    }
}
