//! Writes rendered trees to a folder, atomically: everything is written into
//! a fresh folder beside the target, flushed, then swapped in
//! ([`crate::atomic::replace_dir`]). A failure at any point leaves the
//! target exactly as it was.

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
    let swapped = crate::atomic::replace_dir(&staged, dir);
    if swapped.is_err() {
        let _ = std::fs::remove_dir_all(&staged);
    }
    swapped
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
