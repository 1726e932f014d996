//! `system.partition.mounted`: each partition of `system.partitions` is mounted at its
//! mount point, from the partition nodeimg labelled (`nodeimg-<label>`), with its file
//! system. The image's mount units and `RequiresMountsFor=` keep containerd and kubelet from
//! starting on the root file system when the partition is missing; this says so in the
//! record, and catches a mount from another device (a reused label, a manual mount).

use super::catalog::system::PARTITION;
use super::{Inputs, Observation, Results};
use crate::blueprint::model::Filesystem;
use crate::verify::fact::Fact;
use crate::verify::facts::mounts::BY_PARTLABEL;

/// Prefix of every partition label nodeimg creates and mounts.
pub const PART_LABEL_PREFIX: &str = "nodeimg-";

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let mounts = &input.facts.mounts;
    for p in &input.blueprint.system.partitions {
        let label = format!("{PART_LABEL_PREFIX}{}", p.label.as_str());
        let target = p.mount_point.as_str();
        let fs = match p.filesystem {
            Filesystem::Xfs => "xfs",
            Filesystem::Ext4 => "ext4",
        };
        let observed = mounts.at(target).and_then(|mount| {
            let Some(mount) = mount else {
                return Fact::Known(("not mounted".to_owned(), false));
            };
            mounts.part_labels.as_ref().map(|labels| {
                let seen = format!("{} ({})", mount.source, mount.fs_type);
                match labels.get(&label) {
                    None => (format!("{seen}; no partition is labelled {label}"), false),
                    Some(device) => {
                        let same = mount.source.rsplit('/').next() == Some(device.as_str());
                        let text = if same {
                            format!("{seen}, {label}")
                        } else {
                            format!("{seen}; {label} is /dev/{device}")
                        };
                        (text, same && mount.fs_type == fs)
                    }
                }
            })
        });
        out.record(
            &PARTITION,
            Some(target.to_owned()),
            format!("{label} ({fs})"),
            Observation::of(&observed, |(text, _)| text.clone(), |(_, pass)| *pass),
            vec!["/proc/mounts".to_owned(), format!("{BY_PARTLABEL}/{label}")],
        );
    }
}
