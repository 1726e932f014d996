//! Mounted file systems (`/proc/mounts`) and the partitions named by label
//! (`/dev/disk/by-partlabel/*`), so verify can tell that a partition the image mounts is
//! the one mounted where its data goes, not the root file system.

use std::collections::BTreeMap;

use super::attribute;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::path::Path;

pub const BY_PARTLABEL: &str = "/dev/disk/by-partlabel";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mount {
    /// The device as the kernel names it (`/dev/nvme0n1p5`).
    pub source: String,
    pub target: String,
    pub fs_type: String,
    /// Mounted read-only (`ro` among the options).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mounts {
    /// `/proc/mounts`, in mount order.
    pub mounts: Fact<Vec<Mount>>,
    /// Partition label → the device name its link points at (`nvme0n1p5`).
    pub part_labels: Fact<BTreeMap<String, String>>,
}

impl Mounts {
    /// The mount that holds `path`: the one at the longest mount point above it (the
    /// last one there).
    pub fn holding(&self, path: &str) -> Fact<Option<&Mount>> {
        let under = |m: &&Mount| {
            let t = m.target.trim_end_matches('/');
            path == m.target
                || t.is_empty()
                || path.strip_prefix(t).is_some_and(|r| r.starts_with('/'))
        };
        self.mounts.as_ref().map(|all| {
            // `max_by_key` keeps the last of equals: the mount on top.
            all.iter()
                .filter(under)
                .max_by_key(|m| m.target.trim_end_matches('/').len())
        })
    }

    /// The mount visible at `target`: the last one there (later mounts hide earlier ones).
    pub fn at(&self, target: &str) -> Fact<Option<&Mount>> {
        self.mounts
            .as_ref()
            .map(|all| all.iter().rev().find(|m| m.target == target))
    }
}

pub fn collect(host: &dyn Host) -> Mounts {
    let mounts = attribute::text(host, "/proc/mounts").map(|text| parse(&text));
    let part_labels = attribute::list(host, BY_PARTLABEL, true).and_then(|names| {
        let mut labels = BTreeMap::new();
        for name in names {
            let path = format!("{BY_PARTLABEL}/{name}");
            match host.read_link(Path::new(&path)) {
                Ok(target) => {
                    if let Some(device) = target.file_name() {
                        labels.insert(name, device.to_string_lossy().into_owned());
                    }
                }
                Err(err) => return Fact::unknown(err.to_string()),
            }
        }
        Fact::Known(labels)
    });
    Mounts {
        mounts,
        part_labels,
    }
}

/// `/proc/mounts` lines; space, tab, newline and backslash in a field are octal escapes.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            Some(Mount {
                source: unescape(fields.next()?),
                target: unescape(fields.next()?),
                fs_type: unescape(fields.next()?),
                read_only: fields
                    .next()
                    .is_some_and(|options| options.split(',').any(|o| o == "ro")),
            })
        })
        .collect()
}

fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_fields_are_read_back() {
        let mounts = parse("/dev/sda1 /mnt/a\\040b xfs rw 0 0\n/dev/sdb1 /x\\134y ext4 rw 0 0\n");
        assert_eq!(mounts[0].target, "/mnt/a b");
        assert_eq!(mounts[1].target, "/x\\y");
        assert_eq!(mounts[1].fs_type, "ext4");
    }

    #[test]
    fn the_mount_holding_a_path_is_the_deepest_and_latest() {
        let text = "/dev/sda1 / ext4 rw 0 0\n/dev/sdb1 /var/lib/containerd xfs rw 0 0\n\
                    /dev/sdb1 /var/lib/containerd xfs ro,relatime 0 0\n/dev/sdc1 /var/lib/c xfs rw 0 0\n";
        let m = Mounts {
            mounts: Fact::Known(parse(text)),
            part_labels: Fact::Known(BTreeMap::new()),
        };
        let at = |p: &str| {
            m.holding(p)
                .known()
                .unwrap()
                .map(|m| (m.target.clone(), m.read_only))
        };
        assert_eq!(
            at("/var/lib/containerd/io"),
            Some(("/var/lib/containerd".into(), true))
        );
        assert_eq!(at("/var/lib/kubelet"), Some(("/".into(), false)));
        assert_eq!(at("/var/lib/cache"), Some(("/".into(), false)));
    }
}
