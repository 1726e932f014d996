//! `--check-repro`: build the image twice under different conditions,
//! compare the two layouts, and keep the first as the output.
//!
//! The first build uses 1 zstd worker and umask 022 and goes into OUT's
//! staging folder; the second several workers and umask 077, into a
//! temporary folder. Neither uses the layer cache. The comparison streams:
//! blobs are named by the sha256 of their content (computed while they were
//! written), so two blob files with the same name hold the same bytes and
//! only names, sizes and modes are compared; the few small documents beside
//! them (index.json, oci-layout, provenance.json) are compared chunk by
//! chunk. Nothing of either layout is held in memory. The cache index
//! records machine-specific file identities by design and is not compared,
//! nor is the output folder's marker file.
//!
//! The umask is process-wide: call this when no other thread of the process
//! creates files (the CLI is such a process).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::Serialize;

use super::cache::{Cache, INDEX_FILE};
use super::error::PackageError;
use super::progress::Progress;
use super::{BuildOptions, BuildReport, ImageMeta, Inputs, PROVENANCE_FILE, output, write_layout};

/// The outcome of the comparison.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReproReport {
    pub identical: bool,
    /// The conditions of the two builds, in words.
    pub conditions: [String; 2],
    /// Each path that differs, and how; empty when identical.
    pub differences: Vec<String>,
}

/// Builds into `out` (atomically, as [`super::build`] does, without the
/// cache) and a second time into a temporary folder, and compares them.
/// `out` is written even when the builds differ; the report says so.
pub fn build_checked(
    inputs: Inputs<'_>,
    meta: &ImageMeta,
    opts: &BuildOptions,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<(BuildReport, ReproReport), PackageError> {
    let many = opts.zstd_workers.max(super::default_workers()).max(4);
    let runs = [(1u32, 0o022u32), (many, 0o077)];
    let conditions = runs.map(|(w, m)| format!("{w} zstd worker(s), umask {m:03o}"));
    let build = |workers: u32, root: &Path, progress: &mut dyn Progress| {
        let o = BuildOptions {
            zstd_workers: workers,
            cache: false,
            user_cache: None,
            ..opts.clone()
        };
        write_layout(
            inputs,
            meta,
            &o,
            root,
            &Cache::empty(),
            None,
            None,
            progress,
        )
    };

    let staging = output::Staging::new(out)?;
    let (image, _, sbom) = with_umask(runs[0].1, || build(runs[0].0, staging.path(), progress))?;
    let scratch = tempfile::tempdir().map_err(PackageError::io(&std::env::temp_dir()))?;
    let second = scratch.path().join("second");
    std::fs::create_dir(&second).map_err(PackageError::io(&second))?;
    with_umask(runs[1].1, || build(runs[1].0, &second, progress))?;
    let differences = compare_layouts(staging.path(), &second)?;
    drop(scratch);
    staging.commit()?;
    Ok((
        BuildReport {
            out: out.to_path_buf(),
            provenance: out.join(PROVENANCE_FILE),
            image,
            reused: Vec::new(),
            verifier_crates: sbom.and_then(|s| s.verifier_crates),
            sbom_time: sbom.map(|s| s.elapsed),
        },
        ReproReport {
            identical: differences.is_empty(),
            conditions,
            differences,
        },
    ))
}

fn with_umask<T>(mask: u32, f: impl FnOnce() -> T) -> T {
    // SAFETY: umask only swaps the process's file-creation mask.
    let old = unsafe { libc::umask(mask as libc::mode_t) };
    let r = f();
    // SAFETY: as above, restoring the previous mask.
    unsafe { libc::umask(old) };
    r
}

/// What one path is, without its content.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Dir,
    File(u64),
    Other,
}

fn listing(root: &Path) -> Result<Vec<(String, Kind, u32)>, PackageError> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
    {
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
        // The cache index holds machine-specific file identities, and the
        // output marker exists only in the staged output.
        if rel == INDEX_FILE || rel == crate::atomic::MARKER {
            continue;
        }
        let meta = entry.metadata().map_err(|e| PackageError::Output {
            path: entry.path().to_path_buf(),
            message: e.to_string(),
        })?;
        let kind = if meta.is_dir() {
            Kind::Dir
        } else if meta.is_file() {
            Kind::File(meta.len())
        } else {
            Kind::Other
        };
        out.push((rel, kind, meta.permissions().mode() & 0o7777));
    }
    out.sort_by(|x, y| x.0.cmp(&y.0));
    Ok(out)
}

/// Whether a layout path is a blob named by its content digest.
fn is_blob(rel: &str) -> bool {
    rel.strip_prefix("blobs/sha256/")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Compares two files chunk by chunk.
fn same_content(a: &Path, b: &Path) -> Result<bool, PackageError> {
    let mut fa = File::open(a).map_err(PackageError::io(a))?;
    let mut fb = File::open(b).map_err(PackageError::io(b))?;
    let (mut ba, mut bb) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let na = read_full(&mut fa, &mut ba).map_err(PackageError::io(a))?;
        let nb = read_full(&mut fb, &mut bb).map_err(PackageError::io(b))?;
        if na != nb || ba[..na] != bb[..nb] {
            return Ok(false);
        }
        if na == 0 {
            return Ok(true);
        }
    }
}

fn read_full(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Every difference between two layouts: paths present in only one, kinds,
/// modes, sizes and contents. Empty when they are identical.
pub fn compare_layouts(a: &Path, b: &Path) -> Result<Vec<String>, PackageError> {
    let (la, lb) = (listing(a)?, listing(b)?);
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < la.len() || j < lb.len() {
        let order = match (la.get(i), lb.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                out.push(format!("{}: only in the first build", la[i].0));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(format!("{}: only in the second build", lb[j].0));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let ((path, ka, ma), (_, kb, mb)) = (&la[i], &lb[j]);
                if ka != kb {
                    out.push(format!("{path}: {ka:?} vs {kb:?}"));
                } else if ma != mb {
                    out.push(format!("{path}: mode {ma:04o} vs {mb:04o}"));
                } else if matches!(ka, Kind::File(_))
                    && !is_blob(path)
                    && !same_content(&a.join(path), &b.join(path))?
                {
                    out.push(format!("{path}: contents differ"));
                }
                i += 1;
                j += 1;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_names_sizes_modes_and_small_documents() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let blob = format!("blobs/sha256/{}", "a".repeat(64));
        for d in [a.path(), b.path()] {
            std::fs::create_dir_all(d.join("blobs/sha256")).unwrap();
            std::fs::write(d.join("index.json"), b"{}").unwrap();
            std::fs::write(d.join(&blob), b"12345").unwrap();
            std::fs::write(d.join(INDEX_FILE), d.to_string_lossy().as_bytes()).unwrap();
        }
        assert_eq!(
            compare_layouts(a.path(), b.path()).unwrap(),
            Vec::<String>::new()
        );
        std::fs::write(b.path().join("index.json"), b"[]").unwrap();
        std::fs::write(b.path().join(&blob), b"1234").unwrap();
        std::fs::write(b.path().join("extra"), b"").unwrap();
        std::fs::set_permissions(
            a.path().join("blobs"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let diffs = compare_layouts(a.path(), b.path()).unwrap();
        assert_eq!(
            diffs,
            [
                "blobs: mode 0700 vs 0755".to_string(),
                format!("{blob}: File(5) vs File(4)"),
                "extra: only in the second build".into(),
                "index.json: contents differ".into(),
            ]
        );
    }
}
