//! An image's layers, bottom to top, unpacked into a staging folder by the
//! OCI layer rules — the merged tree the image means, before any byte of the
//! root is touched.
//!
//! Each blob is hashed while it is unpacked and compared with its
//! descriptor at its end; a mismatch fails the whole apply and the caller
//! discards the staging folder, so a tampered layer never reaches the root.
//! Rules (image-spec `layer.md`): entries of an upper layer replace those of
//! a lower one; `.wh.NAME` removes NAME from the layers below (and from the
//! root the image is applied onto); `.wh..wh..opq` hides what the layers
//! below (and the root) hold in its folder. Refused: paths that climb out
//! (`..`), a path under a symbolic link or a file of the image (it would
//! land elsewhere), device nodes and FIFOs (nodeimg images carry none;
//! udev makes a node's devices), and images past the size and entry bounds.
//! A hard link becomes a copy of the file it names (the same bytes, mode
//! and owner).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use super::entry::{Entry, Kind, RelPath};
use crate::package::digest::{HashingReader, HashingWriter};
use crate::package::layout_reader::LocalImage;

/// Most bytes an image may unpack to (all layers' files together).
pub const MAX_IMAGE_BYTES: u64 = 256 << 30;
/// Most entries an image may hold (all layers together).
pub const MAX_ENTRIES: usize = 2_000_000;

const WHITEOUT: &str = ".wh.";
const OPAQUE: &str = ".wh..wh..opq";

/// The merged image in a staging folder.
#[derive(Debug)]
pub struct Staged {
    /// The staging tree: every entry's content at its path.
    pub dir: PathBuf,
    /// What the image puts at each path, sorted (parents first).
    pub entries: BTreeMap<RelPath, Entry>,
    /// Paths the image removes from the root below it.
    pub whiteouts: BTreeSet<RelPath>,
    /// Folders whose content in the root below the image is hidden.
    pub opaque: BTreeSet<RelPath>,
    /// Bytes of file content unpacked.
    pub bytes: u64,
}

/// Unpacks `image` into `dir` (a new, empty folder). `owners`: set each
/// entry's owner (needs root); without it the files belong to the caller.
pub fn unpack(image: &LocalImage, dir: &Path, owners: bool) -> Result<Staged, String> {
    let mut staged = Staged {
        dir: dir.to_path_buf(),
        entries: BTreeMap::new(),
        whiteouts: BTreeSet::new(),
        opaque: BTreeSet::new(),
        bytes: 0,
    };
    for (index, (blob, kind)) in image.layers.iter().zip(&image.layer_kinds).enumerate() {
        let path = image.blob_path(&blob.digest);
        let role = kind.role.as_deref().unwrap_or("unnamed");
        let at = |e: String| format!("layer {index} ({role}, {}): {e}", blob.digest);
        let file = crate::input::open(&path, 0).map_err(|e| at(e.to_string()))?;
        let mut hashing = HashingReader::new(file.take(blob.size.saturating_add(1)));
        {
            let decoded: Box<dyn Read + '_> = match kind.media_type.as_str() {
                "application/vnd.oci.image.layer.v1.tar+zstd" => Box::new(
                    zstd::stream::read::Decoder::new(&mut hashing)
                        .map_err(|e| at(e.to_string()))?,
                ),
                "application/vnd.oci.image.layer.v1.tar+gzip"
                | "application/vnd.docker.image.rootfs.diff.tar.gzip" => {
                    Box::new(flate2::read::GzDecoder::new(&mut hashing))
                }
                "application/vnd.oci.image.layer.v1.tar" => Box::new(&mut hashing),
                other => {
                    return Err(at(format!(
                        "media type {other} is not a layer nodeimg applies"
                    )));
                }
            };
            let mut archive = tar::Archive::new(decoded);
            staged.layer(&mut archive, owners).map_err(at)?;
            // The rest of the stream (tar padding, the compressor's end) is
            // part of the digest too.
            let mut rest = archive.into_inner();
            io::copy(&mut rest, &mut io::sink()).map_err(|e| at(e.to_string()))?;
        }
        io::copy(&mut hashing, &mut io::sink()).map_err(|e| at(e.to_string()))?;
        let (digest, len) = hashing.finish();
        if digest != blob.digest || len != blob.size {
            return Err(at(format!(
                "the blob does not match its descriptor ({len} bytes, {digest}; the manifest says {} bytes): nothing of this image was applied",
                blob.size
            )));
        }
    }
    // Folder modes last: a read-only folder must not stop its own content.
    for entry in staged.entries.values().filter(|e| e.is_dir()) {
        let p = entry.path.under(dir);
        fs::set_permissions(&p, fs::Permissions::from_mode(entry.mode))
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(staged)
}

impl Staged {
    fn layer<R: Read>(
        &mut self,
        archive: &mut tar::Archive<R>,
        owners: bool,
    ) -> Result<(), String> {
        // What this layer added: an opaque marker hides only what is below.
        let mut added: BTreeSet<RelPath> = BTreeSet::new();
        for item in archive.entries().map_err(|e| e.to_string())? {
            let mut item = item.map_err(|e| format!("the archive is damaged: {e}"))?;
            let raw = item.path_bytes();
            let raw = std::str::from_utf8(&raw)
                .map_err(|_| "a path that is not UTF-8".to_string())?
                .to_string();
            let header = item.header();
            let entry_type = header.entry_type();
            if matches!(
                entry_type,
                tar::EntryType::XGlobalHeader | tar::EntryType::XHeader
            ) {
                continue;
            }
            let path = RelPath::parse(&raw).map_err(|e| format!("entry {raw:?}: {e}"))?;
            if self.entries.len() >= MAX_ENTRIES {
                return Err(format!("more than {MAX_ENTRIES} entries"));
            }
            let name = path.name();
            if name == OPAQUE {
                let folder = path
                    .parent()
                    .ok_or_else(|| "an opaque marker at the root of the image".to_string())?;
                let hidden: Vec<RelPath> = self
                    .entries
                    .keys()
                    .filter(|p| p.is_within(&folder) && **p != folder && !added.contains(*p))
                    .cloned()
                    .collect();
                for p in hidden.iter().rev() {
                    self.remove(p)?;
                }
                self.opaque.insert(folder);
                continue;
            }
            if let Some(target) = name.strip_prefix(WHITEOUT) {
                let target = match path.parent() {
                    Some(p) => p.join(target),
                    None => RelPath::parse(target),
                }
                .map_err(|e| format!("whiteout {raw:?}: {e}"))?;
                let gone: Vec<RelPath> = self
                    .entries
                    .keys()
                    .filter(|p| p.is_within(&target))
                    .cloned()
                    .collect();
                for p in gone.iter().rev() {
                    self.remove(p)?;
                }
                self.whiteouts.insert(target);
                continue;
            }
            self.check_parents(&path)?;
            let mode = header.mode().map_err(|e| format!("{path}: {e}"))? & 0o7777;
            let uid = id(header.uid(), &path)?;
            let gid = id(header.gid(), &path)?;
            // As `tar -x` keeps it: the image's time (SOURCE_DATE_EPOCH), not now.
            let mtime = header.mtime().unwrap_or(0);
            let dest = path.under(&self.dir);
            let kind = match entry_type {
                tar::EntryType::Directory => {
                    if self.entries.get(&path).is_some_and(|e| !e.is_dir()) {
                        self.remove(&path)?;
                    }
                    mkdir_all(&dest)?;
                    Kind::Dir
                }
                tar::EntryType::Regular | tar::EntryType::Continuous => {
                    self.replace(&path)?;
                    let size = item.header().size().map_err(|e| e.to_string())?;
                    self.count(size)?;
                    let sha256 = write_new(&dest, &mut item, size, mode, mtime)?;
                    Kind::File { sha256, size }
                }
                tar::EntryType::Symlink => {
                    let target = item
                        .link_name_bytes()
                        .ok_or_else(|| format!("{path}: a link without a target"))?;
                    let target = String::from_utf8(target.into_owned())
                        .map_err(|_| format!("{path}: a link target that is not UTF-8"))?;
                    self.replace(&path)?;
                    symlink(&target, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
                    Kind::Symlink { target }
                }
                tar::EntryType::Link => {
                    let target = item
                        .link_name_bytes()
                        .ok_or_else(|| format!("{path}: a hard link without a target"))?;
                    let target = RelPath::parse(
                        std::str::from_utf8(&target)
                            .map_err(|_| format!("{path}: a link target that is not UTF-8"))?,
                    )
                    .map_err(|e| format!("{path}: hard link: {e}"))?;
                    let Some(original) = self.entries.get(&target).cloned() else {
                        return Err(format!(
                            "{path}: a hard link to {target}, which the image does not hold as a file before it"
                        ));
                    };
                    let Kind::File { size, .. } = original.kind else {
                        return Err(format!(
                            "{path}: a hard link to {target}, which is not a file"
                        ));
                    };
                    self.replace(&path)?;
                    self.count(size)?;
                    let mut from = fs::File::open(target.under(&self.dir))
                        .map_err(|e| format!("{target}: {e}"))?;
                    let sha256 = write_new(&dest, &mut from, size, original.mode, mtime)?;
                    self.set_owner(&dest, owners, original.uid, original.gid)?;
                    added.insert(path.clone());
                    self.entries.insert(
                        path.clone(),
                        Entry {
                            path,
                            kind: Kind::File { sha256, size },
                            ..original
                        },
                    );
                    continue;
                }
                other => {
                    return Err(format!(
                        "{path}: a {other:?} entry; device nodes, FIFOs and sockets are not applied (udev makes a node's devices)"
                    ));
                }
            };
            if !matches!(kind, Kind::Dir) {
                self.set_owner(&dest, owners, uid, gid)?;
            } else if owners {
                lchown(&dest, uid, gid)?;
            }
            let mode = if matches!(kind, Kind::Symlink { .. }) {
                0o777
            } else {
                mode
            };
            added.insert(path.clone());
            self.entries.insert(
                path.clone(),
                Entry {
                    path,
                    kind,
                    mode,
                    uid,
                    gid,
                },
            );
        }
        Ok(())
    }

    /// Adds a file nodeimg itself puts beside the image's (the node's receipt of the
    /// image, [`super::receipt`]): root-owned, the given mode, its parents folders.
    pub fn add_file(&mut self, path: &RelPath, bytes: &[u8], mode: u32) -> Result<(), String> {
        self.check_parents(path)?;
        self.replace(path)?;
        let dest = path.under(&self.dir);
        if let Some(parent) = dest.parent() {
            mkdir_all(parent)?;
        }
        self.count(bytes.len() as u64)?;
        let sha256 = write_new(&dest, &mut &bytes[..], bytes.len() as u64, mode, 0)?;
        self.entries.insert(
            path.clone(),
            Entry {
                path: path.clone(),
                kind: Kind::File {
                    sha256,
                    size: bytes.len() as u64,
                },
                mode,
                uid: 0,
                gid: 0,
            },
        );
        Ok(())
    }

    fn count(&mut self, size: u64) -> Result<(), String> {
        self.bytes = self.bytes.saturating_add(size);
        if self.bytes > MAX_IMAGE_BYTES {
            return Err(format!(
                "the image unpacks to more than {}",
                crate::input::bytes(MAX_IMAGE_BYTES)
            ));
        }
        Ok(())
    }

    fn set_owner(&self, dest: &Path, owners: bool, uid: u32, gid: u32) -> Result<(), String> {
        if owners {
            lchown(dest, uid, gid)
        } else {
            Ok(())
        }
    }

    /// Every folder above `path` is a folder of the image (or not there
    /// yet, then it is made): never a link or a file, through which the
    /// entry would land somewhere else.
    fn check_parents(&self, path: &RelPath) -> Result<(), String> {
        let mut parent = path.parent();
        while let Some(p) = parent {
            if let Some(e) = self.entries.get(&p) {
                if !e.is_dir() {
                    return Err(format!(
                        "{path} lies under {p}, which the image makes a {}: it would land outside the folder it names",
                        match e.kind {
                            Kind::Symlink { .. } => "symbolic link",
                            _ => "file",
                        }
                    ));
                }
                // A declared folder: its parents were checked when it came.
                break;
            }
            parent = p.parent();
        }
        if let Some(p) = path.parent() {
            mkdir_all(&p.under(&self.dir))?;
        }
        Ok(())
    }

    /// Makes room at `path` for a non-folder entry.
    fn replace(&mut self, path: &RelPath) -> Result<(), String> {
        if self.entries.contains_key(path) {
            let below: Vec<RelPath> = self
                .entries
                .keys()
                .filter(|p| p.is_within(path))
                .cloned()
                .collect();
            for p in below.iter().rev() {
                self.remove(p)?;
            }
        }
        Ok(())
    }

    /// Removes one entry (its children first, by the caller) from the tree.
    fn remove(&mut self, path: &RelPath) -> Result<(), String> {
        let Some(entry) = self.entries.remove(path) else {
            return Ok(());
        };
        let p = path.under(&self.dir);
        let done = if entry.is_dir() {
            // Implicit folders of removed entries may remain; remove all.
            fs::remove_dir_all(&p)
        } else {
            fs::remove_file(&p)
        };
        done.or_else(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                Ok(())
            } else {
                Err(e)
            }
        })
        .map_err(|e| format!("{}: {e}", p.display()))
    }
}

fn id(raw: io::Result<u64>, path: &RelPath) -> Result<u32, String> {
    let v = raw.map_err(|e| format!("{path}: {e}"))?;
    u32::try_from(v).map_err(|_| format!("{path}: owner id {v} is out of range"))
}

fn mkdir_all(p: &Path) -> Result<(), String> {
    fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// Writes exactly `size` bytes from `from` into a new file at `dest`,
/// returning their digest.
fn write_new(
    dest: &Path,
    from: &mut dyn Read,
    size: u64,
    mode: u32,
    mtime: u64,
) -> Result<crate::package::digest::Digest, String> {
    let at = |e: io::Error| format!("{}: {e}", dest.display());
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dest)
        .map_err(at)?;
    let mut w = HashingWriter::new(io::BufWriter::with_capacity(256 << 10, file));
    let copied = io::copy(&mut from.take(size), &mut w).map_err(at)?;
    if copied != size {
        return Err(format!(
            "{}: the archive ends inside the file",
            dest.display()
        ));
    }
    let (buf, digest, _) = w.finish();
    let mut file = buf.into_inner().map_err(|e| at(e.into_error()))?;
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(at)?;
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime);
    file.set_times(fs::FileTimes::new().set_modified(when).set_accessed(when))
        .map_err(at)?;
    file.flush().map_err(at)?;
    Ok(digest)
}

pub(super) fn lchown(p: &Path, uid: u32, gid: u32) -> Result<(), String> {
    std::os::unix::fs::lchown(p, Some(uid), Some(gid)).map_err(|e| format!("{}: {e}", p.display()))
}
