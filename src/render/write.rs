//! Writes rendered trees to a folder through [`crate::atomic::StagedDir`]:
//! everything is written into a staging folder beside the target, flushed,
//! then swapped in. A failure at any point leaves the target exactly as it
//! was, and a folder nodeimg did not write is never replaced.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::atomic::{Kind, OutputError, StagedDir};
use crate::tree::{Node, Tree};

/// Writes `parts` (subfolder name → tree; `""` for the folder itself) as
/// the folder `dir`, refusing a `dir` that holds one of `inputs`.
pub fn write_dir(
    dir: &Path,
    parts: &[(&str, &Tree)],
    inputs: &[PathBuf],
) -> Result<(), OutputError> {
    let staged = StagedDir::new(dir, Kind::Render, inputs)?;
    for (name, tree) in parts {
        let root = staged.path().join(name);
        write_tree(&root, tree).map_err(|source| OutputError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    staged.commit()
}

/// Writes `tree` under `root` (created if missing), each file flushed.
pub fn write_tree(root: &Path, tree: &Tree) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_its_own_earlier_output_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let mut old = Tree::new();
        old.add_file("stale/old.conf", 0o644, b"old".to_vec())
            .unwrap();
        write_dir(&out, &[("layer", &old)], &[]).unwrap();
        let mut t = Tree::new();
        t.add_file("etc/a.conf", 0o600, b"new".to_vec()).unwrap();
        write_dir(&out, &[("layer", &t)], &[]).unwrap();
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
