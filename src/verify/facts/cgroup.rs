//! Which cgroup hierarchy the machine runs: v2 (unified), hybrid, or v1.
//!
//! Kubelet requires v2 for recent releases. `/sys/fs/cgroup/cgroup.controllers` exists only
//! when a v2 hierarchy is mounted at `/sys/fs/cgroup`; hybrid mounts v2 at
//! `/sys/fs/cgroup/unified` with v1 controllers beside it.

use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupMode {
    V2,
    Hybrid,
    V1,
}

pub fn collect(host: &dyn Host) -> Fact<CgroupMode> {
    match host.read(Path::new("/sys/fs/cgroup/cgroup.controllers")) {
        Ok(_) => return Fact::Known(CgroupMode::V2),
        Err(err) if !err.is_not_found() => return Fact::unknown(err.to_string()),
        Err(_) => {}
    }
    if host.list_dir(Path::new("/sys/fs/cgroup/unified")).is_ok() {
        return Fact::Known(CgroupMode::Hybrid);
    }
    match host.list_dir(Path::new("/sys/fs/cgroup")) {
        Ok(names) if !names.is_empty() => Fact::Known(CgroupMode::V1),
        Ok(_) => Fact::unknown("/sys/fs/cgroup is empty: no cgroup hierarchy is mounted"),
        Err(err) => Fact::unknown(err.to_string()),
    }
}
