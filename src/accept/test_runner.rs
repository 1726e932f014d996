//! The AMD GPU Operator's test runner: the Kubernetes events it writes when an RVS
//! (or AGFHC) recipe finished on a node's GPUs, read from `kubectl get events -o json`.
//!
//! The runner reports each run as one core/v1 Event (ROCm/gpu-operator
//! `docs/test/auto-unhealthy-device-test.md`, "Check test result event", at v1.2.2,
//! commit 557ecb5): `source.component` is `amd-test-runner`; `reason` is the run's
//! verdict, `TestPassed`, `TestFailed` or `TestTimedOut`; the labels name the recipe
//! (`testrunner.amd.com/recipe`), the trigger, the host, and each GPU both ways
//! (`testrunner.amd.com/gpu.kfd.<KFD id>` = GPU index); `message` is a JSON array with
//! one entry per iteration, `{"number", "suitesResult": {<KFD id>: {<test action>:
//! "success" | "failure"}}, "status"}`. Other events in the namespace (the Job's Pod
//! being scheduled, pulled, started) are left aside; a list with no runner event is
//! refused, so a capture of the wrong namespace is named rather than judged empty.

use crate::line_error::LineError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The `source.component` of the runner's events.
pub const COMPONENT: &str = "amd-test-runner";

/// Label prefix of the GPU a KFD id stands for: `testrunner.amd.com/gpu.kfd.<id>`.
const KFD_LABEL: &str = "testrunner.amd.com/gpu.kfd.";

/// One finished run of a recipe on a node.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerEvent {
    /// The event's name, for evidence.
    pub name: String,
    pub reason: Reason,
    /// `testrunner.amd.com/recipe`.
    pub recipe: Option<String>,
    /// `testrunner.amd.com/trigger` (`manual`, `auto_unhealthy_gpu_watch`, ...).
    pub trigger: Option<String>,
    /// `testrunner.amd.com/hostname`, else `source.host`.
    pub host: Option<String>,
    /// GPU index by KFD id, from the labels.
    pub gpus: BTreeMap<String, u32>,
    pub iterations: Vec<Iteration>,
    /// `lastTimestamp` (RFC 3339), when given.
    pub time: Option<String>,
    /// Line of the event in the file.
    pub line: usize,
}

/// The run's verdict, the event's `reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Passed,
    Failed,
    TimedOut,
    /// A reason this release does not know: never a pass.
    Other(String),
}

impl Reason {
    fn parse(word: &str) -> Reason {
        match word {
            "TestPassed" => Reason::Passed,
            "TestFailed" => Reason::Failed,
            "TestTimedOut" => Reason::TimedOut,
            other => Reason::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Reason::Passed => "TestPassed",
            Reason::Failed => "TestFailed",
            Reason::TimedOut => "TestTimedOut",
            Reason::Other(word) => word,
        }
    }
}

/// One iteration of the recipe: each GPU's test actions and their results.
#[derive(Debug, Clone, PartialEq)]
pub struct Iteration {
    pub number: u32,
    /// `completed`, when the runner says.
    pub status: Option<String>,
    pub results: Vec<ActionResult>,
}

/// One test action of a recipe on one GPU (`gst-8096-150000-fp16` ran on KFD 35824).
#[derive(Debug, Clone, PartialEq)]
pub struct ActionResult {
    pub kfd: String,
    pub action: String,
    /// `success` or `failure` as printed.
    pub result: String,
}

impl ActionResult {
    pub fn passed(&self) -> bool {
        self.result == "success"
    }

    pub fn failed(&self) -> bool {
        self.result == "failure"
    }
}

impl RunnerEvent {
    /// The GPU a KFD id stands for, as `GPU 3 (KFD 35824)`, or the id alone.
    pub fn gpu(&self, kfd: &str) -> String {
        match self.gpus.get(kfd) {
            Some(index) => format!("GPU {index} (KFD {kfd})"),
            None => format!("KFD {kfd}"),
        }
    }

    /// Every GPU that ran a test action, by KFD id.
    pub fn tested(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self
            .iterations
            .iter()
            .flat_map(|i| i.results.iter().map(|r| r.kfd.as_str()))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

#[derive(Deserialize)]
struct List {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    items: Option<Vec<serde_json::Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    source: Source,
    #[serde(default)]
    last_timestamp: Option<String>,
}

#[derive(Deserialize, Default)]
struct Metadata {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

/// `source`: its component was matched on the raw value ([`is_runner_event`]).
#[derive(Deserialize, Default)]
struct Source {
    #[serde(default)]
    host: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawIteration {
    number: u32,
    #[serde(default)]
    suites_result: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    status: Option<String>,
}

/// Whether a JSON value is one of the runner's events (by its source component).
pub fn is_runner_event(v: &serde_json::Value) -> bool {
    v.get("source")
        .and_then(|s| s.get("component"))
        .and_then(|c| c.as_str())
        == Some(COMPONENT)
}

/// Parses `kubectl get events -o json` (a List or EventList) or one Event.
pub fn parse(text: &str) -> Result<Vec<RunnerEvent>, LineError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let list: List = serde_json::from_str(text)
        .map_err(|e| LineError::new(e.line(), format!("not a Kubernetes events document: {e}")))?;
    let items = match (list.items, list.kind.as_deref()) {
        (Some(items), _) => items,
        (None, Some("Event")) => vec![serde_json::from_str(text).expect("parsed above")],
        _ => {
            return Err(LineError::new(
                1,
                "neither an event list (`items`) nor an Event",
            ));
        }
    };
    let total = items.len();
    let mut out = Vec::new();
    let mut cursor = 0;
    for item in items.into_iter().filter(is_runner_event) {
        let event: Event = serde_json::from_value(item)
            .map_err(|e| LineError::new(1, format!("an {COMPONENT} event: {e}")))?;
        let name = event.metadata.name.unwrap_or_default();
        let line = line_of(text, &name, &mut cursor);
        let at = |message: String| LineError::new(line, format!("event `{name}`: {message}"));
        let reason = event
            .reason
            .as_deref()
            .map(Reason::parse)
            .ok_or_else(|| at("no `reason` (TestPassed, TestFailed, TestTimedOut)".into()))?;
        let message = event.message.unwrap_or_default();
        let raw: Vec<RawIteration> = if message.trim().is_empty() {
            Vec::new()
        } else {
            serde_json::from_str(&message)
                .map_err(|e| at(format!("`message` is not the runner's result array: {e}")))?
        };
        let labels = &event.metadata.labels;
        let mut gpus = BTreeMap::new();
        for (key, value) in labels {
            if let Some(kfd) = key.strip_prefix(KFD_LABEL) {
                let index = value
                    .parse::<u32>()
                    .map_err(|_| at(format!("label `{key}`: `{value}` is not a GPU index")))?;
                gpus.insert(kfd.to_owned(), index);
            }
        }
        let label = |k: &str| labels.get(&format!("testrunner.amd.com/{k}")).cloned();
        let iterations = raw
            .into_iter()
            .map(|i| Iteration {
                number: i.number,
                status: i.status,
                results: i
                    .suites_result
                    .into_iter()
                    .flat_map(|(kfd, actions)| {
                        actions
                            .into_iter()
                            .map(move |(action, result)| ActionResult {
                                kfd: kfd.clone(),
                                action,
                                result,
                            })
                    })
                    .collect(),
            })
            .collect();
        out.push(RunnerEvent {
            name,
            reason,
            recipe: label("recipe"),
            trigger: label("trigger"),
            host: label("hostname").or(event.source.host),
            gpus,
            iterations,
            time: event.last_timestamp,
            line,
        });
    }
    if out.is_empty() {
        return Err(LineError::new(
            1,
            format!(
                "none of its {total} events is the AMD test runner's (source.component \
                 `{COMPONENT}`): capture the namespace the runner's Job ran in"
            ),
        ));
    }
    Ok(out)
}

/// The line of the event named `name`, searching on from the previous event's line.
fn line_of(text: &str, name: &str, cursor: &mut usize) -> usize {
    let needle = format!("\"{name}\"");
    let found = text
        .lines()
        .enumerate()
        .skip(*cursor)
        .find(|(_, l)| !name.is_empty() && l.contains(&needle))
        .map_or(*cursor + 1, |(i, _)| i + 1);
    *cursor = found;
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The event of ROCm/gpu-operator `docs/test/auto-unhealthy-device-test.md` (v1.2.2),
    /// `managedFields` left out, in a `kubectl get events -o json` list beside an event of
    /// another component.
    const SAMPLE: &str = include_str!("../../tests/fixtures/accept/amd-test-runner-events.json");

    #[test]
    fn the_documented_event_is_read_whole() {
        let events = parse(SAMPLE).unwrap();
        assert_eq!(events.len(), 1, "the scheduler's event is not the runner's");
        let e = &events[0];
        assert_eq!(e.reason, Reason::Failed);
        assert_eq!(e.recipe.as_deref(), Some("gst_single"));
        assert_eq!(e.trigger.as_deref(), Some("auto_unhealthy_gpu_watch"));
        assert_eq!(e.host.as_deref(), Some("leto"));
        assert_eq!(e.gpu("35824"), "GPU 0 (KFD 35824)");
        assert_eq!(e.iterations.len(), 1);
        let it = &e.iterations[0];
        assert_eq!(it.status.as_deref(), Some("completed"));
        let failed: Vec<&str> = it
            .results
            .iter()
            .filter(|r| r.failed())
            .map(|r| r.action.as_str())
            .collect();
        assert_eq!(
            failed,
            [
                "gpustress-41000-fp32-false",
                "gst-1215Tflops-4K4K8K-rand-fp8"
            ]
        );
        assert_eq!(it.results.iter().filter(|r| r.passed()).count(), 2);
        assert_eq!(e.tested(), ["35824"]);
        let line = SAMPLE
            .lines()
            .position(|l| l.contains("\"amd-test-runner-gpu_health_check-2266p\""))
            .unwrap()
            + 1;
        assert_eq!(e.line, line);
    }

    #[test]
    fn damaged_events_are_refused_with_their_line() {
        let bad = SAMPLE.replace(
            r#"\"status\":\"completed\"}]"#,
            r#"\"status\":\"completed\"}"#,
        );
        let err = parse(&bad).unwrap_err();
        assert!(err.message.contains("result array"), "{err}");
        assert!(err.line > 1, "{err}");
        let none =
            r#"{"kind": "List", "items": [{"kind": "Event", "source": {"component": "kubelet"}}]}"#;
        let err = parse(none).unwrap_err();
        assert!(err.message.contains("none of its 1 events"), "{err}");
        assert!(parse("{\"kind\": \"List\", \"items\": [").is_err());
    }
}
