//! `npd`: node-problem-detector values (`cluster/node-problem-detector-values.yaml`)
//! that run `nodeimg verify --phase health` as an NPD custom plugin.
//!
//! NPD runs as a DaemonSet (the deliveryhero `node-problem-detector`
//! chart); its custom plugin monitor JSON goes in
//! `settings.custom_monitor_definitions` (a ConfigMap the chart mounts at
//! `/custom-config`) and is enabled through `settings.custom_plugin_monitors`
//! (`--config.custom-plugin-monitor`). The NPD image has no nodeimg, no host
//! `/sys` and no vendor tools, so the plugin enters the host's namespaces
//! with `nsenter` (util-linux is in the NPD image) and runs the node's own
//! verifier: this needs `hostPID` and a privileged container.
//!
//! Polarity follows NPD's convention (`custompluginmonitor`: a plugin exit
//! status 1 — NonOK — sets a permanent condition **True**; 0 sets it False
//! with the default reason; other codes are Unknown): the condition is a
//! problem, `GPUProblem`, whose healthy reason is `GPUsHealthy`. verify
//! exits 0 (pass), 1 (negative verdict) or 2 (unusable input → Unknown).

use serde::Serialize;

use super::startup::DriverPhase;
use super::{LOCK_PATH, NODEIMG_BIN};

/// Where the chart mounts `settings.custom_monitor_definitions`.
const CUSTOM_CONFIG_DIR: &str = "/custom-config";

#[derive(Debug, Clone, Serialize)]
pub struct Npd {
    /// File name of the monitor definition in the chart's ConfigMap.
    pub monitor: &'static str,
    /// Path NPD reads it from (`--config.custom-plugin-monitor`).
    pub monitor_path: String,
    /// The node condition the plugin owns (True = problem).
    pub condition: &'static str,
    /// Its reason while the checks pass.
    pub ok_reason: &'static str,
    /// Its reason when a check fails.
    pub problem_reason: &'static str,
    /// The program NPD runs, and its arguments.
    pub path: &'static str,
    pub args: Vec<String>,
    pub interval: &'static str,
    pub timeout: &'static str,
    /// With an operator-owned driver: the driver phase's verdict as a condition.
    pub driver_phase: Option<DriverPhaseRule>,
}

/// The driver phase's verdict (`nodeimg-verify-driver.service`, see
/// `startup::DriverPhase`) as a Node condition. The rule does not run the
/// checks again: it reads the unit's state and the summary verify wrote, so
/// the condition says what the unit found (and evidence was kept for). Exit
/// codes follow NPD: 0 (the unit passed) sets the condition False, 1 (it
/// failed: its checks, or no driver within the wait) True, 2 (not judged yet:
/// still waiting for the operator's driver, or not run this boot) Unknown.
/// Not a taint: kubelet registers its taints once, and the NodeRestriction
/// admission plugin forbids a node to change its own taints afterwards, so
/// nothing on the node could lift it on a pass.
#[derive(Debug, Clone, Serialize)]
pub struct DriverPhaseRule {
    pub condition: &'static str,
    pub ok_reason: &'static str,
    pub problem_reason: &'static str,
    /// NPD's arguments to `nsenter`: the host's namespaces, `/bin/sh -c SCRIPT`.
    pub args: Vec<String>,
}

/// The condition type of the driver phase's verdict.
pub const DRIVER_CONDITION: &str = "NodeimgDriverPhaseProblem";

/// The shell the rule runs on the host.
fn driver_script(d: &DriverPhase) -> String {
    format!(
        "s=$(systemctl show -p ActiveState --value {unit}); \
         v=$(head -c 400 {summary} 2>/dev/null); \
         case \"$s\" in \
         active) echo \"driver phase passed: $v\"; exit 0 ;; \
         failed) echo \"driver phase failed: ${{v:-no verdict, see journalctl -u {unit}}}; report {report}\"; exit 1 ;; \
         *) echo \"driver phase not judged yet ({unit} is $s)\"; exit 2 ;; \
         esac",
        unit = d.unit,
        summary = d.summary,
        report = d.report,
    )
}

/// With an operator-owned driver, the shell that comes before a health rule: until the
/// driver phase passed (its unit active: oneshot, `RemainAfterExit=`), the health checks
/// would judge a driver the operator is still installing, and a remediation acting on a
/// True condition could reboot a node that is only waiting. So the rule says "not judged
/// yet" (exit 2, NPD's Unknown; remediation acts on True only) and
/// [`DRIVER_CONDITION`] carries the wait, or the driver phase's failure.
pub(super) fn health_gate(d: &DriverPhase) -> String {
    format!(
        "s=$(systemctl show -p ActiveState --value {unit}); \
         [ \"$s\" = active ] || {{ echo \"health not judged yet: the driver phase has not passed ({unit} is $s)\"; exit 2; }}; ",
        unit = d.unit,
    )
}

/// The condition type nodeimg's NPD plugin sets on the Node.
pub const CONDITION: &str = "GPUProblem";

/// `s` as one shell word.
pub(super) fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=,:".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `nsenter`'s arguments up to the program: the host's namespaces.
const NSENTER: &[&str] = &[
    "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--",
];

pub(super) fn of(driver_phase: Option<&DriverPhase>) -> Npd {
    let monitor = "nodeimg-health.json";
    let mut args: Vec<String> = NSENTER.iter().map(|s| s.to_string()).collect();
    args.extend(
        [
            NODEIMG_BIN,
            "-q",
            "verify",
            "--phase",
            "health",
            "--blueprint",
            LOCK_PATH,
            "--format",
            "summary",
            "--timeout",
            "20",
            "--output",
            "prometheus=/var/lib/node_exporter/textfile/nodeimg_health.prom",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    // Behind the driver phase's gate the rule is a shell script that ends in verify.
    if let Some(d) = driver_phase {
        let verify = args.split_off(NSENTER.len());
        let script = verify
            .iter()
            .map(|a| quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        args.extend([
            "/bin/sh".to_string(),
            "-c".to_string(),
            format!("{}exec {script}", health_gate(d)),
        ]);
    }
    Npd {
        monitor,
        monitor_path: format!("{CUSTOM_CONFIG_DIR}/{monitor}"),
        condition: CONDITION,
        ok_reason: "GPUsHealthy",
        problem_reason: "GPUUnhealthy",
        path: "/usr/bin/nsenter",
        args,
        interval: "5m",
        timeout: "60s",
        driver_phase: driver_phase.map(|d| DriverPhaseRule {
            condition: DRIVER_CONDITION,
            ok_reason: "NodeimgDriverPhasePassed",
            problem_reason: "NodeimgDriverPhaseFailed",
            args: NSENTER
                .iter()
                .chain(&["/bin/sh", "-c"])
                .map(|s| s.to_string())
                .chain(std::iter::once(driver_script(d)))
                .collect(),
        }),
    }
}
