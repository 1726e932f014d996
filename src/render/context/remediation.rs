//! Isolation by fault class. node-problem-detector (its chart values, `npd`) runs
//! `nodeimg verify --phase health` in the host's namespaces once per fault class that has
//! health checks, each run limited to that class's checks, beside the overall
//! `GPUProblem` rule, and sets one node condition per class (`NodeimgLinkProblem`, …; `True`
//! is the problem, as NPD's own conditions). A failing run keeps a capture and the record
//! of the failing verdict under the evidence folder and names both in the condition's
//! message. In the cluster, NodeHealthCheck (medik8s) acts on those conditions:
//!
//! - driver and daemon: systemd (`Restart=`) and the operators' DaemonSets restart the
//!   daemon within `daemonRestartWindow`; if the condition holds longer, the reboot
//!   template (Self Node Remediation by default), once, with a timeout;
//! - device and link: the repair template (a repair queue; never one that reboots);
//!   without one, no NodeHealthCheck (it cordons only through a remediator), the
//!   conditions and the evidence stay;
//! - on both, no automatic return: `healthyDelay: -1s` keeps the node out until it carries
//!   NodeHealthCheck's confirmation annotation, which `nodeimg rollout readmit` writes only
//!   for a node whose acceptance record passes again (`rollout::readmit`);
//! - a transient application fault is no node condition: the workload's own controller
//!   (a Job's `backoffLimit` / `podFailurePolicy`) restarts its Pod.
//!
//! `maxUnhealthy` limits, fleet-wide, how many nodes of the class are remediated at once.

use crate::blueprint::Spec;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::blueprint::model::rollout::TemplateRef;
use crate::fault::FaultClass;
use crate::verify::checks::applies;

use super::npd::health_gate;
use super::startup::DriverPhase;
use super::{LOCK_PATH, NODEIMG_BIN};

/// Captures kept per fault class before a failing run stops adding more.
pub const MAX_CAPTURES: usize = 5;

/// One NPD rule: a fault class's health checks and the condition they set.
#[derive(Debug, Clone, Serialize)]
pub struct HealthRule {
    pub fault: &'static str,
    /// `Nodeimg<Class>Problem`.
    pub condition: String,
    pub ok_reason: String,
    pub problem_reason: String,
    /// The check ids of the class in the health subset.
    pub checks: Vec<&'static str>,
    /// The shell command the rule runs on the host (`/bin/sh -c`).
    pub script: String,
    /// NPD's arguments to `nsenter` (the NPD image has no nodeimg): the host's
    /// namespaces, then `/bin/sh -c` with [`HealthRule::script`].
    pub args: Vec<String>,
}

/// One NodeHealthCheck.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `driver-daemon` or `device-link`.
    pub class: &'static str,
    pub conditions: Vec<String>,
    /// Seconds a condition must hold before remediation starts.
    pub duration_s: u128,
    /// `Some` for escalating remediations (driver and daemon), with the timeout.
    pub timeout_s: Option<u128>,
    pub template: TemplateRef,
    /// `-1s`: never healthy again without the confirmation annotation
    /// (`rollout::readmit::CONFIRMED`), written only on a passing acceptance record.
    pub healthy_delay: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Remediation<'a> {
    pub rules: Vec<HealthRule>,
    pub checks: Vec<Check>,
    /// NodeHealthCheck `maxUnhealthy`, as JSON (a number or `"25%"`).
    pub max_unhealthy: String,
    /// `kubernetes.labels` of the blueprint: the nodes of this class.
    pub selector: BTreeMap<&'a str, &'a str>,
    pub evidence_dir: String,
}

fn camel(fault: &str) -> String {
    fault
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The health plugin of one class: verify limited to the class's checks, evidence kept on
/// failure (at most [`MAX_CAPTURES`] captures; the first failures are the ones a repair
/// needs, so later ones never replace them), and the new capture and the record of the
/// failing verdict beside it named before the summary line (NPD's condition message). A
/// failing run that wrote no capture (the limit is reached) names the folder of the kept
/// ones instead, never an older capture as its own. Exit codes are verify's: 0 OK,
/// 1 problem, anything else unknown.
fn script(fault: &str, checks: &[&str], evidence: &str) -> String {
    let dir = format!("{evidence}/{fault}");
    format!(
        "dir={dir}; mkdir -p \"$dir\"; n=$(ls \"$dir\"/*.tar.zst 2>/dev/null | wc -l); ev=; \
         [ \"$n\" -lt {max} ] && ev=\"--evidence-on-fail $dir\"; \
         out=$({bin} -q verify --phase health --checks {checks} --blueprint {lock} --format summary --timeout 20 --record \"$dir/last.json\" \
         --output prometheus=/var/lib/node_exporter/textfile/nodeimg_health_{fault}.prom $ev); rc=$?; \
         if [ \"$rc\" -eq 1 ]; then \
         if [ -n \"$ev\" ] && [ \"$(ls \"$dir\"/*.tar.zst 2>/dev/null | wc -l)\" -gt \"$n\" ]; then \
         cap=$(ls -t \"$dir\"/*.tar.zst | head -n 1); cp \"$dir/last.json\" \"${{cap%.tar.zst}}.record.json\"; \
         out=\"evidence $cap and ${{cap%.tar.zst}}.record.json: $out\"; \
         else out=\"evidence: {max} captures already kept in $dir: $out\"; fi; fi; \
         echo \"$out\"; exit $rc",
        dir = quote(&dir),
        max = MAX_CAPTURES,
        bin = NODEIMG_BIN,
        checks = quote(&checks.join(",")),
        lock = LOCK_PATH,
        fault = fault.replace('-', "_"),
    )
}

/// With `driver_phase` (an operator-owned driver), each rule first waits for the driver
/// phase to pass (`npd::health_gate`).
pub fn of<'a>(s: &'a Spec, driver_phase: Option<&DriverPhase>) -> Option<Remediation<'a>> {
    s.accelerators.as_ref()?;
    let rollout = s.rollout.clone().unwrap_or_default();
    let r = &rollout.remediation;
    let evidence = r.evidence_dir.to_string();
    let mut by_fault: BTreeMap<FaultClass, Vec<&'static str>> = BTreeMap::new();
    // Only the checks a node of this blueprint is judged by: a class whose list selected
    // nothing (Fabric Manager on an AMD node) would make verify refuse every run, and its
    // condition would stay Unknown. Such a class gets no rule and no NodeHealthCheck.
    for spec in applies::health_checks(s) {
        by_fault.entry(spec.fault).or_default().push(spec.id);
    }
    let rules: Vec<HealthRule> = by_fault
        .iter()
        .map(|(fault, checks)| {
            let name: &'static str = fault.into();
            let gate = driver_phase.map(health_gate).unwrap_or_default();
            let script = format!("{gate}{}", script(name, checks, &evidence));
            let class = camel(name);
            HealthRule {
                fault: name,
                condition: format!("Nodeimg{class}Problem"),
                ok_reason: format!("Nodeimg{class}Healthy"),
                problem_reason: format!("Nodeimg{class}Failed"),
                checks: checks.clone(),
                script: script.clone(),
                args: [
                    "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--",
                    "/bin/sh", "-c",
                ]
                .iter()
                .map(|a| a.to_string())
                .chain(std::iter::once(script))
                .collect(),
            }
        })
        .collect();
    let condition = |f: FaultClass| {
        rules
            .iter()
            .find(|r| r.fault == <&'static str>::from(f))
            .map(|r| r.condition.clone())
    };
    let mut checks = Vec::new();
    let driver: Vec<String> = condition(FaultClass::DriverDaemon).into_iter().collect();
    if !driver.is_empty() {
        checks.push(Check {
            class: "driver-daemon",
            conditions: driver,
            duration_s: r.daemon_restart_window.as_secs(),
            timeout_s: Some(r.reboot_timeout.as_secs()),
            template: r.reboot.clone(),
            healthy_delay: "-1s",
        });
    }
    let hardware: Vec<String> = [FaultClass::Device, FaultClass::Link]
        .into_iter()
        .filter_map(condition)
        .collect();
    if let Some(repair) = &r.repair
        && !hardware.is_empty()
    {
        checks.push(Check {
            class: "device-link",
            conditions: hardware,
            duration_s: 60,
            timeout_s: None,
            template: repair.clone(),
            healthy_delay: "-1s",
        });
    }
    Some(Remediation {
        rules,
        checks,
        max_unhealthy: r.max_unhealthy.to_int_or_percent().to_string(),
        selector: s
            .kubernetes
            .labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        evidence_dir: evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(camel("driver-daemon"), "DriverDaemon");
        assert_eq!(quote("a'b"), r"'a'\''b'");
    }
}
