//! The blueprint id covers what the image carries: the overlay's content,
//! modes and link targets change it; reading the overlay at validation
//! refuses what a layer cannot carry; and a rebuild that gives an existing
//! tag different content warns.

use std::path::Path;
use std::process::Output;

use crate::support::Variant;
use serde_json::json;

fn nodeimg(dir: &Path, args: &[&str]) -> Output {
    crate::support::cmd()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// cpu-minimal with an overlay folder `ovl` holding `etc/motd`.
fn with_overlay(dir: &Path, motd: &str) {
    Variant::of("cpu-minimal")
        .set("files.overlay", json!("ovl"))
        .write(&dir.join("bp.yaml"));
    std::fs::create_dir_all(dir.join("ovl/etc")).unwrap();
    std::fs::write(dir.join("ovl/etc/motd"), motd).unwrap();
}

fn id(dir: &Path) -> String {
    let o = nodeimg(dir, &["validate", "bp.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout)
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap()
        .to_string()
}

#[test]
fn overlay_content_mode_and_links_are_part_of_the_id() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    with_overlay(d, "hello\n");
    let first = id(d);
    assert_eq!(id(d), first, "stable");
    std::fs::write(d.join("ovl/etc/motd"), "hello!\n").unwrap();
    let content = id(d);
    assert_ne!(content, first, "content");
    let exec = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(d.join("ovl/etc/motd"), exec).unwrap();
    let mode = id(d);
    assert_ne!(mode, content, "mode");
    symlink("motd", d.join("ovl/etc/issue")).unwrap();
    let link = id(d);
    assert_ne!(link, mode, "a new link");
    std::fs::remove_file(d.join("ovl/etc/issue")).unwrap();
    symlink("../etc/motd", d.join("ovl/etc/issue")).unwrap();
    assert_ne!(id(d), link, "a link target");
}

#[test]
fn validate_refuses_an_overlay_the_layer_cannot_carry() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    with_overlay(d, "hi\n");
    std::os::unix::fs::symlink("../../../../etc/shadow", d.join("ovl/etc/escape")).unwrap();
    let o = nodeimg(d, &["validate", "bp.yaml"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(
        all.contains("files.overlay") && all.contains("escape"),
        "{all}"
    );
}

#[test]
fn a_rebuild_that_gives_a_tag_other_content_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    with_overlay(d, "one\n");
    let build = |d: &Path| {
        let o = nodeimg(d, &["build", "bp.yaml", "-o", "oci"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        (text(&o.stdout), text(&o.stderr))
    };
    let (first, err) = build(d);
    assert!(!err.contains("warning"), "{err}");
    // The same content again: the same digest, no warning.
    let (again, err) = build(d);
    assert_eq!(again, first);
    assert!(!err.contains("warning"), "{err}");
    // Other overlay content under the same metadata.version (the tag).
    std::fs::write(d.join("ovl/etc/motd"), "two\n").unwrap();
    let (second, err) = build(d);
    assert_ne!(second, first);
    assert!(
        err.contains("warning: oci held an image tagged 2026.11.1 with digest")
            && err.contains(first.trim())
            && err.contains(second.trim()),
        "{err}"
    );
}
