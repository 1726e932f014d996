//! Host health after join, the `os-memory-disk` fault class's part of the health phase,
//! so node-problem-detector can raise its condition: the hardware errors the kernel
//! logged since the last run — memory errors EDAC reports (`EDAC MC0: 1 UE …`) and
//! machine checks (`Machine Check Exception`, `Memory failure: …`, and the corrected ones
//! `Machine check events logged`) — and the file systems the node writes to (containerd's
//! root, the kubelet folder, the model cache) still mounted read-write: ext4 and xfs
//! remount read-only on an I/O or metadata error (`errors=remount-ro`, xfs shutdown), and
//! from then on every pull, pod start and cache write fails.
//!
//! An uncorrected error is critical (the kernel survived it, the memory or CPU did not);
//! corrected ones are a warning: ECC did its job, and a growing count is what a person
//! replaces a DIMM for.

use super::catalog::host::*;
use super::{Inputs, Observation, Results};
use crate::verify::fact::Fact;
use crate::verify::facts::kernel_log::{KernelEvent, KernelEventKind};

/// Where the kubelet keeps pods' volumes and its state (`--root-dir`'s default; nodeimg
/// does not move it).
pub const KUBELET_DIR: &str = "/var/lib/kubelet";

const KMSG: &str = "/dev/kmsg";

pub fn evaluate(input: &Inputs, out: &mut Results) {
    errors(input, out);
    read_write(input, out);
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
