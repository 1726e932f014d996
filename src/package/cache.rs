//! Layer cache: a layer whose inputs did not change since the last build
//! into the same output is taken from that output instead of being packed
//! again.
//!
//! Each layer has a key, the sha256 of everything its bytes depend on: the
//! layer's role, compression and level, SOURCE_DATE_EPOCH and, per entry,
//! path, mode and kind, plus the content — the bytes themselves for
//! in-memory files (rendered configuration, the verifier), and for overlay
//! files their identity on disk (source path, size, device, inode, mtime
//! and ctime in nanoseconds). Any write to a file changes its ctime, so
//! the key changes whenever the content can have; a 1.4 GiB overlay is
//! therefore checked with one `lstat` per file instead of being read.
//! `--no-cache` builds every layer from scratch.
//!
//! The keys of the layers written are kept in OUT/[`INDEX_FILE`] (stat data
//! is machine-specific, so the keys stay out of the deterministic
//! provenance record). On the next build into OUT, a layer with the same
//! key is hard-linked from OUT's blobs into the new output (or copied when
//! linking is not possible). A missing or unreadable index means an empty
//! cache, never an error; a blob whose size differs from the index is not
//! used. The index is trusted only when it is a regular file of at most
//! [`MAX_INDEX_BYTES`], owned by the user who builds and writable by no
//! one else; anything else is an empty cache too.
//!
//! A layer is recorded only when every overlay file in it was settled when
//! the build began (`overlay::RACY_MARGIN`): a file written again within
//! its file system's timestamp granularity of being packed keeps its stamp,
//! so its layer is packed again by the next build rather than reused.
//!
//! The index also carries the overlay file digests the blueprint id was
//! computed with ([`file_digests`]), so that a rebuild reads no overlay
//! file at all (`blueprint::identity::digests`).

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::compress::{self, Compression};
use super::digest::Digest;
use super::error::PackageError;
use super::frames;
use super::incompressible;
use super::layer::LayerInfo;
use super::output;
use super::plan::{Content, EntryKind, LayerPlan, LayerRole};
use super::source_date::SourceDate;
use crate::blueprint::identity::{FileDigests, digests::Stored};

/// The cache index inside an output layout.
pub const INDEX_FILE: &str = "nodeimg-layer-cache.json";
/// Bumped whenever the layer format changes, so old entries never match.
const KEY_VERSION: &str = "nodeimg layer cache v2";
/// A larger index is not read (an overlay of a million files needs less).
pub const MAX_INDEX_BYTES: u64 = 512 << 20;

/// The key of a layer: the digest of everything its bytes depend on, with
/// overlay files named by their identity on disk (see the module's
/// documentation).
pub fn key(layer: &LayerPlan, compression: Compression, source_date: SourceDate) -> Digest {
    keyed(layer, compression, source_date, |field, content| {
        let Content::Disk {
            path, size, stamp, ..
        } = content
        else {
            return Some(());
        };
        field(b"disk");
        field(path.as_os_str().as_encoded_bytes());
        field(&size.to_le_bytes());
        field(&stamp.dev.to_le_bytes());
        field(&stamp.ino.to_le_bytes());
        field(&stamp.mtime_ns.to_le_bytes());
        field(&stamp.ctime_ns.to_le_bytes());
        Some(())
    })
    .unwrap_or_else(|| Digest::of(b"unreachable: every disk file has an identity"))
}

/// The key of a layer by content alone: overlay files by their size and
/// SHA-256 instead of where they are, so the same content found in another
/// folder (or built into another OUT) has the same key. `None` when an
/// overlay file's SHA-256 is not known.
pub fn content_key(
    layer: &LayerPlan,
    compression: Compression,
    source_date: SourceDate,
) -> Option<Digest> {
    keyed(layer, compression, source_date, |field, content| {
        if let Content::Disk { size, sha256, .. } = content {
            field(b"content");
            field(&size.to_le_bytes());
            field(sha256.as_ref()?);
        }
        Some(())
    })
}

/// The digest over the layer's format, its options and its entries;
/// `disk` adds what names a file read from disk.
fn keyed(
    layer: &LayerPlan,
    compression: Compression,
    source_date: SourceDate,
    disk: impl Fn(&mut dyn FnMut(&[u8]), &Content) -> Option<()>,
) -> Option<Digest> {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(KEY_VERSION.as_bytes());
    // What decides the frames: the codec's version, the chunk size and
    // the raw-frame rule.
    field(&compress::zstd_version().to_le_bytes());
    field(&(frames::CHUNK as u64).to_le_bytes());
    field(&incompressible::LIMIT.to_le_bytes());
    field(layer.role.as_str().as_bytes());
    field(compression.to_string().as_bytes());
    field(&compression.level().to_le_bytes());
    field(&source_date.seconds().to_le_bytes());
    for e in &layer.entries {
        field(e.path.as_bytes());
        field(&e.mode.to_le_bytes());
        match &e.kind {
            EntryKind::Dir => field(b"dir"),
            EntryKind::Symlink(target) => {
                field(b"symlink");
                field(target.as_bytes());
            }
            EntryKind::File(Content::Memory { bytes, sha256 }) => {
                field(b"file");
                field(&(bytes.len() as u64).to_le_bytes());
                field(sha256);
            }
            EntryKind::File(content @ Content::Disk { .. }) => disk(&mut field, content)?,
        }
    }
    Some(Digest::from_sha256(h))
}

/// One cached layer, as the index records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    key: Digest,
    role: LayerRole,
    digest: Digest,
    size: u64,
    diff_id: Digest,
    tar_size: u64,
    entries: usize,
}

/// The index as written.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Index {
    layers: Vec<Entry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    overlay_files: Option<Stored>,
}

/// The index as read: the layers and the overlay file digests, parsed
/// together in one pass over the file.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OnDisk {
    layers: Vec<Entry>,
    #[serde(default)]
    overlay_files: Option<Stored>,
}

/// The index of the layout at `out`, when there is a trustworthy one.
fn read_index(out: &Path) -> Option<OnDisk> {
    use std::os::unix::fs::MetadataExt as _;
    let path = out.join(INDEX_FILE);
    let file = crate::input::open(&path, libc::O_NOFOLLOW).ok()?;
    let meta = file.metadata().ok()?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me || meta.mode() & 0o022 != 0 {
        return None;
    }
    let bytes = crate::input::read_open(file, MAX_INDEX_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The overlay file digests remembered in the layout at `out`, for a build
/// starting now (nothing, when there is no trustworthy index).
pub fn file_digests(out: &Path) -> FileDigests {
    Cache::open_remembering(out).1
}

/// The layers a previous output holds.
#[derive(Debug, Default, Clone)]
pub struct Cache {
    dir: PathBuf,
    layers: Vec<Entry>,
}

impl Cache {
    /// Nothing cached.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The cache of the layout at `out` (empty when there is none).
    pub fn open(out: &Path) -> Self {
        Self::open_remembering(out).0
    }

    /// The cache of the layout at `out` and the overlay file digests its
    /// index remembers, from one read of the index.
    pub fn open_remembering(out: &Path) -> (Self, FileDigests) {
        let index = read_index(out).unwrap_or_default();
        let cache = Self {
            dir: out.to_path_buf(),
            layers: index.layers,
        };
        (cache, FileDigests::from_stored(index.overlay_files))
    }

    /// The layout folder this cache was read from (empty for [`Self::empty`]).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when the index names a layer under `key` (whether its blob is
    /// still there is found out when it is taken).
    pub fn has(&self, key: &Digest) -> bool {
        self.layers.iter().any(|e| &e.key == key)
    }

    /// Puts the cached blob for `key` into `blob_dir`, if there is one.
    pub fn take(
        &self,
        key: &Digest,
        compression: Compression,
        blob_dir: &Path,
    ) -> Option<LayerInfo> {
        let e = self.layers.iter().find(|e| &e.key == key)?;
        let from = self.dir.join("blobs/sha256").join(e.digest.hex());
        if fs::symlink_metadata(&from).ok()?.len() != e.size {
            return None;
        }
        let to = blob_dir.join(e.digest.hex());
        if fs::hard_link(&from, &to).is_err() {
            fs::copy(&from, &to).ok()?;
        }
        Some(LayerInfo {
            role: e.role,
            media_type: compression.media_type(),
            compression,
            level: compression.level(),
            digest: e.digest.clone(),
            size: e.size,
            diff_id: e.diff_id.clone(),
            tar_size: e.tar_size,
            entries: e.entries,
        })
    }
}

/// Writes the index of `layers` (key, layer) and of the overlay file
/// `digests` into the layout at `root`.
pub fn write_index(
    root: &Path,
    layers: &[(Digest, &LayerInfo)],
    digests: Option<&FileDigests>,
) -> Result<(), PackageError> {
    let index = Index {
        overlay_files: digests.map(FileDigests::to_stored),
        layers: layers
            .iter()
            .map(|(key, l)| Entry {
                key: key.clone(),
                role: l.role,
                digest: l.digest.clone(),
                size: l.size,
                diff_id: l.diff_id.clone(),
                tar_size: l.tar_size,
                entries: l.entries,
            })
            .collect(),
    };
    // Compact: with the overlay file digests it is megabytes, read by no person.
    let mut bytes = serde_json::to_vec(&index).map_err(|e| PackageError::Spec {
        what: "layer cache index",
        message: e.to_string(),
    })?;
    let _ = bytes.write_all(b"\n");
    output::write_file(&root.join(INDEX_FILE), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::Stamp;
    use crate::package::plan::PlanEntry;

    fn layer(content: Content) -> LayerPlan {
        LayerPlan {
            role: LayerRole::Overlay,
            entries: vec![PlanEntry {
                path: "opt/big".into(),
                mode: 0o644,
                kind: EntryKind::File(content),
            }],
        }
    }

    fn disk(stamp: Stamp) -> Content {
        Content::Disk {
            path: "/ov/opt/big".into(),
            size: 10,
            stamp,
            sha256: Some([1; 32]),
        }
    }

    #[test]
    fn the_content_key_names_files_by_content_not_place() {
        let base = Stamp::default();
        let k = |c: Content| content_key(&layer(c), Compression::Zstd, SourceDate::default());
        let here = k(disk(base)).unwrap();
        let elsewhere = Content::Disk {
            path: "/other/checkout/opt/big".into(),
            size: 10,
            stamp: Stamp { ino: 9, ..base },
            sha256: Some([1; 32]),
        };
        assert_eq!(k(elsewhere), Some(here.clone()));
        let changed = Content::Disk {
            path: "/ov/opt/big".into(),
            size: 10,
            stamp: base,
            sha256: Some([2; 32]),
        };
        assert_ne!(k(changed), Some(here.clone()));
        let unknown = Content::Disk {
            path: "/ov/opt/big".into(),
            size: 10,
            stamp: base,
            sha256: None,
        };
        assert_eq!(k(unknown), None);
        // Not the key of the place-bound cache.
        assert_ne!(
            key(&layer(disk(base)), Compression::Zstd, SourceDate::default()),
            here
        );
    }

    #[test]
    fn the_key_follows_every_input() {
        let base = Stamp {
            dev: 1,
            ino: 2,
            mtime_ns: 3,
            ctime_ns: 4,
        };
        let k = |c: Content, comp, date| key(&layer(c), comp, SourceDate::new(date).unwrap());
        let k0 = k(disk(base), Compression::Zstd, 0);
        assert_eq!(k0, k(disk(base), Compression::Zstd, 0));
        for other in [
            k(
                disk(Stamp {
                    ctime_ns: 5,
                    ..base
                }),
                Compression::Zstd,
                0,
            ),
            k(
                disk(Stamp {
                    mtime_ns: 5,
                    ..base
                }),
                Compression::Zstd,
                0,
            ),
            k(disk(Stamp { ino: 5, ..base }), Compression::Zstd, 0),
            k(disk(base), Compression::Gzip, 0),
            k(disk(base), Compression::Zstd, 1),
            k(
                Content::memory(b"0123456789".to_vec()),
                Compression::Zstd,
                0,
            ),
        ] {
            assert_ne!(k0, other);
        }
        let m = |b: &[u8]| k(Content::memory(b.to_vec()), Compression::Zstd, 0);
        assert_ne!(m(b"a"), m(b"b"));
    }

    #[test]
    fn file_digests_come_back_only_from_an_index_no_one_else_can_write() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        let d = FileDigests::at(None, later);
        let s = Stamp {
            dev: 1,
            ino: 2,
            mtime_ns: 3,
            ctime_ns: 4,
        };
        let sum = Digest::of(b"x").to_string();
        d.note(Path::new("/ov/a"), 1, &s, &sum, true);
        write_index(dir.path(), &[], Some(&d)).unwrap();
        let found = || {
            file_digests(dir.path())
                .lookup(Path::new("/ov/a"), 1, &s)
                .map(str::to_string)
        };
        assert_eq!(found(), Some(sum));
        let index = dir.path().join(INDEX_FILE);
        fs::set_permissions(&index, fs::Permissions::from_mode(0o664)).unwrap();
        assert_eq!(found(), None, "a group-writable index is not trusted");
    }

    #[test]
    fn a_missing_or_corrupt_index_is_an_empty_cache() {
        let dir = tempfile::tempdir().unwrap();
        let d = Digest::of(b"x");
        assert!(
            Cache::open(dir.path())
                .take(&d, Compression::Zstd, dir.path())
                .is_none()
        );
        fs::write(dir.path().join(INDEX_FILE), b"{not json").unwrap();
        assert!(
            Cache::open(dir.path())
                .take(&d, Compression::Zstd, dir.path())
                .is_none()
        );
    }
}
