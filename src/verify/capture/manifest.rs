//! The capture manifest: when and where a capture was made, by which nodeimg, the tool
//! versions seen, the limits, and everything that could not be read or kept, with why.

use crate::verify::facts::Facts;
use crate::verify::host::{HostError, HostErrorKind, NotCaptured, RecordLimits, Recording};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `manifest.json` format name; bumped on an incompatible change.
pub const FORMAT: &str = "nodeimg-capture/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub created_at: String,
    pub hostname: String,
    pub nodeimg_version: String,
    /// The root prefix the live host was read under (`/` on a real node).
    pub root: String,
    /// Versions of the tools and drivers the facts name (`unknown: <reason>` when unread).
    pub tools: BTreeMap<String, String>,
    pub max_item_bytes: u64,
    pub max_total_bytes: u64,
    pub content_bytes: u64,
    /// Content read but not kept (over a size limit).
    pub not_captured: Vec<NotCaptured>,
    /// Operations that failed for another reason than "not found" (permission, EINVAL,
    /// timeout, ...); "not found" answers are in the journal, as they are normal.
    pub unreadable: Vec<HostError>,
}

impl Manifest {
    pub fn new(
        recording: &Recording,
        facts: &Facts,
        root: &str,
        limits: RecordLimits,
        created_at: String,
    ) -> Self {
        Manifest {
            format: FORMAT.to_owned(),
            created_at,
            hostname: facts
                .hostname
                .known()
                .cloned()
                .unwrap_or_else(|| "unknown".to_owned()),
            nodeimg_version: env!("CARGO_PKG_VERSION").to_owned(),
            root: root.to_owned(),
            tools: tools(facts),
            max_item_bytes: limits.max_item_bytes,
            max_total_bytes: limits.max_total_bytes,
            content_bytes: recording.content_bytes(),
            not_captured: recording.not_captured.clone(),
            unreadable: recording
                .errors()
                .into_iter()
                .filter(|e| e.kind != HostErrorKind::NotFound)
                .cloned()
                .collect(),
        }
    }
}

fn tools(facts: &Facts) -> BTreeMap<String, String> {
    let show = |fact: Option<crate::verify::Fact<String>>| match fact {
        Some(crate::verify::Fact::Known(v)) => v,
        Some(crate::verify::Fact::Unknown { reason }) => format!("unknown: {reason}"),
        None => "not applicable".to_owned(),
    };
    let mut tools = BTreeMap::new();
    tools.insert(
        "kernel".to_owned(),
        show(Some(facts.kernel.release.clone())),
    );
    tools.insert(
        "nvidia-kernel-module".to_owned(),
        show(Some(
            facts
                .modules
                .nvidia_driver
                .clone()
                .map(|d| d.version.to_string()),
        )),
    );
    tools.insert(
        "nvidia-smi".to_owned(),
        show(
            facts
                .gpus
                .nvidia_smi
                .clone()
                .map(|s| s.and_then(|s| s.driver_version).map(|v| v.to_string())),
        ),
    );
    tools.insert(
        "rocm-smi".to_owned(),
        show(
            facts
                .gpus
                .rocm_smi
                .clone()
                .map(|s| s.and_then(|s| s.driver_version).map(|v| v.to_string())),
        ),
    );
    let runtime = facts.runtime.as_ref();
    tools.insert(
        "containerd".to_owned(),
        show(Some(runtime.clone().and_then(|r| {
            r.containerd_version.as_ref().map(ToString::to_string)
        }))),
    );
    tools.insert(
        "kubelet".to_owned(),
        show(Some(runtime.and_then(|r| {
            r.kubelet_version.as_ref().map(ToString::to_string)
        }))),
    );
    tools
}
