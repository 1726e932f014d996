//! The user's layer cache: every layer a build packs is kept in
//! `$XDG_CACHE_HOME/nodeimg` (`~/.cache/nodeimg` without it), found by
//! the digest of what goes into it ([`super::cache::content_key`]), so a build
//! into another output folder, or of another checkout of the same files,
//! takes the layer instead of packing it again. OUT's own index
//! ([`super::cache`]) is looked at first; this is the second level.
//!
//! ```text
//! nodeimg/layers/<key>.json      what the layer is: role, blob digest and size, diff_id, tar size, entries
//! nodeimg/blobs/sha256/<digest>  the blob, a hard link of the one built (a copy across file systems)
//! nodeimg/files/<identity>       a verifier binary's SHA-256 and SHA-1, by its identity on disk
//! nodeimg/tmp/                   where entries are written before they are renamed into place
//! ```
//!
//! - **Never trusted without its digest**: a blob taken from the cache is
//!   linked into the new layout and hashed there; a blob whose SHA-256 or
//!   size is not the one recorded is removed with its entry, and the layer
//!   packed as if the cache were cold.
//! - **Safe under concurrent builds**: entries and blobs appear by
//!   `rename` (whole or not at all), are never changed once there, and are
//!   named by what they hold; a build that finds an entry gone (evicted
//!   meanwhile) packs the layer. Removing a cache file never touches the
//!   layouts it was linked into.
//! - **Size-bounded**: at most [`ENV_MAX`] bytes of blobs (default
//!   [`DEFAULT_MAX_BYTES`]; `0` turns the cache off); beyond that the
//!   least recently used entries go (an entry's mtime is its last use),
//!   and a blob when no entry names it any more.
//! - **Only the user's**: the folder is created 0700 and used only when it
//!   is a directory owned by the user who builds and writable by no one
//!   else; otherwise the build runs as with a cold cache.
//! - A layer is put in only when every overlay file in it has a known
//!   SHA-256 and was settled when the build began
//!   ([`RACY_MARGIN`](crate::overlay::RACY_MARGIN)). Failing to write the
//!   cache never fails a build.
//!
//! The verifier (tens of MB) would be hashed on every build for its
//! layer's key and the SBOM; its digests are remembered by the file's
//! identity (path, size, device, inode, mtime, ctime), under the same
//! settled rule as the overlay's file digests; those unused for 30 days go.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::compress::Compression;
use super::digest::Digest;
use super::layer::LayerInfo;
use super::plan::LayerRole;
use super::verifier::Sums;
use crate::overlay::Stamp;

/// The environment variable bounding the cache's size: bytes, or a number
/// with `K`, `M`, `G` or `T` (powers of 1024); `0` turns the cache off.
pub const ENV_MAX: &str = "NODEIMG_CACHE_MAX";
/// The bound without [`ENV_MAX`].
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;
/// Entries are a few hundred bytes; a larger file is not one of ours.
const MAX_ENTRY_BYTES: u64 = 4096;
/// At most this many entries are read to tell whether the cache may hold a
/// layer ([`UserCache::may_hold`]); with more, it may.
const MAX_ENTRIES_SCANNED: usize = 4096;
/// Temporary files older than this are left over by a killed build.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);
/// A verifier's remembered digests unused this long are removed.
const STALE_FILE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// The cache folder and its bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserCache {
    root: PathBuf,
    max_bytes: u64,
}

/// A blob taken from the cache into a layout whose digest is still being
/// checked, on a thread of its own, while the build goes on: the build
/// asks [`Unchecked::holds`] before the layout is committed.
#[derive(Debug)]
pub struct Unchecked {
    check: std::thread::JoinHandle<bool>,
    /// The blob in the layout.
    linked: PathBuf,
    /// The blob in the cache, and the entry naming it.
    blob: PathBuf,
    entry: PathBuf,
}

impl Unchecked {
    /// True when the blob holds the digest and size its entry records.
    /// Otherwise it is removed from the layout, and the cache's blob and
    /// entry with it: neither this build nor the next meets it again.
    pub fn holds(self) -> bool {
        if self.check.join().unwrap_or(false) {
            return true;
        }
        let _ = fs::remove_file(&self.linked);
        let _ = fs::remove_file(&self.blob);
        let _ = fs::remove_file(&self.entry);
        false
    }
}

/// One layer, as its entry records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    role: LayerRole,
    compression: Compression,
    digest: Digest,
    size: u64,
    diff_id: Digest,
    tar_size: u64,
    entries: usize,
}

impl UserCache {
    pub fn new(root: impl Into<PathBuf>, max_bytes: u64) -> Self {
        Self {
            root: root.into(),
            max_bytes,
        }
    }

    /// The cache the environment names: `$XDG_CACHE_HOME/nodeimg` (an
    /// absolute path, as the XDG specification requires) or
    /// `$HOME/.cache/nodeimg`, bounded by [`ENV_MAX`]. `None` when neither
    /// variable is usable or the bound is 0; an unreadable bound is an error.
    pub fn from_env() -> Result<Option<Self>, String> {
        let max_bytes = match std::env::var(ENV_MAX) {
            Ok(v) => parse_size(&v).ok_or_else(|| {
                format!("{ENV_MAX}=`{v}` is not a size (bytes, or a number with K, M, G or T)")
            })?,
            Err(std::env::VarError::NotPresent) => DEFAULT_MAX_BYTES,
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(format!("{ENV_MAX} is not UTF-8 text"));
            }
        };
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|h| h.join(".cache"))
            });
        Ok(base
            .filter(|_| max_bytes > 0)
            .map(|b| Self::new(b.join("nodeimg"), max_bytes)))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn entry_path(&self, key: &Digest) -> PathBuf {
        self.root.join("layers").join(format!("{}.json", key.hex()))
    }

    fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.root.join("blobs/sha256").join(digest.hex())
    }

    /// True when the folder exists and is the user's alone; with `create`,
    /// makes it (0700) first when it is missing.
    fn usable(&self, create: bool) -> bool {
        if create && fs::symlink_metadata(&self.root).is_err() {
            if let Some(parent) = self.root.parent() {
                let _ = fs::create_dir_all(parent);
            }
            let _ = fs::DirBuilder::new().mode(0o700).create(&self.root);
        }
        match fs::symlink_metadata(&self.root) {
            Ok(m) => m.is_dir() && owned_by_me(&m) && m.mode() & 0o022 == 0,
            Err(_) => false,
        }
    }

    /// Puts the cached blob of the layer `key` into `blob_dir`, checked
    /// against its digest; `None` when there is none (or it did not check).
    pub fn take(
        &self,
        key: &Digest,
        role: LayerRole,
        compression: Compression,
        blob_dir: &Path,
    ) -> Option<(LayerInfo, Unchecked)> {
        if !self.usable(false) {
            return None;
        }
        let entry_path = self.entry_path(key);
        let entry = read_entry(&entry_path)?;
        if entry.role != role || entry.compression != compression {
            return None;
        }
        let from = self.blob_path(&entry.digest);
        let to = blob_dir.join(entry.digest.hex());
        if fs::symlink_metadata(&to).is_ok() {
            return None;
        }
        if fs::hard_link(&from, &to).is_err() && copy_new(&from, &to).is_err() {
            let _ = fs::remove_file(&to);
            return None;
        }
        touch(&entry_path);
        let check = {
            let (to, digest, size) = (to.clone(), entry.digest.clone(), entry.size);
            std::thread::spawn(move || holds(&to, &digest, size))
        };
        let info = LayerInfo {
            role,
            media_type: compression.media_type(),
            compression,
            level: compression.level(),
            digest: entry.digest,
            size: entry.size,
            diff_id: entry.diff_id,
            tar_size: entry.tar_size,
            entries: entry.entries,
        };
        let unchecked = Unchecked {
            check,
            linked: to,
            blob: from,
            entry: entry_path,
        };
        Some((info, unchecked))
    }

    /// False when no entry is a layer of this role and compression with
    /// `entries` entries and a tar of `tar_size` bytes, so that no layer
    /// with those can be taken from the cache (found without knowing its
    /// key, which needs the digests of its files). True when one is, or
    /// the entries cannot be listed, or there are too many to read.
    pub fn may_hold(
        &self,
        role: LayerRole,
        compression: Compression,
        entries: usize,
        tar_size: u64,
    ) -> bool {
        if !self.usable(false) {
            return false;
        }
        let Ok(dir) = fs::read_dir(self.root.join("layers")) else {
            return fs::symlink_metadata(self.root.join("layers")).is_ok();
        };
        for (read, e) in dir.flatten().enumerate() {
            // Reading them all would cost more than the hashing it saves.
            if read == MAX_ENTRIES_SCANNED {
                return true;
            }
            if read_entry(&e.path()).is_some_and(|e| {
                e.role == role
                    && e.compression == compression
                    && e.entries == entries
                    && e.tar_size == tar_size
            }) {
                return true;
            }
        }
        false
    }

    /// Keeps the layer `info`, whose blob is `blob`, under `key`; then
    /// evicts what is over the bound. Best effort: errors are ignored.
    pub fn put(&self, key: &Digest, info: &LayerInfo, blob: &Path) {
        if info.size > self.max_bytes || !self.usable(true) {
            return;
        }
        let entry_path = self.entry_path(key);
        if read_entry(&entry_path)
            .is_some_and(|e| fs::symlink_metadata(self.blob_path(&e.digest)).is_ok())
        {
            touch(&entry_path);
            return;
        }
        let entry = Entry {
            role: info.role,
            compression: info.compression,
            digest: info.digest.clone(),
            size: info.size,
            diff_id: info.diff_id.clone(),
            tar_size: info.tar_size,
            entries: info.entries,
        };
        let Ok(text) = serde_json::to_vec(&entry) else {
            return;
        };
        let stored = (|| -> io::Result<()> {
            for dir in ["layers", "blobs/sha256", "tmp", "files"] {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(self.root.join(dir))?;
            }
            let target = self.blob_path(&info.digest);
            if fs::symlink_metadata(&target).is_err() {
                let tmp = self.tmp_path();
                if fs::hard_link(blob, &tmp).is_err() {
                    copy_new(blob, &tmp)?;
                }
                fs::rename(&tmp, &target)?;
            }
            self.write_atomic(&entry_path, &text)
        })();
        if stored.is_ok() {
            self.evict();
        }
    }

    /// The remembered digests of the file `path` with this identity.
    pub fn sums(&self, path: &Path, size: u64, stamp: &Stamp) -> Option<Sums> {
        if !self.usable(false) {
            return None;
        }
        let file = self
            .root
            .join("files")
            .join(identity(path, size, stamp)?.hex());
        let bytes = read_small(&file)?;
        touch(&file);
        let text = std::str::from_utf8(&bytes).ok()?;
        let (sha256, sha1) = text.trim_end().split_once(' ')?;
        Some(Sums {
            sha256: parse_hex(sha256)?,
            sha1: parse_hex(sha1)?,
        })
    }

    /// Remembers the digests of the file `path` with this identity.
    pub fn remember_sums(&self, path: &Path, size: u64, stamp: &Stamp, sums: &Sums) {
        let Some(id) = identity(path, size, stamp) else {
            return;
        };
        if !self.usable(true) {
            return;
        }
        let text = format!(
            "{} {}\n",
            super::digest::hex(&sums.sha256),
            super::digest::hex(&sums.sha1)
        );
        let _ = fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(self.root.join("files"))
            .and_then(|()| {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(self.root.join("tmp"))
            })
            .and_then(|()| {
                self.write_atomic(&self.root.join("files").join(id.hex()), text.as_bytes())
            });
    }

    /// A fresh name in `tmp/`.
    fn tmp_path(&self) -> PathBuf {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        self.root.join("tmp").join(format!(
            "{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Writes `bytes` under a temporary name and renames it to `path`.
    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let tmp = self.tmp_path();
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::rename(&tmp, path)
    }

    /// Removes the least recently used entries while the blobs take more
    /// than the bound, blobs no entry names, stale temporary files and
    /// verifier digests unused for [`STALE_FILE`].
    fn evict(&self) {
        let now = SystemTime::now();
        for (path, meta) in listing(&self.root.join("tmp")) {
            if meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .is_some_and(|age| age > STALE_TMP)
            {
                let _ = fs::remove_file(path);
            }
        }
        // A verifier's digests unused for long: that binary is gone.
        for (path, meta) in listing(&self.root.join("files")) {
            if meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .is_some_and(|age| age > STALE_FILE)
            {
                let _ = fs::remove_file(path);
            }
        }
        let blobs = listing(&self.root.join("blobs/sha256"));
        let mut total: u64 = blobs.iter().map(|(_, m)| m.len()).sum();
        if total <= self.max_bytes {
            return;
        }
        let mut entries: Vec<(SystemTime, PathBuf, Option<Entry>)> =
            listing(&self.root.join("layers"))
                .into_iter()
                .map(|(p, m)| {
                    let e = read_entry(&p);
                    (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), p, e)
                })
                .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let named = |entries: &[(SystemTime, PathBuf, Option<Entry>)], hex: &str| {
            entries
                .iter()
                .any(|(_, _, e)| e.as_ref().is_some_and(|e| e.digest.hex() == hex))
        };
        // Blobs no entry names first, then entries from the oldest use.
        for (path, meta) in &blobs {
            let hex = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !named(&entries, hex) && fs::remove_file(path).is_ok() {
                total = total.saturating_sub(meta.len());
            }
        }
        while total > self.max_bytes && !entries.is_empty() {
            let (_, path, entry) = entries.remove(0);
            let _ = fs::remove_file(&path);
            if let Some(e) = entry
                && !named(&entries, e.digest.hex())
                && fs::remove_file(self.blob_path(&e.digest)).is_ok()
            {
                total = total.saturating_sub(e.size);
            }
        }
    }
}

/// `4096`, `512K`, `10G` (powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'K' | 'k') => (&t[..i], 10),
        (i, 'M' | 'm') => (&t[..i], 20),
        (i, 'G' | 'g') => (&t[..i], 30),
        (i, 'T' | 't') => (&t[..i], 40),
        _ => (t, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

fn owned_by_me(meta: &fs::Metadata) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    meta.uid() == unsafe { libc::geteuid() }
}

/// A small file of ours: regular, owned by the user, not a link, bounded.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    let file = crate::input::open(path, libc::O_NOFOLLOW).ok()?;
    let meta = file.metadata().ok()?;
    if !owned_by_me(&meta) || meta.mode() & 0o022 != 0 {
        return None;
    }
    crate::input::read_open(file, MAX_ENTRY_BYTES).ok()
}

fn read_entry(path: &Path) -> Option<Entry> {
    serde_json::from_slice(&read_small(path)?).ok()
}

/// Marks an entry as just used.
fn touch(path: &Path) {
    if let Ok(f) = File::options().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Copies `from` to the new file `to` (mode 0644, flushed).
fn copy_new(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = File::open(from)?;
    let mut dst = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(to)?;
    io::copy(&mut src, &mut dst)?;
    dst.sync_all()
}

/// True when the file at `path` is `size` bytes whose SHA-256 is `digest`.
fn holds(path: &Path, digest: &Digest, size: u64) -> bool {
    let Ok(mut f) = File::open(path) else {
        return false;
    };
    if f.metadata().map(|m| m.len()).ok() != Some(size) {
        return false;
    }
    let mut h = Sha256::new();
    // Small enough to be hashed while still in the processor's cache, and
    // few fresh pages to fault in: the check runs beside the rest of a
    // warm build, which waits for it before committing.
    let mut buf = vec![0u8; 256 << 10];
    let mut n = 0u64;
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => {
                h.update(&buf[..k]);
                n += k as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    n == size && &Digest::from_sha256(h) == digest
}

/// The files of a folder with their metadata (nothing when it cannot be read).
fn listing(dir: &Path) -> Vec<(PathBuf, fs::Metadata)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| {
        let e = e.ok()?;
        let m = e.metadata().ok()?;
        m.is_file().then(|| (e.path(), m))
    })
    .collect()
}

/// The name a file's remembered digests are kept under.
fn identity(path: &Path, size: u64, s: &Stamp) -> Option<Digest> {
    let path = fs::canonicalize(path).ok()?;
    let mut h = Sha256::new();
    h.update(b"nodeimg file identity v1\0");
    h.update(path.as_os_str().as_encoded_bytes());
    h.update(b"\0");
    for n in [size, s.dev, s.ino] {
        h.update(n.to_le_bytes());
    }
    h.update(s.mtime_ns.to_le_bytes());
    h.update(s.ctime_ns.to_le_bytes());
    Some(Digest::from_sha256(h))
}

fn parse_hex<const N: usize>(hex: &str) -> Option<[u8; N]> {
    let hex = hex.as_bytes();
    if hex.len() != 2 * N {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in hex.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_bytes_or_with_a_binary_suffix() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size(" 10g "), Some(10 << 30));
        assert_eq!(parse_size("0"), Some(0));
        for bad in ["", "G", "1.5G", "-1", "1GB", "lots", "99999999999T"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn digests_parse_back_from_their_hex() {
        let sums = Sums::of(b"verifier");
        let text = super::super::digest::hex(&sums.sha256);
        assert_eq!(parse_hex::<32>(&text), Some(sums.sha256));
        assert_eq!(parse_hex::<32>(&text.to_uppercase()), None);
        assert_eq!(parse_hex::<20>(&text), None);
    }
}
