//! Smoke test on the machine running the tests: collection succeeds at `/`, finds no GPU on
//! a CPU-only machine, and lists exactly the interfaces in `/sys/class/net`.

use nodeimg::verify::{CollectOptions, LiveHost, collect};
use std::time::Duration;

#[test]
fn collects_this_machine() {
    let options = CollectOptions {
        command_timeout: Duration::from_secs(10),
        ..CollectOptions::default()
    };
    let facts = collect(&LiveHost::new("/"), &options);
    let json = serde_json::to_string(&facts).unwrap_or_default();
    assert!(json.len() > 100);

    let mut expected: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    expected.sort();
    let nics: Vec<String> = facts
        .nics
        .known()
        .map(|n| n.iter().map(|nic| nic.name.clone()).collect())
        .unwrap_or_default();
    assert_eq!(nics, expected);

    let has_gpu = std::fs::read_dir("/sys/bus/pci/devices").is_ok_and(|dir| {
        dir.filter_map(|e| e.ok()).any(|e| {
            let class = std::fs::read_to_string(e.path().join("class")).unwrap_or_default();
            let vendor = std::fs::read_to_string(e.path().join("vendor")).unwrap_or_default();
            (class.starts_with("0x03") || class.starts_with("0x12"))
                && matches!(vendor.trim(), "0x10de" | "0x1002")
        })
    });
    if !has_gpu {
        assert!(facts.gpus.gpus.is_empty());
        assert_eq!(facts.gpus.nvidia_smi, None);
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    assert_eq!(
        facts.kernel.release.known().map(String::as_str),
        Some(release.trim())
    );
    let pci_count = std::fs::read_dir("/sys/bus/pci/devices")
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(facts.pci_devices.known().map(Vec::len), Some(pci_count));
}
