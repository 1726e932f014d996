//! Host health after join, the `os-memory-disk` fault class's part of the health phase,
//! so node-problem-detector can raise its condition: the hardware errors the kernel
//! logged since the last run — memory errors EDAC reports (`EDAC MC0: 1 UE …`) and
//! machine checks (`Machine Check Exception`, `Memory failure: …`, and the corrected ones
//! `Machine check events logged`) — and the file systems the node writes to (containerd's
//! root, the kubelet folder, the model cache) still mounted read-write: ext4 and xfs
//! remount read-only on an I/O or metadata error (`errors=remount-ro`, xfs shutdown), and
//! from then on every pull, pod start and cache write fails.
//!
//! The same file systems' free space and inodes are judged against the kubelet's hard
//! eviction thresholds as the blueprint resolves them (`imagefs.*` for containerd's
//! root, `nodefs.*` for the kubelet folder; the kubelet's defaults for the signals a
//! blueprint leaves out, as the rendered configuration writes them): below one, the
//! kubelet is evicting pods. The model cache's file system is judged against
//! `system.cache.highWatermark` (used space, reserved blocks counted as used): above it
//! nothing the node runs prunes the cache, a person must (a warning).
//!
//! An uncorrected error is critical (the kernel survived it, the memory or CPU did not);
//! corrected ones are a warning: ECC did its job, and a growing count is what a person
//! replaces a DIMM for.

use super::catalog::host::*;
use super::{Inputs, Observation, Results};
use crate::blueprint::model::EvictionSignal;
use crate::blueprint::resolve;
use crate::blueprint::value::Threshold;
use crate::verify::fact::Fact;
use crate::verify::facts::disk::DiskUsage;
use crate::verify::facts::kernel_log::{KernelEvent, KernelEventKind};

/// Where the kubelet keeps pods' volumes and its state (`--root-dir`'s default; nodeimg
/// does not move it).
pub const KUBELET_DIR: &str = "/var/lib/kubelet";

const KMSG: &str = "/dev/kmsg";

pub fn evaluate(input: &Inputs, out: &mut Results) {
    errors(input, out);
    read_write(input, out);
    free(input, out);
    cache_watermark(input, out);
}

/// The folders the node writes to, with what each one is.
pub fn written_paths(input: &Inputs) -> Vec<(String, &'static str)> {
    let b = input.blueprint;
    let mut paths = vec![
        (
            b.runtime.containerd.root.to_string(),
            "containerd root (runtime.containerd.root)",
        ),
        (KUBELET_DIR.to_owned(), "kubelet folder"),
    ];
    if let Some(cache) = &b.system.cache {
        paths.push((cache.path.to_string(), "model cache (system.cache.path)"));
    }
    paths
}

fn errors(input: &Inputs, out: &mut Results) {
    let log = match &input.facts.kernel_log {
        Some(Fact::Known(log)) => log,
        Some(Fact::Unknown { reason }) => {
            for spec in [&UNCORRECTED, &CORRECTED] {
                out.record(
                    spec,
                    None,
                    "none",
                    Observation::unknown(reason.clone()),
                    vec![KMSG.to_owned()],
                );
            }
            return;
        }
        None => {
            for spec in [&UNCORRECTED, &CORRECTED] {
                out.record(
                    spec,
                    None,
                    "none",
                    Observation::unknown("the kernel log was not read"),
                    vec![KMSG.to_owned()],
                );
            }
            return;
        }
    };
    for (spec, uncorrected) in [(&UNCORRECTED, true), (&CORRECTED, false)] {
        let memory: Vec<&KernelEvent> = log
            .events
            .iter()
            .filter(|e| {
                e.kind
                    == KernelEventKind::HostMemoryEcc {
                        uncorrectable: uncorrected,
                    }
            })
            .collect();
        let mce: Vec<&KernelEvent> = log
            .events
            .iter()
            .filter(|e| e.kind == KernelEventKind::MachineCheck { uncorrected })
            .collect();
        let lines = |events: &[&KernelEvent]| events.iter().map(|e| e.count).sum::<u64>();
        let (n_memory, n_mce) = (lines(&memory), lines(&mce));
        let observed = if n_memory + n_mce == 0 {
            format!("none in {} kernel log line(s)", log.lines)
        } else {
            let first = memory
                .iter()
                .chain(mce.iter())
                .min_by_key(|e| e.first_seq)
                .map(|e| e.message.as_str())
                .unwrap_or_default();
            format!(
                "{n_memory} EDAC memory error line(s), {n_mce} machine-check line(s); first: {first}"
            )
        };
        out.record(
            spec,
            None,
            "none",
            Observation::value(observed, n_memory + n_mce == 0),
            vec![KMSG.to_owned()],
        );
    }
}

fn read_write(input: &Inputs, out: &mut Results) {
    for (path, what) in written_paths(input) {
        let observation = match input.facts.mounts.holding(&path) {
            Fact::Unknown { reason } => Observation::unknown(reason),
            Fact::Known(None) => {
                Observation::unknown(format!("no mount in /proc/mounts holds {path}"))
            }
            Fact::Known(Some(m)) => Observation::value(
                format!(
                    "{} ({} on {}, {})",
                    if m.read_only {
                        "read-only"
                    } else {
                        "read-write"
                    },
                    m.source,
                    m.target,
                    m.fs_type
                ),
                !m.read_only,
            ),
        };
        out.record(
            &READ_WRITE,
            Some(path.clone()),
            format!("read-write ({what})"),
            observation,
            vec!["/proc/mounts".to_owned()],
        );
    }
}

/// The usage of the local disk file system holding `path`, and its mount point.
fn usage_of<'f>(input: &'f Inputs, path: &str) -> Result<(&'f str, DiskUsage), String> {
    let mount = match input.facts.mounts.holding(path) {
        Fact::Unknown { reason } => return Err(reason),
        Fact::Known(None) => return Err(format!("no mount in /proc/mounts holds {path}")),
        Fact::Known(Some(m)) => m,
    };
    let all = match &input.facts.disk_usage {
        Fact::Unknown { reason } => return Err(reason.clone()),
        Fact::Known(all) => all,
    };
    all.get(&mount.target)
        .map(|u| (mount.target.as_str(), *u))
        .ok_or_else(|| {
            format!(
                "{} ({}) is not a local disk file system df was asked about",
                mount.target, mount.fs_type
            )
        })
}

/// Whether `free` of `total` is at or above `threshold`.
fn above(threshold: &Threshold, free: u64, total: u64) -> bool {
    match threshold {
        Threshold::Percent(p) => total == 0 || (free as f64) * 100.0 >= p.value() * total as f64,
        Threshold::Quantity(q) => i128::from(free) >= q.units_ceil(),
    }
}

fn percent(part: u64, total: u64) -> String {
    if total == 0 {
        return "-".to_owned();
    }
    format!("{:.1} %", part as f64 * 100.0 / total as f64)
}

fn free(input: &Inputs, out: &mut Results) {
    let eviction = resolve::kubelet(input.blueprint).eviction_hard;
    let threshold = |signals: &[EvictionSignal]| {
        signals
            .iter()
            .find_map(|s| eviction.iter().find(|(e, _, _)| e == s))
            .map(|(s, t, how)| (s.as_str(), t.clone(), how.clone()))
    };
    let b = input.blueprint;
    // containerd's root is the kubelet's imagefs (nodefs when the blueprint gives no
    // imagefs threshold); the kubelet folder is nodefs.
    let watched: [(String, &[EvictionSignal], &[EvictionSignal]); 2] = [
        (
            b.runtime.containerd.root.to_string(),
            &[
                EvictionSignal::ImagefsAvailable,
                EvictionSignal::NodefsAvailable,
            ],
            &[
                EvictionSignal::ImagefsInodesFree,
                EvictionSignal::NodefsInodesFree,
            ],
        ),
        (
            KUBELET_DIR.to_owned(),
            &[EvictionSignal::NodefsAvailable],
            &[EvictionSignal::NodefsInodesFree],
        ),
    ];
    let evidence = || vec!["/proc/mounts".to_owned(), "df".to_owned()];
    for (path, space, inodes) in watched {
        let usage = usage_of(input, &path);
        if let Some((signal, t, how)) = threshold(space) {
            let observation = match &usage {
                Err(why) => Observation::unknown(why.clone()),
                Ok((mount, u)) => Observation::value(
                    format!(
                        "{} available of {} ({}) on {mount}",
                        u.avail_bytes,
                        u.size_bytes,
                        percent(u.avail_bytes, u.size_bytes)
                    ),
                    above(&t, u.avail_bytes, u.size_bytes),
                ),
            };
            out.record(
                &FREE_SPACE,
                Some(path.clone()),
                format!("{signal} ≥ {t} ({how})"),
                observation,
                evidence(),
            );
        }
        if let Some((signal, t, how)) = threshold(inodes) {
            let observation = match &usage {
                Err(why) => Observation::unknown(why.clone()),
                Ok((mount, u)) if u.inodes == 0 => {
                    Observation::value(format!("no inode table on {mount}"), true)
                }
                Ok((mount, u)) => Observation::value(
                    format!(
                        "{} free of {} inodes ({}) on {mount}",
                        u.inodes_free,
                        u.inodes,
                        percent(u.inodes_free, u.inodes)
                    ),
                    above(&t, u.inodes_free, u.inodes),
                ),
            };
            out.record(
                &FREE_INODES,
                Some(path.clone()),
                format!("{signal} ≥ {t} ({how})"),
                observation,
                evidence(),
            );
        }
    }
}

fn cache_watermark(input: &Inputs, out: &mut Results) {
    let Some(cache) = &input.blueprint.system.cache else {
        return;
    };
    let path = cache.path.to_string();
    let high = cache.high_watermark.value();
    let observation = match usage_of(input, &path) {
        Err(why) => Observation::unknown(why),
        Ok((mount, u)) => {
            let used = u.size_bytes.saturating_sub(u.avail_bytes);
            Observation::value(
                format!("{} used on {mount}", percent(used, u.size_bytes)),
                u.size_bytes == 0 || (used as f64) * 100.0 <= high * u.size_bytes as f64,
            )
        }
    };
    out.record(
        &CACHE_WATERMARK,
        Some(path),
        format!(
            "used ≤ {} (system.cache.highWatermark)",
            cache.high_watermark
        ),
        observation,
        vec!["/proc/mounts".to_owned(), "df".to_owned()],
    );
}
