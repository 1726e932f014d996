//! `system`: time sync, DNS, CA certificates, disk layout, the model/data
//! cache and its watermarks, logs, and /dev/shm.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{
    AbsPath, ByteSize, DnsLabel, DomainName, Duration, HostName, LogGlob, Percent, RelPath,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct System {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_sync: Option<TimeSync>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<Dns>,
    /// Extra CA certificates for the system trust store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub certificates: Vec<Certificate>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Partition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
    #[serde(default)]
    pub logs: Logs,
    /// Size of pods' /dev/shm (NCCL, data loaders): a memory-backed emptyDir that a Kyverno
    /// policy (`cluster/shm-policy.yaml`) mounts in the pods taking this node's GPUs; the
    /// sandbox's own is 64 MiB. Counts against the pod's memory limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_size: Option<ByteSize>,
}

/// chrony servers/pools and how far the clock may be off.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimeSync {
    /// NTP servers: host names or addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<HostName>,
    /// NTP pools: host names that resolve to several servers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<HostName>,
    /// Step the clock at start when off by more than this (chrony `makestep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub make_step: Option<Duration>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dns {
    /// Resolver addresses (IPv4 or IPv6).
    pub servers: Vec<std::net::IpAddr>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search_domains: Vec<DomainName>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Certificate {
    /// File name in the trust store (without extension).
    pub name: DnsLabel,
    /// PEM file, relative to the blueprint file.
    pub file: RelPath,
}

/// A partition created at first boot (systemd-repart).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Partition {
    pub label: DnsLabel,
    pub mount_point: AbsPath,
    pub filesystem: Filesystem,
    /// Minimum size; absent means "the rest of the disk".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<ByteSize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Filesystem {
    Xfs,
    Ext4,
}

/// Model/data cache directory, pruned between the watermarks.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cache {
    pub path: AbsPath,
    /// Start pruning at this disk usage.
    pub high_watermark: Percent,
    /// Prune down to this usage.
    pub low_watermark: Percent,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Logs {
    /// journald SystemMaxUse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_max_use: Option<ByteSize>,
    /// journald MaxRetentionSec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_max_retention: Option<Duration>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rotate: Vec<LogRotation>,
}

/// A logrotate rule.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogRotation {
    /// Rule name (the file name under /etc/logrotate.d).
    pub name: DnsLabel,
    /// Absolute path or glob of the files, e.g. `/var/log/nodeimg/*.log`.
    pub path: LogGlob,
    pub frequency: RotateFrequency,
    /// Rotated files kept.
    pub keep: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<ByteSize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RotateFrequency {
    Hourly,
    Daily,
    Weekly,
}
