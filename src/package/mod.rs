//! Packaging: the rendered tree, the verifier binary and the blueprint's
//! overlay folder as a reproducible, layered OCI image, an OCI image layout
//! around it, and pushing that layout to a registry.
//!
//! Layers, bottom to top, ordered by how often they change: the overlay
//! (large, rare), the verifier (`/usr/local/bin/nodeimg`, changes with
//! nodeimg), the rendered configuration (small, frequent). A layer whose
//! inputs did not change since the last build into the same OUT is reused
//! from there (`cache`), so a one-field blueprint edit re-packs only the
//! configuration.
//!
//! Entry points: [`build`] writes OUT atomically and returns every digest;
//! [`build_checked`] also builds a second time under different conditions
//! and compares the two; [`push::push`] uploads a layout and [`pull::pull`] fetches one. Same input ⇒
//! byte-identical OUT (the cache index aside), whatever the umask, time
//! zone, locale, file-system order, thread count or working directory.

pub mod cache;
pub mod compress;
pub mod credentials;
pub mod digest;
pub mod elf;
pub mod error;
pub mod frames;
pub mod incompressible;
pub mod layer;
pub mod layout;
pub mod layout_reader;
pub mod meta;
pub mod output;
pub mod overlay;
pub mod plan;
pub mod prepacked;
pub mod progress;
pub mod provenance;
#[cfg(feature = "push")]
pub mod pull;
#[cfg(feature = "push")]
pub mod push;
pub mod raw_frame;
pub mod referrer;
#[cfg(feature = "push")]
pub mod referrers;
#[cfg(feature = "push")]
pub mod registry;
pub mod repro;
pub mod sbom;
pub mod sha256_pair;
pub mod source_date;
pub mod tar_stream;
pub mod user_cache;
pub mod verifier;
pub mod xxh64;

use std::fs;
use std::path::Path;

use crate::tree::Tree;

pub use crate::overlay::Overlay;
pub use compress::Compression;
pub use digest::BlobRef;
pub use digest::Digest;
pub use error::PackageError;
pub use layer::LayerInfo;
pub use meta::{ImageMeta, Tag};
pub use plan::LayerRole;
pub use progress::{Meter, Progress, Silent};
pub use provenance::{BuildReport, ImageSummary, PROVENANCE_FILE};
pub use repro::{ReproReport, build_checked};
pub use source_date::SourceDate;
pub use verifier::Verifier;

use crate::blueprint::identity::FileDigests;
use cache::Cache;
use user_cache::UserCache;

/// How to build. None of these change the output bytes except
/// `compression` and `source_date`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    pub compression: Compression,
    /// zstd worker threads, at least 1 (the output is the same for any
    /// count; see `frames`).
    pub zstd_workers: u32,
    /// mtime of every entry and the image's `created` time.
    pub source_date: SourceDate,
    /// Reuse unchanged layers from the layout already in OUT, and from
    /// `user_cache`.
    pub cache: bool,
    /// The user's layer cache: layers packed by earlier builds, found by
    /// content, and where this build's layers are kept (even when `cache`
    /// is off, which only stops it from taking any).
    pub user_cache: Option<UserCache>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self {
            compression: Compression::Zstd,
            zstd_workers: default_workers(),
            source_date: SourceDate::default(),
            cache: true,
            user_cache: None,
        }
    }
}

/// What goes into the image.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The rendered tree (the config layer).
    pub config: &'a Tree,
    /// The binary the units run as `/usr/local/bin/nodeimg`.
    pub verifier: &'a Verifier,
    /// The blueprint's `files.overlay`, if any.
    pub overlay: Option<&'a Overlay>,
    /// What the SBOM needs beyond the layers (base OS, the overlay's file
    /// digests); `None` builds the image without an SBOM (`--no-sbom`).
    pub sbom: Option<&'a sbom::Source<'a>>,
}

impl BuildOptions {
    /// Defaults, with `SOURCE_DATE_EPOCH` and the user's layer cache
    /// (`$XDG_CACHE_HOME/nodeimg`, bounded by `NODEIMG_CACHE_MAX`) from the
    /// environment.
    pub fn from_env() -> Result<Self, PackageError> {
        let source_date = SourceDate::from_env().map_err(|message| PackageError::Invalid {
            what: SourceDate::ENV.into(),
            message,
        })?;
        let user_cache = UserCache::from_env().map_err(|message| PackageError::Invalid {
            what: user_cache::ENV_MAX.into(),
            message,
        })?;
        Ok(Self {
            source_date,
            user_cache,
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

/// Builds the OCI image layout into `out`, atomically: on error an earlier
/// `out` is left untouched. Unchanged layers are reused from the layout
/// already in `out` unless `opts.cache` is off.
pub fn build(
    inputs: Inputs<'_>,
    meta: &ImageMeta,
    opts: &BuildOptions,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<BuildReport, PackageError> {
    build_with(inputs, meta, opts, out, Before::default(), progress)
}

/// What the command learned of OUT before [`build_with`] (each optional).
#[derive(Debug, Default)]
pub struct Before<'a> {
    /// OUT's layer cache, when it was read already (it is read again
    /// when this is another folder's).
    pub cache: Option<Cache>,
    /// The overlay file digests the blueprint id was computed with, kept
    /// in OUT's cache index for the next build ([`cache::file_digests`]).
    pub digests: Option<&'a FileDigests>,
    /// The overlay layer packed for OUT while its files were read for the
    /// id, taken when it holds what the plan's overlay layer does (see
    /// [`prepacked`]).
    pub prepacked: Option<prepacked::Prepacked>,
}

/// [`build`], with what is known of OUT `before`.
pub fn build_with(
    inputs: Inputs<'_>,
    meta: &ImageMeta,
    opts: &BuildOptions,
    out: &Path,
    before: Before<'_>,
    progress: &mut dyn Progress,
) -> Result<BuildReport, PackageError> {
    let Before {
        cache,
        digests,
        prepacked,
    } = before;
    // One packed for another OUT goes (with its staging folder) before
    // this OUT is locked.
    let prepacked = prepacked.filter(|p| p.out() == out);
    let (staging, early) = match prepacked {
        Some(p) => (p.staging, Some((p.plan, p.info))),
        None => (output::Staging::new(out)?, None),
    };
    let cache = match cache {
        _ if !opts.cache => Cache::empty(),
        Some(c) if c.dir() == out => c,
        _ => Cache::open(out),
    };
    let (image, reused, sbom) = write_layout(
        inputs,
        meta,
        opts,
        staging.path(),
        &cache,
        digests,
        early,
        progress,
    )?;
    staging.commit()?;
    Ok(BuildReport {
        out: out.to_path_buf(),
        provenance: out.join(PROVENANCE_FILE),
        image,
        reused,
        verifier_crates: sbom.and_then(|s| s.verifier_crates),
        sbom_time: sbom.map(|s| s.elapsed),
    })
}

/// Takes the verifier's digests from the user's cache when it remembers
/// them for this file; otherwise returns what remembers them there once
/// they are computed (when the file was settled as the build began).
fn remember_verifier_sums<'a>(
    verifier: &'a Verifier,
    user_cache: Option<&'a UserCache>,
    settled: i128,
) -> Option<impl FnOnce() + 'a> {
    let uc = user_cache?;
    let stamp = verifier.stamp()?;
    let size = verifier.size();
    if let Some(sums) = uc.sums(verifier.source(), size, stamp) {
        verifier.set_sums(sums);
        return None;
    }
    stamp.settled(settled).then_some(move || {
        if let Ok(sums) = verifier.sums() {
            uc.remember_sums(verifier.source(), size, stamp, sums);
        }
    })
}

/// What making the SBOM took and found (`--no-sbom`: none).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SbomStep {
    /// How many crates the verifier's crate list names (`None`: it has none).
    pub verifier_crates: Option<usize>,
    /// Gathering the contents and writing both documents and their
    /// referrers: what the SBOM adds to a build.
    pub elapsed: std::time::Duration,
}

/// Packs the layer `p` into the blob folder `blobs`.
fn pack(
    p: &plan::LayerPlan,
    verifier: &Verifier,
    opts: &BuildOptions,
    blobs: &Path,
    progress: &mut dyn Progress,
) -> Result<LayerInfo, PackageError> {
    let info = layer::write_layer(
        p,
        opts.compression,
        opts.zstd_workers,
        opts.source_date,
        blobs,
        progress,
    )?;
    // The verifier read from its file must be the one checked.
    if p.role == LayerRole::Verifier {
        verifier.still_unchanged()?;
    }
    Ok(info)
}

/// Writes the whole layout into the folder `root` (empty, or holding only
/// the blob of the overlay layer `early`, packed from the plan given with
/// it); returns its summary, the layers taken from `cache`, and the SBOM
/// step.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_layout(
    inputs: Inputs<'_>,
    meta: &ImageMeta,
    opts: &BuildOptions,
    root: &Path,
    cache: &Cache,
    digests: Option<&FileDigests>,
    mut early: Option<(plan::LayerPlan, LayerInfo)>,
    progress: &mut dyn Progress,
) -> Result<(ImageSummary, Vec<LayerRole>, Option<SbomStep>), PackageError> {
    let settled = crate::overlay::settled_before(std::time::SystemTime::now());
    let user_cache = opts.user_cache.as_ref();
    let remembered_sums = remember_verifier_sums(inputs.verifier, user_cache, settled);
    let scanned = match inputs.overlay {
        Some(o) => Some((o.listing()?, o.modes())),
        None => None,
    };
    let plans = plan::plan(
        inputs.config,
        inputs.verifier,
        scanned.as_ref().map(|(e, m)| (&e[..], *m)),
        inputs.overlay.and_then(Overlay::sums),
    )?;
    if let Some(remember) = remembered_sums {
        remember();
    }
    let blobs = root.join("blobs").join("sha256");
    output::create_dir(&root.join("blobs"))?;
    output::create_dir(&blobs)?;
    let mut layers = Vec::with_capacity(plans.len());
    let mut keys = Vec::with_capacity(plans.len());
    let mut reused = Vec::new();
    // Blobs taken from the user's cache, hashed on threads of their own
    // while the layout is written, and confirmed before it is committed.
    let mut checking = Vec::new();
    for p in &plans {
        let key = cache::key(p, opts.compression, opts.source_date);
        // The user's cache names layers by content; a layer holding a file
        // changed too recently to trust its stamp is neither taken from it
        // nor put into it (see `overlay::RACY_MARGIN`).
        let content_key = user_cache
            .filter(|_| p.settled(settled))
            .and_then(|_| cache::content_key(p, opts.compression, opts.source_date));
        // The overlay layer packed before the id, when the final plan
        // holds what it was packed from; else its blob goes.
        let packed = match early.take_if(|(plan, _)| plan.role == p.role) {
            Some((plan, info)) if plan.same_entries(p) => Some(info),
            Some((_, info)) => {
                let blob = blobs.join(info.digest.hex());
                fs::remove_file(&blob).map_err(PackageError::io(&blob))?;
                None
            }
            None => None,
        };
        let taken = match (opts.cache, user_cache, &content_key) {
            _ if packed.is_some() => None,
            (false, ..) => None,
            (true, uc, ck) => cache
                .take(&key, opts.compression, &blobs)
                .map(|info| (info, None))
                .or_else(|| {
                    let (info, unchecked) =
                        uc?.take(ck.as_ref()?, p.role, opts.compression, &blobs)?;
                    Some((info, Some(unchecked)))
                }),
        };
        let info = match (packed, taken) {
            (None, Some((info, unchecked))) => {
                if let Some(u) = unchecked {
                    checking.push((layers.len(), u));
                }
                reused.push(p.role);
                let files = p
                    .entries
                    .iter()
                    .filter(|e| matches!(e.kind, plan::EntryKind::File(_)))
                    .count();
                progress.start(p.role.as_str(), p.content_bytes(), files as u64);
                progress.finish(true);
                info
            }
            (packed, _) => {
                let info = match packed {
                    Some(info) => info,
                    None => pack(p, inputs.verifier, opts, &blobs, progress)?,
                };
                if let (Some(uc), Some(ck)) = (user_cache, &content_key) {
                    uc.put(ck, &info, &blobs.join(info.digest.hex()));
                }
                info
            }
        };
        // A layer holding a file changed too recently to trust its stamp
        // is packed again next time (see `overlay::RACY_MARGIN`).
        keys.push(p.settled(settled).then_some(key));
        layers.push(info);
    }
    let docs = layout::write_documents(root, &layers, meta, opts.source_date)?;
    let mut referrers = Vec::new();
    let mut sbom_step = None;
    if let Some(source) = inputs.sbom {
        let started = std::time::Instant::now();
        let created = opts.source_date.rfc3339();
        let contents = sbom::contents::gather(
            &plans,
            &layers,
            inputs.verifier,
            source,
            meta,
            created.clone(),
            &docs.manifest,
            &docs.config,
        )?;
        let verifier_crates = contents.verifier.crates.as_ref().map(|c| c.packages.len());
        // One thread per format: each document is written and hashed
        // beside the other, and all their files flushed together.
        let written: Vec<_> = std::thread::scope(|scope| {
            let threads: Vec<_> = sbom::Format::ALL
                .into_iter()
                .map(|format| {
                    let (blobs, contents, created) = (&blobs, &contents, &created);
                    let subject = &docs.manifest;
                    scope.spawn(move || {
                        let mut unsynced = output::Unsynced::default();
                        referrer::write(
                            &mut unsynced,
                            blobs,
                            subject,
                            format.media_type(),
                            "sbom",
                            format.file_name(),
                            &format.write(contents),
                            created,
                        )
                        .map(|w| (unsynced, w))
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().expect("writing an SBOM does not panic"))
                .collect()
        });
        let mut unsynced = output::Unsynced::default();
        for w in written {
            let (files, referrer) = w?;
            unsynced.extend(files);
            referrers.push(referrer);
        }
        unsynced.sync()?;
        sbom_step = Some(SbomStep {
            verifier_crates,
            elapsed: started.elapsed(),
        });
    }
    for (i, unchecked) in checking {
        if unchecked.holds() {
            continue;
        }
        // A corrupt blob in the cache: the layer is packed as with a cold
        // cache, into the same bytes, so nothing written so far changes.
        let p = &plans[i];
        let again = pack(p, inputs.verifier, opts, &blobs, progress)?;
        if again != layers[i] {
            return Err(PackageError::Invalid {
                what: format!("the {} layer", p.role.as_str()),
                message: format!(
                    "the user's layer cache held a corrupt blob {} for it, and packing it again made {}; build again",
                    layers[i].digest, again.digest
                ),
            });
        }
        reused.retain(|r| *r != p.role);
        if let Some(uc) = user_cache
            && let Some(ck) = cache::content_key(p, opts.compression, opts.source_date)
        {
            uc.put(&ck, &again, &blobs.join(again.digest.hex()));
        }
    }
    layout::write_index(root, meta, &docs.manifest, &referrers)?;
    let indexed: Vec<_> = keys
        .into_iter()
        .zip(layers.iter())
        .filter_map(|(k, l)| Some((k?, l)))
        .collect();
    cache::write_index(root, &indexed, digests)?;
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
        layers,
        sbom: referrers,
    };
    provenance::write(root, &image)?;
    Ok((image, reused, sbom_step))
}
