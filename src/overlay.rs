//! The blueprint's `files` overlay: a folder whose tree is laid onto `/` in
//! the layer, verbatim. Both the blueprint id (`blueprint::identity`) and the
//! overlay layer (`package`) are made from one scan of it, so the scan sits
//! below both; `package::overlay` finds a blueprint's overlay folder.
//!
//! Scanning lists what the folder holds without reading file contents (the
//! layer writer streams them later). Only what a layer can faithfully carry
//! is accepted: regular files, directories, and symbolic links whose target
//! stays inside the layer, followed through the overlay's other links (as
//! extracting the layer into a folder would), not only read as text. Device
//! nodes, sockets, FIFOs, names that are not UTF-8 or hold control characters
//! (a newline in a member name forges lines in every listing of the layer),
//! and links that escape are refused, naming the path. Absolute link targets
//! are layer-rooted by design: `/etc/x` means the node's `/etc/x`. Modes are
//! normalised so the build does not depend on the checkout's umask:
//! files 0644, or 0755 when the source has any execute bit; directories
//! 0755; unless `files.modes` sets one explicitly.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::tree::{Tree, check_path};

/// Files and tar entries larger than this are refused: the ustar size field
/// holds 11 octal digits, and a node-configuration layer has no use for
/// such files.
pub const MAX_FILE_SIZE: u64 = 0o777_7777_7777;

/// Why the overlay cannot go into a layer, naming the path.
#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    /// An entry a layer cannot carry (device, socket, FIFO, escaping symlink,
    /// unusable name, …), or a mode set on a path the overlay lacks.
    #[error("overlay entry {}: {message}", path.display())]
    Refused { path: PathBuf, message: String },

    /// Reading the folder failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OverlayError + '_ {
    move |source| OverlayError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An overlay folder and its explicit modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    root: PathBuf,
    /// Layer path (no leading `/`) → mode.
    modes: BTreeMap<String, u32>,
    /// The listing the blueprint id was computed from, when there is one: the
    /// layer is planned from the same walk, so the overlay is listed (one
    /// `lstat` per file) once per build, and the id and the layer describe
    /// the same files.
    listed: Option<Arc<[OverlayEntry]>>,
    /// The SHA-256 of each entry of `listed` (same order; `None` for what is
    /// not a file), when the blueprint id computed them from that listing.
    sums: Option<Arc<[Option<[u8; 32]>]>>,
}

/// One thing found in the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlayEntry {
    /// Layer path: relative, `/`-separated.
    pub path: String,
    /// Where it is on disk.
    pub source: PathBuf,
    pub mode: u32,
    pub kind: OverlayKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverlayKind {
    Dir,
    File { size: u64, stamp: Stamp },
    Symlink { target: String },
}

/// A file's identity and change times as the file system reports them.
/// Any write changes `ctime` (which no user can set back), so an equal
/// stamp means unchanged content; the layer cache relies on that instead of
/// reading every byte of a large overlay again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

/// How long after a file's last change its stamp is trusted to stand for its
/// content (the "racy clean" problem git documents in `racy-git.txt`).
///
/// A file system stamps a change with a coarse clock: Linux takes the time
/// from the last timer tick (1 to 10 ms old), FAT keeps 2-second mtimes, and a
/// network file system takes its server's clock. So a file written again in
/// the same tick as the moment a cache read it keeps the stamp that cache
/// recorded, although its content changed. Both caches that trust stamps
/// (the layer cache and the overlay file digests) therefore only record a
/// file whose mtime and ctime are older than the moment the build began
/// minus this margin; a file changed more recently is read again by the next
/// build, which costs time, never correctness. A file server whose clock is
/// more than this behind the build machine's defeats the rule; `--no-cache`
/// reads everything.
pub const RACY_MARGIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The bound a stamp must be older than to be recorded by a cache, for a
/// build that began at `start` (see [`RACY_MARGIN`]).
pub fn settled_before(start: std::time::SystemTime) -> i128 {
    let since = |t: std::time::SystemTime| match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_nanos()).unwrap_or(i128::MAX),
        Err(e) => -i128::try_from(e.duration().as_nanos()).unwrap_or(i128::MAX),
    };
    since(start) - since(std::time::UNIX_EPOCH + RACY_MARGIN)
}

impl Stamp {
    /// True when both change times are older than `bound` (from
    /// [`settled_before`]), so no later write can have kept this stamp.
    pub fn settled(&self, bound: i128) -> bool {
        self.mtime_ns < bound && self.ctime_ns < bound
    }

    pub fn of(meta: &std::fs::Metadata) -> Self {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }
}

impl Overlay {
    /// An overlay rooted at `root`, with default modes.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            modes: BTreeMap::new(),
            listed: None,
            sums: None,
        }
    }

    /// Sets the mode of one overlay path, given as on the node
    /// (`/usr/local/bin/x`) or as a layer path (`usr/local/bin/x`).
    pub fn with_mode(mut self, path: &str, mode: u32) -> Self {
        self.modes
            .insert(path.trim_start_matches('/').to_string(), mode & 0o7777);
        self
    }

    /// The same overlay, with the listing already taken of its folder and
    /// modes (the one the blueprint id was computed from), which
    /// [`listing`](Self::listing) then returns instead of scanning again.
    pub fn with_listing(mut self, listed: Option<Arc<[OverlayEntry]>>) -> Self {
        self.listed = listed;
        self.sums = None;
        self
    }

    /// The same overlay, with the SHA-256 of each entry of its listing (in
    /// its order; `None` for what is not a file), as the blueprint id
    /// computed them; ignored unless they are as many as the entries.
    pub fn with_sums(mut self, sums: Option<Arc<[Option<[u8; 32]>]>>) -> Self {
        self.sums = sums.filter(|s| self.listed.as_ref().is_some_and(|l| l.len() == s.len()));
        self
    }

    /// The file digests given with [`with_sums`](Self::with_sums).
    pub fn sums(&self) -> Option<&[Option<[u8; 32]>]> {
        self.sums.as_deref()
    }

    /// What the overlay holds: the listing taken for the blueprint id when
    /// there is one, else a fresh [`scan`](Self::scan).
    pub fn listing(&self) -> Result<Arc<[OverlayEntry]>, OverlayError> {
        match &self.listed {
            Some(l) => Ok(Arc::clone(l)),
            None => self.scan().map(Arc::from),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Explicit modes by layer path.
    pub fn modes(&self) -> &BTreeMap<String, u32> {
        &self.modes
    }

    /// Lists the overlay, sorted by layer path, refusing what a layer must
    /// not carry.
    pub fn scan(&self) -> Result<Vec<OverlayEntry>, OverlayError> {
        let refuse = |path: &Path, message: String| OverlayError::Refused {
            path: path.to_path_buf(),
            message,
        };
        let meta = std::fs::metadata(&self.root).map_err(io(&self.root))?;
        if !meta.is_dir() {
            return Err(refuse(&self.root, "the overlay is not a directory".into()));
        }
        let mut entries = Vec::new();
        let walk = walkdir::WalkDir::new(&self.root)
            .min_depth(1)
            .follow_links(false)
            .sort_by_file_name();
        for item in walk {
            let item = item.map_err(|e| {
                let path = e.path().unwrap_or(&self.root).to_path_buf();
                let message = e.to_string();
                match e.into_io_error() {
                    Some(source) => OverlayError::Io { path, source },
                    None => OverlayError::Refused { path, message },
                }
            })?;
            let source = item.path();
            let rel = source
                .strip_prefix(&self.root)
                .map_err(|_| refuse(source, "walked outside the overlay folder".into()))?;
            let path = layer_path(rel).ok_or_else(|| {
                refuse(
                    source,
                    "the name is not valid UTF-8; layer paths must be".into(),
                )
            })?;
            check_path(&path).map_err(|e| refuse(source, e.message))?;
            check_name(&path).map_err(|m| refuse(source, m))?;
            let ft = item.file_type();
            let meta = item.metadata().map_err(|e| {
                let message = e.to_string();
                match e.into_io_error() {
                    Some(io) => OverlayError::Io {
                        path: source.to_path_buf(),
                        source: io,
                    },
                    None => refuse(source, message),
                }
            })?;
            let override_mode = self.modes.get(&path).copied();
            let (mode, kind) = if ft.is_dir() {
                (override_mode.unwrap_or(0o755), OverlayKind::Dir)
            } else if ft.is_file() {
                if meta.len() > MAX_FILE_SIZE {
                    return Err(refuse(
                        source,
                        format!("{} bytes is larger than a layer file may be", meta.len()),
                    ));
                }
                let exec = meta.permissions().mode() & 0o111 != 0;
                let default = if exec { 0o755 } else { 0o644 };
                (
                    override_mode.unwrap_or(default),
                    OverlayKind::File {
                        size: meta.len(),
                        stamp: Stamp::of(&meta),
                    },
                )
            } else if ft.is_symlink() {
                if override_mode.is_some() {
                    return Err(refuse(
                        source,
                        "`files.modes` sets a mode on a symbolic link; links have no mode of their own"
                            .into(),
                    ));
                }
                let target = std::fs::read_link(source).map_err(io(source))?;
                let target = target
                    .to_str()
                    .ok_or_else(|| refuse(source, "the link target is not valid UTF-8".into()))?;
                check_name(target).map_err(|m| refuse(source, format!("the link target: {m}")))?;
                // The tree's own rule decides whether a link escapes.
                Tree::new()
                    .add_symlink(&path, target)
                    .map_err(|e| refuse(source, e.message))?;
                (
                    0o777,
                    OverlayKind::Symlink {
                        target: target.to_string(),
                    },
                )
            } else {
                let what = if ft.is_fifo() {
                    "a FIFO"
                } else if ft.is_socket() {
                    "a socket"
                } else if ft.is_block_device() {
                    "a block device"
                } else if ft.is_char_device() {
                    "a character device"
                } else {
                    "not a regular file, directory or symbolic link"
                };
                return Err(refuse(
                    source,
                    format!("is {what}; an overlay may hold only files, directories and links"),
                ));
            };
            entries.push(OverlayEntry {
                path,
                source: source.to_path_buf(),
                mode,
                kind,
            });
        }
        for path in self.modes.keys() {
            if !entries.iter().any(|e| &e.path == path) {
                return Err(refuse(
                    &self.root.join(path),
                    format!("`files.modes` names `/{path}`, which the overlay does not contain"),
                ));
            }
        }
        entries.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
        check_links(&entries).map_err(|(source, message)| refuse(source, message))?;
        Ok(entries)
    }
}

/// Refuses control characters in a layer path or link target.
fn check_name(name: &str) -> Result<(), String> {
    match name.chars().find(|c| c.is_control()) {
        Some(c) => Err(format!(
            "the name holds the control character {}; layer paths may not",
            c.escape_default()
        )),
        None => Ok(()),
    }
}

/// Links followed in one resolution before giving up, as the kernel's MAXSYMLINKS.
const MAX_LINK_HOPS: u32 = 40;

/// Follows every link's target through the overlay's other links and refuses one that
/// climbs above the layer root on the way (`etc/up -> ..` with
/// `etc/x -> up/../../etc/shadow` passes a textual check but escapes once extracted).
fn check_links(entries: &[OverlayEntry]) -> Result<(), (&Path, String)> {
    let links: BTreeMap<&str, &str> = entries
        .iter()
        .filter_map(|e| match &e.kind {
            OverlayKind::Symlink { target } => Some((e.path.as_str(), target.as_str())),
            _ => None,
        })
        .collect();
    for entry in entries {
        let OverlayKind::Symlink { target } = &entry.kind else {
            continue;
        };
        resolve_in_layer(&links, &entry.path, target).map_err(|m| (entry.source.as_path(), m))?;
    }
    Ok(())
}

/// Resolves `target` of the link at `link` inside the layer, through `links`.
fn resolve_in_layer<'a>(
    links: &BTreeMap<&'a str, &'a str>,
    link: &'a str,
    target: &'a str,
) -> Result<(), String> {
    let mut current: Vec<&'a str> = link.split('/').collect();
    current.pop();
    if target.starts_with('/') {
        current.clear();
    }
    let mut pending: std::collections::VecDeque<&'a str> = target.split('/').collect();
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        match part {
            "" | "." => {}
            ".." => {
                if current.pop().is_none() {
                    return Err(format!(
                        "symlink target `{target}` leaves the layer (followed through the overlay's links)"
                    ));
                }
            }
            name => {
                current.push(name);
                let here = current.join("/");
                if let Some(next) = links.get(here.as_str()) {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Err(format!(
                            "symlink target `{target}`: too many levels of links (a loop?)"
                        ));
                    }
                    current.pop();
                    if next.starts_with('/') {
                        current.clear();
                    }
                    for piece in next.split('/').rev() {
                        pending.push_front(piece);
                    }
                }
            }
        }
    }
    Ok(())
}

/// `a/b/c` from a relative path, if every part is UTF-8.
fn layer_path(rel: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = rel.iter().map(|c| c.to_str()).collect();
    Some(parts?.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn perm(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn modes_are_normalised_and_overridable() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("usr/local/bin")).unwrap();
        std::fs::write(root.join("usr/local/bin/tool"), b"#!/bin/sh\n").unwrap();
        std::fs::write(root.join("usr/local/bin/secret"), b"x").unwrap();
        std::fs::write(root.join("motd"), b"hi").unwrap();
        perm(&root.join("usr/local/bin/tool"), 0o700);
        perm(&root.join("usr/local/bin/secret"), 0o666);
        perm(&root.join("motd"), 0o600);
        perm(&root.join("usr/local"), 0o700);
        symlink("bin/tool", root.join("usr/local/t")).unwrap();
        let scan = Overlay::new(root)
            .with_mode("/usr/local/bin/secret", 0o600)
            .scan()
            .unwrap();
        let got: Vec<(&str, u32)> = scan.iter().map(|e| (e.path.as_str(), e.mode)).collect();
        assert_eq!(
            got,
            [
                ("motd", 0o644),
                ("usr", 0o755),
                ("usr/local", 0o755),
                ("usr/local/bin", 0o755),
                ("usr/local/bin/secret", 0o600),
                ("usr/local/bin/tool", 0o755),
                ("usr/local/t", 0o777),
            ]
        );
        assert_eq!(
            scan[6].kind,
            OverlayKind::Symlink {
                target: "bin/tool".into()
            }
        );
    }

    #[test]
    fn refuses_fifos_escaping_links_and_stray_modes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("etc")).unwrap();
        let fifo = root.join("etc/pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let err = Overlay::new(root).scan().unwrap_err().to_string();
        assert!(err.contains("etc/pipe") && err.contains("FIFO"), "{err}");
        std::fs::remove_file(&fifo).unwrap();

        symlink("../../../etc/shadow", root.join("etc/escape")).unwrap();
        let err = Overlay::new(root).scan().unwrap_err().to_string();
        assert!(
            err.contains("etc/escape") && err.contains("leaves the layer"),
            "{err}"
        );
        std::fs::remove_file(root.join("etc/escape")).unwrap();

        let err = Overlay::new(root)
            .with_mode("/etc/missing", 0o600)
            .scan()
            .unwrap_err()
            .to_string();
        assert!(err.contains("/etc/missing"), "{err}");
        assert!(Overlay::new(root.join("nope")).scan().is_err());
    }

    #[test]
    fn links_are_followed_through_earlier_links_not_only_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("etc")).unwrap();
        // Each is fine as text; together `etc/x` reaches ../etc/shadow once extracted.
        symlink("..", root.join("etc/up")).unwrap();
        symlink("up/../../etc/shadow", root.join("etc/x")).unwrap();
        let err = Overlay::new(root).scan().unwrap_err().to_string();
        assert!(
            err.contains("etc/x") && err.contains("leaves the layer"),
            "{err}"
        );
        std::fs::remove_file(root.join("etc/x")).unwrap();
        // Through an absolute link to the root, too.
        symlink("/", root.join("etc/top")).unwrap();
        symlink("top/../etc/shadow", root.join("etc/y")).unwrap();
        let err = Overlay::new(root).scan().unwrap_err().to_string();
        assert!(
            err.contains("etc/y") && err.contains("leaves the layer"),
            "{err}"
        );
        std::fs::remove_file(root.join("etc/y")).unwrap();
        // Loops are refused, links that stay inside are kept.
        symlink("b", root.join("etc/a")).unwrap();
        symlink("a", root.join("etc/b")).unwrap();
        symlink("a/x", root.join("etc/c")).unwrap();
        let err = Overlay::new(root).scan().unwrap_err().to_string();
        assert!(err.contains("too many levels"), "{err}");
        std::fs::remove_file(root.join("etc/b")).unwrap();
        std::fs::remove_file(root.join("etc/c")).unwrap();
        symlink("up/etc/hostname", root.join("etc/z")).unwrap();
        let scan = Overlay::new(root).scan().unwrap();
        assert!(scan.iter().any(|e| e.path == "etc/z"));
    }

    #[test]
    fn names_with_control_characters_are_refused() {
        for name in ["a\nb", "tab\there", "bell\u{7}", "del\u{7f}"] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("etc")).unwrap();
            std::fs::write(dir.path().join("etc").join(name), b"x").unwrap();
            let err = Overlay::new(dir.path()).scan().unwrap_err().to_string();
            assert!(err.contains("control character"), "{name:?}: {err}");
        }
        let dir = tempfile::tempdir().unwrap();
        symlink("x\ny", dir.path().join("l")).unwrap();
        let err = Overlay::new(dir.path()).scan().unwrap_err().to_string();
        assert!(err.contains("control character"), "{err}");
    }
}
