//! The layer plan: every entry the tar will hold, in its final order, with
//! its final mode — the rendered tree and the overlay merged.
//!
//! Order is by path components, so parents come right before their
//! children (`etc`, `etc/a`, `etc/a/b`, `etc-x`). A path that both render
//! and the overlay produce is an error, except directories, which merge:
//! the overlay's explicit `files.modes` entry wins, then render's mode.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::tree::{Node, Tree};

use super::error::PackageError;
use super::overlay::{OverlayEntry, OverlayKind};

/// Where a file's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Memory(Vec<u8>),
    Disk { path: PathBuf, size: u64 },
}

impl Content {
    pub fn size(&self) -> u64 {
        match self {
            Content::Memory(b) => b.len() as u64,
            Content::Disk { size, .. } => *size,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File(Content),
    Symlink(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEntry {
    /// Layer path, no leading or trailing `/`.
    pub path: String,
    pub mode: u32,
    pub kind: EntryKind,
}

/// Merges the rendered tree and the overlay listing into tar order.
pub fn plan(
    tree: &Tree,
    overlay: Option<(&[OverlayEntry], &BTreeMap<String, u32>)>,
) -> Result<Vec<PlanEntry>, PackageError> {
    let mut all: BTreeMap<String, PlanEntry> = BTreeMap::new();
    for (path, node) in tree.entries() {
        let (mode, kind) = match node {
            Node::Dir { mode } => (mode, EntryKind::Dir),
            Node::File { mode, bytes } => {
                if bytes.len() as u64 > super::overlay::MAX_FILE_SIZE {
                    return Err(PackageError::Invalid {
                        what: format!("rendered file `/{path}`"),
                        message: "too large for a layer".into(),
                    });
                }
                (mode, EntryKind::File(Content::Memory(bytes)))
            }
            Node::Symlink { target } => (0o777, EntryKind::Symlink(target)),
        };
        all.insert(path.clone(), PlanEntry { path, mode, kind });
    }
    if let Some((entries, explicit_modes)) = overlay {
        for e in entries {
            let kind = match &e.kind {
                OverlayKind::Dir => EntryKind::Dir,
                OverlayKind::File { size } => EntryKind::File(Content::Disk {
                    path: e.source.clone(),
                    size: *size,
                }),
                OverlayKind::Symlink { target } => EntryKind::Symlink(target.clone()),
            };
            match all.get_mut(&e.path) {
                None => {
                    all.insert(
                        e.path.clone(),
                        PlanEntry {
                            path: e.path.clone(),
                            mode: e.mode,
                            kind,
                        },
                    );
                }
                Some(existing) if existing.kind == EntryKind::Dir && kind == EntryKind::Dir => {
                    if let Some(mode) = explicit_modes.get(&e.path) {
                        existing.mode = *mode;
                    }
                }
                Some(_) => {
                    return Err(PackageError::Conflict {
                        path: e.path.clone(),
                        overlay: e.source.clone(),
                    });
                }
            }
        }
    }
    let mut v: Vec<PlanEntry> = all.into_values().collect();
    v.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlay_entry(path: &str, mode: u32, kind: OverlayKind) -> OverlayEntry {
        OverlayEntry {
            path: path.into(),
            source: PathBuf::from("/ov").join(path),
            mode,
            kind,
        }
    }

    #[test]
    fn merges_in_component_order_and_directories_merge() {
        let mut t = Tree::new();
        t.add_file("etc/a.conf", 0o644, b"a".to_vec()).unwrap();
        t.add_dir("etc/ssh", 0o700).unwrap();
        let ov = vec![
            overlay_entry("etc", 0o755, OverlayKind::Dir),
            overlay_entry("etc/ssh", 0o755, OverlayKind::Dir),
            overlay_entry("etc-x", 0o755, OverlayKind::Dir),
            overlay_entry("etc/motd", 0o644, OverlayKind::File { size: 2 }),
        ];
        let none = BTreeMap::new();
        let p = plan(&t, Some((&ov, &none))).unwrap();
        let got: Vec<(&str, u32)> = p.iter().map(|e| (e.path.as_str(), e.mode)).collect();
        assert_eq!(
            got,
            [
                ("etc", 0o755),
                ("etc/a.conf", 0o644),
                ("etc/motd", 0o644),
                ("etc/ssh", 0o700),
                ("etc-x", 0o755)
            ]
        );
        let explicit = BTreeMap::from([("etc/ssh".to_string(), 0o750)]);
        let p = plan(&t, Some((&ov, &explicit))).unwrap();
        assert_eq!(p[3].mode, 0o750);
    }

    #[test]
    fn a_path_from_both_sides_is_a_conflict() {
        let mut t = Tree::new();
        t.add_file("etc/a.conf", 0o644, b"a".to_vec()).unwrap();
        let none = BTreeMap::new();
        for (path, kind) in [
            ("etc/a.conf", OverlayKind::File { size: 1 }),
            ("etc/a.conf", OverlayKind::Dir),
            ("etc", OverlayKind::File { size: 1 }),
        ] {
            let ov = vec![overlay_entry(path, 0o644, kind)];
            let err = plan(&t, Some((&ov, &none))).unwrap_err().to_string();
            assert!(err.contains(&format!("`/{path}`")), "{err}");
            assert!(err.contains("both"), "{err}");
        }
    }
}
