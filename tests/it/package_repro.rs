//! Same input ⇒ byte-identical OUT, whatever the umask, zstd worker count,
//! overlay creation order, working directory, time zone or locale.
//!
//! One test in its own binary: it changes the process-wide umask, working
//! directory and environment, which would disturb tests running beside it.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use nodeimg::package::{self, BuildOptions, Compression, ImageMeta, Overlay, SourceDate};
use nodeimg::tree::Tree;

fn meta() -> ImageMeta {
    ImageMeta {
        name: "cpu-minimal".into(),
        version: "1.0.0".into(),
        blueprint_id: format!("sha256:{}", "cd".repeat(32)),
        tag: "1.0.0".parse().unwrap(),
        architecture: "amd64".into(),
        os: "linux".into(),
    }
}

fn tree() -> Tree {
    let mut t = Tree::new();
    for i in 0..40 {
        t.add_file(
            &format!("etc/sysctl.d/{i:02}-x.conf"),
            0o644,
            format!("k{i} = {i}\n").into_bytes(),
        )
        .unwrap();
    }
    t.add_symlink("etc/alias", "sysctl.d/00-x.conf").unwrap();
    t
}

/// The same overlay content, created in ascending or descending order
/// (different inode/directory order) and with different source modes that
/// normalise to the same layer modes.
fn make_overlay(root: &Path, reverse: bool, exec_mode: u32) {
    let mut names: Vec<String> = (0..60).map(|i| format!("d{}/f{i:03}", i % 7)).collect();
    if reverse {
        names.reverse();
    }
    for n in &names {
        let p = root.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        // Compressible and incompressible parts, bigger than one zstd job
        // for one of the files so that workers split the stream.
        let mut body = n.repeat(300).into_bytes();
        if n.ends_with("f001") {
            let mut x: u32 = 7;
            body.extend((0..9 << 20).map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            }));
        }
        std::fs::write(&p, body).unwrap();
        let mode = if n.ends_with('7') { exec_mode } else { 0o640 };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

fn snapshot(root: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut m = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).min_depth(1) {
        let e = e.unwrap();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        let bytes = if meta.is_file() {
            std::fs::read(e.path()).unwrap()
        } else {
            vec![]
        };
        let rel = e
            .path()
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        m.insert(rel, (meta.permissions().mode() & 0o7777, bytes));
    }
    m
}

fn set_umask(mask: u32) {
    // SAFETY: swaps the process file-creation mask; this binary runs one test.
    unsafe { libc::umask(mask as libc::mode_t) };
}

#[test]
fn same_input_gives_identical_bytes_under_different_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let (ov_a, ov_b) = (dir.path().join("ov-a"), dir.path().join("ov-b"));
    set_umask(0o022);
    make_overlay(&ov_a, false, 0o744);
    set_umask(0o077);
    make_overlay(&ov_b, true, 0o700);

    let base = BuildOptions {
        compression: Compression::Zstd,
        zstd_workers: 1,
        source_date: SourceDate::new(1_234_567_890).unwrap(),
    };
    set_umask(0o022);
    let a = package::build(
        &tree(),
        Some(&Overlay::new(&ov_a)),
        &meta(),
        &base,
        &dir.path().join("out-a"),
    )
    .unwrap();

    set_umask(0o077);
    std::env::set_current_dir(&ov_b).unwrap();
    // SAFETY: single-threaded test binary; nothing else reads the environment now.
    unsafe {
        std::env::set_var("TZ", "Asia/Kathmandu");
        std::env::set_var("LC_ALL", "tr_TR.UTF-8");
    }
    let four = BuildOptions {
        zstd_workers: 4,
        ..base.clone()
    };
    let b = package::build(
        &tree(),
        Some(&Overlay::new(&ov_b)),
        &meta(),
        &four,
        &dir.path().join("out-b"),
    )
    .unwrap();
    let two = BuildOptions {
        zstd_workers: 2,
        ..base.clone()
    };
    let c = package::build(
        &tree(),
        Some(&Overlay::new(&ov_a)),
        &meta(),
        &two,
        &dir.path().join("out-c"),
    )
    .unwrap();
    set_umask(0o022);

    assert_eq!(a.image, b.image);
    assert_eq!(a.image, c.image);
    let sa = snapshot(&dir.path().join("out-a"));
    assert!(sa.len() >= 7, "{:?}", sa.keys().collect::<Vec<_>>());
    assert_eq!(sa, snapshot(&dir.path().join("out-b")));
    assert_eq!(sa, snapshot(&dir.path().join("out-c")));

    // check_repro agrees, and it notices a real difference.
    let r = package::check_repro(&tree(), Some(&Overlay::new(&ov_a)), &meta(), &base).unwrap();
    assert!(r.identical, "{:?}", r.differences);
    assert_eq!(r.image, a.image);
    let diffs =
        package::repro::compare_dirs(&dir.path().join("out-a"), &dir.path().join("ov-a")).unwrap();
    assert!(!diffs.is_empty());

    // Changing one overlay byte changes the digests.
    std::fs::write(ov_b.join("d0/f000"), b"changed").unwrap();
    let d = package::build(
        &tree(),
        Some(&Overlay::new(&ov_b)),
        &meta(),
        &base,
        &dir.path().join("out-d"),
    )
    .unwrap();
    assert_ne!(d.image.layer.diff_id, a.image.layer.diff_id);
    assert_ne!(d.image.manifest.digest, a.image.manifest.digest);
}
