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
}

/// The condition type nodeimg's NPD plugin sets on the Node.
pub const CONDITION: &str = "GPUProblem";

pub(super) fn of() -> Npd {
    let monitor = "nodeimg-health.json";
    let mut args: Vec<String> = [
        "--target", "1", "--mount", "--uts", "--ipc", "--net", "--pid", "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
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
    }
}
