//! Checks: the blueprint's expectations compared with the machine's [`Facts`].
//!
//! Each check is one row of the table in [`catalog`](mod@catalog): a stable id (`gpu.pcie.link-width`)
//! and its [`Spec`] (what it checks, its severity, the fault class and the recommended
//! action when it fails, which stage of the boot and which phases it belongs to). A check
//! yields one [`CheckResult`] per subject (a GPU, a NIC, a pool) with the expected and
//! observed values and the evidence they came from, and a reference to its spec.
//!
//! Checks are pure functions of the blueprint and the facts: no host access, so a replayed
//! capture gives the same verdicts. They **fail closed**: a fact that could not be read is
//! an [`Verdict::Error`], never a pass, and a check the blueprint asks for that finds no
//! device to look at says so instead of staying silent. Each family reads the
//! [`Inputs`] and writes to [`Results`]; one file per family; this one holds the shared
//! types and [`evaluate`].

pub mod applies;
pub mod blocked;
pub mod catalog;
pub mod container_devices;
mod context;
pub mod firmware;
pub mod gpu;
pub mod gpu_events;
pub mod gpu_health;
pub mod gpudirect;
pub mod host_health;
pub mod image;
pub mod matcher;
pub mod module_build;
pub mod needs;
pub mod network;
pub mod os;
pub mod partitions;
pub mod pcie;
pub mod pcie_acs;
pub mod remedy;
pub mod runtime;
pub mod select;
pub mod system;

pub use catalog::{CATALOG, Spec};
pub use context::{Inputs, Observation, Results};
pub use needs::Needs;
pub use select::{Phase, Selection};

use crate::blueprint;
use crate::blueprint::compat::Matrix;
use crate::blueprint::model::DriverAuthority;
use crate::fault::{Action, FaultClass, Severity, ladder};
use crate::verify::facts::Facts;
use crate::verify::history::Memory;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// The outcome of one check on one subject.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Verdict {
    /// The observed value does not meet the expectation.
    Fail,
    /// The value could not be read or understood (fail closed: never a pass).
    Error,
    Pass,
}

/// When in the boot a check can run.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Stage {
    /// Host, firmware, PCIe, NICs, kernel, runtime: always before kubelet.
    Host,
    /// Needs the GPU driver: before kubelet when the image carries the driver, after the
    /// operator installed it otherwise.
    Driver,
    /// After join, from the Node object (`--phase cluster`, acceptance layer 2): never
    /// evaluated on the host.
    Cluster,
    /// On the host in service only (`--phase health`, which node-problem-detector runs
    /// after join): the node's wear — disks filling, memory errors. Never a boot gate:
    /// at boot the kubelet's own eviction guards the disks, and in a container or on a
    /// node without local disks these facts are unknown, which would keep kubelet down.
    #[serde(rename = "in-service")]
    #[strum(serialize = "in-service")]
    InService,
}

/// One check's verdict on one subject.
///
/// The id, summary and stage come from the check's row of the table ([`Spec`]); the
/// severity, fault class and action start as the spec's and may be refined by the check
/// (an application Xid is a warning with a restart, not a device fault).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub spec: &'static Spec,
    /// The device, interface, pool or unit checked; `None` for node-wide checks.
    pub subject: Option<String>,
    pub severity: Severity,
    pub verdict: Verdict,
    pub expected: String,
    pub observed: String,
    /// The files and commands the observed value came from.
    pub evidence: Vec<String>,
    pub fault: FaultClass,
    /// Recommended action; `none` when the check passed.
    pub action: Action,
    /// The failed check that explains this one's not passing (`gpu.count` for the checks
    /// of GPUs that are not there): see [`blocked`]. The verdict stays as it is.
    pub blocked_by: Option<&'static str>,
}

impl CheckResult {
    pub fn id(&self) -> &'static str {
        self.spec.id
    }

    pub fn summary(&self) -> &'static str {
        self.spec.summary
    }

    pub fn stage(&self) -> Stage {
        self.spec.stage
    }

    /// `id` or `id[subject]`.
    pub fn name(&self) -> String {
        match &self.subject {
            Some(subject) => format!("{}[{subject}]", self.spec.id),
            None => self.spec.id.to_owned(),
        }
    }

    /// A failed or unreadable critical check.
    pub fn blocks(&self) -> bool {
        self.verdict != Verdict::Pass && self.severity == Severity::Critical
    }
}

/// The result as reports show it: the spec's id, summary and stage inline.
impl Serialize for CheckResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", self.spec.id)?;
        if let Some(subject) = &self.subject {
            map.serialize_entry("subject", subject)?;
        }
        map.serialize_entry("summary", self.spec.summary)?;
        map.serialize_entry("severity", &self.severity)?;
        map.serialize_entry("verdict", &self.verdict)?;
        map.serialize_entry("expected", &self.expected)?;
        map.serialize_entry("observed", &self.observed)?;
        map.serialize_entry("evidence", &self.evidence)?;
        map.serialize_entry("fault", &self.fault)?;
        map.serialize_entry("action", &self.action)?;
        map.serialize_entry("stage", &self.spec.stage)?;
        if let Some(root) = self.blocked_by {
            map.serialize_entry("blocked_by", root)?;
        }
        map.end()
    }
}

/// Every check spec, in report order.
pub fn catalog() -> &'static [&'static Spec] {
    CATALOG
}

/// The families, in report order; each records its results for the blueprint and facts.
const FAMILIES: [fn(&Inputs, &mut Results); 14] = [
    os::evaluate,
    module_build::evaluate,
    firmware::evaluate,
    pcie::evaluate,
    pcie_acs::evaluate,
    gpu::evaluate,
    network::evaluate,
    gpudirect::evaluate,
    runtime::evaluate,
    container_devices::evaluate,
    system::evaluate,
    partitions::evaluate,
    host_health::evaluate,
    image::evaluate,
];

/// Runs every check that applies to the blueprint, then keeps the selected ones.
pub fn evaluate(
    blueprint: &blueprint::Spec,
    facts: &Facts,
    matrix: &Matrix,
    selection: &Selection,
) -> Vec<CheckResult> {
    evaluate_remembering(blueprint, facts, matrix, selection, None)
}

/// [`evaluate`] in the health phase, with what its earlier runs left ([`Memory`]): repeats
/// escalate, counters are judged by their growth, and the recovery ladder turns a reset
/// or a reboot into service once the node had its reboots ([`ladder::rung`]).
pub fn evaluate_remembering(
    blueprint: &blueprint::Spec,
    facts: &Facts,
    matrix: &Matrix,
    selection: &Selection,
    memory: Option<Memory<'_>>,
) -> Vec<CheckResult> {
    let mut input = Inputs::new(blueprint, facts, matrix);
    input.memory = memory;
    let mut out = Results::default();
    for family in FAMILIES {
        family(&input, &mut out);
    }
    let authority = blueprint.accelerators.as_ref().map(|a| a.driver.authority);
    let preinstalled = authority != Some(DriverAuthority::Operator);
    let mut results = out.into_vec();
    results.retain(|result| selection.includes(result.spec, preinstalled));
    // Last, over the selected results: whether their failures are the image's absence.
    if selection.includes(&catalog::image::APPLIED, preinstalled) {
        image::applied(facts, &mut results);
    }
    if let Some(memory) = &input.memory {
        let reboots = memory.reboots();
        for result in results.iter_mut().filter(|r| r.verdict != Verdict::Pass) {
            let rung = ladder::rung(result.action, reboots, &memory.limits);
            if rung != result.action {
                result.observed = format!(
                    "{}; {reboots} reboot(s) within {} h did not clear it: {} (was {})",
                    result.observed,
                    memory.limits.window_s / 3600,
                    rung,
                    result.action
                );
                result.action = rung;
                result.severity = Severity::Critical;
            }
        }
    }
    blocked::mark(&mut results);
    results
}
