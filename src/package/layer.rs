//! The layer blob, in one pass: plan → tar → sha256 (the diff_id) →
//! compress → sha256 (the blob digest) → file.
//!
//! zstd layers go through `frames` (chunks compressed on every core); gzip
//! layers through a chain of streaming writers on this thread. Either way
//! the tar is never held in memory or read back; the blob is written
//! under a temporary name and renamed to its digest once complete.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Serialize;

use super::compress::{self, Compression};
use super::digest::{Digest, HashingWriter};
use super::error::PackageError;
use super::frames::{self, Packed};
use super::output;
use super::plan::{EntryKind, LayerPlan, LayerRole, Sha256Sum};
use super::progress::Progress;
use super::source_date::SourceDate;
use super::tar_stream::{Buffered, TarOut, write_tar, write_tar_summing};

const BUF: usize = 1 << 20;

/// The written layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerInfo {
    /// What the layer holds.
    pub role: LayerRole,
    pub media_type: &'static str,
    pub compression: Compression,
    pub level: i32,
    /// Digest of the compressed blob.
    pub digest: Digest,
    /// Size of the compressed blob.
    pub size: u64,
    /// Digest of the uncompressed tar (config `rootfs.diff_ids`).
    pub diff_id: Digest,
    /// Size of the uncompressed tar.
    pub tar_size: u64,
    /// Number of tar entries (files, directories, links).
    pub entries: usize,
}

/// Writes the layer blob into `blob_dir` (`…/blobs/sha256`).
pub fn write_layer(
    layer: &LayerPlan,
    compression: Compression,
    workers: u32,
    mtime: SourceDate,
    blob_dir: &Path,
    progress: &mut dyn Progress,
) -> Result<LayerInfo, PackageError> {
    write(
        layer,
        compression,
        workers,
        mtime,
        blob_dir,
        progress,
        false,
    )
    .map(|(info, _)| info)
}

/// [`write_layer`], also returning the SHA-256 of each file read from disk,
/// hashed in the same pass that packs it (in entry order, `None` for the
/// other entries): the blueprint id needs them, and this way each file is
/// read once.
pub fn write_layer_summing(
    layer: &LayerPlan,
    compression: Compression,
    workers: u32,
    mtime: SourceDate,
    blob_dir: &Path,
    progress: &mut dyn Progress,
) -> Result<(LayerInfo, Vec<Option<Sha256Sum>>), PackageError> {
    write(layer, compression, workers, mtime, blob_dir, progress, true)
}

fn write(
    layer: &LayerPlan,
    compression: Compression,
    workers: u32,
    mtime: SourceDate,
    blob_dir: &Path,
    progress: &mut dyn Progress,
    summing: bool,
) -> Result<(LayerInfo, Vec<Option<Sha256Sum>>), PackageError> {
    let entries = &layer.entries;
    let mut sums = Vec::new();
    let mut tar = |out: &mut dyn TarOut, progress: &mut dyn Progress| {
        if summing {
            sums = write_tar_summing(entries, mtime, out, progress)?;
            Ok(())
        } else {
            write_tar(entries, mtime, out, progress)
        }
    };
    let files = entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::File(_)))
        .count();
    progress.start(layer.role.as_str(), layer.content_bytes(), files as u64);
    let partial = blob_dir.join(format!(".{}.partial", layer.role.as_str()));
    let mut file = File::create(&partial).map_err(PackageError::io(&partial))?;
    let written = match compression {
        Compression::Zstd => frames::pack(workers, &mut file, &partial, |out| tar(out, progress)),
        Compression::Gzip => write_gzip(&mut file, &partial, |out| tar(out, progress)),
    };
    let Packed {
        diff_id,
        tar_size,
        digest,
        size,
        ..
    } = match written {
        Ok(p) => p,
        Err(e) => {
            let _ = fs::remove_file(&partial);
            return Err(e);
        }
    };
    output::finish_file(&file, &partial)?;
    let blob = blob_dir.join(digest.hex());
    fs::rename(&partial, &blob).map_err(PackageError::io(&blob))?;
    progress.finish(false);
    let info = LayerInfo {
        role: layer.role,
        media_type: compression.media_type(),
        compression,
        level: compression.level(),
        digest,
        size,
        diff_id,
        tar_size,
        entries: entries.len(),
    };
    Ok((info, sums))
}

/// The gzip blob: tar → sha256 → gzip → sha256 → file, on this thread.
fn write_gzip(
    file: &mut File,
    partial: &Path,
    produce: impl FnOnce(&mut dyn TarOut) -> Result<(), PackageError>,
) -> Result<Packed, PackageError> {
    let io = |e| PackageError::io(partial)(e);
    let sink = HashingWriter::new(BufWriter::with_capacity(BUF, &mut *file));
    let mut tar = Buffered::new(HashingWriter::new(compress::gzip(sink)));
    produce(&mut tar)?;
    let (gzip, diff_id, tar_size) = tar.into_inner().map_err(io)?.finish();
    let (buffered, digest, size) = gzip.finish().map_err(io)?.finish();
    buffered
        .into_inner()
        .map_err(|e| io(e.into_error()))?
        .flush()
        .map_err(io)?;
    Ok(Packed {
        diff_id,
        tar_size,
        digest,
        size,
        raw_frames: 0,
        frames: 1,
    })
}
