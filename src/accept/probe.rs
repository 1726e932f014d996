//! The probe's JSON lines: what the rendered smoke Pod (layer 3) and framework Job
//! (layer 5) print, one JSON object per step. The format is this project's own:
//!
//! ```json
//! {"nodeimg": "probe/v1", "suite": "smoke", "step": "devices", "status": "pass",
//!  "seconds": 0.4, "node": "gpu-node-01", "pod": "nodeimg-acceptance-smoke",
//!  "namespace": "nodeimg-acceptance", "requested": 8,
//!  "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-…", "bus": "0000:19:00.0"}]}
//! {"nodeimg": "probe/v1", "suite": "smoke", "step": "devices", "status": "pass",
//!  "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "uuid": "MIG-…",
//!               "parent": "GPU-…", "gpu_instance": 9}]}
//! {"nodeimg": "probe/v1", "suite": "framework", "step": "tensor", "status": "pass",
//!  "seconds": 2.1, "metrics": {"tflops": 655.2}}
//! ```
//!
//! `suite` is `smoke`, `framework`, `jax` (the JAX probe: `devices`, `tensor`, `collective`,
//! `multinode`) or `inference` (the inference engine check: `serve`, with `ttft_ms`,
//! `tokens_per_second` and `tokens`); `status` is `pass`, `fail` or `skip`; `error` says
//! why a step failed. Steps of the smoke suite: `shm` (the size of the container's
//! `/dev/shm` from statvfs, `metrics.bytes`), `devices`, `tensor`. Steps of the framework
//! suite: `devices`, `tensor` (allocate and run a matmul kernel), `load` (matmuls held for
//! `NODEIMG_LOAD_SECONDS`, 30 by default, while nvidia-smi samples the power), `collective`
//! (single-node all-reduce), `multinode` (a short multi-node training run), `inference` (load a model, generate), `checkpoint` (save and
//! restore). Other lines of the log (framework warnings, tracebacks) are skipped; a line
//! that starts a probe object but does not parse, or has a field this format does not
//! define, is refused with its line.

use super::lines::each;
use crate::line_error::LineError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `nodeimg` value of every probe line.
pub const FORMAT: &str = "probe/v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    Smoke,
    Framework,
    /// The JAX probe (`probe-jax.py`).
    Jax,
    /// The inference engine check (`serve-check.py`).
    Inference,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    Fail,
    Skip,
    Pass,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub index: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    /// A MIG device (`uuid` `MIG-…`): its parent GPU's UUID and GPU instance id, as
    /// `nvidia-smi -L` and `nvidia-smi -q -x` show them inside the container — what
    /// dcgm-exporter labels the instance's series with (`UUID`, `GPU_I_ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_instance: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    nodeimg: String,
    suite: Suite,
    step: String,
    status: StepStatus,
    #[serde(default)]
    seconds: Option<f64>,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    pod: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    rank: Option<u32>,
    #[serde(default)]
    world_size: Option<u32>,
    #[serde(default)]
    requested: Option<u32>,
    #[serde(default)]
    devices: Option<Vec<Device>>,
    #[serde(default)]
    metrics: BTreeMap<String, f64>,
    #[serde(default)]
    error: Option<String>,
}

/// One step as printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub suite: Suite,
    pub name: String,
    pub status: StepStatus,
    pub seconds: Option<f64>,
    pub node: Option<String>,
    /// The Pod that printed the step and its namespace (the smoke Pod names itself, so
    /// its devices can be matched with the kubelet's allocation).
    pub pod: Option<String>,
    pub namespace: Option<String>,
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub requested: Option<u32>,
    pub devices: Option<Vec<Device>>,
    pub metrics: BTreeMap<String, f64>,
    pub error: Option<String>,
    pub line: usize,
}

/// Parses every probe line of a log.
pub fn parse(text: &str) -> Result<Vec<Step>, LineError> {
    let mut steps = Vec::new();
    for line in each(text) {
        let t = line.text.trim();
        if !(t.starts_with('{') && t.contains("\"nodeimg\"")) {
            continue;
        }
        let raw: RawStep = serde_json::from_str(t).map_err(|e| {
            LineError::new(
                line.number,
                format!("not a probe step ({e}): truncated or damaged"),
            )
        })?;
        if raw.nodeimg != FORMAT {
            return Err(LineError::new(
                line.number,
                format!("`nodeimg: {}`: this version reads `{FORMAT}`", raw.nodeimg),
            ));
        }
        if raw.step.trim().is_empty() {
            return Err(LineError::new(line.number, "a step without a name"));
        }
        let bad_number = |v: f64| !v.is_finite() || v < 0.0;
        let bad = raw
            .metrics
            .iter()
            .find(|(_, v)| bad_number(**v))
            .map(|(k, _)| k.clone())
            .or_else(|| {
                raw.seconds
                    .filter(|s| bad_number(*s))
                    .map(|_| "seconds".to_owned())
            });
        if let Some(bad) = bad {
            return Err(LineError::new(
                line.number,
                format!(
                    "step `{}`: `{bad}` is not a finite, non-negative number",
                    raw.step
                ),
            ));
        }
        steps.push(Step {
            suite: raw.suite,
            name: raw.step,
            status: raw.status,
            seconds: raw.seconds,
            node: raw.node,
            pod: raw.pod,
            namespace: raw.namespace,
            rank: raw.rank,
            world_size: raw.world_size,
            requested: raw.requested,
            devices: raw.devices,
            metrics: raw.metrics,
            error: raw.error,
            line: line.number,
        });
    }
    if steps.is_empty() {
        return Err(LineError::new(1, format!("no `{FORMAT}` probe line")));
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"/usr/lib/python3/site-packages/torch/cuda/__init__.py:52: UserWarning: ...
{"nodeimg": "probe/v1", "suite": "smoke", "step": "devices", "status": "pass", "seconds": 0.4, "requested": 2, "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1"}, {"index": 1, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-2"}]}
{"nodeimg": "probe/v1", "suite": "smoke", "step": "tensor", "status": "fail", "error": "CUDA error: an illegal memory access was encountered", "metrics": {"tflops": 0.0}}
"#;

    #[test]
    fn steps_and_their_lines() {
        let steps = parse(LOG).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].devices.as_ref().unwrap().len(), 2);
        assert_eq!(steps[0].requested, Some(2));
        assert_eq!(steps[1].status, StepStatus::Fail);
        assert_eq!(steps[1].line, 3);
    }

    #[test]
    fn damaged_lines_are_located() {
        let cut = &LOG[..LOG.len() - 20];
        assert_eq!(parse(cut).unwrap_err().line, 3);
        let bad = LOG.replace("\"seconds\": 0.4", "\"secs\": 0.4");
        assert_eq!(parse(&bad).unwrap_err().line, 2);
        let bad = LOG.replace(
            "probe/v1\", \"suite\": \"smoke\", \"step\": \"tensor\"",
            "probe/v9\", \"suite\": \"smoke\", \"step\": \"tensor\"",
        );
        assert!(parse(&bad).unwrap_err().message.contains("probe/v9"));
        assert!(parse("hello\n").is_err());
    }
}
