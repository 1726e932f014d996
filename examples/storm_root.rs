//! Writes the synthetic 8×H100 node into a folder for scripts/bench-verify's storm part:
//! `root/` (the fixture tree, its kernel log about 50 MiB with a 100,000-line Xid storm from
//! one process among ordinary kernel lines), `bp.yaml` and `smi.xml` beside it; prints the
//! `--tool` arguments of the tree's stand-in programs, one per line.
//! `cargo run --release --example storm_root -- OUT`.

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::path::PathBuf;
use support::verify_fixture;

/// Lines of the storm, and the log's size.
const STORM: usize = 100_000;
const BYTES: usize = 50 * 1024 * 1024;

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).expect("usage: storm_root OUT"));
    let tree = verify_fixture::healthy_tree();
    let xid = "NVRM: Xid (PCI:0000:33:00): 13, pid=2918, name=python3, Graphics SM Warp Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address";
    let other = [
        "audit: type=1400 audit(1733390000.123:4567): apparmor=\"ALLOWED\" operation=\"open\" class=\"file\" profile=\"cri-containerd.apparmor.d\" name=\"/proc/sys/kernel/random/boot_id\" pid=81234 comm=\"python3\" requested_mask=\"r\" denied_mask=\"r\" fsuid=0 ouid=0",
        "IPv6: ADDRCONF(NETDEV_CHANGE): cali4f6a2b1c9e3: link becomes ready",
        "eth0: renamed from tmp4a1f2",
        "cni0: port 3(veth9c2d1e7a) entered forwarding state",
    ];
    let mut text = String::with_capacity(BYTES + 4096);
    let (mut seq, mut storm) = (1u64, 0usize);
    while text.len() < BYTES {
        let message = if storm < STORM && seq % 4 == 0 {
            storm += 1;
            xid
        } else {
            other[(seq % other.len() as u64) as usize]
        };
        text.push_str(&format!(
            "6,{seq},{},-;{message}\n",
            5_000_000 + seq * 1_000
        ));
        seq += 1;
    }
    assert_eq!(storm, STORM, "the log is too small for the storm");
    tree.file("/dev/kmsg", &text);
    tree.file("/proc/sys/kernel/random/boot_id", "bench-boot\n");
    std::fs::create_dir_all(&out).expect("create OUT");
    let root = out.join("root");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(tree.root())
        .arg(&root)
        .status()
        .expect("run cp");
    assert!(copied.success(), "cp -a failed");
    std::fs::write(out.join("bp.yaml"), verify_fixture::BLUEPRINT).expect("write bp.yaml");
    std::fs::write(out.join("smi.xml"), verify_fixture::healthy_xml()).expect("write smi.xml");
    let from = tree.root().display().to_string();
    for arg in tree.tool_args() {
        println!("{}", arg.replace(&from, &root.display().to_string()));
    }
}
