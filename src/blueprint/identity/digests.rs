//! Overlay file digests remembered between builds, so that the blueprint id
//! of an unchanged 1.4 GiB overlay costs one `lstat` per file instead of
//! reading every byte again.
//!
//! An entry maps a file's identity on disk — its path, size, device, inode,
//! mtime and ctime in nanoseconds, the same rule the layer cache uses — to
//! the SHA-256 of its content. Any write changes the ctime, which no user
//! can set back (`touch -d` restores the mtime and moves the ctime), so a
//! file whose identity is unchanged holds what was hashed. Only files that
//! were settled when the build began are recorded (see
//! [`RACY_MARGIN`](crate::overlay::RACY_MARGIN): a file written
//! again within the file system's timestamp granularity of being hashed
//! would keep its stamp), so a file changed just before or during a build is
//! hashed again by the next one.
//!
//! `build` keeps the entries in OUT's layer cache index (written with the
//! layout, atomically) and hands the previous ones to the identity. The
//! stored list holds only the files of the last build's overlay (at most
//! [`MAX_FILES`]), carries its format and a digest over its entries, and is
//! ignored whole when either does not match or an entry is malformed: a
//! corrupt or foreign cache costs a full read, never a wrong id. Commands
//! without an output to keep a cache beside (`validate`, `render`, `diff`,
//! `explain`) hash the overlay every time.
//!
//! A build that is about to pack the overlay layer anyway gives the
//! digests a [`ReadAll`]: when files are unknown, the identity hands it the
//! folder's listing, and it packs the layer from that listing, hashing each
//! file in the same pass, so that every file is read once rather than once
//! for the id and once more for the layer.
//!
//! The list is one text, a line per file (`<sha256 hex> <size> <dev> <ino>
//! <mtime ns> <ctime ns> <path>`), not a JSON object per file: for an
//! overlay of many small files, reading, checking and writing objects cost
//! more than hashing the files again would (22,290 files: a 7.1 MB index,
//! parsed twice and written once per build). A path is the last field, so it
//! may hold spaces; the overlay scan refuses control characters in names, and
//! a line that does not parse makes the whole list ignored.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::overlay::{Overlay, OverlayEntry, Stamp, settled_before};

/// Reads every file of an overlay (its folder and modes, and the listing
/// the id is made from) for its SHA-256 (`sha256:…`), in listing order,
/// `None` for what is not a file; or declines (`Ok(None)`) and leaves the
/// hashing to the identity. Errors name the file.
pub type ReadAll = Box<
    dyn FnOnce(&Overlay, &Arc<[OverlayEntry]>) -> Result<Option<Vec<Option<String>>>, String>
        + Send,
>;

/// A [`ReadAll`], until it is used.
struct Reader(Mutex<Option<ReadAll>>);

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reader")
    }
}

/// The stored list's format; changed whenever the meaning of an entry does.
pub const FORMAT: &str = "nodeimg overlay file digests v2";
/// At most this many files are remembered (an overlay with more is hashed
/// in full beyond them).
pub const MAX_FILES: usize = 1_000_000;

/// The file digests as stored in the layer cache index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stored {
    format: String,
    /// `sha256:` over `files`.
    digest: String,
    /// One line per file, by path (see the module's documentation).
    files: String,
}

/// One remembered file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    path: String,
    size: u64,
    stamp: Stamp,
    sha256: [u8; 32],
}

type Key = (String, u64, Stamp);

impl Entry {
    /// The entry of a file, when its path is text and its digest one this
    /// module writes.
    fn new(path: &Path, size: u64, stamp: &Stamp, sha256: &str) -> Option<Self> {
        Some(Self {
            path: path.to_str()?.to_string(),
            size,
            stamp: *stamp,
            sha256: parse_sum(sha256.strip_prefix("sha256:")?)?,
        })
    }

    /// Appends its line to `out`.
    fn write(&self, out: &mut String) {
        use std::fmt::Write as _;
        out.push_str(&sum_text(&self.sha256)["sha256:".len()..]);
        let s = &self.stamp;
        let _ = writeln!(
            out,
            " {} {} {} {} {} {}",
            self.size, s.dev, s.ino, s.mtime_ns, s.ctime_ns, self.path
        );
    }

    /// Reads one line (without its newline).
    fn parse(line: &str) -> Option<Self> {
        let mut f = line.splitn(7, ' ');
        let sha256 = parse_sum(f.next()?)?;
        let size = f.next()?.parse().ok()?;
        let dev = f.next()?.parse().ok()?;
        let ino = f.next()?.parse().ok()?;
        let mtime_ns = f.next()?.parse().ok()?;
        let ctime_ns = f.next()?.parse().ok()?;
        let path = f.next()?;
        if path.is_empty() || path.chars().any(char::is_control) {
            return None;
        }
        Some(Self {
            path: path.to_string(),
            size,
            stamp: Stamp {
                dev,
                ino,
                mtime_ns,
                ctime_ns,
            },
            sha256,
        })
    }
}

/// 64 lower-case hex digits as bytes.
fn parse_sum(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// `sha256:` and the hex of `sum`.
fn sum_text(sum: &[u8; 32]) -> String {
    super::hex_digest(sum)
}

/// The digests a build may reuse, and those it learns for the next one.
#[derive(Debug)]
pub struct FileDigests {
    known: HashMap<Key, String>,
    /// Files whose stamps are not older than this are not recorded.
    settled_before: i128,
    learned: Mutex<Vec<Entry>>,
    hashed: AtomicUsize,
    reader: Reader,
}

impl FileDigests {
    /// Nothing known yet; what this build hashes is recorded.
    pub fn empty() -> Self {
        Self::at(None, SystemTime::now())
    }

    /// The digests `stored` by an earlier build (ignored when corrupt or
    /// foreign), for a build starting now.
    pub fn from_stored(stored: Option<Stored>) -> Self {
        Self::at(stored, SystemTime::now())
    }

    /// As [`from_stored`](Self::from_stored), for a build that began at `start`.
    pub(crate) fn at(stored: Option<Stored>, start: SystemTime) -> Self {
        Self::with_bound(stored, settled_before(start))
    }

    fn with_bound(stored: Option<Stored>, settled_before: i128) -> Self {
        let known = stored
            .and_then(|s| s.entries())
            .map(|entries| {
                entries
                    .into_iter()
                    .map(|e| ((e.path, e.size, e.stamp), sum_text(&e.sha256)))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            known,
            settled_before,
            learned: Mutex::new(Vec::new()),
            hashed: AtomicUsize::new(0),
            reader: Reader(Mutex::new(None)),
        }
    }

    /// These digests, with `read` to read the overlay's files when any is
    /// unknown (see the module's documentation).
    pub fn reading_with(self, read: ReadAll) -> Self {
        *self.reader.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(read);
        self
    }

    /// The [`ReadAll`] given, once.
    pub(crate) fn take_reader(&self) -> Option<ReadAll> {
        self.reader
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The digest of the file at `path` when its identity is the one
    /// recorded.
    pub(crate) fn lookup(&self, path: &Path, size: u64, stamp: &Stamp) -> Option<&str> {
        let key = (path.to_str()?.to_string(), size, *stamp);
        self.known.get(&key).map(String::as_str)
    }

    /// Notes the digest of a file of this build's overlay (hashed now when
    /// `read`, else reused), to be stored for the next build if its stamp is
    /// settled.
    pub(crate) fn note(&self, path: &Path, size: u64, stamp: &Stamp, sha256: &str, read: bool) {
        if read {
            self.hashed.fetch_add(1, Ordering::Relaxed);
        }
        if !stamp.settled(self.settled_before) {
            return;
        }
        if let Some(e) = Entry::new(path, size, stamp, sha256) {
            let mut learned = self.learned.lock().unwrap_or_else(|p| p.into_inner());
            if learned.len() < MAX_FILES {
                learned.push(e);
            }
        }
    }

    /// How many overlay files this build read to hash them.
    pub fn hashed(&self) -> usize {
        self.hashed.load(Ordering::Relaxed)
    }

    /// What to store for the next build: this build's settled files, by path.
    pub fn to_stored(&self) -> Stored {
        let mut entries = self
            .learned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        entries.dedup_by(|a, b| a.path == b.path);
        let mut files = String::with_capacity(entries.len() * 160);
        for e in &entries {
            e.write(&mut files);
        }
        Stored {
            format: FORMAT.to_string(),
            digest: digest_of(&files),
            files,
        }
    }
}

impl Stored {
    /// Its entries, when its format is this one, its digest matches its
    /// text and every line is well formed; else nothing.
    fn entries(&self) -> Option<Vec<Entry>> {
        if self.format != FORMAT || self.digest != digest_of(&self.files) {
            return None;
        }
        let lines = self.files.lines();
        let entries: Option<Vec<Entry>> = lines.map(Entry::parse).collect();
        entries.filter(|e| e.len() <= MAX_FILES)
    }

    /// How many files it remembers.
    pub fn len(&self) -> usize {
        self.files.lines().count()
    }

    /// True when it remembers no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

fn digest_of(files: &str) -> String {
    super::digest(files.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUM: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn stamp() -> Stamp {
        Stamp {
            dev: 1,
            ino: 2,
            mtime_ns: 3,
            ctime_ns: 4,
        }
    }

    fn one(path: &str, stamp: Stamp) -> Stored {
        let d = FileDigests::with_bound(None, 100);
        d.note(Path::new(path), 10, &stamp, SUM, true);
        d.to_stored()
    }

    #[test]
    fn only_the_same_identity_finds_the_digest() {
        let d = FileDigests::with_bound(Some(one("/ov/a", stamp())), 100);
        assert_eq!(d.lookup(Path::new("/ov/a"), 10, &stamp()), Some(SUM));
        let base = stamp();
        for (path, size, s) in [
            ("/ov/b", 10, base),
            ("/ov/a", 11, base),
            ("/ov/a", 10, Stamp { dev: 9, ..base }),
            ("/ov/a", 10, Stamp { ino: 9, ..base }),
            (
                "/ov/a",
                10,
                Stamp {
                    mtime_ns: 9,
                    ..base
                },
            ),
            (
                "/ov/a",
                10,
                Stamp {
                    ctime_ns: 9,
                    ..base
                },
            ),
        ] {
            assert_eq!(
                d.lookup(Path::new(path), size, &s),
                None,
                "{path} {size} {s:?}"
            );
        }
    }

    #[test]
    fn a_file_changed_too_recently_is_not_remembered() {
        let d = FileDigests::with_bound(None, 4);
        // ctime 4 is not older than the bound: it may change unseen.
        d.note(Path::new("/ov/a"), 10, &stamp(), SUM, true);
        d.note(
            Path::new("/ov/b"),
            10,
            &Stamp {
                ctime_ns: 3,
                ..stamp()
            },
            SUM,
            true,
        );
        let s = d.to_stored();
        assert_eq!(s.len(), 1);
        assert!(s.files.ends_with(" /ov/b\n"), "{}", s.files);
        assert_eq!(d.hashed(), 2);
    }

    #[test]
    fn a_corrupt_or_foreign_list_is_ignored() {
        let good = one("/ov/a", stamp());
        let found = |s: Stored| {
            FileDigests::with_bound(Some(s), 100)
                .lookup(Path::new("/ov/a"), 10, &stamp())
                .is_some()
        };
        assert!(found(good.clone()));
        let mut tampered = good.clone();
        tampered.files = tampered.files.replacen('0', "1", 1);
        assert!(
            !found(tampered),
            "an edited entry no longer matches the digest"
        );
        let mut foreign = good.clone();
        foreign.format = "nodeimg overlay file digests v0".into();
        assert!(!found(foreign));
        let mut malformed = good;
        malformed.files = malformed.files.replacen(&"0".repeat(64), "xyz", 1);
        malformed.digest = digest_of(&malformed.files);
        assert!(!found(malformed));
        // A well-formed line beside it whose name holds a control character
        // (which the scan refuses): the whole list is ignored, not just the line.
        let mut control = one("/ov/a", stamp());
        let other = control.files.replace("/ov/a", "/ov/\u{7}b");
        control.files.push_str(&other);
        control.digest = digest_of(&control.files);
        assert!(!found(control), "one malformed line voids the list");
    }

    #[test]
    fn a_line_reads_back_as_written() {
        let s = Stamp {
            dev: u64::MAX,
            ino: 7,
            mtime_ns: -1_500_000_000,
            ctime_ns: i128::from(i64::MAX) * 1_000_000_000,
        };
        let sum = format!("sha256:{}", "0123456789abcdef".repeat(4));
        let d = FileDigests::with_bound(None, i128::MAX);
        d.note(Path::new("/ov/a dir/with spaces"), 42, &s, &sum, true);
        let back = FileDigests::with_bound(Some(d.to_stored()), 0);
        assert_eq!(
            back.lookup(Path::new("/ov/a dir/with spaces"), 42, &s),
            Some(sum.as_str())
        );
    }
}
