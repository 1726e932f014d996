//! The fault vocabulary: what kind of fault a failure points at ([`FaultClass`]), what to
//! do about it ([`Action`]) and how much a failed check matters ([`Severity`]).
//!
//! One set of types for every reader: verify's checks and their reports, the Node Problem
//! Detector remediation that render writes, accept's findings, the acceptance record and
//! the rollout gate all name a fault and an action with these, so a class means the same
//! and is spelled the same (serde and strum agree) wherever it is written or read. The
//! vendor fault catalogs (Xid, SXid, AMD RAS) sit beside this file and map their codes
//! onto it. A leaf: it imports nothing from the crate, so every layer may import it.

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
    Deserialize,
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

/// The record's schema lists the actions as a plain string enum, as it always has: the
/// derive would turn the variants' doc comments into a `oneOf`.
impl JsonSchema for Action {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Action")
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Borrowed(concat!(module_path!(), "::Action"))
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&'static str> = Action::VARIANTS.iter().map(|&a| a.into()).collect();
        json_schema!({
            "description": "What to do about a failure; escalates from none to repair (as verify's actions).",
            "type": "string",
            "enum": names,
        })
    }
}

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
            &serde_json::json!(["none", "restart", "reset", "isolate-and-repair"])
        );
    }
}
