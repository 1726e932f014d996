//! A rebuild into the same OUT reads no overlay file: the blueprint id takes
//! the overlay's file digests remembered in OUT's cache index and the layer
//! cache reuses the overlay layer. The kernel says which files were opened
//! (inotify on every overlay folder, watching the real `nodeimg build`), so
//! the test shows reads that happened, not what the code meant to do. A file
//! rewritten with its old size and mtime is read again and changes the id as
//! a build without any cache does; files written just before a build are
//! not trusted by their stamps; a tampered digest list is not used; the
//! overlay is listed once per build (the id's walk is the layer's); a build
//! that packs the overlay layer opens each file once.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nodeimg::package::verifier::stand_in_elf;
use serde_json::{Value, json};

use crate::support::{Variant, build_json};

/// The files (not folders) opened or read under a tree, as the kernel
/// reports them.
struct Watch {
    fd: OwnedFd,
    dirs: BTreeMap<i32, PathBuf>,
}

impl Watch {
    fn new(root: &Path) -> Self {
        // SAFETY: plain syscall; the result is checked and owned at once.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(
            raw >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: `raw` is a new descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut dirs = BTreeMap::new();
        let mut todo = vec![root.to_path_buf()];
        while let Some(dir) = todo.pop() {
            let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
            // SAFETY: `c` is a valid C string for the duration of the call.
            let wd = unsafe {
                libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), libc::IN_OPEN | libc::IN_ACCESS)
            };
            assert!(
                wd >= 0,
                "{}: {}",
                dir.display(),
                std::io::Error::last_os_error()
            );
            for e in std::fs::read_dir(&dir).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    todo.push(e.path());
                }
            }
            dirs.insert(wd, dir);
        }
        Self { fd, dirs }
    }

    /// Files opened or read since the last call, relative to their folder's
    /// watch (`etc/motd`).
    fn files_touched(&self, root: &Path) -> BTreeSet<String> {
        self.drain(root).0
    }

    /// Files opened or read since the last call, and how many times each
    /// folder was opened (to be listed), by path relative to `root` (`""` is
    /// `root` itself).
    fn drain(&self, root: &Path) -> (BTreeSet<String>, BTreeMap<String, usize>) {
        let (files, listed, _) = self.events(root);
        (files, listed)
    }

    /// How many times each file was opened since the last call.
    fn file_opens(&self, root: &Path) -> BTreeMap<String, usize> {
        self.events(root).2
    }

    /// Files opened or read, how many times each folder was opened and how
    /// many times each file was, since the last call.
    fn events(
        &self,
        root: &Path,
    ) -> (
        BTreeSet<String>,
        BTreeMap<String, usize>,
        BTreeMap<String, usize>,
    ) {
        let mut out = BTreeSet::new();
        let mut listed = BTreeMap::new();
        let mut opened = BTreeMap::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: `buf` is valid for writes of its length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "{e}");
                return (out, listed, opened);
            }
            let mut at = 0;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n as usize {
                // SAFETY: the kernel wrote a whole event here; read unaligned.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                assert_eq!(ev.mask & libc::IN_Q_OVERFLOW, 0, "inotify queue overflowed");
                let name = &buf[at + header..at + header + ev.len as usize];
                let name = String::from_utf8_lossy(name.split(|b| *b == 0).next().unwrap());
                let dir = self.dirs[&ev.wd].strip_prefix(root).unwrap();
                if ev.mask & libc::IN_ISDIR == 0 && !name.is_empty() {
                    let file = dir.join(&*name).to_string_lossy().into_owned();
                    if ev.mask & libc::IN_OPEN != 0 {
                        *opened.entry(file.clone()).or_insert(0) += 1;
                    }
                    out.insert(file);
                } else if ev.mask & libc::IN_OPEN != 0 && name.is_empty() {
                    // The folder's own watch: it was opened (a listing).
                    *listed
                        .entry(dir.to_string_lossy().into_owned())
                        .or_insert(0) += 1;
                }
                at += header + ev.len as usize;
            }
        }
    }
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// cpu-minimal with an overlay `ovl` of a few files; `bp.yaml` and,
    /// one line apart, `bp-edit.yaml`.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let base = Variant::of("cpu-minimal").set("files.overlay", json!("ovl"));
        base.clone().write(&d.join("bp.yaml"));
        base.set("kubernetes.kubelet.maxPods", json!(200))
            .write(&d.join("bp-edit.yaml"));
        for (path, body) in [
            ("etc/motd", "hello\n".to_string()),
            ("etc/app/conf", "a = 1\n".to_string()),
            ("opt/data/big.bin", "x".repeat(300_000)),
        ] {
            let p = d.join("ovl").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        std::fs::write(d.join("verifier"), stand_in_elf()).unwrap();
        Self { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn build(&self, bp: &str, out: &str, extra: &[&str]) -> Value {
        build_json(
            &self.path(bp),
            &self.path(out),
            &self.path("verifier"),
            extra,
        )
    }
}

fn all_files() -> BTreeSet<String> {
    ["etc/app/conf", "etc/motd", "opt/data/big.bin"]
        .map(String::from)
        .into()
}

#[test]
fn a_rebuild_reads_no_overlay_file_unless_one_changed() {
    let f = Fixture::new();
    let ovl = f.path("ovl");
    let watch = Watch::new(&ovl);

    // Written just now: built, but neither cache trusts these stamps yet.
    let racy = f.build("bp.yaml", "out", &[]);
    assert_eq!(
        watch.files_touched(&ovl),
        all_files(),
        "the watch sees reads"
    );
    let again = f.build("bp.yaml", "out", &[]);
    assert_eq!(watch.files_touched(&ovl), all_files());
    assert_eq!(again["reused"], json!(["verifier", "config"]));
    assert_eq!(again["manifest"], racy["manifest"]);

    // Once the files are older than the racy margin, a build remembers them.
    std::thread::sleep(nodeimg::overlay::RACY_MARGIN + std::time::Duration::from_millis(200));
    let first = f.build("bp.yaml", "out", &[]);
    assert_eq!(watch.files_touched(&ovl), all_files());
    assert_eq!(first["manifest"], racy["manifest"]);

    // One blueprint line changes: no overlay file is opened, the overlay
    // layer is reused, and the id is the one a build without cache gives.
    let edited = f.build("bp-edit.yaml", "out", &[]);
    let (files, listed) = watch.drain(&ovl);
    assert_eq!(files, BTreeSet::new());
    // And the overlay is listed once: the layer is planned from the walk the
    // id was computed from, not from a second one.
    let once: BTreeMap<String, usize> = ["", "etc", "etc/app", "opt", "opt/data"]
        .into_iter()
        .map(|d| (d.to_string(), 1))
        .collect();
    assert_eq!(listed, once);
    assert_eq!(edited["reused"], json!(["overlay", "verifier"]));
    let fresh = f.build("bp-edit.yaml", "fresh", &["--no-cache"]);
    watch.files_touched(&ovl);
    assert_eq!(edited["blueprintId"], fresh["blueprintId"]);
    assert_eq!(edited["manifest"], fresh["manifest"]);
    assert_ne!(edited["blueprintId"], first["blueprintId"]);

    // A file rewritten with its old size and mtime: read again (its ctime
    // moved), and the image is the one a build without cache gives.
    let conf = ovl.join("etc/app/conf");
    let mtime = std::fs::metadata(&conf).unwrap().modified().unwrap();
    std::fs::write(&conf, "a = 2\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&conf)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    // (The overlay layer is packed again, so every file is read for it; the
    // id shows the rewritten one was hashed again rather than remembered.)
    let changed = f.build("bp-edit.yaml", "out", &[]);
    assert!(watch.files_touched(&ovl).contains("etc/app/conf"));
    let fresh = f.build("bp-edit.yaml", "fresh", &["--no-cache"]);
    assert_eq!(changed["blueprintId"], fresh["blueprintId"]);
    assert_eq!(changed["manifest"], fresh["manifest"]);
    assert_ne!(changed["blueprintId"], edited["blueprintId"]);
}

/// A build that packs the overlay layer hashes the files for the blueprint
/// id in the same pass: each file is opened once, with no cache at all and
/// with OUT's cache when the overlay changed. The image is the one a build
/// that hashes first and packs after gives (`--check-repro` does), and the
/// next build still reads nothing.
#[test]
fn a_build_that_packs_the_overlay_opens_each_file_once() {
    let f = Fixture::new();
    let ovl = f.path("ovl");
    let watch = Watch::new(&ovl);
    let once = |opens: BTreeMap<String, usize>| {
        assert_eq!(opens.keys().cloned().collect::<BTreeSet<_>>(), all_files());
        assert!(opens.values().all(|n| *n == 1), "{opens:?}");
    };
    std::thread::sleep(nodeimg::overlay::RACY_MARGIN + std::time::Duration::from_millis(200));
    let cold = f.build("bp.yaml", "cold", &["--no-cache"]);
    once(watch.file_opens(&ovl));
    let checked = f.build("bp.yaml", "checked", &["--check-repro"]);
    let opened_twice = watch.file_opens(&ovl);
    assert!(opened_twice.values().all(|n| *n >= 2), "{opened_twice:?}");
    assert_eq!(cold["blueprintId"], checked["blueprintId"]);
    assert_eq!(cold["manifest"], checked["manifest"]);
    assert_eq!(cold["layers"], checked["layers"]);

    // The digests read while packing are remembered: a rebuild reads nothing.
    let again = f.build("bp.yaml", "cold", &[]);
    assert_eq!(watch.file_opens(&ovl), BTreeMap::new());
    assert_eq!(again["manifest"], cold["manifest"]);

    // One file changed: OUT's overlay layer cannot be reused, so it is
    // packed, and every file read once for both.
    std::fs::write(ovl.join("etc/motd"), "changed\n").unwrap();
    watch.file_opens(&ovl);
    let changed = f.build("bp.yaml", "cold", &[]);
    once(watch.file_opens(&ovl));
    let fresh = f.build("bp.yaml", "fresh", &["--check-repro"]);
    watch.file_opens(&ovl);
    assert_eq!(changed["blueprintId"], fresh["blueprintId"]);
    assert_eq!(changed["manifest"], fresh["manifest"]);
    assert_ne!(changed["manifest"], cold["manifest"]);
}

#[test]
fn a_tampered_digest_cache_is_ignored() {
    let f = Fixture::new();
    std::thread::sleep(nodeimg::overlay::RACY_MARGIN + std::time::Duration::from_millis(200));
    let first = f.build("bp.yaml", "out", &[]);
    let index = f.path("out").join(nodeimg::package::cache::INDEX_FILE);
    let text = std::fs::read_to_string(&index).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    // One line per file: `<sha256 hex> <size> <dev> <ino> <mtime> <ctime> <path>`.
    let files = doc["overlayFiles"]["files"].as_str().unwrap().to_owned();
    assert_eq!(files.lines().count(), 3, "{text}");
    // A wrong digest for each file whose identity still matches.
    let wrong: String = files
        .lines()
        .map(|l| format!("{}{}\n", "1".repeat(64), &l[64..]))
        .collect();
    doc["overlayFiles"]["files"] = json!(wrong);
    std::fs::remove_file(&index).unwrap();
    std::fs::write(&index, serde_json::to_vec(&doc).unwrap()).unwrap();
    let watch = Watch::new(&f.path("ovl"));
    let second = f.build("bp.yaml", "out", &[]);
    assert_eq!(watch.files_touched(&f.path("ovl")), all_files());
    assert_eq!(second["blueprintId"], first["blueprintId"]);
}
