//! The layer plan: the image's layers, bottom to top, each with every entry
//! its tar will hold, in final order and with final modes.
//!
//! Layers are ordered by how often they change, so a rebuild after a
//! blueprint edit replaces only the top one: the overlay (large, rare), the
//! verifier binary (changes with nodeimg), the rendered configuration
//! (small, frequent). Within a layer, order is by path components, so
//! parents come right before their children (`etc`, `etc/a`, `etc/a/b`,
//! `etc-x`).
//!
//! The layers must not fight over a path: a file, link or directory that
//! two sources produce is an error, except directories, which merge — and
//! a merged directory has the same mode in every layer that carries it, so
//! the order of extraction cannot change it. Its mode: the overlay's
//! explicit `files.modes` entry, else render's, else the overlay's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use serde::{Deserialize, Serialize};

use crate::tree::{Node, Tree};

use super::error::PackageError;
use super::verifier::{Bytes as VerifierBytes, NODE_PATH, Verifier};
use crate::overlay::{OverlayEntry, OverlayKind, Stamp};

/// A SHA-256, as bytes.
pub type Sha256Sum = [u8; 32];

/// Where a file's bytes come from, and their SHA-256 where it is known
/// without reading them again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Held in memory: a rendered file, the verifier.
    Memory { bytes: Arc<[u8]>, sha256: Sha256Sum },
    /// An overlay file, read when the layer is written; its SHA-256 is the
    /// one the blueprint id was computed with, when there is one.
    Disk {
        path: PathBuf,
        size: u64,
        stamp: Stamp,
        sha256: Option<Sha256Sum>,
    },
}

impl Content {
    /// Bytes in memory, hashed now.
    pub fn memory(bytes: impl Into<Arc<[u8]>>) -> Self {
        let bytes = bytes.into();
        let sha256 = Sha256::digest(&bytes).into();
        Content::Memory { bytes, sha256 }
    }

    pub fn size(&self) -> u64 {
        match self {
            Content::Memory { bytes, .. } => bytes.len() as u64,
            Content::Disk { size, .. } => *size,
        }
    }

    /// The SHA-256 of the content, when known.
    pub fn sha256(&self) -> Option<&Sha256Sum> {
        match self {
            Content::Memory { sha256, .. } => Some(sha256),
            Content::Disk { sha256, .. } => sha256.as_ref(),
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

/// What a layer holds, bottom to top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerRole {
    /// The blueprint's `files.overlay` tree.
    Overlay,
    /// The `nodeimg` binary at `/usr/local/bin/nodeimg`.
    Verifier,
    /// The rendered tree: configuration, units, lock file.
    Config,
}

impl LayerRole {
    pub fn as_str(self) -> &'static str {
        match self {
            LayerRole::Overlay => "overlay",
            LayerRole::Verifier => "verifier",
            LayerRole::Config => "config",
        }
    }
}

/// One layer's entries in tar order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerPlan {
    pub role: LayerRole,
    pub entries: Vec<PlanEntry>,
}

impl LayerPlan {
    /// Bytes of file content the layer holds.
    pub fn content_bytes(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| match &e.kind {
                EntryKind::File(c) => c.size(),
                _ => 0,
            })
            .sum()
    }

    /// True when every file read from disk has a stamp older than `bound`
    /// (see `overlay::settled_before`), so the stamps stand for the content.
    pub fn settled(&self, bound: i128) -> bool {
        self.entries.iter().all(|e| match &e.kind {
            EntryKind::File(Content::Disk { stamp, .. }) => stamp.settled(bound),
            _ => true,
        })
    }
}

/// Which source produced a path first, for conflict messages.
#[derive(Clone, Copy)]
enum Origin {
    Render,
    Verifier,
    Overlay,
}

impl Origin {
    fn words(self) -> &'static str {
        match self {
            Origin::Render => "render",
            Origin::Verifier => "the verifier (nodeimg itself)",
            Origin::Overlay => "the overlay",
        }
    }
}

/// Splits the rendered tree, the verifier and the overlay listing into
/// layers: overlay (when there is one), verifier, config. `overlay_sums`,
/// when given, holds the SHA-256 of each overlay entry's content, in
/// listing order (`None` for what is not a file).
pub fn plan(
    config: &Tree,
    verifier: &Verifier,
    overlay: Option<(&[OverlayEntry], &BTreeMap<String, u32>)>,
    overlay_sums: Option<&[Option<Sha256Sum>]>,
) -> Result<Vec<LayerPlan>, PackageError> {
    let sha256 = verifier.sums()?.sha256;
    let content = match verifier.bytes() {
        VerifierBytes::Held(bytes) => Content::Memory {
            bytes: Arc::clone(bytes),
            sha256,
        },
        VerifierBytes::File { path, size, stamp } => Content::Disk {
            path: path.to_path_buf(),
            size,
            stamp,
            sha256: Some(sha256),
        },
    };
    layers(config, Some(content), overlay, overlay_sums)
}

/// The overlay layer as [`plan`] makes it before anything is rendered:
/// with the verifier's folders and no rendered tree. The rendered tree can
/// still change it (a folder render also makes takes render's mode, a path
/// both make is a conflict), so a layer packed from this plan is used only
/// when the full plan's overlay layer holds the same entries
/// ([`LayerPlan::same_entries`]).
pub fn overlay_alone(
    entries: &[OverlayEntry],
    explicit_modes: &BTreeMap<String, u32>,
) -> Result<LayerPlan, PackageError> {
    layers(&Tree::new(), None, Some((entries, explicit_modes)), None)?
        .into_iter()
        .find(|l| l.role == LayerRole::Overlay)
        .ok_or_else(|| PackageError::Invalid {
            what: "the overlay".into(),
            message: "planned no overlay layer".into(),
        })
}

impl LayerPlan {
    /// True when `other` holds the same entries, in the same order, with the
    /// same paths, modes, kinds and contents, whether or not the SHA-256 of
    /// a file read from disk is known on either side.
    pub fn same_entries(&self, other: &LayerPlan) -> bool {
        let bare = |k: &EntryKind| match k {
            EntryKind::File(Content::Disk {
                path, size, stamp, ..
            }) => EntryKind::File(Content::Disk {
                path: path.clone(),
                size: *size,
                stamp: *stamp,
                sha256: None,
            }),
            other => other.clone(),
        };
        self.role == other.role
            && self.entries.len() == other.entries.len()
            && self.entries.iter().zip(&other.entries).all(|(a, b)| {
                a.path == b.path && a.mode == b.mode && bare(&a.kind) == bare(&b.kind)
            })
    }
}

/// [`plan`], with the verifier's file `verifier` (`None`: its folders and
/// path claimed, the file itself left out).
fn layers(
    config: &Tree,
    verifier: Option<Content>,
    overlay: Option<(&[OverlayEntry], &BTreeMap<String, u32>)>,
    overlay_sums: Option<&[Option<Sha256Sum>]>,
) -> Result<Vec<LayerPlan>, PackageError> {
    // Every path any layer holds: its kind and who produced it.
    let mut seen: BTreeMap<String, (bool, Origin)> = BTreeMap::new();
    // Directory modes after merging.
    let mut dir_modes: BTreeMap<String, u32> = BTreeMap::new();

    let mut config_entries = Vec::new();
    for (path, node) in config.entries() {
        let (mode, kind) = match node {
            Node::Dir { mode } => (mode, EntryKind::Dir),
            Node::File { mode, bytes } => {
                if bytes.len() as u64 > crate::overlay::MAX_FILE_SIZE {
                    return Err(PackageError::Invalid {
                        what: format!("rendered file `/{path}`"),
                        message: "too large for a layer".into(),
                    });
                }
                (mode, EntryKind::File(Content::memory(bytes)))
            }
            Node::Symlink { target } => (0o777, EntryKind::Symlink(target)),
        };
        let is_dir = kind == EntryKind::Dir;
        if is_dir {
            dir_modes.insert(path.clone(), mode);
        }
        seen.insert(path.clone(), (is_dir, Origin::Render));
        config_entries.push(PlanEntry { path, mode, kind });
    }

    let mut verifier_entries = Vec::new();
    for dir in ["usr", "usr/local", "usr/local/bin"] {
        claim(&mut seen, dir, true, Origin::Verifier, None)?;
        dir_modes.entry(dir.to_string()).or_insert(0o755);
        verifier_entries.push(PlanEntry {
            path: dir.into(),
            mode: 0o755,
            kind: EntryKind::Dir,
        });
    }
    claim(&mut seen, NODE_PATH, false, Origin::Verifier, None)?;
    if let Some(content) = verifier {
        verifier_entries.push(PlanEntry {
            path: NODE_PATH.into(),
            mode: 0o755,
            kind: EntryKind::File(content),
        });
    }

    let mut layers = Vec::new();
    if let Some((entries, explicit_modes)) = overlay {
        let mut overlay_entries = Vec::with_capacity(entries.len());
        let sums = overlay_sums.filter(|s| s.len() == entries.len());
        for (i, e) in entries.iter().enumerate() {
            let kind = match &e.kind {
                OverlayKind::Dir => EntryKind::Dir,
                OverlayKind::File { size, stamp } => EntryKind::File(Content::Disk {
                    path: e.source.clone(),
                    size: *size,
                    stamp: *stamp,
                    sha256: sums.and_then(|s| s[i]),
                }),
                OverlayKind::Symlink { target } => EntryKind::Symlink(target.clone()),
            };
            let is_dir = kind == EntryKind::Dir;
            claim(&mut seen, &e.path, is_dir, Origin::Overlay, Some(&e.source))?;
            if is_dir {
                match explicit_modes.get(&e.path) {
                    Some(mode) => {
                        dir_modes.insert(e.path.clone(), *mode);
                    }
                    None => {
                        dir_modes.entry(e.path.clone()).or_insert(e.mode);
                    }
                }
            }
            overlay_entries.push(PlanEntry {
                path: e.path.clone(),
                mode: e.mode,
                kind,
            });
        }
        layers.push(LayerPlan {
            role: LayerRole::Overlay,
            entries: overlay_entries,
        });
    }
    layers.push(LayerPlan {
        role: LayerRole::Verifier,
        entries: verifier_entries,
    });
    layers.push(LayerPlan {
        role: LayerRole::Config,
        entries: config_entries,
    });
    for layer in &mut layers {
        for e in &mut layer.entries {
            if e.kind == EntryKind::Dir
                && let Some(mode) = dir_modes.get(&e.path)
            {
                e.mode = *mode;
            }
        }
        layer
            .entries
            .sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    }
    Ok(layers)
}

/// Records that `origin` produces `path`; two producers are fine only when
/// both make it a directory.
fn claim(
    seen: &mut BTreeMap<String, (bool, Origin)>,
    path: &str,
    is_dir: bool,
    origin: Origin,
    overlay_source: Option<&PathBuf>,
) -> Result<(), PackageError> {
    match seen.get(path) {
        None => {
            seen.insert(path.to_string(), (is_dir, origin));
            Ok(())
        }
        Some((true, _)) if is_dir => Ok(()),
        Some((_, first)) => Err(PackageError::Conflict {
            path: path.to_string(),
            first: first.words(),
            second: origin.words(),
            overlay: overlay_source.cloned(),
        }),
    }
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

    fn file(size: u64) -> OverlayKind {
        OverlayKind::File {
            size,
            stamp: Stamp::default(),
        }
    }

    fn paths(layer: &LayerPlan) -> Vec<(&str, u32)> {
        layer
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.mode))
            .collect()
    }

    fn verifier() -> Verifier {
        Verifier::unchecked("v", b"binary".to_vec())
    }

    #[test]
    fn three_layers_bottom_to_top_and_directories_merge() {
        let mut t = Tree::new();
        t.add_file("etc/a.conf", 0o644, b"a".to_vec()).unwrap();
        t.add_dir("etc/ssh", 0o700).unwrap();
        let ov = vec![
            overlay_entry("etc", 0o755, OverlayKind::Dir),
            overlay_entry("etc/ssh", 0o755, OverlayKind::Dir),
            overlay_entry("etc-x", 0o755, OverlayKind::Dir),
            overlay_entry("etc/motd", 0o644, file(2)),
            overlay_entry("usr", 0o755, OverlayKind::Dir),
            overlay_entry("usr/local", 0o700, OverlayKind::Dir),
        ];
        let none = BTreeMap::new();
        let layers = plan(&t, &verifier(), Some((&ov, &none)), None).unwrap();
        let roles: Vec<LayerRole> = layers.iter().map(|l| l.role).collect();
        assert_eq!(
            roles,
            [LayerRole::Overlay, LayerRole::Verifier, LayerRole::Config]
        );
        assert_eq!(
            paths(&layers[0]),
            [
                ("etc", 0o755),
                ("etc/motd", 0o644),
                ("etc/ssh", 0o700),
                ("etc-x", 0o755),
                ("usr", 0o755),
                ("usr/local", 0o755),
            ]
        );
        assert_eq!(
            paths(&layers[1]),
            [
                ("usr", 0o755),
                ("usr/local", 0o755),
                ("usr/local/bin", 0o755),
                ("usr/local/bin/nodeimg", 0o755),
            ]
        );
        assert_eq!(
            paths(&layers[2]),
            [("etc", 0o755), ("etc/a.conf", 0o644), ("etc/ssh", 0o700)]
        );
        // An explicit overlay mode wins in every layer carrying the folder.
        let explicit = BTreeMap::from([
            ("etc/ssh".to_string(), 0o750),
            ("usr/local".to_string(), 0o700),
        ]);
        let layers = plan(&t, &verifier(), Some((&ov, &explicit)), None).unwrap();
        assert_eq!(paths(&layers[0])[2], ("etc/ssh", 0o750));
        assert_eq!(paths(&layers[2])[2], ("etc/ssh", 0o750));
        assert_eq!(paths(&layers[1])[1], ("usr/local", 0o700));
        // No overlay: two layers.
        assert_eq!(plan(&t, &verifier(), None, None).unwrap().len(), 2);
    }

    #[test]
    fn a_path_from_two_sources_is_a_conflict() {
        let mut t = Tree::new();
        t.add_file("etc/a.conf", 0o644, b"a".to_vec()).unwrap();
        let none = BTreeMap::new();
        for (path, kind, with) in [
            ("etc/a.conf", file(1), "render"),
            ("etc/a.conf", OverlayKind::Dir, "render"),
            ("etc", file(1), "render"),
            ("usr/local/bin/nodeimg", file(1), "the verifier"),
            ("usr/local", file(1), "the verifier"),
        ] {
            let ov = vec![overlay_entry(path, 0o644, kind)];
            let err = plan(&t, &verifier(), Some((&ov, &none)), None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(&format!("`/{path}`")), "{err}");
            assert!(err.contains(with) && err.contains("the overlay"), "{err}");
        }
    }
}
