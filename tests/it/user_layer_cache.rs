//! The user's layer cache (`$XDG_CACHE_HOME/nodeimg`), through the real
//! `nodeimg build`: a build into a new OUT takes the layers an earlier build
//! packed and gives the image a build without any cache gives; a cached blob
//! that no longer holds its digest is packed again, not used; the cache stays
//! under its bound; `--no-cache` takes nothing from it; an unreadable bound
//! is unusable input. Blobs are checked by hashing them here.

use std::path::{Path, PathBuf};
use std::process::Output;

use nodeimg::package::verifier::stand_in_elf;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::support::{Variant, cmd};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// cpu-minimal with an overlay of a few files, settled (older than the
    /// racy margin) so the cache may trust their stamps.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        Variant::of("cpu-minimal")
            .set("files.overlay", json!("ovl"))
            .write(&d.join("bp.yaml"));
        for (path, body) in [
            ("etc/motd", "hello\n".to_string()),
            ("opt/data/big.bin", "x".repeat(300_000)),
        ] {
            let p = d.join("ovl").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        std::fs::write(d.join("verifier"), stand_in_elf()).unwrap();
        std::thread::sleep(nodeimg::overlay::RACY_MARGIN + std::time::Duration::from_millis(200));
        Self { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn cache(&self) -> PathBuf {
        self.path("xdg/nodeimg")
    }

    fn run(&self, out: &str, env: &[(&str, &str)], extra: &[&str]) -> Output {
        let mut c = cmd();
        c.args(["build", "--format", "json"])
            .arg(self.path("bp.yaml"))
            .arg("-o")
            .arg(self.path(out))
            .arg("--verifier")
            .arg(self.path("verifier"))
            .args(extra)
            .env("XDG_CACHE_HOME", self.path("xdg"));
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("run nodeimg")
    }

    fn build(&self, out: &str, env: &[(&str, &str)], extra: &[&str]) -> Value {
        let o = self.run(out, env, extra);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    }
}

/// The files of a folder, by name.
fn names(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn blob_bytes(cache: &Path) -> u64 {
    names(&cache.join("blobs/sha256"))
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

/// Every blob of the layout at `out` is there and hashes to its name.
fn assert_whole(out: &Path) {
    let blobs = names(&out.join("blobs/sha256"));
    assert!(blobs.len() >= 6, "{blobs:?}");
    for blob in blobs {
        let hex = blob.file_name().unwrap().to_str().unwrap().to_owned();
        let sum = Sha256::digest(std::fs::read(&blob).unwrap());
        let got: String = sum.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, hex, "{}", blob.display());
    }
}

#[test]
fn a_build_into_a_new_folder_takes_the_layers_packed_before() {
    let f = Fixture::new();
    let first = f.build("a", &[], &[]);
    assert_eq!(first["reused"], json!([]));
    // Every layer is kept, by content, with its blob.
    assert_eq!(names(&f.cache().join("layers")).len(), 3);
    assert_eq!(names(&f.cache().join("blobs/sha256")).len(), 3);
    assert_eq!(
        names(&f.cache().join("files")).len(),
        1,
        "the verifier's digests"
    );

    let second = f.build("b", &[], &[]);
    assert_eq!(second["reused"], json!(["overlay", "verifier", "config"]));
    assert_eq!(second["manifest"], first["manifest"]);
    // With no overlay layer of its size in the cache, the files are read
    // once, in the pass that packs the layer; with one, they are hashed
    // first and the layer is taken, not packed.
    let packed_in_pass = |out: &str| {
        let o = f.run(out, &[], &["-v"]);
        assert_eq!(o.status.code(), Some(0));
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(err.contains("file(s) read for the blueprint id"), "{err}");
        err.contains("in the pass that packed the overlay layer")
    };
    assert!(!packed_in_pass("b2"), "a warm cache: hashed first");
    std::fs::remove_dir_all(f.cache()).unwrap();
    assert!(
        packed_in_pass("b3"),
        "a cold cache: packed in the same pass"
    );
    // The same image as a build that has no cache at all.
    let none = f.build("c", &[("NODEIMG_CACHE_MAX", "0")], &["--no-cache"]);
    assert_eq!(none["reused"], json!([]));
    assert_eq!(none["manifest"], first["manifest"]);
    // The layout taken from the cache is whole: every blob it holds is
    // there and hashes to its name.
    for out in ["a", "b"] {
        assert_whole(&f.path(out));
    }
    // `--no-cache` takes nothing from the user's cache either.
    let uncached = f.build("d", &[], &["--no-cache"]);
    assert_eq!(uncached["reused"], json!([]));
    assert_eq!(uncached["manifest"], first["manifest"]);
}

#[test]
fn a_cached_blob_that_lost_its_digest_is_packed_again() {
    let f = Fixture::new();
    let first = f.build("a", &[], &[]);
    // Same size, other bytes: only the digest can tell.
    for blob in names(&f.cache().join("blobs/sha256")) {
        let mut bytes = std::fs::read(&blob).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        // A fresh file: the one in the cache is a hard link of `a`'s blob.
        std::fs::remove_file(&blob).unwrap();
        std::fs::write(&blob, &bytes).unwrap();
    }
    let second = f.build("b", &[], &[]);
    assert_eq!(second["reused"], json!([]));
    assert_eq!(second["manifest"], first["manifest"]);
    // The blobs were checked while the layout was written, and the bad
    // ones packed again before it was committed.
    assert_whole(&f.path("b"));
    // The bad blobs went, and the new build put good ones back.
    let third = f.build("c", &[], &[]);
    assert_eq!(third["reused"], json!(["overlay", "verifier", "config"]));
    assert_eq!(third["manifest"], first["manifest"]);
}

#[test]
fn the_cache_stays_under_its_bound_and_a_bad_bound_is_unusable() {
    let f = Fixture::new();
    let first = f.build("a", &[], &[]);
    let all = blob_bytes(&f.cache());
    assert!(all > 0);
    std::fs::remove_dir_all(f.cache()).unwrap();
    // Room for less than all three layers: the oldest go, the bound holds.
    let bound = all - 1;
    let second = f.build("b", &[("NODEIMG_CACHE_MAX", &bound.to_string())], &[]);
    assert_eq!(second["manifest"], first["manifest"]);
    let kept = blob_bytes(&f.cache());
    assert!(
        kept <= bound && kept > 0,
        "{kept} of {all} kept under {bound}"
    );
    assert!(names(&f.cache().join("layers")).len() < 3);
    // The cache is the user's alone.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(f.cache()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);

    let o = f.run("c", &[("NODEIMG_CACHE_MAX", "lots")], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("NODEIMG_CACHE_MAX") && err.contains("lots"),
        "{err}"
    );
    assert!(!f.path("c").exists());
}

#[test]
fn a_verifier_read_from_its_file_packs_as_one_held_in_memory() {
    // A settled verifier is checked through a mapping and packed from its
    // file; the same bytes written just now are held in memory. One image.
    let f = Fixture::new();
    let none = [("NODEIMG_CACHE_MAX", "0")];
    let from_file = f.build("a", &none, &["--no-cache"]);
    std::fs::copy(f.path("verifier"), f.path("verifier.new")).unwrap();
    std::fs::rename(f.path("verifier.new"), f.path("verifier")).unwrap();
    let held = f.build("b", &none, &["--no-cache"]);
    assert_eq!(held["manifest"], from_file["manifest"]);
    assert_eq!(held["layers"], from_file["layers"]);
}
