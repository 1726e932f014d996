//! Atomic output: a file is written to a temporary file beside the target,
//! flushed, then renamed over it; a folder is built beside the target and
//! swapped in. A failure at any point leaves whatever the user had before
//! untouched.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Puts the folder `staged` in place of `target` (which may not exist) in
/// one step where the kernel allows it: an atomic exchange
/// (`renameat2(RENAME_EXCHANGE)`), then the old contents are deleted. On a
/// file system without exchange, the old folder is moved aside first and
/// restored if the second rename fails. The parent folder is fsynced.
pub fn replace_dir(staged: &Path, target: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(target).is_ok() {
        if exchange(staged, target).is_ok() {
            // `staged` now holds the previous contents.
            std::fs::remove_dir_all(staged)?;
        } else {
            let mut aside = staged.as_os_str().to_owned();
            aside.push(".old");
            let aside = std::path::PathBuf::from(aside);
            std::fs::rename(target, &aside)?;
            if let Err(e) = std::fs::rename(staged, target) {
                let _ = std::fs::rename(&aside, target);
                return Err(e);
            }
            std::fs::remove_dir_all(&aside)?;
        }
    } else {
        std::fs::rename(staged, target)?;
    }
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::File::open(parent).and_then(|d| d.sync_all())
}

/// Atomically exchanges two paths (Linux `renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("path contains NUL"))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves them
    // relative to the working directory like `rename` does.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("no atomic exchange"))
}
