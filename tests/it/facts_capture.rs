//! Capture and replay: the facts replayed from an archive are byte for byte the facts of
//! the run that captured it (fixture tree and this machine's own `/`), limits are honoured
//! and recorded, and the `capture` / `facts --snapshot` commands agree with `facts --root`.

use crate::support::verify_fixture;
use nodeimg::verify::capture::{self, archive};
use nodeimg::verify::host::{RecordLimits, SnapshotHost};
use nodeimg::verify::{CollectOptions, LiveHost, collect};
use std::path::Path;
use std::time::Duration;

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| panic!("{e}"))
}

fn replay(bytes: &[u8], options: &CollectOptions) -> String {
    let (_, recording) = archive::unpack(bytes).unwrap_or_else(|e| panic!("{e}"));
    json(&collect(&SnapshotHost::new(recording), options))
}

#[test]
fn fixture_capture_replays_to_identical_facts() {
    let tree = verify_fixture::healthy_tree();
    // Run the vendor tool from the tree, so its output is captured too.
    tree.script(
        "/usr/bin/nvidia-smi",
        &format!(
            "#!/bin/sh\ncat <<'XML'\n{}XML\n",
            verify_fixture::healthy_xml()
        ),
    );
    let options = CollectOptions {
        command_timeout: Duration::from_secs(10),
        ..CollectOptions::default()
    };
    let host = tree.host();
    let captured = capture::capture(&host, "fixture", &options, RecordLimits::default());
    assert_eq!(captured.facts.gpus.gpus.len(), 8);
    assert!(captured.manifest.not_captured.is_empty());
    assert_eq!(captured.manifest.hostname, "gpu-node-01");
    assert_eq!(
        captured
            .manifest
            .tools
            .get("nvidia-smi")
            .map(String::as_str),
        Some("570.172.08")
    );
    let bytes =
        archive::pack(&captured.recording, &captured.manifest).unwrap_or_else(|e| panic!("{e}"));
    let replayed = replay(&bytes, &options);
    assert_eq!(replayed, json(&captured.facts));
    // Recording changes nothing: a plain live run gives the same facts.
    assert_eq!(replayed, json(&collect(&host, &options)));
    // The same recording packs to the same bytes.
    let again =
        archive::pack(&captured.recording, &captured.manifest).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, bytes);
}

#[test]
fn this_machine_capture_replays_to_identical_facts() {
    let options = CollectOptions {
        command_timeout: Duration::from_secs(10),
        ..CollectOptions::default()
    };
    let captured = capture::capture(&LiveHost::new("/"), "/", &options, RecordLimits::default());
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("self.tar.zst");
    capture::write(&path, &captured.recording, &captured.manifest)
        .unwrap_or_else(|e| panic!("{e}"));
    let (manifest, recording) = capture::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(manifest, captured.manifest);
    assert_eq!(
        json(&collect(&SnapshotHost::new(recording), &options)),
        json(&captured.facts)
    );
}

#[test]
fn limits_skip_large_content_with_a_reason() {
    let tree = verify_fixture::healthy_tree();
    let options = verify_fixture::options(&verify_fixture::healthy_xml());
    let limits = RecordLimits {
        max_item_bytes: 4096,
        max_total_bytes: 1024 * 1024,
    };
    let captured = capture::capture(&tree.host(), "fixture", &options, limits);
    let skipped = captured
        .manifest
        .not_captured
        .iter()
        .find(|n| n.target == "/proc/cpuinfo")
        .unwrap_or_else(|| panic!("cpuinfo not skipped: {:?}", captured.manifest.not_captured));
    assert!(skipped.bytes > 4096);
    assert!(
        skipped.reason.contains("per-item limit"),
        "{}",
        skipped.reason
    );
    let model = captured.facts.cpus.model_name.reason().unwrap_or_default();
    assert!(model.contains("not captured"), "{model}");
    assert!(captured.manifest.content_bytes <= limits.max_total_bytes);
    let bytes =
        archive::pack(&captured.recording, &captured.manifest).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(replay(&bytes, &options), json(&captured.facts));
}

#[test]
fn a_truncated_or_foreign_archive_is_an_error() {
    let tree = verify_fixture::healthy_tree();
    let options = verify_fixture::options(&verify_fixture::healthy_xml());
    let captured = capture::capture(&tree.host(), "fixture", &options, RecordLimits::default());
    let bytes =
        archive::pack(&captured.recording, &captured.manifest).unwrap_or_else(|e| panic!("{e}"));
    assert!(archive::unpack(&bytes[..bytes.len() / 2]).is_err());
    assert!(archive::unpack(b"not an archive").is_err());
}

use crate::support::nodeimg;

#[test]
fn capture_command_and_snapshot_agree_with_the_live_tree() {
    let tree = verify_fixture::healthy_tree();
    let root = tree.root().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let archive = dir.path().join("node.tar.zst");
    let archive = archive.to_string_lossy().into_owned();
    let tools = tree.tool_args();
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    let out = nodeimg(
        &[
            &[
                "capture",
                "-o",
                &archive,
                "--root",
                &root,
                "--timeout",
                "10",
            ],
            tools.as_slice(),
        ]
        .concat(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert!(Path::new(&archive).is_file());
    let live = nodeimg(
        &[
            &["facts", "--root", &root, "--timeout", "10"],
            tools.as_slice(),
        ]
        .concat(),
    );
    let replayed = nodeimg(&["facts", "--snapshot", &archive]);
    assert_eq!(live.status.code(), Some(0));
    assert_eq!(replayed.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&replayed.stdout),
        String::from_utf8_lossy(&live.stdout)
    );
    let missing = nodeimg(&["facts", "--snapshot", "/nonexistent/capture.tar.zst"]);
    assert_eq!(missing.status.code(), Some(2));
}
