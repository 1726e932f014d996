//! `system`: chrony, resolved, journald, logrotate, partitions (repart and
//! mount units), certificates and the cache.

use crate::blueprint::Spec;
use serde::Serialize;

use super::bytes;
use crate::blueprint::model::*;
use crate::blueprint::value::{DomainName, HostName};

/// Prefix of every partition label nodeimg creates and mounts (verify's
/// `system.partition.mounted` looks for the same label).
pub use crate::verify::checks::partitions::PART_LABEL_PREFIX;

#[derive(Debug, Clone, Serialize)]
pub struct System<'a> {
    pub time_sync: Option<TimeSync<'a>>,
    pub dns: Option<Dns<'a>>,
    pub certificates: Vec<Certificate<'a>>,
    pub partitions: Vec<Partition<'a>>,
    pub cache: Option<Cache<'a>>,
    pub journal_max_use: Option<String>,
    pub journal_retention_s: Option<String>,
    pub rotate: Vec<Rotate<'a>>,
    pub shm_bytes: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TimeSync<'a> {
    pub servers: &'a [HostName],
    pub pools: &'a [HostName],
    /// chrony `makestep` threshold in seconds (1 unless the blueprint says):
    /// a node whose clock is off at boot steps it within its first three
    /// updates instead of slewing for hours while TLS bootstrap fails (the
    /// distro files ship `makestep 1 3` or `1.0 3`).
    pub make_step: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Dns<'a> {
    pub servers: Vec<String>,
    pub domains: &'a [DomainName],
}

#[derive(Debug, Clone, Serialize)]
pub struct Certificate<'a> {
    pub name: &'a str,
}

/// One `usr/lib/repart.d/<index>-<label>.conf` and its mount unit.
#[derive(Debug, Clone, Serialize)]
pub struct Partition<'a> {
    pub index: String,
    pub label: &'a str,
    /// The GPT partition name: the label with nodeimg's prefix, so it is
    /// unique to nodeimg (`nodeimg-containerd`).
    pub part_label: String,
    pub mount_point: &'a str,
    pub filesystem: Filesystem,
    pub size_bytes: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cache<'a> {
    pub path: &'a str,
    pub high: f64,
    pub low: f64,
}

/// One `etc/logrotate.d/<name>` file.
#[derive(Debug, Clone, Serialize)]
pub struct Rotate<'a> {
    pub name: &'a str,
    pub path: &'a str,
    pub frequency: RotateFrequency,
    pub keep: u32,
    pub max_size_bytes: Option<String>,
}

impl System<'_> {
    /// journald limits are set.
    pub fn journal_wanted(&self) -> bool {
        self.journal_max_use.is_some() || self.journal_retention_s.is_some()
    }
}

pub(super) fn of(s: &Spec) -> System<'_> {
    let sys = &s.system;
    System {
        time_sync: sys.time_sync.as_ref().map(|t| TimeSync {
            servers: &t.servers,
            pools: &t.pools,
            make_step: t.make_step.as_ref().map_or_else(
                || "1".to_string(),
                |d| format!("{}", d.nanos() as f64 / 1e9),
            ),
        }),
        dns: sys.dns.as_ref().map(|d| Dns {
            servers: d.servers.iter().map(|a| a.to_string()).collect(),
            domains: &d.search_domains,
        }),
        certificates: sys
            .certificates
            .iter()
            .map(|c| Certificate {
                name: c.name.as_str(),
            })
            .collect(),
        partitions: sys
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| Partition {
                index: format!("{:02}", 50 + i),
                label: p.label.as_str(),
                part_label: format!("{PART_LABEL_PREFIX}{}", p.label.as_str()),
                mount_point: p.mount_point.as_str(),
                filesystem: p.filesystem,
                size_bytes: p.size.as_deref().map(bytes),
            })
            .collect(),
        cache: sys.cache.as_ref().map(|c| Cache {
            path: c.path.as_str(),
            high: c.high_watermark.value(),
            low: c.low_watermark.value(),
        }),
        journal_max_use: sys.logs.journal_max_use.as_deref().map(bytes),
        journal_retention_s: sys
            .logs
            .journal_max_retention
            .as_ref()
            .map(|d| d.as_secs().to_string()),
        rotate: sys
            .logs
            .rotate
            .iter()
            .map(|r| Rotate {
                name: r.name.as_str(),
                path: r.path.as_str(),
                frequency: r.frequency,
                keep: r.keep,
                max_size_bytes: r.max_size.as_deref().map(bytes),
            })
            .collect(),
        shm_bytes: sys.shm_size.as_deref().map(bytes),
    }
}
