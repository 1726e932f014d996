//! The overlay layer packed before the blueprint id exists, its files
//! hashed in the same pass, so that a build that packs the overlay reads
//! each overlay file once.
//!
//! The id covers the SHA-256 of every overlay file, and the rendered
//! configuration depends on the id; the overlay layer depends on neither.
//! So when no cache can give `build` the overlay layer, it packs that
//! layer first, from the listing the id is then computed from
//! ([`FileDigests::reading_with`](crate::blueprint::identity::FileDigests::reading_with)),
//! hashing each file from the bytes that go into the layer
//! ([`layer::write_layer_summing`]), and the id takes those digests. The
//! blob is written into the staging folder that becomes OUT.
//!
//! The rendered tree can still change the overlay layer (a folder render
//! also makes takes render's mode; a path both make is a conflict), so the
//! packed layer is used only when the full plan's overlay layer holds the
//! same entries ([`LayerPlan::same_entries`]); otherwise it is removed and
//! the layer packed again, from the same listing.
//!
//! When a cache might hold the layer, the files are hashed first as
//! before, so that a cache hit packs nothing: OUT's own index holding a
//! layer of this listing (looked up by the files' stamps, without reading
//! them), or, while the cache is on, the user's layer cache holding an
//! overlay layer of as many entries and as many tar bytes (it is found by
//! the files' digests, which only reading them gives).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::BuildOptions;
use super::cache::{self, Cache};
use super::error::PackageError;
use super::layer::{self, LayerInfo};
use super::output::{self, Staging};
use super::plan::{self, LayerPlan};
use super::progress::Progress;
use super::tar_stream;
use crate::overlay::{Overlay, OverlayEntry};

/// The overlay layer, packed into the staging folder of OUT.
pub struct Prepacked {
    pub(super) staging: Staging,
    pub(super) out: PathBuf,
    pub(super) plan: LayerPlan,
    pub(super) info: LayerInfo,
}

impl std::fmt::Debug for Prepacked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepacked")
            .field("out", &self.out)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Prepacked {
    /// OUT, the folder it was packed for.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// The layer as packed.
    pub fn layer(&self) -> &LayerInfo {
        &self.info
    }
}

fn blob_dir(root: &Path) -> PathBuf {
    root.join("blobs").join("sha256")
}

/// The `sha256:…` of each entry of a listing that is a file, in listing
/// order (`None` for the others).
pub type Sums = Vec<Option<String>>;

/// Packs the overlay layer of `overlay` (its folder and modes) and
/// `listing` for a build into `out`, whose layer cache is `cached`, unless
/// a cache may hold it or OUT cannot be written (`None`; the build then
/// hashes the files, and reports what is wrong with OUT). With the layer,
/// the digests of the listing's files, read from the bytes packed.
pub fn pack(
    overlay: &Overlay,
    listing: &[OverlayEntry],
    opts: &BuildOptions,
    cached: &Cache,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<Option<(Prepacked, Sums)>, PackageError> {
    // A path the overlay shares with the verifier, an OUT that cannot be
    // written or that holds the overlay: left to the build to refuse,
    // with its own message.
    let Ok(plan) = plan::overlay_alone(listing, overlay.modes()) else {
        return Ok(None);
    };
    if cached_maybe(&plan, opts, cached) {
        return Ok(None);
    }
    if crate::atomic::check_inputs(out, &[overlay.root().to_path_buf()]).is_err() {
        return Ok(None);
    }
    let Ok(staging) = Staging::new(out) else {
        return Ok(None);
    };
    let blobs = blob_dir(staging.path());
    output::create_dir(&staging.path().join("blobs"))?;
    output::create_dir(&blobs)?;
    let (info, sums) = layer::write_layer_summing(
        &plan,
        opts.compression,
        opts.zstd_workers,
        opts.source_date,
        &blobs,
        progress,
    )?;
    let by_path: HashMap<&str, [u8; 32]> = plan
        .entries
        .iter()
        .zip(&sums)
        .filter_map(|(e, s)| Some((e.path.as_str(), (*s)?)))
        .collect();
    let listed = listing
        .iter()
        .map(|e| by_path.get(e.path.as_str()).map(sum_text))
        .collect();
    let packed = Prepacked {
        staging,
        out: out.to_path_buf(),
        plan,
        info,
    };
    Ok(Some((packed, listed)))
}

/// True when a cache this build looks in (OUT's, `cached`, or the user's)
/// may hold the overlay layer `plan`.
fn cached_maybe(plan: &LayerPlan, opts: &BuildOptions, cached: &Cache) -> bool {
    if !opts.cache {
        return false;
    }
    let key = cache::key(plan, opts.compression, opts.source_date);
    if cached.has(&key) {
        return true;
    }
    let Some(uc) = &opts.user_cache else {
        return false;
    };
    let tar_size = tar_stream::tar_size(&plan.entries, opts.source_date);
    uc.may_hold(plan.role, opts.compression, plan.entries.len(), tar_size)
}

/// `sha256:` and the hex of `sum`.
fn sum_text(sum: &[u8; 32]) -> String {
    format!("sha256:{}", super::digest::hex(sum))
}
