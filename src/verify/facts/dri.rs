//! DRM render nodes (`/dev/dri/renderD*`) and the PCI device each belongs to
//! (`/sys/class/drm/renderD<N>/device`).
//!
//! AMD GPUs are given to containers as their render node plus `/dev/kfd` (the static CDI
//! spec maps GPU *N* to `renderD(128+N)`; amd-ctk and the device plugin list the nodes the
//! driver made). A whole GPU has one render node; a GPU the driver failed to set up has
//! none, and compute partitioning (CPX/DPX) gives one per partition.

use super::attribute;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

pub const DEV_DRI: &str = "/dev/dri";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RenderNode {
    /// `renderD128`.
    pub name: String,
    /// The PCI address the node belongs to; `None` when sysfs has no device link.
    pub device: Fact<Option<String>>,
}

/// Every `renderD*` in `/dev/dri`, in name order; a missing `/dev/dri` holds none.
pub fn collect(host: &dyn Host) -> Fact<Vec<RenderNode>> {
    attribute::list(host, DEV_DRI, true).map(|mut names| {
        names.retain(|n| {
            n.strip_prefix("renderD")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        });
        names.sort_by_key(|n| (n.len(), n.clone()));
        names
            .into_iter()
            .map(|name| RenderNode {
                device: attribute::optional_link_name(
                    host,
                    &format!("/sys/class/drm/{name}/device"),
                ),
                name,
            })
            .collect()
    })
}
