//! The locked-memory limit (`RLIMIT_MEMLOCK`) of the running containerd.
//!
//! Containers inherit containerd's limits, not `/etc/security/limits.d`, so this is the
//! limit NCCL/RCCL memory registration meets in a pod. containerd's process is found in
//! its unit's cgroup (`cgroup.procs` under cgroup v2, or under the v1 `systemd` hierarchy),
//! picked by `/proc/<pid>/comm`, and its limit read from the `Max locked memory` line of
//! `/proc/<pid>/limits`.

use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::path::Path;

/// `cgroup.procs` of containerd.service, cgroup v2 first.
pub const CGROUP_PROCS: &[&str] = &[
    "/sys/fs/cgroup/system.slice/containerd.service/cgroup.procs",
    "/sys/fs/cgroup/systemd/system.slice/containerd.service/cgroup.procs",
];

/// One side (soft or hard) of a resource limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Unlimited,
    Bytes(u64),
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Unlimited => f.write_str("unlimited"),
            Limit::Bytes(b) => write!(f, "{b} bytes"),
        }
    }
}

/// containerd's process and its locked-memory limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memlock {
    pub pid: u32,
    pub soft: Limit,
    pub hard: Limit,
}

/// Reads containerd's memlock limit; unknown (with the reason) when containerd is not
/// running or a file cannot be read.
pub fn collect(host: &dyn Host) -> Fact<Memlock> {
    let mut reasons = Vec::new();
    for procs in CGROUP_PROCS {
        let text = match host.read_text(Path::new(procs)) {
            Ok(text) => text,
            Err(e) => {
                reasons.push(e.to_string());
                continue;
            }
        };
        for pid in text.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
            let comm = host
                .read_text(Path::new(&format!("/proc/{pid}/comm")))
                .unwrap_or_default();
            if comm.trim() != "containerd" {
                continue;
            }
            let path = format!("/proc/{pid}/limits");
            return Fact::from(host.read_text(Path::new(&path))).and_then(
                |limits| match parse_limits(&limits) {
                    Ok((soft, hard)) => Fact::Known(Memlock { pid, soft, hard }),
                    Err(why) => Fact::unknown(format!("{path}: {why}")),
                },
            );
        }
        reasons.push(format!("{procs}: no containerd process"));
    }
    Fact::unknown(format!(
        "containerd is not running in containerd.service ({})",
        reasons.join("; ")
    ))
}

/// The soft and hard `Max locked memory` limits of a `/proc/<pid>/limits` text.
pub fn parse_limits(text: &str) -> Result<(Limit, Limit), String> {
    let line = text
        .lines()
        .find(|l| l.starts_with("Max locked memory"))
        .ok_or("no `Max locked memory` line")?;
    let mut fields = line["Max locked memory".len()..].split_whitespace();
    let mut next = || -> Result<Limit, String> {
        match fields.next() {
            Some("unlimited") => Ok(Limit::Unlimited),
            Some(n) => n
                .parse()
                .map(Limit::Bytes)
                .map_err(|e| format!("limit {n:?}: {e}")),
            None => Err(format!("short line {line:?}")),
        }
    };
    Ok((next()?, next()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: &str = "Limit                     Soft Limit           Hard Limit           Units     \n\
Max cpu time              unlimited            unlimited            seconds   \n\
Max locked memory         8388608              8388608              bytes     \n\
Max address space         unlimited            unlimited            bytes     \n";

    #[test]
    fn reads_the_locked_memory_line() {
        assert_eq!(
            parse_limits(LIMITS),
            Ok((Limit::Bytes(8_388_608), Limit::Bytes(8_388_608)))
        );
        let unlimited = LIMITS.replace(
            "8388608              8388608",
            "unlimited            unlimited",
        );
        assert_eq!(
            parse_limits(&unlimited),
            Ok((Limit::Unlimited, Limit::Unlimited))
        );
        assert!(parse_limits("Max cpu time unlimited unlimited seconds\n").is_err());
        assert!(parse_limits("Max locked memory 12x 5 bytes\n").is_err());
    }

    #[test]
    fn reads_the_running_process_here() {
        // The test process's own limits file has the same layout.
        let text = std::fs::read_to_string("/proc/self/limits").unwrap();
        assert!(parse_limits(&text).is_ok(), "{text}");
    }
}
