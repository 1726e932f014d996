//! Checks: the blueprint's expectations compared with the machine's [`Facts`].
//!
//! Each check has a stable id (`gpu.pcie.link-width`), a [`Spec`] (what it checks, its
//! severity, the fault class and the recommended action when it fails, which stage of the
//! boot it belongs to) and yields one [`CheckResult`] per subject (a GPU, a NIC, a pool)
//! with the expected and observed values and the evidence they came from.
//!
//! Checks are pure functions of the blueprint and the facts: no host access, so a replayed
//! capture gives the same verdicts. They **fail closed**: a fact that could not be read is
//! an [`Verdict::Error`], never a pass. One file per family of checks; this one holds the
//! shared types and [`evaluate`].

mod context;
pub mod firmware;
pub mod gpu;
pub mod matcher;
pub mod network;
pub mod os;
pub mod pcie;
pub mod runtime;
pub mod select;

pub use context::Context;
pub use select::{Phase, Selection};

use crate::blueprint::compat::Matrix;
use crate::blueprint::model::{DriverAuthority, RawBlueprint};
use crate::verify::facts::Facts;
use serde::Serialize;

/// How much a failed check matters.
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
pub enum Severity {
    /// Fails verification (exit 1, kubelet does not start).
    Critical,
    /// Reported, does not fail verification.
    Warning,
}

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

/// What kind of fault a failure points at, so automation picks restart or repair.
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
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum FaultClass {
    /// A workload misbehaved (application Xids); the hardware is fine.
    TransientApplication,
    /// The device itself: Xid, ECC, row remapping, retired pages, fallen off the bus.
    Device,
    /// A link: PCIe, NVLink, NIC port.
    Link,
    /// Driver or daemon: versions, kernel modules, Fabric Manager, CDI, containerd.
    DriverDaemon,
    /// The host: firmware settings, OS, kernel, memory, disk.
    OsMemoryDisk,
}

/// What to do about a failure; escalates from none to repair.
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
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Action {
    None,
    /// Restart the workload or the daemon.
    Restart,
    /// Reset the device or reboot the node.
    Reset,
    /// Cordon the node and send it to repair (reimage, reseat, RMA).
    IsolateAndRepair,
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
}

/// The fixed description of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Spec {
    pub id: &'static str,
    pub summary: &'static str,
    pub severity: Severity,
    pub fault: FaultClass,
    pub action: Action,
    pub stage: Stage,
    /// Part of the post-join device health subset (`--phase health`).
    pub health: bool,
}

/// One check's verdict on one subject.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckResult {
    pub id: String,
    /// The device, interface, pool or unit checked; `None` for node-wide checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub summary: String,
    pub severity: Severity,
    pub verdict: Verdict,
    pub expected: String,
    pub observed: String,
    /// The files and commands the observed value came from.
    pub evidence: Vec<String>,
    pub fault: FaultClass,
    /// Recommended action; `none` when the check passed.
    pub action: Action,
    pub stage: Stage,
}

impl CheckResult {
    /// `id` or `id[subject]`.
    pub fn name(&self) -> String {
        match &self.subject {
            Some(subject) => format!("{}[{subject}]", self.id),
            None => self.id.clone(),
        }
    }

    /// A failed or unreadable critical check.
    pub fn blocks(&self) -> bool {
        self.verdict != Verdict::Pass && self.severity == Severity::Critical
    }
}

/// Every check spec, in report order.
pub fn catalog() -> Vec<&'static Spec> {
    [
        os::SPECS,
        firmware::SPECS,
        pcie::SPECS,
        gpu::SPECS,
        network::SPECS,
        runtime::SPECS,
    ]
    .iter()
    .flat_map(|specs| specs.iter())
    .collect()
}

/// Runs every check that applies to the blueprint, then keeps the selected ones.
pub fn evaluate(
    blueprint: &RawBlueprint,
    facts: &Facts,
    matrix: &Matrix,
    selection: &Selection,
) -> Vec<CheckResult> {
    let mut ctx = Context::new(blueprint, facts, matrix);
    os::evaluate(&mut ctx);
    firmware::evaluate(&mut ctx);
    pcie::evaluate(&mut ctx);
    gpu::evaluate(&mut ctx);
    network::evaluate(&mut ctx);
    runtime::evaluate(&mut ctx);
    let authority = blueprint.accelerators.as_ref().map(|a| a.driver.authority);
    let preinstalled = authority != Some(DriverAuthority::Operator);
    let specs = catalog();
    ctx.into_results()
        .into_iter()
        .filter(|result| {
            specs
                .iter()
                .find(|spec| spec.id == result.id)
                .is_some_and(|spec| selection.includes(spec, preinstalled))
        })
        .collect()
}
