//! Isolation by fault class and by the recovery ladder's rung. node-problem-detector
//! (its chart values, `npd`) runs `nodeimg verify --phase health` in the host's namespaces
//! once per fault class that has health checks, each run limited to that class's checks
//! and to the failures automation may act on (`--actions restart-daemon,reset-gpu,
//! reset-fabric,reboot-node`), beside the overall `GPUProblem` rule, and sets one node
//! condition per class (`NodeimgLinkProblem`, …; `True` is the problem, as NPD's own
//! conditions). One more rule, `NodeimgServiceRequired`, runs every health check for the
//! failures that need a person (`--actions check-cooling-power,service`). A failing run
//! keeps a capture and the record of the failing verdict under the evidence folder and
//! names both in the condition's message. In the cluster, NodeHealthCheck (medik8s) acts
//! on those conditions, climbing the ladder restart, reset, reboot, service:
//!
//! - driver and daemon: systemd (`Restart=`) and the operators' DaemonSets restart the
//!   daemon within `daemonRestartWindow`; if the condition holds longer, the reboot
//!   template (Self Node Remediation by default), once, with a timeout;
//! - device and link: the reboot template (a reset of the GPU or the fabric happens with
//!   the reboot: no remediator resets a GPU in place), at most `maxReboots` times within
//!   `ladderWindow` (default 2 in 72 h, gpud's): verify on the node counts the reboots
//!   (`/var/lib/nodeimg/`) and past the limit asks for `service` instead, which moves
//!   the failure from the class's condition to `NodeimgServiceRequired`: never a reboot
//!   loop;
//! - service: the node leaves scheduling by default, with nothing the site adds: the
//!   service rule keeps a node-feature-discovery feature file while it fails
//!   ([`Isolation`]), and the NodeFeatureRule `remediation/isolation.yaml` turns it into the
//!   taint `nodeimg.dev/service-required=<blueprint>:NoSchedule` (NFD's master taints, its
//!   worker tolerates the taint). The repair template (a repair queue; never one that
//!   reboots), where the blueprint names one, takes the node in addition;
//! - on all, no automatic return: `healthyDelay: -1s` keeps the node out until it carries
//!   NodeHealthCheck's confirmation annotation, which `nodeimg rollout readmit` writes only
//!   for a node whose acceptance record passes again (`rollout::readmit`), after the
//!   re-admission workloads of the failed part ran under load;
//! - a transient application fault is no node condition: the workload's own controller
//!   (a Job's `backoffLimit` / `podFailurePolicy`) restarts its Pod.
//!
//! `maxUnhealthy` limits, fleet-wide, how many nodes of the class are remediated at once.

use crate::blueprint::Spec;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::blueprint::model::rollout::TemplateRef;
use crate::fault::{Action, FaultClass};
use crate::verify::checks::applies;

use super::npd::health_gate;
use super::startup::DriverPhase;
use super::{LOCK_PATH, NODEIMG_BIN};

/// Captures kept per fault class before a failing run stops adding more.
pub const MAX_CAPTURES: usize = 5;

/// The actions automation takes on the node's behalf (the ladder's automatic rungs):
/// the per-class rules judge these failures.
pub const AUTOMATIC: [Action; 4] = [
    Action::RestartDaemon,
    Action::ResetGpu,
    Action::ResetFabric,
    Action::RebootNode,
];
/// The actions that need a person: the service rule judges these.
pub const BY_A_PERSON: [Action; 2] = [Action::CheckCoolingPower, Action::Service];

/// Where nfd-worker reads feature files: its chart mounts this host folder
/// (node-feature-discovery `deployment/helm/.../templates/worker.yaml`, `features-d`).
pub const FEATURE_DIR: &str = "/etc/kubernetes/node-feature-discovery/features.d";
/// The feature the service rule keeps while a failure needs a person (a `local.feature`,
/// no label: the file says `# +no-label`), its value the blueprint's name.
pub const SERVICE_FEATURE: &str = "nodeimg-service-required";
/// The taint NFD sets from that feature.
pub const SERVICE_TAINT: &str = "nodeimg.dev/service-required";

/// The default isolation of a node whose failure needs a person: the service rule's feature
/// file, and the taint NFD makes of it. A failing run (exit 1) writes the file (atomically,
/// through a dot file NFD ignores) and so renews its time; a passing run removes it only
/// when the node booted after the last failing run, so a fault that comes and goes never
/// returns the node to scheduling by itself: it takes a reboot (a person's service, or the
/// reboot rung) and a pass after it. An unknown verdict changes nothing.
#[derive(Debug, Clone, Serialize)]
pub struct Isolation {
    /// The feature file on the node.
    pub file: String,
    pub feature: &'static str,
    /// The feature's value, and the taint's: the blueprint's name.
    pub value: String,
    pub taint: &'static str,
    pub effect: &'static str,
}

impl Isolation {
    /// The shell that keeps the feature file by the verdict in `$rc`.
    fn script(&self) -> String {
        format!(
            "f={file}; t=\"${{f%/*}}/.${{f##*/}}\"; \
             if [ \"$rc\" -eq 1 ]; then mkdir -p \"${{f%/*}}\" && printf '# +no-label\\n%s=%s\\n' {feature} {value} > \"$t\" && mv -f \"$t\" \"$f\"; \
             elif [ \"$rc\" -eq 0 ] && [ -e \"$f\" ] && [ \"$(stat -c %Y \"$f\")\" -lt \"$(awk '/^btime /{{print $2}}' /proc/stat)\" ]; then rm -f \"$f\"; fi; ",
            file = quote(&self.file),
            feature = self.feature,
            value = quote(&self.value),
        )
    }
}

/// One NPD rule: a fault class's health checks (or, for the service rule, all of them)
/// and the condition they set.
#[derive(Debug, Clone, Serialize)]
pub struct HealthRule {
    /// The fault class, or `service`.
    pub fault: &'static str,
    /// `Nodeimg<Class>Problem`.
    pub condition: String,
    pub ok_reason: String,
    pub problem_reason: String,
    /// The check ids of the class in the health subset (all of them for `service`).
    pub checks: Vec<&'static str>,
    /// The actions whose failures the rule judges (`--actions`).
    pub actions: Vec<&'static str>,
    /// The shell command the rule runs on the host (`/bin/sh -c`).
    pub script: String,
    /// NPD's arguments to `nsenter` (the NPD image has no nodeimg): the host's
    /// namespaces, then `/bin/sh -c` with [`HealthRule::script`].
    pub args: Vec<String>,
}

/// One NodeHealthCheck.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `driver-daemon`, `device-link` or `service`.
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
    /// The ladder's limits (`rollout.remediation.maxReboots`, `ladderWindow`), as verify on
    /// the node applies them.
    pub max_reboots: u32,
    pub ladder_window_h: u64,
    /// The default isolation of the service rule's failures; `None` when there is no
    /// service rule (no health checks).
    pub isolation: Option<Isolation>,
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
/// `then` runs after the verdict, with it in `$rc` (the service rule's [`Isolation`]).
fn script(fault: &str, checks: &[&str], actions: &[&str], evidence: &str, then: &str) -> String {
    let dir = format!("{evidence}/{fault}");
    let checks = if checks.is_empty() {
        String::new()
    } else {
        format!(" --checks {}", quote(&checks.join(",")))
    };
    format!(
        "dir={dir}; mkdir -p \"$dir\"; n=$(ls \"$dir\"/*.tar.zst 2>/dev/null | wc -l); ev=; \
         [ \"$n\" -lt {max} ] && ev=\"--evidence-on-fail $dir\"; \
         out=$({bin} -q verify --phase health{checks} --actions {actions} --blueprint {lock} --format summary --timeout 20 --record \"$dir/last.json\" \
         --output prometheus=/var/lib/node_exporter/textfile/nodeimg_health_{fault}.prom $ev); rc=$?; \
         if [ \"$rc\" -eq 1 ]; then \
         if [ -n \"$ev\" ] && [ \"$(ls \"$dir\"/*.tar.zst 2>/dev/null | wc -l)\" -gt \"$n\" ]; then \
         cap=$(ls -t \"$dir\"/*.tar.zst | head -n 1); cp \"$dir/last.json\" \"${{cap%.tar.zst}}.record.json\"; \
         out=\"evidence $cap and ${{cap%.tar.zst}}.record.json: $out\"; \
         else out=\"evidence: {max} captures already kept in $dir: $out\"; fi; fi; \
         {then}echo \"$out\"; exit $rc",
        dir = quote(&dir),
        max = MAX_CAPTURES,
        bin = NODEIMG_BIN,
        actions = actions.join(","),
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
    let names =
        |actions: &[Action]| -> Vec<&'static str> { actions.iter().map(|&a| a.into()).collect() };
    let isolation = Isolation {
        file: format!("{FEATURE_DIR}/{SERVICE_FEATURE}"),
        feature: SERVICE_FEATURE,
        value: s.metadata.name.as_str().to_owned(),
        taint: SERVICE_TAINT,
        effect: "NoSchedule",
    };
    let rule = |name: &'static str,
                class: String,
                checks: Vec<&'static str>,
                actions: Vec<&'static str>,
                condition: String,
                then: &str| {
        let gate = driver_phase.map(health_gate).unwrap_or_default();
        let script = format!("{gate}{}", script(name, &checks, &actions, &evidence, then));
        HealthRule {
            fault: name,
            condition,
            ok_reason: format!("Nodeimg{class}Healthy"),
            problem_reason: format!("Nodeimg{class}Failed"),
            checks,
            actions,
            script: script.clone(),
            args: [
                "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--", "/bin/sh",
                "-c",
            ]
            .iter()
            .map(|a| a.to_string())
            .chain(std::iter::once(script))
            .collect(),
        }
    };
    let mut rules: Vec<HealthRule> = by_fault
        .iter()
        .map(|(fault, checks)| {
            let name: &'static str = fault.into();
            let class = camel(name);
            rule(
                name,
                class.clone(),
                checks.clone(),
                names(&AUTOMATIC),
                format!("Nodeimg{class}Problem"),
                "",
            )
        })
        .collect();
    // Every health check, for what needs a person: no `--checks`, so a check a node of
    // this blueprint does not run is simply absent.
    if !by_fault.is_empty() {
        rules.push(rule(
            "service",
            "Service".to_owned(),
            Vec::new(),
            names(&BY_A_PERSON),
            "NodeimgServiceRequired".to_owned(),
            &isolation.script(),
        ));
    }
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
    if !hardware.is_empty() {
        // The reboot rung: bounded on the node (verify's ladder turns a fault that the
        // reboots did not clear into service), never repeated by NodeHealthCheck itself
        // (healthyDelay -1s).
        checks.push(Check {
            class: "device-link",
            conditions: hardware,
            duration_s: 60,
            timeout_s: None,
            template: r.reboot.clone(),
            healthy_delay: "-1s",
        });
    }
    if let Some(repair) = &r.repair
        && rules.iter().any(|rule| rule.fault == "service")
    {
        checks.push(Check {
            class: "service",
            conditions: vec!["NodeimgServiceRequired".to_owned()],
            duration_s: 60,
            timeout_s: None,
            template: repair.clone(),
            healthy_delay: "-1s",
        });
    }
    let limits = r.ladder();
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
        max_reboots: limits.reboots,
        ladder_window_h: limits.window_s / 3600,
        isolation: (!by_fault.is_empty()).then_some(isolation),
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
