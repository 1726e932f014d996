//! The root an image is applied onto, seen the way a process chrooted into
//! it sees it: every path resolved inside the root (an absolute symbolic
//! link such as `/var/run -> /run` points into the root, never out of it),
//! what stands at a path read as an [`Entry`], and the few writes apply
//! makes — each one a rename of a complete file into place, so a kill at
//! any moment leaves the old or the new file, never half of one.

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Component, Path, PathBuf};

use super::entry::{Entry, Kind, RelPath};
use crate::package::digest::{Digest, HashingWriter};

/// Links followed while resolving one path, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// A root folder (`/` on a running node, the image pipeline's mount point).
#[derive(Debug, Clone)]
pub struct Root {
    dir: PathBuf,
    /// Owners are set and compared (apply runs as root); without root,
    /// files belong to the caller and owners are not part of "the same".
    owners: bool,
}

impl Root {
    pub fn new(dir: &Path) -> io::Result<Self> {
        let dir = fs::canonicalize(dir)?;
        if !fs::metadata(&dir)?.is_dir() {
            return Err(io::Error::other("not a folder"));
        }
        // SAFETY: geteuid has no preconditions.
        let owners = unsafe { libc::geteuid() } == 0;
        Ok(Root { dir, owners })
    }

    pub fn owners(&self) -> bool {
        self.owners
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn is_host(&self) -> bool {
        self.dir == Path::new("/")
    }

    /// Where the distribution's steps run: here for `/`, chrooted into the root
    /// otherwise (a pipeline's folder, or the host's root from a container).
    pub fn place_for_steps(&self) -> super::enter::Place {
        if self.is_host() {
            super::enter::Place::Here
        } else {
            super::enter::Place::Chroot(self.dir.clone())
        }
    }

    /// Where runtime actions (daemon reloads, restarts, reboot) run: here for `/`, in
    /// the host's namespaces otherwise (the root is the host's, seen from a container).
    pub fn place_for_actions(&self) -> super::enter::Place {
        if self.is_host() {
            super::enter::Place::Here
        } else {
            super::enter::Place::Host
        }
    }

    /// Where `path` really is: its folders resolved inside the root (links
    /// followed as chroot would), its last component not followed. A folder
    /// that does not exist yet is taken as it is named.
    pub fn locate(&self, path: &RelPath) -> io::Result<PathBuf> {
        let mut real = self.dir.clone();
        let mut pending: Vec<String> = path.parent().map_or_else(Vec::new, |p| {
            p.as_str().split('/').rev().map(str::to_string).collect()
        });
        let mut links = 0;
        while let Some(part) = pending.pop() {
            match part.as_str() {
                "" | "." => continue,
                ".." => {
                    if real != self.dir {
                        real.pop();
                    }
                    continue;
                }
                _ => {}
            }
            let next = real.join(&part);
            match fs::symlink_metadata(&next) {
                Ok(m) if m.file_type().is_symlink() => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io::Error::other(format!(
                            "{path}: more than {MAX_LINKS} symbolic links in its folders"
                        )));
                    }
                    let target = fs::read_link(&next)?;
                    if target.is_absolute() {
                        real = self.dir.clone();
                    }
                    let parts: Vec<String> = target
                        .components()
                        .filter_map(|c| match c {
                            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                            Component::ParentDir => Some("..".into()),
                            _ => None,
                        })
                        .collect();
                    pending.extend(parts.into_iter().rev());
                }
                Ok(m) if m.is_dir() => real = next,
                Ok(_) => {
                    return Err(io::Error::other(format!(
                        "{path}: {} is not a folder",
                        next.display()
                    )));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => real = next,
                Err(e) => return Err(e),
            }
        }
        Ok(real.join(path.name()))
    }

    /// What stands at `path` now (`None`: nothing). `hash`: read a file's
    /// bytes for its digest (otherwise the digest is left empty-handed as
    /// the size only, see [`Current`]).
    pub fn current(&self, path: &RelPath) -> io::Result<Option<Current>> {
        let real = self.locate(path)?;
        let meta = match fs::symlink_metadata(&real) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(Some(Current {
            real,
            meta,
            owners: self.owners,
        }))
    }
}

/// A path as it stands in the root.
pub struct Current {
    pub real: PathBuf,
    pub meta: fs::Metadata,
    pub owners: bool,
}

impl Current {
    pub fn is_dir(&self) -> bool {
        self.meta.is_dir()
    }

    /// The entry this is, hashing a regular file's bytes.
    pub fn entry(&self, path: &RelPath) -> io::Result<Entry> {
        let ft = self.meta.file_type();
        let kind = if ft.is_dir() {
            Kind::Dir
        } else if ft.is_symlink() {
            Kind::Symlink {
                target: fs::read_link(&self.real)?.to_string_lossy().into_owned(),
            }
        } else if ft.is_file() {
            let mut f = fs::File::open(&self.real)?;
            let mut w = HashingWriter::new(io::sink());
            let size = io::copy(&mut f, &mut w)?;
            let (_, sha256, _) = w.finish();
            Kind::File { sha256, size }
        } else {
            return Err(io::Error::other(format!(
                "{}: a device, FIFO or socket, which apply does not replace",
                self.real.display()
            )));
        };
        Ok(Entry {
            path: path.clone(),
            kind,
            mode: if ft.is_symlink() {
                0o777
            } else {
                self.meta.mode() & 0o7777
            },
            uid: self.meta.uid(),
            gid: self.meta.gid(),
        })
    }

    /// Same kind, mode and owner as `want` (and same bytes for a file).
    pub fn matches(&self, path: &RelPath, want: &Entry) -> io::Result<bool> {
        let ft = self.meta.file_type();
        let shallow = match &want.kind {
            Kind::Dir => ft.is_dir(),
            Kind::Symlink { .. } => ft.is_symlink(),
            Kind::File { size, .. } => ft.is_file() && self.meta.len() == *size,
        };
        if !shallow
            || (self.owners && (self.meta.uid() != want.uid || self.meta.gid() != want.gid))
            || (!ft.is_symlink() && self.meta.mode() & 0o7777 != want.mode)
        {
            return Ok(false);
        }
        Ok(match &want.kind {
            Kind::Dir => true,
            _ => self.entry(path)?.kind == want.kind,
        })
    }
}

/// Puts a complete copy of `src` (a file or link) at `dest`: a hard link
/// (or, across file systems, a copy with the same mode, owner and times,
/// synced) under a temporary name beside `dest`, then one rename over it.
pub fn place(src: &Path, dest: &Path) -> io::Result<()> {
    let dir = crate::atomic::parent_dir(dest);
    let name = dest
        .file_name()
        .ok_or_else(|| io::Error::other("a path without a name"))?;
    let tmp = dir.join(format!(
        ".{}.nodeimg-new-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    let meta = fs::symlink_metadata(src)?;
    // Already the same file (a rerun after a kill): rename(2) would do
    // nothing and leave the temporary name behind.
    if fs::symlink_metadata(dest).is_ok_and(|d| d.dev() == meta.dev() && d.ino() == meta.ino()) {
        return Ok(());
    }
    if meta.file_type().is_symlink() {
        symlink(fs::read_link(src)?, &tmp)?;
        std::os::unix::fs::lchown(&tmp, Some(meta.uid()), Some(meta.gid())).or_else(not_root)?;
    } else if fs::hard_link(src, &tmp).is_err() {
        copy_file(src, &tmp, &meta)?;
    }
    fs::rename(&tmp, dest).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// A copy keeping what a byte-identical restore needs.
fn copy_file(src: &Path, dest: &Path, meta: &fs::Metadata) -> io::Result<()> {
    let mut from = fs::File::open(src)?;
    let mut to = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dest)?;
    io::copy(&mut from, &mut to)?;
    to.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
    std::os::unix::fs::fchown(&to, Some(meta.uid()), Some(meta.gid())).or_else(not_root)?;
    to.set_times(
        fs::FileTimes::new()
            .set_accessed(meta.accessed()?)
            .set_modified(meta.modified()?),
    )?;
    to.sync_all()
}

/// Changing owners needs root; without it files stay the caller's, which
/// is what an unprivileged apply into a folder of its own means.
fn not_root(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::PermissionDenied && unsafe { libc::geteuid() } != 0 {
        Ok(())
    } else {
        Err(e)
    }
}

/// A folder at `real` with the entry's mode and owner (made or changed).
pub fn make_dir(real: &Path, e: &Entry) -> io::Result<()> {
    match fs::create_dir(real) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists && real.is_dir() => {}
        Err(err) => return Err(err),
    }
    set_meta(real, e)
}

pub fn set_meta(real: &Path, e: &Entry) -> io::Result<()> {
    std::os::unix::fs::lchown(real, Some(e.uid), Some(e.gid)).or_else(not_root)?;
    if !matches!(e.kind, Kind::Symlink { .. }) {
        fs::set_permissions(real, fs::Permissions::from_mode(e.mode))?;
    }
    Ok(())
}

/// Removes what stands at `real`: a file or link, or a folder when empty.
/// A folder that still holds something (files nodeimg did not write) stays.
pub fn remove(real: &Path) -> io::Result<bool> {
    let meta = match fs::symlink_metadata(real) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    if meta.is_dir() {
        match fs::remove_dir(real) {
            Ok(()) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => Ok(false),
            Err(e) => Err(e),
        }
    } else {
        fs::remove_file(real).map(|()| true)
    }
}

/// Flushes a folder's entries (after renames into it).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// The digest of a regular file's bytes.
pub fn file_digest(p: &Path) -> io::Result<Digest> {
    let mut f = fs::File::open(p)?;
    let mut w = HashingWriter::new(io::sink());
    io::copy(&mut f, &mut w)?;
    Ok(w.finish().1)
}
