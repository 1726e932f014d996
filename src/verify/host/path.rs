//! Resolving a path of the verified machine to a local path under a root prefix, without
//! ever leaving the prefix.
//!
//! The input path must be absolute and must not name `..`: callers name machine paths, and a
//! `..` in one is a bug or an attack. Symbolic links met on the way are followed the way the
//! kernel's `RESOLVE_IN_ROOT` does: an absolute target starts again at the prefix, and a
//! relative `..` stops at the prefix. Sysfs is built from relative links
//! (`/sys/bus/pci/devices/X -> ../../../devices/pci0000:00/...`), so a fixture tree with
//! the same links behaves like the real one.
//!
//! Resolved directories are cached: a collection reads many attributes of the same device
//! directory, and resolving each prefix again would cost one `lstat` per component.

use super::error::HostErrorKind;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Links followed in one resolution before giving up, as the kernel's MAXSYMLINKS.
const MAX_LINK_HOPS: u32 = 40;

/// Checks that `path` is absolute and free of `..`, returning its normal components.
pub(super) fn machine_components(path: &Path) -> Result<Vec<&OsStr>, HostErrorKind> {
    let mut components = Vec::new();
    let mut absolute = false;
    for component in path.components() {
        match component {
            Component::RootDir => absolute = true,
            Component::CurDir => {}
            Component::Normal(name) => components.push(name),
            Component::ParentDir | Component::Prefix(_) => return Err(HostErrorKind::OutsideRoot),
        }
    }
    if absolute {
        Ok(components)
    } else {
        Err(HostErrorKind::OutsideRoot)
    }
}

/// Maps machine paths to local paths under `root`, following links inside the root.
#[derive(Debug)]
pub(super) struct RootedResolver {
    root: PathBuf,
    dirs: Mutex<HashMap<PathBuf, PathBuf>>,
}

impl RootedResolver {
    pub(super) fn new(root: PathBuf) -> Self {
        RootedResolver {
            root,
            dirs: Mutex::new(HashMap::new()),
        }
    }

    /// The local path of an already resolved machine path.
    pub(super) fn local(&self, machine: &Path) -> PathBuf {
        let mut local = self.root.clone();
        for component in machine.components() {
            if let Component::Normal(name) = component {
                local.push(name);
            }
        }
        local
    }

    /// Resolves `path` (machine path) to a machine path with no links left in it; the last
    /// component is followed only when `follow_last` is set.
    pub(super) fn resolve(&self, path: &Path, follow_last: bool) -> Result<PathBuf, HostErrorKind> {
        let components = machine_components(path)?;
        let Some((last, parents)) = components.split_last() else {
            return Ok(PathBuf::from("/"));
        };
        let parent = self.resolve_dir(parents)?;
        let candidate = parent.join(last);
        if follow_last {
            let mut hops = 0;
            self.follow(candidate, &mut hops)
        } else {
            Ok(candidate)
        }
    }

    fn resolve_dir(&self, components: &[&OsStr]) -> Result<PathBuf, HostErrorKind> {
        let key: PathBuf = std::iter::once(OsStr::new("/"))
            .chain(components.iter().copied())
            .collect();
        if let Some(found) = self
            .dirs
            .lock()
            .ok()
            .and_then(|dirs| dirs.get(&key).cloned())
        {
            return Ok(found);
        }
        let mut hops = 0;
        let resolved = self.walk(
            PathBuf::from("/"),
            components.iter().map(|c| Component::Normal(c)),
            &mut hops,
        )?;
        if let Ok(mut dirs) = self.dirs.lock() {
            dirs.insert(key, resolved.clone());
        }
        Ok(resolved)
    }

    /// Applies `components` to the resolved machine path `current`, following every link.
    fn walk<'a>(
        &self,
        mut current: PathBuf,
        components: impl Iterator<Item = Component<'a>>,
        hops: &mut u32,
    ) -> Result<PathBuf, HostErrorKind> {
        for component in components {
            match component {
                Component::ParentDir => {
                    current.pop();
                }
                Component::Normal(name) => current = self.follow(current.join(name), hops)?,
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            }
        }
        Ok(current)
    }

    /// `candidate`'s parent is resolved; follows `candidate` itself if it is a link.
    fn follow(&self, candidate: PathBuf, hops: &mut u32) -> Result<PathBuf, HostErrorKind> {
        let local = self.local(&candidate);
        match fs::symlink_metadata(&local) {
            Ok(meta) if meta.file_type().is_symlink() => {
                *hops += 1;
                if *hops > MAX_LINK_HOPS {
                    return Err(HostErrorKind::LinkLoop);
                }
                let target = fs::read_link(&local).map_err(|e| HostErrorKind::from_io(&e))?;
                let base = if target.is_absolute() {
                    PathBuf::from("/")
                } else {
                    candidate
                        .parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_else(|| PathBuf::from("/"))
                };
                self.walk(base, target.components(), hops)
            }
            // A missing component is reported by the operation that needs it.
            Ok(_) => Ok(candidate),
            Err(err) if HostErrorKind::from_io(&err) == HostErrorKind::NotFound => Ok(candidate),
            Err(err) => Err(HostErrorKind::from_io(&err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_parent_and_relative_paths() {
        assert_eq!(
            machine_components(Path::new("/sys/../etc/shadow")),
            Err(HostErrorKind::OutsideRoot)
        );
        assert_eq!(
            machine_components(Path::new("sys/class")),
            Err(HostErrorKind::OutsideRoot)
        );
        assert_eq!(
            machine_components(Path::new("/sys/./class")).map(|c| c.len()),
            Ok(2)
        );
    }
}
