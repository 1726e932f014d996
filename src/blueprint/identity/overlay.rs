//! The overlay tree's digest: what the blueprint's `files.overlay` folder
//! puts into the image, as part of the blueprint id.
//!
//! The folder is listed by the same scan the layer writer uses (so the same
//! refusals and the same normalised modes), and each entry becomes a record:
//! its layer path, mode and type, plus a regular file's size and SHA-256 or
//! a link's target. The digest is SHA-256 over the canonical JSON list of
//! the records. File contents are streamed through the hash in fixed-size
//! pieces, never held in memory, several files at a time on several cores.
//! `diff` compares the records to say which overlay files changed.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::digests::FileDigests;
use crate::overlay::{Overlay, OverlayEntry, OverlayKind as ScanKind, Stamp};

/// An overlay tree: its digest and, when it was read from disk (not from
/// a lock), its records in layer-path order and the listing they were
/// made from (which `build` plans the overlay layer from, instead of
/// walking the folder a second time).
#[derive(Debug, Clone)]
pub struct OverlayTree {
    digest: String,
    records: Option<Vec<OverlayRecord>>,
    listing: Option<Arc<[OverlayEntry]>>,
}

/// Two trees are the same tree when their content is: the listing's stat
/// data is where the files were found, not what they hold.
impl PartialEq for OverlayTree {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest && self.records == other.records
    }
}

impl Eq for OverlayTree {}

/// One entry of the overlay as it goes into the layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverlayRecord {
    /// Layer path: relative, `/`-separated (`usr/local/bin/tool`).
    pub path: String,
    /// The mode in the layer (normalised, or from `files.modes`).
    pub mode: u32,
    #[serde(flatten)]
    pub kind: RecordKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum RecordKind {
    Dir,
    File { size: u64, sha256: String },
    Symlink { target: String },
}

/// Bytes read from a file per step of its hash.
const CHUNK: usize = 256 * 1024;
/// At most this many files are hashed at once.
const MAX_THREADS: usize = 8;

impl OverlayTree {
    /// Reads and hashes the overlay folder `root`; `modes` are the
    /// blueprint's `files.modes` (layer path → mode). With `digests`, a
    /// file whose identity on disk is the one recorded there is not read
    /// again, and what was hashed is noted in it for the next build; when
    /// some file is not known there and `digests` carry a
    /// [`ReadAll`](super::digests::ReadAll), it reads the files instead.
    pub fn read(
        root: &Path,
        modes: impl IntoIterator<Item = (String, u32)>,
        digests: Option<&FileDigests>,
    ) -> Result<Self, String> {
        let mut overlay = Overlay::new(root);
        for (path, mode) in modes {
            overlay = overlay.with_mode(&path, mode);
        }
        let scan: Arc<[OverlayEntry]> = overlay.scan().map_err(|e| e.to_string())?.into();
        let files: Vec<(&Path, u64, Stamp)> = scan
            .iter()
            .filter_map(|e| match e.kind {
                ScanKind::File { size, stamp } => Some((e.source.as_path(), size, stamp)),
                _ => None,
            })
            .collect();
        let known: Vec<Option<String>> = files
            .iter()
            .map(|(p, size, stamp)| {
                digests
                    .and_then(|d| d.lookup(p, *size, stamp))
                    .map(str::to_string)
            })
            .collect();
        let reader = digests
            .filter(|_| known.iter().any(Option::is_none))
            .and_then(FileDigests::take_reader);
        let read_all = match reader {
            Some(read) => read(&overlay, &scan)?,
            None => None,
        };
        let sums = match read_all {
            // Every file was read, the known ones too: the digests are
            // those of the bytes read now.
            Some(all) => {
                if all.len() != scan.len() {
                    return Err(format!("{}: not every file was hashed", root.display()));
                }
                let all: Vec<String> = scan
                    .iter()
                    .zip(all)
                    .filter(|(e, _)| matches!(e.kind, ScanKind::File { .. }))
                    .map(|(e, sum)| {
                        sum.ok_or_else(|| format!("{}: was not hashed", e.source.display()))
                    })
                    .collect::<Result<_, _>>()?;
                if let Some(d) = digests {
                    for ((p, size, stamp), sum) in files.iter().zip(&all) {
                        d.note(p, *size, stamp, sum, true);
                    }
                }
                all
            }
            None => hash_unknown(&files, known, digests)?,
        };
        let mut sums = sums.into_iter();
        let mut records = Vec::with_capacity(scan.len());
        for e in scan.iter() {
            let kind = match &e.kind {
                ScanKind::Dir => RecordKind::Dir,
                ScanKind::Symlink { target } => RecordKind::Symlink {
                    target: target.clone(),
                },
                ScanKind::File { size, .. } => RecordKind::File {
                    size: *size,
                    sha256: sums
                        .next()
                        .ok_or_else(|| format!("{}: was not hashed", e.source.display()))?,
                },
            };
            records.push(OverlayRecord {
                path: e.path.clone(),
                mode: e.mode,
                kind,
            });
        }
        Ok(Self {
            digest: digest_of(&records)?,
            records: Some(records),
            listing: Some(scan),
        })
    }

    /// A tree known only by its digest (from a lock).
    pub fn from_digest(digest: &str) -> Self {
        Self {
            digest: digest.to_string(),
            records: None,
            listing: None,
        }
    }

    /// `sha256:…` over the records.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The records, when the folder was read.
    pub fn records(&self) -> Option<&[OverlayRecord]> {
        self.records.as_deref()
    }

    /// The folder's listing the records were made from, when it was read.
    pub fn listing(&self) -> Option<&Arc<[OverlayEntry]>> {
        self.listing.as_ref()
    }
}

/// The `sha256:…` of each of `files`: `known` where given, else read now;
/// each noted in `digests`.
fn hash_unknown(
    files: &[(&Path, u64, Stamp)],
    known: Vec<Option<String>>,
    digests: Option<&FileDigests>,
) -> Result<Vec<String>, String> {
    let unknown: Vec<(&Path, u64)> = files
        .iter()
        .zip(&known)
        .filter(|(_, k)| k.is_none())
        .map(|((p, size, _), _)| (*p, *size))
        .collect();
    let mut hashed = hash_files(&unknown)?.into_iter();
    let mut sums = Vec::with_capacity(files.len());
    for ((p, size, stamp), k) in files.iter().zip(known) {
        let (sum, read) = match k {
            Some(sum) => (sum, false),
            None => (
                hashed
                    .next()
                    .ok_or_else(|| format!("{}: was not hashed", p.display()))?,
                true,
            ),
        };
        if let Some(d) = digests {
            d.note(p, *size, stamp, &sum, read);
        }
        sums.push(sum);
    }
    Ok(sums)
}

/// SHA-256 over the canonical JSON list of `records`, streamed.
fn digest_of(records: &[OverlayRecord]) -> Result<String, String> {
    let mut h = Sha256::new();
    let mut json = Vec::with_capacity(256);
    h.update(b"[");
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            h.update(b",");
        }
        json.clear();
        record_json(r, &mut json);
        h.update(&json);
    }
    h.update(b"]");
    Ok(super::hex_digest(h.finalize().as_slice()))
}

/// The canonical JSON of one record (keys in byte order, as
/// [`crate::canonical_json`] writes it), without building a JSON value: an
/// overlay of many small files has as many records, and the id of an
/// unchanged overlay costs little more than writing them.
fn record_json(r: &OverlayRecord, out: &mut Vec<u8>) {
    use crate::canonical_json::string;
    use std::io::Write as _;
    let _ = write!(out, "{{\"mode\":{},\"path\":", r.mode);
    string(&r.path, out);
    match &r.kind {
        RecordKind::Dir => out.extend_from_slice(br#","type":"dir"}"#),
        RecordKind::File { size, sha256 } => {
            out.extend_from_slice(br#","sha256":"#);
            string(sha256, out);
            let _ = write!(out, r#","size":{size},"type":"file"}}"#);
        }
        RecordKind::Symlink { target } => {
            out.extend_from_slice(br#","target":"#);
            string(target, out);
            out.extend_from_slice(br#","type":"symlink"}"#);
        }
    }
}

/// The `sha256:…` of each file, in the order given. Files are taken by
/// worker threads from a shared counter, largest first: one large file
/// does not hold up the small ones behind it, and the last file a worker
/// takes is a small one, so the workers finish together (a 400 MB file
/// listed last was hashed by one core while the other had nothing left).
fn hash_files(files: &[(&Path, u64)]) -> Result<Vec<String>, String> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
        .min(files.len());
    if workers <= 1 {
        let mut buf = vec![0; CHUNK];
        return files
            .iter()
            .map(|(p, size)| hash_file(p, *size, &mut buf))
            .collect();
    }
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].1));
    let next = AtomicUsize::new(0);
    let mut sums: Vec<Option<String>> = vec![None; files.len()];
    let done: Vec<Result<Vec<(usize, String)>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut buf = vec![0; CHUNK];
                    let mut mine = Vec::new();
                    loop {
                        let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            return Ok(mine);
                        };
                        let (p, size) = &files[i];
                        match hash_file(p, *size, &mut buf) {
                            Ok(sum) => mine.push((i, sum)),
                            Err(e) => {
                                // Let the others stop at their next file.
                                next.store(files.len(), Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a hashing thread panicked".into()))
            })
            .collect()
    });
    for part in done {
        for (i, sum) in part? {
            sums[i] = Some(sum);
        }
    }
    sums.into_iter()
        .zip(files)
        .map(|(s, (p, _))| s.ok_or_else(|| format!("{}: was not hashed", p.display())))
        .collect()
}

/// Streams one file through SHA-256. The file must still be the regular
/// file of `size` bytes the scan saw (not replaced by a link or a FIFO,
/// not grown or shrunk while it was read).
fn hash_file(path: &Path, size: u64, buf: &mut [u8]) -> Result<String, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(fail)?;
    if !file.metadata().map_err(fail)?.is_file() {
        return Err(format!("{}: is no longer a regular file", path.display()));
    }
    let mut h = Sha256::new();
    let mut seen: u64 = 0;
    // One byte past the size shows a file that grew.
    let mut reader = file.take(size + 1);
    loop {
        let n = match reader.read(buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(fail(e)),
        };
        h.update(&buf[..n]);
        seen += n as u64;
    }
    if seen != size {
        return Err(format!(
            "{}: changed while it was read ({size} bytes listed, {seen} read)",
            path.display()
        ));
    }
    Ok(super::hex_digest(h.finalize().as_slice()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_record_is_written_as_canonical_json_writes_it() {
        let names = [
            "etc/x",
            "a \"quoted\" \\ name",
            "ünïcødé/文件",
            "tab\there",
            "\u{7f}\u{1f}",
        ];
        for name in names {
            for kind in [
                RecordKind::Dir,
                RecordKind::File {
                    size: u64::MAX,
                    sha256: format!("sha256:{}", "ab".repeat(32)),
                },
                RecordKind::Symlink {
                    target: format!("../{name}"),
                },
            ] {
                let r = OverlayRecord {
                    path: name.to_string(),
                    mode: 0o7755,
                    kind,
                };
                let mut mine = Vec::new();
                record_json(&r, &mut mine);
                let canonical = crate::canonical_json::to_vec(&r).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&mine),
                    String::from_utf8_lossy(&canonical)
                );
            }
        }
    }

    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn tree(root: &Path) {
        std::fs::create_dir_all(root.join("etc/app")).unwrap();
        std::fs::write(root.join("etc/app/conf"), b"a = 1\n").unwrap();
        std::fs::write(root.join("etc/big"), vec![7u8; 3 * CHUNK + 5]).unwrap();
        symlink("app/conf", root.join("etc/link")).unwrap();
    }

    fn read(root: &Path) -> OverlayTree {
        OverlayTree::read(root, [], None).unwrap()
    }

    #[test]
    fn content_modes_and_link_targets_change_the_digest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let base = read(root);
        assert_eq!(base, read(root), "the digest is stable");
        let big = base
            .records()
            .unwrap()
            .iter()
            .find(|r| r.path == "etc/big")
            .unwrap();
        let want = super::super::digest(&vec![7u8; 3 * CHUNK + 5]);
        assert_eq!(
            big.kind,
            RecordKind::File {
                size: 3 * CHUNK as u64 + 5,
                sha256: want
            }
        );

        std::fs::write(root.join("etc/app/conf"), b"a = 2\n").unwrap();
        let content = read(root);
        assert_ne!(content.digest(), base.digest());

        let exec = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(root.join("etc/app/conf"), exec).unwrap();
        let mode = read(root);
        assert_ne!(mode.digest(), content.digest());
        let explicit =
            OverlayTree::read(root, [("etc/app/conf".to_string(), 0o600)], None).unwrap();
        assert_ne!(explicit.digest(), mode.digest());

        std::fs::remove_file(root.join("etc/link")).unwrap();
        symlink("big", root.join("etc/link")).unwrap();
        assert_ne!(read(root).digest(), mode.digest());
    }

    #[test]
    fn one_file_or_many_threads_give_the_same_records() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..40 {
            std::fs::write(dir.path().join(format!("f{i:02}")), format!("{i}")).unwrap();
        }
        let many = read(dir.path());
        let sums: Vec<String> = many
            .records()
            .unwrap()
            .iter()
            .map(|r| match &r.kind {
                RecordKind::File { sha256, .. } => sha256.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        let want: Vec<String> = (0..40)
            .map(|i| super::super::digest(format!("{i}").as_bytes()))
            .collect();
        assert_eq!(sums, want);
    }

    /// Digests for a build that began now, after the files were written:
    /// the test waits out the file system's timestamp tick instead of the
    /// full racy margin.
    fn remembered(stored: Option<super::super::digests::Stored>) -> FileDigests {
        std::thread::sleep(std::time::Duration::from_millis(50));
        FileDigests::at(
            stored,
            std::time::SystemTime::now() + crate::overlay::RACY_MARGIN,
        )
    }

    fn cached(root: &Path, d: &FileDigests) -> OverlayTree {
        OverlayTree::read(root, [], Some(d)).unwrap()
    }

    #[test]
    fn remembered_digests_give_the_same_tree_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let plain = read(root);
        let first = remembered(None);
        assert_eq!(cached(root, &first), plain);
        assert_eq!(first.hashed(), 2, "both files read the first time");
        let stored = first.to_stored();
        assert_eq!(stored.len(), 2);
        let second = remembered(Some(stored));
        assert_eq!(cached(root, &second), plain, "the same records and id");
        assert_eq!(second.hashed(), 0, "nothing read the second time");
        // What the second build learned carries over to a third.
        let third = remembered(Some(second.to_stored()));
        assert_eq!(cached(root, &third), plain);
        assert_eq!(third.hashed(), 0);
    }

    #[test]
    fn a_file_rewritten_with_its_old_size_and_mtime_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let first = remembered(None);
        let before = cached(root, &first);
        let conf = root.join("etc/app/conf");
        let mtime = std::fs::metadata(&conf).unwrap().modified().unwrap();
        // Same size, same mtime (as `touch -d` restores it); only the ctime moves.
        std::fs::write(&conf, b"a = 2\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&conf)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let second = remembered(Some(first.to_stored()));
        let after = cached(root, &second);
        assert_eq!(second.hashed(), 1, "only the rewritten file is read");
        assert_ne!(after.digest(), before.digest());
        assert_eq!(after, read(root));

        // Replaced by another file (another inode), mtime restored again.
        let stored = second.to_stored();
        let new = root.join("etc/app/conf.new");
        std::fs::write(&new, b"a = 3\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&new)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        std::fs::rename(&new, &conf).unwrap();
        let third = remembered(Some(stored));
        let replaced = cached(root, &third);
        assert_eq!(third.hashed(), 1);
        assert_eq!(replaced, read(root));
        assert_ne!(replaced.digest(), after.digest());
    }

    #[test]
    fn a_reader_reads_the_files_only_when_one_is_unknown_and_its_digests_make_the_id() {
        use std::sync::atomic::AtomicUsize;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let plain = read(root);
        let calls = Arc::new(AtomicUsize::new(0));
        let reader = |calls: &Arc<AtomicUsize>| -> super::super::digests::ReadAll {
            let calls = Arc::clone(calls);
            Box::new(move |_, listing| {
                calls.fetch_add(1, Ordering::Relaxed);
                Ok(Some(
                    listing
                        .iter()
                        .map(|e| match e.kind {
                            ScanKind::File { .. } => {
                                Some(super::super::digest(&std::fs::read(&e.source).unwrap()))
                            }
                            _ => None,
                        })
                        .collect(),
                ))
            })
        };
        let d = remembered(None).reading_with(reader(&calls));
        assert_eq!(cached(root, &d), plain, "the same records and id");
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        assert_eq!(d.hashed(), 2, "both files read, by the reader");
        // What it read is remembered like what the id hashes.
        let known = remembered(Some(d.to_stored())).reading_with(reader(&calls));
        assert_eq!(cached(root, &known), plain);
        assert_eq!(calls.load(Ordering::Relaxed), 1, "all known: not called");
        // A reader that declines leaves the hashing to the id.
        let declined = remembered(None).reading_with(Box::new(|_, _| Ok(None)));
        assert_eq!(cached(root, &declined), plain);
        assert_eq!(declined.hashed(), 2);
        // Its error is the id's.
        let failing =
            FileDigests::empty().reading_with(Box::new(|_, _| Err("etc/big: gone".into())));
        let err = OverlayTree::read(root, [], Some(&failing)).unwrap_err();
        assert!(err.contains("etc/big: gone"), "{err}");
    }

    #[test]
    fn files_written_just_before_the_build_are_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let now = FileDigests::empty();
        cached(dir.path(), &now);
        assert_eq!(now.hashed(), 2);
        assert!(now.to_stored().is_empty(), "{:?}", now.to_stored());
    }

    #[test]
    fn what_a_layer_cannot_carry_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        symlink("../../outside", dir.path().join("escape")).unwrap();
        let err = OverlayTree::read(dir.path(), [], None).unwrap_err();
        assert!(err.contains("escape"), "{err}");
    }
}
