//! `nodeimg diff` between example variants classifies each change: kernel →
//! reboot, kubelet settings → drain (with both sides' arithmetic), labels and
//! log rotation → live; identical blueprints exit 0, different ones exit 1.

use std::process::Command;

use crate::common::*;
use nodeimg::diff::{compare, impact::Impact};

fn diff_of(subs: &[(&str, &str)]) -> nodeimg::diff::Report {
    let old = example("h100-sxm-ubuntu");
    let new = variant("h100-sxm-ubuntu", subs);
    compare(&old, &rendered(&old), &new, &rendered(&new))
}

#[test]
fn kernel_change_needs_a_reboot() {
    let r = diff_of(&[("kernel: 5.15.0-171-generic", "kernel: 5.15.0-172-generic")]);
    assert_eq!(r.fields.len(), 1);
    assert_eq!(r.fields[0].path, "os.kernel");
    assert_eq!(r.fields[0].impact, Impact::Reboot);
    assert_eq!(r.impact, Some(Impact::Reboot));
}

#[test]
fn kernel_argument_change_needs_a_reboot_through_its_files() {
    let r = diff_of(&[("- init_on_alloc=0", "- init_on_alloc=1")]);
    let files: Vec<(&str, Impact)> = r
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.impact))
        .collect();
    assert!(
        files.contains(&("layer/etc/kernel/cmdline", Impact::Reboot)),
        "{files:?}"
    );
    assert!(
        files.contains(&("layer/etc/default/grub.d/50-nodeimg.cfg", Impact::Reboot)),
        "{files:?}"
    );
    assert_eq!(r.impact, Some(Impact::Reboot));
}

#[test]
fn max_pods_drains_and_shows_both_sides_of_the_arithmetic() {
    let r = diff_of(&[("maxPods: 110", "maxPods: 250")]);
    assert_eq!(r.impact, Some(Impact::Drain));
    let mem = r
        .computed
        .iter()
        .find(|c| c.path == "kubernetes.kubelet.kubeReserved.memory")
        .unwrap();
    assert_eq!((mem.old.as_str(), mem.new.as_str()), ("1465Mi", "3005Mi"));
    assert_eq!(
        mem.old_how,
        "policy eks: 11Mi × maxPods 110 + 255Mi = 1465Mi"
    );
    assert_eq!(
        mem.new_how,
        "policy eks: 11Mi × maxPods 250 + 255Mi = 3005Mi"
    );
    let kubelet = r
        .files
        .iter()
        .find(|f| f.path == "layer/var/lib/kubelet/config.yaml")
        .unwrap();
    assert_eq!(kubelet.impact, Impact::Drain);
    assert!(
        kubelet.diff.contains("-maxPods: 110") && kubelet.diff.contains("+maxPods: 250"),
        "{}",
        kubelet.diff
    );
}

#[test]
fn labels_and_log_rotation_apply_live() {
    let r = diff_of(&[
        ("node-class: h100-sxm", "node-class: h100-sxm-b"),
        ("keep: 7", "keep: 14"),
    ]);
    assert_eq!(r.impact, Some(Impact::Live), "{:?}", r.fields);
    assert!(r.fields.iter().all(|f| f.impact == Impact::Live));
    assert!(
        r.files
            .iter()
            .any(|f| f.path == "layer/etc/logrotate.d/nodeimg")
    );
}

#[test]
fn containerd_upgrade_drains() {
    let r = diff_of(&[("version: 2.1.4", "version: 2.1.5")]);
    assert_eq!(r.impact, Some(Impact::Drain));
    assert!(
        r.fields
            .iter()
            .any(|f| f.path == "runtime.containerd.version" && f.impact == Impact::Drain)
    );
}

#[test]
fn cli_exit_codes_and_json() {
    let bin = env!("CARGO_BIN_EXE_nodeimg");
    let same = Command::new(bin)
        .args([
            "diff",
            "blueprints/cpu-minimal.yaml",
            "blueprints/cpu-minimal.yaml",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&same.stdout).contains("No change"));
    let other = Command::new(bin)
        .args([
            "diff",
            "--format",
            "json",
            "blueprints/cpu-minimal.yaml",
            "blueprints/h100-sxm-ubuntu.yaml",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(v["impact"], "reboot");
    assert!(v["fields"].as_array().unwrap().len() > 20);
    let bad = Command::new(bin)
        .args([
            "diff",
            "blueprints/cpu-minimal.yaml",
            "tests/fixtures/invalid/bad-quantity.yaml",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
