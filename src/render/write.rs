//! Writes rendered trees to a folder, atomically: everything is written into
//! a fresh folder beside the target, flushed, then swapped in with one
//! rename (an exchange when the target exists). A failure at any point
//! leaves the target exactly as it was.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::tree::{Node, Tree};

/// Writes `parts` (subfolder name → tree) as the folder `dir`.
pub fn write_dir(dir: &Path, parts: &[(&str, &Tree)]) -> std::io::Result<()> {
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)?;
    let staging = tempfile::Builder::new()
        .prefix(".nodeimg-render-")
        .tempdir_in(&parent)?;
    for (name, tree) in parts {
        let root = staging.path().join(name);
        std::fs::create_dir_all(&root)?;
        for (path, node) in tree.entries() {
            let full = root.join(&path);
            match node {
                Node::Dir { mode } => {
                    std::fs::create_dir_all(&full)?;
                    std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode))?;
                }
                Node::File { mode, bytes } => {
                    let mut f = std::fs::File::create(&full)?;
                    f.write_all(&bytes)?;
                    f.sync_all()?;
                    std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode))?;
                }
                Node::Symlink { target } => std::os::unix::fs::symlink(target, &full)?,
            }
        }
    }
    std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755))?;
    let staged = staging.keep();
    let swap = if dir.exists() {
        exchange(&staged, dir)
    } else {
        std::fs::rename(&staged, dir)
    };
    match swap {
        Ok(()) => {
            // `staged` now holds the previous contents (or nothing).
            let _ = std::fs::remove_dir_all(&staged);
            if let Ok(d) = std::fs::File::open(&parent) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            Err(e)
        }
    }
}

/// Swaps two paths atomically (Linux renameat2 RENAME_EXCHANGE).
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let ca = CString::new(a.as_os_str().as_bytes())?;
    let cb = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves them
    // relative to the working directory, as rename(2) would.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_an_existing_folder_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        std::fs::create_dir_all(out.join("layer/stale")).unwrap();
        std::fs::write(out.join("layer/stale/old.conf"), "old").unwrap();
        let mut t = Tree::new();
        t.add_file("etc/a.conf", 0o600, b"new".to_vec()).unwrap();
        write_dir(&out, &[("layer", &t)]).unwrap();
        assert!(!out.join("layer/stale").exists());
        assert_eq!(std::fs::read(out.join("layer/etc/a.conf")).unwrap(), b"new");
        let mode = std::fs::metadata(out.join("layer/etc/a.conf"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o600);
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no staging folder left behind");
    }
}
