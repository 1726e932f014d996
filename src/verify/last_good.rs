//! The node's last good record: what changed since verify last passed here.
//!
//! `verify --record FILE` writes the node's acceptance record on every run (the boot unit:
//! `/var/lib/nodeimg/acceptance.yaml`), so a failing run replaces the record of the last
//! passing one. A passing run therefore also keeps its record beside it as
//! `<stem>.last-good.<ext>` (`/var/lib/nodeimg/acceptance.last-good.yaml`), which only a
//! later passing run replaces; a failing run reads it and names what differs: the
//! software and firmware that changed (driver, kernel, image, BIOS, …) and each check that
//! passed then and does not now. Reports carry it (text and summary name it, JSON has
//! `since_last_good`); the record and the verdict are unchanged by it.

use std::path::{Path, PathBuf};

use crate::verify::fact::Fact;
use crate::verify::report::record::AcceptanceRecord;
pub use crate::verify::report::since::SinceLastGood;

/// Where the last good record of `record` is kept: `acceptance.yaml` →
/// `acceptance.last-good.yaml`.
pub fn beside(record: &Path) -> PathBuf {
    let stem = record
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match record.extension() {
        Some(ext) => format!("{stem}.last-good.{}", ext.to_string_lossy()),
        None => format!("{stem}.last-good"),
    };
    record.with_file_name(name)
}

fn text<T: std::fmt::Display>(fact: &Fact<T>) -> String {
    fact.known()
        .map_or_else(|| "unknown".to_owned(), ToString::to_string)
}

/// Each value compared, by what it is called in a report.
type Value = fn(&AcceptanceRecord) -> String;

/// What a node's record says about what it runs, compared in this order.
const COMPARED: &[(&str, Value)] = &[
    ("blueprint", |r| {
        format!(
            "{} {} ({})",
            r.blueprint.name, r.blueprint.version, r.blueprint.id
        )
    }),
    ("image", |r| {
        r.image
            .known()
            .map_or_else(|| "unknown".to_owned(), |i| i.manifest.clone())
    }),
    ("kernel", |r| text(&r.os.kernel)),
    ("kernel command line", |r| text(&r.os.cmdline)),
    ("GPU driver", |r| text(&r.gpu.driver)),
    ("CUDA", |r| text(&r.gpu.cuda)),
    ("GPU count", |r| r.gpu.count.to_string()),
    ("containerd", |r| text(&r.runtime.containerd)),
    ("kubelet", |r| text(&r.runtime.kubelet)),
    ("BIOS", |r| text(&r.firmware.bios_version)),
    ("BMC", |r| text(&r.firmware.bmc)),
    ("GPU VBIOS", |r| {
        r.firmware
            .gpu_vbios
            .iter()
            .map(|(gpu, v)| format!("{gpu} {}", text(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }),
    ("NIC firmware", |r| {
        r.firmware
            .nic
            .iter()
            .map(|(nic, v)| format!("{nic} {}", text(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }),
    ("system serial", |r| text(&r.hardware.serial)),
];

/// What differs between the last good record and the current one.
pub fn compare(
    record: &Path,
    last_good: &AcceptanceRecord,
    now: &AcceptanceRecord,
) -> SinceLastGood {
    let changed = COMPARED
        .iter()
        .filter_map(|(what, value)| {
            let (then, now) = (value(last_good), value(now));
            (then != now).then(|| format!("{what} {then} → {now}"))
        })
        .collect();
    let failing_since = now
        .diagnostics
        .not_passed
        .iter()
        .filter(|c| !last_good.diagnostics.not_passed.contains(c))
        .cloned()
        .collect();
    SinceLastGood {
        record: record.display().to_string(),
        created_at: last_good.created_at.clone(),
        changed,
        failing_since,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_beside_the_record() {
        assert_eq!(
            beside(Path::new("/var/lib/nodeimg/acceptance.yaml")),
            Path::new("/var/lib/nodeimg/acceptance.last-good.yaml")
        );
        assert_eq!(beside(Path::new("r")), Path::new("r.last-good"));
    }
}
