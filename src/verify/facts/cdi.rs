//! CDI specs in `/etc/cdi` and `/var/run/cdi`: kind, devices, and the device nodes, hooks
//! and mounts each one injects into containers.
//!
//! A stale or half-written spec (the refresh service ran before the driver was ready, the
//! driver was upgraded since) is a common cause of "GPU not found" in pods. The spec's
//! device nodes are resolved on the host to say whether they exist; its mounts name the
//! driver libraries (`libcuda.so.<version>`) that a check compares with the loaded driver.
//! Specs are YAML or JSON (JSON is read as YAML), read with the blueprint's own bounded
//! reader ([`crate::blueprint::source`]): a spec is node input, so one that is too large,
//! nested too deep or expands its aliases past the limits is an unknown fact with the
//! reason, never a hang or a node out of memory at first boot.

use super::attribute;
use crate::blueprint::source;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const SPEC_DIRS: &[&str] = &["/etc/cdi", "/var/run/cdi"];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CdiSpec {
    pub path: String,
    pub content: Fact<CdiSpecContent>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CdiSpecContent {
    pub cdi_version: String,
    /// `vendor.com/class`, e.g. `nvidia.com/gpu`.
    pub kind: String,
    pub devices: Vec<CdiDevice>,
    /// Edits applied for every device of the spec.
    pub common: CdiEdits,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CdiDevice {
    pub name: String,
    pub edits: CdiEdits,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CdiEdits {
    pub device_nodes: Vec<CdiDeviceNode>,
    /// Paths of hook programs.
    pub hooks: Vec<String>,
    /// Host paths of mounts.
    pub mounts: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CdiDeviceNode {
    pub path: String,
    pub host_path: Option<String>,
    /// Whether the node (its host path, or its path) exists on the host.
    pub present: Fact<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSpec {
    cdi_version: String,
    kind: String,
    devices: Vec<RawDevice>,
    #[serde(default)]
    container_edits: RawEdits,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDevice {
    name: String,
    #[serde(default)]
    container_edits: RawEdits,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawEdits {
    #[serde(default)]
    device_nodes: Vec<RawDeviceNode>,
    #[serde(default)]
    hooks: Vec<RawHook>,
    #[serde(default)]
    mounts: Vec<RawMount>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDeviceNode {
    path: String,
    host_path: Option<String>,
}

#[derive(Deserialize)]
struct RawHook {
    path: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMount {
    host_path: String,
}

/// Every `*.json`, `*.yaml`, `*.yml` in the spec directories; missing directories hold none.
pub fn collect(host: &dyn Host) -> Fact<Vec<CdiSpec>> {
    let mut specs = Vec::new();
    for dir in SPEC_DIRS {
        let names = match attribute::list(host, dir, true) {
            Fact::Known(names) => names,
            Fact::Unknown { reason } => return Fact::unknown(reason),
        };
        for name in names {
            if !(name.ends_with(".json") || name.ends_with(".yaml") || name.ends_with(".yml")) {
                continue;
            }
            let path = format!("{dir}/{name}");
            let content = attribute::text(host, &path).and_then(|text| match parse(&text) {
                Ok(raw) => Fact::Known(resolve(host, raw)),
                Err(why) => Fact::unknown(format!("{path}: {why}")),
            });
            specs.push(CdiSpec { path, content });
        }
    }
    Fact::Known(specs)
}

/// What the reader calls a spec in its errors.
const KIND: source::Kind = source::Kind {
    noun: "a CDI spec",
    starts_with: Some("cdiVersion:"),
};

fn parse(text: &str) -> Result<RawSpec, String> {
    let doc = source::read(text.as_bytes(), KIND).map_err(|e| e.to_string())?;
    doc.to().map_err(|e| e.to_string())
}

fn resolve(host: &dyn Host, raw: RawSpec) -> CdiSpecContent {
    CdiSpecContent {
        cdi_version: raw.cdi_version,
        kind: raw.kind,
        devices: raw
            .devices
            .into_iter()
            .map(|device| CdiDevice {
                name: device.name,
                edits: edits(host, device.container_edits),
            })
            .collect(),
        common: edits(host, raw.container_edits),
    }
}

fn edits(host: &dyn Host, raw: RawEdits) -> CdiEdits {
    CdiEdits {
        device_nodes: raw
            .device_nodes
            .into_iter()
            .map(|node| {
                let on_host = node.host_path.clone().unwrap_or_else(|| node.path.clone());
                let present = match host.canonicalize(Path::new(&on_host)) {
                    Ok(_) => Fact::Known(true),
                    Err(err) if err.is_not_found() => Fact::Known(false),
                    Err(err) => Fact::unknown(err.to_string()),
                };
                CdiDeviceNode {
                    path: node.path,
                    host_path: node.host_path,
                    present,
                }
            })
            .collect(),
        hooks: raw.hooks.into_iter().map(|hook| hook.path).collect(),
        mounts: raw
            .mounts
            .into_iter()
            .map(|mount| mount.host_path)
            .collect(),
    }
}
