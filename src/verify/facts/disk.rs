//! Space and inodes of the node's local disk file systems, as `df` reports them (GNU
//! coreutils: `df --block-size=1 --output=size,avail,itotal,iavail,target`), one line per
//! mount point: bytes in all and available to unprivileged writers (statvfs `f_bavail`,
//! what the kubelet's `nodefs.available` reads), inodes in all and free.
//!
//! Only the local disk file systems in `/proc/mounts` are asked about ([`LOCAL`]): a
//! network file system could hang `df`, and tmpfs, overlay and the virtual file systems
//! hold no data the node keeps.

use std::collections::BTreeMap;
use std::time::Duration;

use super::mounts::Mounts;
use crate::verify::fact::Fact;
use crate::verify::host::{Host, MountPoint, VendorCommand};
use serde::Serialize;

/// File system types that live on the node's disks.
pub const LOCAL: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "bcachefs",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DiskUsage {
    pub size_bytes: u64,
    pub avail_bytes: u64,
    /// 0 where the file system has no fixed inode table (btrfs).
    pub inodes: u64,
    pub inodes_free: u64,
}

/// Usage by mount point, of every local disk file system mounted.
pub fn collect(
    host: &dyn Host,
    mounts: &Mounts,
    timeout: Duration,
) -> Fact<BTreeMap<String, DiskUsage>> {
    let targets: Vec<MountPoint> = match &mounts.mounts {
        Fact::Unknown { reason } => return Fact::unknown(reason.clone()),
        Fact::Known(all) => {
            let mut t: Vec<MountPoint> = all
                .iter()
                .filter(|m| LOCAL.contains(&m.fs_type.as_str()))
                .filter_map(|m| MountPoint::parse(&m.target).ok())
                .collect();
            t.sort();
            t.dedup();
            t
        }
    };
    if targets.is_empty() {
        return Fact::Known(BTreeMap::new());
    }
    let command = VendorCommand::DfUsage(targets);
    match host.run(&command, timeout) {
        Err(e) => Fact::unknown(e.to_string()),
        Ok(out) if !out.success() && out.stdout.is_empty() => {
            Fact::unknown(format!("{command}: {}", out.failure_summary()))
        }
        Ok(out) => match parse(&out.stdout_text()) {
            Ok(usage) => Fact::Known(usage),
            Err(why) => Fact::unknown(format!("{command}: {why}")),
        },
    }
}

/// df's output: a header, then `size avail itotal iavail target` per line (the target
/// last, so a mount point with spaces stays whole).
pub fn parse(text: &str) -> Result<BTreeMap<String, DiskUsage>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let line = line.trim_start();
        if line.is_empty() {
            continue;
        }
        let mut rest = line;
        let mut numbers = [0u64; 4];
        for n in &mut numbers {
            let (word, after) = rest
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("line {}: `{line}` has fewer than 5 fields", i + 1))?;
            // `-` where the file system reports no inodes.
            *n = if word == "-" {
                0
            } else {
                word.parse()
                    .map_err(|_| format!("line {}: `{word}` is not a number", i + 1))?
            };
            rest = after.trim_start();
        }
        if rest.is_empty() {
            return Err(format!("line {}: no mount point", i + 1));
        }
        out.insert(
            rest.to_owned(),
            DiskUsage {
                size_bytes: numbers[0],
                avail_bytes: numbers[1],
                inodes: numbers[2],
                inodes_free: numbers[3],
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_lines_with_spaces_and_dashes() {
        let text = "     1B-blocks         Avail   Inodes   IFree Mounted on\n\
                    1023303680000  102330368000 50000000 4000000 /\n\
                    2000000000000 1900000000000        -       - /var/lib/my cache\n";
        let u = parse(text).unwrap();
        assert_eq!(u["/"].avail_bytes, 102_330_368_000);
        assert_eq!(u["/"].inodes_free, 4_000_000);
        assert_eq!(u["/var/lib/my cache"].inodes, 0);
        assert!(parse("h\n12 x 1 1 /\n").is_err());
        assert!(parse("h\n12 1 1 1\n").is_err());
    }
}
