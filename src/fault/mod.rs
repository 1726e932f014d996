//! The fault vocabulary: what kind of fault a failure points at ([`FaultClass`]), what to
//! do about it ([`Action`]) and how much a failed check matters ([`Severity`]).
//!
//! One set of types for every reader: verify's checks and their reports, the Node Problem
//! Detector remediation that render writes, accept's findings, the acceptance record and
//! the rollout gate all name a fault and an action with these, so a class means the same
//! and is spelled the same (serde and strum agree) wherever it is written or read.
//!
//! Beside this file are the vendors' fault catalogs as cited data tables ([`xid`],
//! [`sxid`], [`amd_ras`], read with [`table`]), what NVIDIA's resolution buckets ask for
//! ([`bucket`]), a site's overrides of single codes ([`overrides`]), the repeat rule
//! ([`escalation`]) and the bounded recovery ladder ([`ladder`]). A leaf: it imports
//! nothing from the crate, so every layer may import it.

pub mod amd_ras;
pub mod bucket;
pub mod escalation;
pub mod ladder;
pub mod overrides;
pub mod sxid;
pub mod table;
pub mod xid;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use strum::VariantArray;

/// What kind of fault a failure points at, so automation picks restart or repair.
///
/// The acceptance record's JSON Schema names this type `Fault` and keeps the descriptions
/// it has always printed (the `schemars` attributes); the doc comments say more.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[schemars(
    rename = "Fault",
    description = "What kind of fault a failure points at; the same classes, with the same names, as\n`nodeimg verify`'s checks, so automation treats both alike."
)]
pub enum FaultClass {
    /// A workload misbehaved (application Xids); the hardware is fine.
    #[schemars(description = "A workload misbehaved; the hardware is fine.")]
    TransientApplication,
    /// The device itself: Xid, ECC, row remapping, retired pages, fallen off the bus; after
    /// join, a GPU missing or a failed stress test.
    #[schemars(
        description = "The device itself: a GPU missing, memory errors, a failed stress test."
    )]
    Device,
    /// A link: PCIe, NVLink/NVSwitch, a NIC port or rail.
    #[schemars(description = "A link: PCIe, NVLink/NVSwitch, a NIC rail.")]
    Link,
    /// Driver or daemon: versions, kernel modules, Fabric Manager, CDI, containerd; after
    /// join, the device plugin, toolkit, kubelet and operator components.
    #[schemars(
        description = "Driver or daemon: device plugin, toolkit, kubelet, operator components."
    )]
    DriverDaemon,
    /// The host: firmware settings, OS, kernel, memory, disk.
    #[schemars(description = "The host: memory, disk, OS settings.")]
    OsMemoryDisk,
    /// The image on the node: unsigned, signed by a key the blueprint does not trust, or its
    /// configuration changed since it was signed. Not a hardware fault: the node needs a
    /// signed image (apply one, or roll back), not a repair.
    #[schemars(
        description = "The image on the node: unsigned, signed by an untrusted key, or changed since it was signed."
    )]
    Image,
}

/// What to do about a failure, in the words of the vendors' catalogs; ordered by
/// escalation, so the worst of several is their `max`.
///
/// `none` is a passed check, or a finding nothing is done about automatically (an unknown
/// code: a person reads the warning); `ignore` is what a catalog says needs no action.
/// The node's own automation takes the steps up to `reboot-node` (the workload's
/// controller restarts the application, systemd or an operator's DaemonSet the daemon,
/// NodeHealthCheck's remediator reboots the node); `check-cooling-power` and `service`
/// need a person at the machine, so the node is cordoned and left alone.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Action {
    None,
    /// The catalog says no action is needed (NVIDIA's IGNORE); reported once.
    Ignore,
    /// Restart the application (NVIDIA's RESTART_APP): its controller does.
    RestartApp,
    /// Restart the daemon: systemd (`Restart=`) or the operator's DaemonSet.
    RestartDaemon,
    /// Reset the GPU (NVIDIA's RESET_GPU; amdgpu resets a GPU itself after an
    /// uncorrectable error).
    ResetGpu,
    /// Reset every GPU and NVSwitch of the NVLink fabric and restart Fabric Manager.
    ResetFabric,
    /// Reboot the node (NVIDIA's RESTART_BM).
    RebootNode,
    /// A person checks the cooling, the power feeds and the seating (NVIDIA's
    /// CHECK_MECHANICALS, hardware slowdown, thermal events).
    CheckCoolingPower,
    /// Cordon the node and send it to service: repair, reimage, reseat, RMA (NVIDIA's
    /// CONTACT_SUPPORT).
    Service,
}

impl Action {
    /// The action in words, as reports and condition messages write it.
    pub fn words(self) -> &'static str {
        match self {
            Action::None => "no action",
            Action::Ignore => "ignore",
            Action::RestartApp => "restart the application",
            Action::RestartDaemon => "restart the daemon",
            Action::ResetGpu => "reset the GPU",
            Action::ResetFabric => "reset the NVLink fabric",
            Action::RebootNode => "reboot the node",
            Action::CheckCoolingPower => "check the cooling and power",
            Action::Service => "send the node to service",
        }
    }

    /// How much a finding with this action matters when nothing else says: what the node's
    /// automation or a person must do blocks it; what needs no action or only the
    /// workload's own restart does not.
    pub fn severity(self) -> Severity {
        if self >= Action::RestartDaemon {
            Severity::Critical
        } else {
            Severity::Warning
        }
    }

    /// Needs a person at the machine: the node is cordoned and never rebooted for it.
    pub fn needs_a_person(self) -> bool {
        self >= Action::CheckCoolingPower
    }
}

/// A finding's fault class, action and severity together: what a catalog row or a rule
/// says about one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Judgement {
    pub fault: FaultClass,
    pub action: Action,
    pub severity: Severity,
}

impl Judgement {
    /// The class and action, with the action's own severity.
    pub fn of(fault: FaultClass, action: Action) -> Self {
        Judgement {
            fault,
            action,
            severity: action.severity(),
        }
    }

    /// The worse of two: the higher action, then the more severe.
    pub fn worse(self, other: Judgement) -> Judgement {
        if (other.action, std::cmp::Reverse(other.severity))
            > (self.action, std::cmp::Reverse(self.severity))
        {
            other
        } else {
            self
        }
    }
}

/// A `JsonSchema` that lists an enum's wire names as a plain string enum (the derive would
/// turn the variants' doc comments into a `oneOf`), as the record has always written it.
macro_rules! plain_string_enum_schema {
    ($ty:ident, $description:literal) => {
        impl JsonSchema for $ty {
            fn schema_name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($ty))
            }

            fn schema_id() -> Cow<'static, str> {
                Cow::Borrowed(concat!(module_path!(), "::", stringify!($ty)))
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let names: Vec<&'static str> = $ty::VARIANTS.iter().map(|&v| v.into()).collect();
                json_schema!({
                    "description": $description,
                    "type": "string",
                    "enum": names,
                })
            }
        }
    };
}

plain_string_enum_schema!(
    Action,
    "What to do about a failure, ordered by escalation from none to service (as verify's actions)."
);

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
    Deserialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
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

// A plain string enum, as the record and the matrix file name a severity.
plain_string_enum_schema!(
    Severity,
    "How much a failed check matters: critical blocks the node, a warning is reported."
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant reads back from the name it is written with.
    #[test]
    fn names_round_trip() {
        for &f in FaultClass::VARIANTS {
            let name: &'static str = f.into();
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<FaultClass>(&json).unwrap(), f);
        }
        for &a in Action::VARIANTS {
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), a);
        }
        for &s in Severity::VARIANTS {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Severity>(&json).unwrap(), s);
        }
    }

    #[test]
    fn the_action_schema_is_a_string_enum() {
        let schema = schemars::schema_for!(Action);
        let names = schema.get("enum").unwrap();
        assert_eq!(
            names,
            &serde_json::json!([
                "none",
                "ignore",
                "restart-app",
                "restart-daemon",
                "reset-gpu",
                "reset-fabric",
                "reboot-node",
                "check-cooling-power",
                "service"
            ])
        );
    }
}
