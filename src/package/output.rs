//! Atomic output folder: the layout is built in a temporary folder beside
//! OUT, flushed to disk, then swapped in with one rename. A build that
//! fails at any point removes its temporary folder and leaves an earlier
//! OUT exactly as it was.
//!
//! Output files get fixed permissions (files 0644, folders 0755) so the
//! umask cannot make two builds differ. OUT is only ever replaced when it
//! is empty or an OCI image layout (it has an `oci-layout` file); any other
//! existing path is refused rather than deleted.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::PackageError;

pub const FILE_MODE: u32 = 0o644;
pub const DIR_MODE: u32 = 0o755;

/// A temporary folder that becomes OUT on [`Staging::commit`].
pub struct Staging {
    dir: tempfile::TempDir,
    out: PathBuf,
}

impl Staging {
    /// Checks that OUT may be replaced and creates the temporary folder
    /// next to it (same file system, so the final rename is atomic).
    pub fn new(out: &Path) -> Result<Self, PackageError> {
        let refuse = |message: &str| PackageError::Output {
            path: out.to_path_buf(),
            message: message.to_string(),
        };
        let name = out
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| refuse("needs a final path component that is valid UTF-8"))?;
        match fs::symlink_metadata(out) {
            Ok(m) if m.is_dir() => {
                let empty = fs::read_dir(out)
                    .map_err(PackageError::io(out))?
                    .next()
                    .is_none();
                if !empty && !out.join("oci-layout").is_file() {
                    return Err(refuse(
                        "exists and is not an OCI image layout (no `oci-layout` file); refusing to replace it",
                    ));
                }
            }
            Ok(_) => {
                return Err(refuse(
                    "exists and is not a directory; refusing to replace it",
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(PackageError::io(out)(e)),
        }
        let parent = parent_of(out);
        fs::create_dir_all(parent).map_err(PackageError::io(parent))?;
        let dir = tempfile::Builder::new()
            .prefix(&format!(".{name}.tmp-"))
            .tempdir_in(parent)
            .map_err(PackageError::io(parent))?;
        set_mode(dir.path(), DIR_MODE)?;
        Ok(Self {
            dir,
            out: out.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Flushes every folder of the staged tree, then swaps it in for OUT.
    pub fn commit(self) -> Result<(), PackageError> {
        sync_dirs(self.dir.path())?;
        let staged = self.dir.keep();
        let result = swap_in(&staged, &self.out);
        if result.is_err() {
            let _ = fs::remove_dir_all(&staged);
        }
        result
    }
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn swap_in(staged: &Path, out: &Path) -> Result<(), PackageError> {
    crate::atomic::replace_dir(staged, out).map_err(PackageError::io(out))
}

pub fn set_mode(path: &Path, mode: u32) -> Result<(), PackageError> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(PackageError::io(path))
}

/// Creates a folder (and parents) with mode 0755 whatever the umask.
pub fn create_dir(path: &Path) -> Result<(), PackageError> {
    fs::create_dir_all(path).map_err(PackageError::io(path))?;
    set_mode(path, DIR_MODE)
}

/// Writes a whole file with mode 0644, flushed to disk.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), PackageError> {
    let mut f = File::create(path).map_err(PackageError::io(path))?;
    f.write_all(bytes).map_err(PackageError::io(path))?;
    finish_file(&f, path)
}

/// Fixes the mode of a written file and flushes it to disk.
pub fn finish_file(f: &File, path: &Path) -> Result<(), PackageError> {
    f.set_permissions(fs::Permissions::from_mode(FILE_MODE))
        .map_err(PackageError::io(path))?;
    f.sync_all().map_err(PackageError::io(path))
}

fn sync_dirs(dir: &Path) -> Result<(), PackageError> {
    for entry in fs::read_dir(dir).map_err(PackageError::io(dir))? {
        let entry = entry.map_err(PackageError::io(dir))?;
        if entry.file_type().map_err(PackageError::io(dir))?.is_dir() {
            sync_dirs(&entry.path())?;
        }
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(PackageError::io(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(out: &Path, content: &[u8]) -> Result<(), PackageError> {
        let s = Staging::new(out)?;
        create_dir(&s.path().join("blobs"))?;
        write_file(&s.path().join("oci-layout"), content)?;
        s.commit()
    }

    fn leftovers(parent: &Path) -> Vec<String> {
        fs::read_dir(parent)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect()
    }

    #[test]
    fn replaces_a_layout_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("img");
        stage(&out, b"one").unwrap();
        assert_eq!(fs::read(out.join("oci-layout")).unwrap(), b"one");
        stage(&out, b"two").unwrap();
        assert_eq!(fs::read(out.join("oci-layout")).unwrap(), b"two");
        let mode = fs::metadata(&out).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, DIR_MODE);
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }

    #[test]
    fn refuses_to_replace_other_things() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, b"x").unwrap();
        assert!(Staging::new(&file).is_err());
        let other = dir.path().join("other");
        fs::create_dir(&other).unwrap();
        fs::write(other.join("keep.txt"), b"mine").unwrap();
        let err = Staging::new(&other).err().unwrap().to_string();
        assert!(err.contains("not an OCI image layout"), "{err}");
        assert_eq!(fs::read(other.join("keep.txt")).unwrap(), b"mine");
    }
}
