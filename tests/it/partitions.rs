//! `system.partition.mounted` on the 8×H100 fixture with a containerd partition: mounted
//! from the partition nodeimg labelled, with its file system, or it fails with what is
//! mounted there instead.

use crate::support::verify_fixture::{self, BLUEPRINT};
use nodeimg::verify::checks::Verdict;

const MOUNTS: &str = "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\ntmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1056808704k,inode64 0 0\n";

#[test]
fn each_partition_is_mounted_from_its_label_where_its_data_goes() {
    let bp = BLUEPRINT.replace(
        "  shmSize: 64Gi\n",
        "  shmSize: 64Gi\n  partitions:\n    - label: containerd\n      mountPoint: /var/lib/containerd\n      filesystem: xfs\n",
    );
    let xml = verify_fixture::healthy_xml();
    let tree = verify_fixture::healthy_tree();
    let judge = |mounts: &str| {
        tree.file("/proc/mounts", mounts);
        let results = verify_fixture::results(&tree, &xml, &bp);
        let found: Vec<_> = results
            .into_iter()
            .filter(|r| r.id() == "system.partition.mounted")
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].subject.as_deref(), Some("/var/lib/containerd"));
        (found[0].verdict, found[0].observed.clone())
    };
    // containerd's data on the root file system: the mount never happened.
    assert_eq!(judge(MOUNTS), (Verdict::Fail, "not mounted".to_owned()));
    let mounted = format!("{MOUNTS}/dev/nvme0n1p5 /var/lib/containerd xfs rw,noatime 0 0\n");
    let (verdict, observed) = judge(&mounted);
    assert_eq!(verdict, Verdict::Fail, "{observed}");
    assert!(
        observed.contains("no partition is labelled nodeimg-containerd"),
        "{observed}"
    );
    tree.link(
        "/dev/disk/by-partlabel/nodeimg-containerd",
        "../../nvme0n1p5",
    );
    assert_eq!(
        judge(&mounted),
        (
            Verdict::Pass,
            "/dev/nvme0n1p5 (xfs), nodeimg-containerd".to_owned()
        )
    );
    // Another device mounted there (a manual mount, a reused label).
    let (verdict, observed) = judge(&mounted.replace("nvme0n1p5", "sdb1"));
    assert_eq!(verdict, Verdict::Fail, "{observed}");
    assert!(
        observed.contains("nodeimg-containerd is /dev/nvme0n1p5"),
        "{observed}"
    );
    // The right partition with another file system than the blueprint's.
    let (verdict, _) = judge(&mounted.replace(" xfs ", " ext4 "));
    assert_eq!(verdict, Verdict::Fail);
    // Without partitions in the blueprint nothing is judged.
    let results = verify_fixture::results(&tree, &xml, BLUEPRINT);
    assert!(results.iter().all(|r| r.id() != "system.partition.mounted"));
}
