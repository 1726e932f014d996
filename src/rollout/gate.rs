//! The gate between waves: the acceptance records of the wave's nodes decide whether the
//! next wave may start. `proceed` only when every node of the wave has a record of the new
//! blueprint whose result is `pass` (a break-glass override is not an acceptance), and no
//! figure is worse than the node's own previous record beyond the tolerance; where the GPU
//! operator rolls a new driver by the plan's waves ([`super::operator_driver`]), a record
//! that shows another driver is no acceptance either. Anything else is `halt`, and the
//! answer names the rollback: the previous image.

use std::collections::BTreeMap;

use serde::Serialize;

use super::plan::Plan;
use super::records::Read;
use crate::accept::regression;
use crate::verify::report::record::{RecordResult, Verdict};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Proceed,
    Halt,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeVerdict {
    pub node: String,
    pub accepted: bool,
    /// Why not (empty when accepted).
    pub reasons: Vec<String>,
    /// The record judged, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub wave: usize,
    pub canary: bool,
    pub decision: Decision,
    pub nodes: Vec<NodeVerdict>,
    /// What to do next.
    pub next: String,
    /// The image to return to when halted.
    pub rollback: String,
    /// How regression was judged.
    pub baseline: String,
}

/// Judges wave `wave` of `plan` on the newest record of each node in `current`, against
/// the node's record in `previous` when that is given (`None`: the regression findings the
/// records carry, from `nodeimg accept --previous`).
pub fn judge(
    plan: &Plan,
    wave: usize,
    current: &BTreeMap<String, Read>,
    previous: Option<&BTreeMap<String, Read>>,
) -> Result<Gate, String> {
    let w = plan.waves.get(wave).ok_or_else(|| {
        format!(
            "the plan has {} wave(s) (0–{}); there is no wave {wave}",
            plan.waves.len(),
            plan.waves.len().saturating_sub(1)
        )
    })?;
    let target = Target {
        id: &plan.to.id,
        version: &plan.to.version,
        tolerance_percent: plan.tolerance_percent,
        driver: plan.operator_driver.as_ref().map(|d| d.to.as_str()),
    };
    let nodes: Vec<NodeVerdict> = w
        .nodes
        .iter()
        .zip(&w.hostnames)
        .map(|(name, host)| judge_node(&target, name, host, current, previous))
        .collect();
    let halted = nodes.iter().any(|n| !n.accepted);
    let decision = if halted {
        Decision::Halt
    } else {
        Decision::Proceed
    };
    let next = match (decision, wave + 1 < plan.waves.len()) {
        (Decision::Halt, _) => format!(
            "halt: apply no further wave; apply rollback.yaml to return the upgraded nodes to {}{}",
            plan.rollback.image,
            if w.canary {
                " (a canary failed: nothing else was touched)"
            } else {
                ""
            }
        ),
        (Decision::Proceed, true) if plan.operator_driver.is_some() => format!(
            "proceed: apply wave-{n:03}.yaml, then run wave-{n:03}-driver.sh (the GPU operator upgrades the wave's driver)",
            n = wave + 1
        ),
        (Decision::Proceed, true) => format!("proceed: apply wave-{:03}.yaml", wave + 1),
        (Decision::Proceed, false) => {
            "proceed: the last wave is accepted; the rollout is complete".to_owned()
        }
    };
    Ok(Gate {
        wave,
        canary: w.canary,
        decision,
        nodes,
        next,
        rollback: plan.rollback.image.clone(),
        baseline: match previous {
            Some(_) => format!(
                "each node against its previous record given with --previous, tolerance {} %",
                plan.tolerance_percent
            ),
            None => "the regression findings in the records (nodeimg accept --previous)".to_owned(),
        },
    })
}

/// What a node's record must show to count as accepted.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The blueprint id the record must name (the image the node runs).
    pub id: &'a str,
    pub version: &'a str,
    /// How much worse than its previous record a figure may be.
    pub tolerance_percent: f64,
    /// The GPU driver the record must show, where the operator rolls a new one by the
    /// plan's waves.
    pub driver: Option<&'a str>,
}

/// One node (`name`, or its `host` name) judged on its newest record in `current`: a
/// record of `target`'s blueprint whose result is `pass` (a break-glass override is not an
/// acceptance), and no figure worse than its previous record (in `previous`, else the
/// regression findings the record carries) beyond the tolerance.
pub fn judge_node(
    target: &Target<'_>,
    name: &str,
    host: &str,
    current: &BTreeMap<String, Read>,
    previous: Option<&BTreeMap<String, Read>>,
) -> NodeVerdict {
    let read = current.get(name).or_else(|| current.get(host));
    let mut reasons = Vec::new();
    match read {
        None => reasons.push("no acceptance record".to_owned()),
        Some(r) => {
            let rec = &r.record;
            if rec.blueprint.id != target.id {
                reasons.push(format!(
                    "the record is of blueprint {} {} ({}), not of the new image's {} ({})",
                    rec.blueprint.name,
                    rec.blueprint.version,
                    rec.blueprint.id,
                    target.version,
                    target.id
                ));
            }
            if let Some(want) = target.driver {
                match rec.gpu.driver.known() {
                    Some(seen) if seen == want => {}
                    seen => reasons.push(format!(
                        "the record shows driver {}, not the new {want}: the GPU operator has not \
                         upgraded this node (is it still labelled {}=true, or {} not {}?)",
                        seen.map_or("(none)", String::as_str),
                        super::operator_driver::SKIP_LABEL,
                        super::operator_driver::STATE_LABEL,
                        super::operator_driver::DONE,
                    )),
                }
            }
            match rec.result {
                RecordResult::Pass => {}
                RecordResult::Overridden => reasons.push(format!(
                    "accepted only by break-glass override ({})",
                    rec.break_glass.as_deref().unwrap_or("no reason given")
                )),
                other => {
                    let failed: Vec<String> = rec
                        .findings
                        .iter()
                        .filter(|f| f.verdict != Verdict::Pass)
                        .map(|f| format!("{} {}", f.name(), f.verdict.as_str()))
                        .collect();
                    reasons.push(format!(
                        "result {}{}",
                        other.as_str(),
                        if failed.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", failed.join(", "))
                        }
                    ));
                }
            }
            match previous {
                Some(prev) => match prev.get(name).or_else(|| prev.get(host)) {
                    None => reasons
                        .push("no previous record: its regression cannot be judged".to_owned()),
                    Some(p) => {
                        let software = regression::software_change(
                            &p.record,
                            rec.gpu.driver.known().map(String::as_str),
                            &rec.blueprint.id,
                        );
                        for f in regression::compare(
                            &rec.figures,
                            &p.record.figures,
                            target.tolerance_percent,
                            software.as_deref(),
                            &p.record.created_at,
                        ) {
                            if f.verdict == Verdict::Fail {
                                reasons.push(format!(
                                    "regression {}: {} (expected {})",
                                    f.subject.unwrap_or_default(),
                                    f.observed,
                                    f.expected
                                ));
                            }
                        }
                    }
                },
                None => {
                    for f in rec
                        .findings
                        .iter()
                        .filter(|f| f.id == "regression" && f.verdict == Verdict::Fail)
                    {
                        reasons.push(format!(
                            "regression {}: {}",
                            f.subject.clone().unwrap_or_default(),
                            f.observed
                        ));
                    }
                }
            }
        }
    }
    NodeVerdict {
        node: name.to_owned(),
        accepted: reasons.is_empty(),
        reasons,
        record: read.map(|r| r.path.display().to_string()),
    }
}
