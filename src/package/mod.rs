//! Packaging: the rendered tree (plus the blueprint's overlay folder) as a
//! reproducible OCI image layer, an OCI image layout around it, and pushing
//! that layout to a registry.
//!
//! Entry points: [`build`] writes OUT atomically and returns every digest;
//! [`check_repro`] builds twice under different conditions and compares all
//! bytes; [`push::push`] uploads a layout. Same input ⇒ byte-identical OUT,
//! whatever the umask, time zone, locale, file-system order, thread count
//! or working directory.

pub mod canonical_json;
pub mod compress;
pub mod credentials;
pub mod digest;
pub mod error;
pub mod layer;
pub mod layout;
pub mod layout_reader;
pub mod meta;
pub mod output;
pub mod overlay;
pub mod plan;
pub mod provenance;
pub mod push;
pub mod repro;
pub mod source_date;
pub mod tar_stream;

use std::path::Path;

use crate::tree::Tree;

pub use compress::Compression;
pub use digest::Digest;
pub use error::PackageError;
pub use layer::LayerInfo;
pub use layout::BlobRef;
pub use meta::{ImageMeta, Tag};
pub use overlay::Overlay;
pub use provenance::{BuildReport, ImageSummary, PROVENANCE_FILE};
pub use repro::{ReproReport, check_repro};
pub use source_date::SourceDate;

/// How to build. None of these change the output bytes except
/// `compression` and `source_date`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    pub compression: Compression,
    /// zstd worker threads, at least 1 (the output is the same for any
    /// count; see `compress`).
    pub zstd_workers: u32,
    /// mtime of every entry and the image's `created` time.
    pub source_date: SourceDate,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            compression: Compression::Zstd,
            zstd_workers: default_workers(),
            source_date: SourceDate::default(),
        }
    }
}

impl BuildOptions {
    /// Defaults, with `SOURCE_DATE_EPOCH` from the environment.
    pub fn from_env() -> Result<Self, PackageError> {
        let source_date = SourceDate::from_env().map_err(|message| PackageError::Invalid {
            what: SourceDate::ENV.into(),
            message,
        })?;
        Ok(Self {
            source_date,
            ..Self::default()
        })
    }
}

/// One worker per available core.
pub fn default_workers() -> u32 {
    std::thread::available_parallelism()
        .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
        .unwrap_or(1)
}

/// Builds the OCI image layout for `tree` (+ `overlay`) into `out`,
/// atomically: on error an earlier `out` is left untouched.
pub fn build(
    tree: &Tree,
    overlay: Option<&Overlay>,
    meta: &ImageMeta,
    opts: &BuildOptions,
    out: &Path,
) -> Result<BuildReport, PackageError> {
    let staging = output::Staging::new(out)?;
    let image = write_layout(tree, overlay, meta, opts, staging.path())?;
    staging.commit()?;
    Ok(BuildReport {
        out: out.to_path_buf(),
        provenance: out.join(PROVENANCE_FILE),
        image,
    })
}

/// Writes the whole layout into the (empty) folder `root`.
pub(crate) fn write_layout(
    tree: &Tree,
    overlay: Option<&Overlay>,
    meta: &ImageMeta,
    opts: &BuildOptions,
    root: &Path,
) -> Result<ImageSummary, PackageError> {
    let scanned = match overlay {
        Some(o) => Some((o.scan()?, o.modes())),
        None => None,
    };
    let entries = plan::plan(tree, scanned.as_ref().map(|(e, m)| (e.as_slice(), *m)))?;
    let blobs = root.join("blobs").join("sha256");
    output::create_dir(&root.join("blobs"))?;
    output::create_dir(&blobs)?;
    let layer = layer::write_layer(
        &entries,
        opts.compression,
        opts.zstd_workers,
        opts.source_date,
        &blobs,
    )?;
    let docs = layout::write_documents(root, &layer, meta, opts.source_date)?;
    let image = ImageSummary {
        name: meta.name.clone(),
        version: meta.version.clone(),
        blueprint_id: meta.blueprint_id.clone(),
        tag: meta.tag.clone(),
        platform: format!("{}/{}", meta.os, meta.architecture),
        created: opts.source_date.rfc3339(),
        source_date_epoch: opts.source_date.seconds(),
        manifest: docs.manifest,
        config: docs.config,
        layer,
    };
    provenance::write(root, &image)?;
    Ok(image)
}
