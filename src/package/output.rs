//! The build's output folder: the layout is built in a staging folder
//! beside OUT and swapped in ([`crate::atomic::StagedDir`]). A build that
//! fails at any point removes its staging folder and leaves an earlier OUT
//! exactly as it was. OUT is only ever replaced when it is missing, empty
//! or an image layout nodeimg wrote; anything else is refused.
//!
//! Output files get fixed permissions (files 0644, folders 0755) so the
//! umask cannot make two builds differ.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::error::PackageError;
use crate::atomic::{Kind, OutputError, StagedDir};

pub const FILE_MODE: u32 = 0o644;
pub const DIR_MODE: u32 = 0o755;

/// A staging folder that becomes OUT on [`Staging::commit`].
pub struct Staging(StagedDir);

impl From<OutputError> for PackageError {
    fn from(e: OutputError) -> Self {
        match e {
            OutputError::Io { path, source } => PackageError::Io { path, source },
            OutputError::Refused { path, reason } => PackageError::Output {
                path,
                message: reason,
            },
            OutputError::Busy { path, lock } => PackageError::Output {
                message: crate::atomic::busy_message(&lock),
                path,
            },
        }
    }
}

impl Staging {
    /// Checks that OUT may be replaced, locks it and creates the staging
    /// folder next to it (same file system, so the swap is atomic).
    pub fn new(out: &Path) -> Result<Self, PackageError> {
        Ok(Self(StagedDir::new(out, Kind::Layout, &[])?))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// Flushes every folder of the staged tree, then swaps it in for OUT.
    pub fn commit(self) -> Result<(), PackageError> {
        Ok(self.0.commit()?)
    }
}

/// The manifest digest OUT's `index.json` gives for `tag`, read before OUT
/// is replaced, so `build` can warn when a tag is about to name different
/// content. A missing, oversized or unreadable index is `None`: this is a
/// courtesy check, never a reason to fail.
pub fn tagged_digest(out: &Path, tag: &str) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    const MAX_INDEX: u64 = 1 << 20;
    let path = out.join("index.json");
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_INDEX).read_to_end(&mut bytes).ok()?;
    let index: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    index["manifests"]
        .as_array()?
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .and_then(|m| m["digest"].as_str())
        .map(str::to_string)
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

/// Files written but not yet flushed, flushed together by [`Unsynced::sync`]:
/// each `fsync` of a new file on a journalling file system waits for its own
/// journal commit (tens of milliseconds on a busy disk), and flushes issued
/// at once share one.
#[derive(Default)]
pub struct Unsynced(Vec<(std::path::PathBuf, File)>);

impl Unsynced {
    /// Writes a whole content-addressed file with mode 0644, to be flushed
    /// by [`Self::sync`], unless the file is there already (another writer
    /// of the same bytes made it first, and flushes it).
    pub fn write_new(&mut self, path: &Path, bytes: &[u8]) -> Result<(), PackageError> {
        let mut f = match File::create_new(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
            Err(e) => return Err(PackageError::io(path)(e)),
        };
        f.write_all(bytes).map_err(PackageError::io(path))?;
        f.set_permissions(fs::Permissions::from_mode(FILE_MODE))
            .map_err(PackageError::io(path))?;
        self.0.push((path.to_path_buf(), f));
        Ok(())
    }

    /// Takes over the files `other` has yet to flush.
    pub fn extend(&mut self, other: Unsynced) {
        self.0.extend(other.0);
    }

    /// Flushes every file to disk, all at once (one thread each); the first
    /// failure is the error.
    pub fn sync(self) -> Result<(), PackageError> {
        std::thread::scope(|scope| {
            let flushes: Vec<_> = self
                .0
                .iter()
                .map(|(path, f)| scope.spawn(move || f.sync_all().map_err(PackageError::io(path))))
                .collect();
            flushes
                .into_iter()
                .try_for_each(|t| t.join().expect("an fsync does not panic"))
        })
    }
}

/// Fixes the mode of a written file and flushes it to disk.
pub fn finish_file(f: &File, path: &Path) -> Result<(), PackageError> {
    f.set_permissions(fs::Permissions::from_mode(FILE_MODE))
        .map_err(PackageError::io(path))?;
    f.sync_all().map_err(PackageError::io(path))
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

    #[test]
    fn unsynced_files_are_written_with_the_fixed_mode_and_flushed_together() {
        let dir = tempfile::tempdir().unwrap();
        let mut unsynced = Unsynced::default();
        for (name, bytes) in [("a", &b"one"[..]), ("b", b""), ("c", b"three")] {
            unsynced.write_new(&dir.path().join(name), bytes).unwrap();
        }
        // Another writer's file of the same name is left to that writer.
        let mut other = Unsynced::default();
        other.write_new(&dir.path().join("a"), b"one").unwrap();
        assert!(other.0.is_empty());
        unsynced.extend(other);
        unsynced.sync().unwrap();
        for (name, bytes) in [("a", &b"one"[..]), ("b", b""), ("c", b"three")] {
            let path = dir.path().join(name);
            assert_eq!(fs::read(&path).unwrap(), bytes);
            assert_eq!(
                fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                FILE_MODE
            );
        }
        let err = Unsynced::default()
            .write_new(&dir.path().join("missing/x"), b"x")
            .unwrap_err();
        assert!(err.to_string().contains("missing/x"), "{err}");
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
    fn reads_the_digest_a_tag_names() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(tagged_digest(dir.path(), "1.0"), None);
        fs::write(
            dir.path().join("index.json"),
            r#"{"schemaVersion":2,"manifests":[{"digest":"sha256:aa","annotations":{"org.opencontainers.image.ref.name":"1.0"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            tagged_digest(dir.path(), "1.0").as_deref(),
            Some("sha256:aa")
        );
        assert_eq!(tagged_digest(dir.path(), "2.0"), None);
        fs::write(dir.path().join("index.json"), b"not json").unwrap();
        assert_eq!(tagged_digest(dir.path(), "1.0"), None);
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
