//! `--check-repro`: build the same image twice under different conditions
//! and compare every byte (and every mode) of the two layouts.
//!
//! The first build uses 1 zstd worker and umask 022, the second several
//! workers and umask 077, each into its own fresh folder. The umask is
//! process-wide: call this when no other thread of the process creates
//! files (the CLI is such a process).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::Serialize;

use crate::tree::Tree;

use super::error::PackageError;
use super::{BuildOptions, ImageMeta, ImageSummary, Overlay, write_layout};

/// The outcome of [`check_repro`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReproReport {
    pub identical: bool,
    /// The conditions of the two builds, in words.
    pub conditions: [String; 2],
    /// Each path that differs, and how; empty when identical.
    pub differences: Vec<String>,
    /// The first build's digests.
    pub image: ImageSummary,
}

/// Builds twice into temporary folders and compares the results.
pub fn check_repro(
    tree: &Tree,
    overlay: Option<&Overlay>,
    meta: &ImageMeta,
    opts: &BuildOptions,
) -> Result<ReproReport, PackageError> {
    let scratch = tempfile::tempdir().map_err(PackageError::io(&std::env::temp_dir()))?;
    let many = opts.zstd_workers.max(super::default_workers()).max(4);
    let runs = [(1u32, 0o022u32), (many, 0o077)];
    let mut images = Vec::new();
    let mut conditions = Vec::new();
    for (i, (workers, umask)) in runs.into_iter().enumerate() {
        let root = scratch.path().join(format!("build-{i}"));
        std::fs::create_dir(&root).map_err(PackageError::io(&root))?;
        let o = BuildOptions {
            zstd_workers: workers,
            ..opts.clone()
        };
        let image = with_umask(umask, || write_layout(tree, overlay, meta, &o, &root))?;
        images.push(image);
        conditions.push(format!("{workers} zstd worker(s), umask {umask:03o}"));
    }
    let differences = compare_dirs(
        &scratch.path().join("build-0"),
        &scratch.path().join("build-1"),
    )?;
    let image = images.swap_remove(0);
    Ok(ReproReport {
        identical: differences.is_empty(),
        conditions: [conditions[0].clone(), conditions[1].clone()],
        differences,
        image,
    })
}

fn with_umask<T>(mask: u32, f: impl FnOnce() -> T) -> T {
    // SAFETY: umask only swaps the process's file-creation mask.
    let old = unsafe { libc::umask(mask as libc::mode_t) };
    let r = f();
    // SAFETY: as above, restoring the previous mask.
    unsafe { libc::umask(old) };
    r
}

/// What one path holds, for comparison.
enum Item {
    Dir(u32),
    File(u32, Vec<u8>),
    Other,
}

fn snapshot(root: &Path) -> Result<BTreeMap<String, Item>, PackageError> {
    let mut map = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).min_depth(1).follow_links(false) {
        let entry = entry.map_err(|e| PackageError::Output {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        let meta =
            std::fs::symlink_metadata(entry.path()).map_err(PackageError::io(entry.path()))?;
        let mode = meta.permissions().mode() & 0o7777;
        let item = if meta.is_dir() {
            Item::Dir(mode)
        } else if meta.is_file() {
            Item::File(
                mode,
                std::fs::read(entry.path()).map_err(PackageError::io(entry.path()))?,
            )
        } else {
            Item::Other
        };
        map.insert(rel, item);
    }
    Ok(map)
}

/// Every difference between two folders: paths present in only one, kinds,
/// modes and contents. Empty when they are identical.
pub fn compare_dirs(a: &Path, b: &Path) -> Result<Vec<String>, PackageError> {
    let (sa, sb) = (snapshot(a)?, snapshot(b)?);
    let mut out = Vec::new();
    for (path, ia) in &sa {
        match (ia, sb.get(path)) {
            (_, None) => out.push(format!("{path}: only in the first build")),
            (Item::File(ma, ba), Some(Item::File(mb, bb))) => {
                if ba != bb {
                    out.push(format!("{path}: contents differ"));
                }
                if ma != mb {
                    out.push(format!("{path}: mode {ma:04o} vs {mb:04o}"));
                }
            }
            (Item::Dir(ma), Some(Item::Dir(mb))) => {
                if ma != mb {
                    out.push(format!("{path}: mode {ma:04o} vs {mb:04o}"));
                }
            }
            (Item::Other, Some(Item::Other)) => {}
            _ => out.push(format!("{path}: different kinds of entry")),
        }
    }
    for path in sb.keys() {
        if !sa.contains_key(path) {
            out.push(format!("{path}: only in the second build"));
        }
    }
    Ok(out)
}
