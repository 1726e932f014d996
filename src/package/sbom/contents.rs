//! What the image holds, gathered from what the build already knows — never
//! by reading the layers back: the layer plans (every entry of every layer,
//! in tar order), the SHA-256 of each overlay file the blueprint id was
//! computed with (so a 1.4 GiB overlay is not read again), the rendered
//! files and the verifier (in memory), the holds file's pins, the base OS
//! the blueprint names, and the crates the verifier carries.

use std::collections::HashMap;

use auditable_serde::VersionInfo;
use sha1::Sha1;
use sha2::{Digest as _, Sha256};

use crate::blueprint::Blueprint;
use crate::blueprint::identity::{OverlayRecord, RecordKind};
use crate::blueprint::model::Distro;

use super::super::digest::{BlobRef, hex};
use super::super::error::PackageError;
use super::super::layer::LayerInfo;
use super::super::meta::ImageMeta;
use super::super::plan::{Content, EntryKind, LayerPlan, LayerRole};
use super::super::verifier::{NODE_PATH, Verifier};
use super::crates;
use super::pins::{self, Pins};

/// What the build passes for the SBOM, beyond the layers: the base OS and
/// the overlay file digests of the blueprint id.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    pub distro: Distro,
    /// `os.version` (`22.04`).
    pub os_version: String,
    /// `os.patchLevel`.
    pub patch_level: String,
    /// `os.kernel`.
    pub kernel: String,
    /// The overlay's records (layer path, mode, SHA-256), when the blueprint
    /// has an overlay and it was read.
    pub overlay: Option<&'a [OverlayRecord]>,
}

impl<'a> Source<'a> {
    pub fn from_blueprint(bp: &'a Blueprint) -> Self {
        let os = &bp.spec().os;
        Self {
            distro: os.distro,
            os_version: os.version.to_string(),
            patch_level: os.patch_level.to_string(),
            kernel: os.kernel.to_string(),
            overlay: bp.identity().overlay().and_then(|t| t.records()),
        }
    }
}

/// A regular file or a link of a layer (directories are implied by the
/// paths; their modes are in the layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'a> {
    /// Layer path (`etc/containerd/config.toml`).
    pub path: &'a str,
    pub mode: u32,
    pub kind: ItemKind<'a>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind<'a> {
    File {
        size: u64,
        /// Hex.
        sha256: std::borrow::Cow<'a, str>,
        /// Hex; only for files nodeimg holds in memory (rendered files and
        /// the verifier): computing it for the overlay would mean reading
        /// it again.
        sha1: Option<String>,
    },
    Symlink {
        target: &'a str,
    },
}

/// One layer and what it holds.
#[derive(Debug, Clone)]
pub struct Layer<'a> {
    pub info: &'a LayerInfo,
    pub items: Vec<Item<'a>>,
    pub dirs: usize,
}

/// The verifier binary and its crates.
#[derive(Debug, Clone)]
pub struct VerifierPart {
    pub sha256: String,
    pub sha1: String,
    pub size: u64,
    /// `None`: the binary carries no crate list.
    pub crates: Option<VersionInfo>,
}

/// Everything one SBOM describes.
#[derive(Debug, Clone)]
pub struct Contents<'a> {
    pub meta: &'a ImageMeta,
    /// RFC 3339 (SOURCE_DATE_EPOCH).
    pub created: String,
    pub manifest: &'a BlobRef,
    pub config: &'a BlobRef,
    pub source: &'a Source<'a>,
    pub layers: Vec<Layer<'a>>,
    pub pins: Pins,
    pub verifier: VerifierPart,
}

fn hex_sha1(bytes: &[u8]) -> String {
    hex(&Sha1::digest(bytes))
}

/// Puts the model together. `plans` and `layers` are in the same order.
#[allow(clippy::too_many_arguments)]
pub fn gather<'a>(
    plans: &'a [LayerPlan],
    layers: &'a [LayerInfo],
    verifier: &Verifier,
    source: &'a Source<'a>,
    meta: &'a ImageMeta,
    created: String,
    manifest: &'a BlobRef,
    config: &'a BlobRef,
) -> Result<Contents<'a>, PackageError> {
    let overlay_sums: HashMap<&str, &str> = source
        .overlay
        .into_iter()
        .flatten()
        .filter_map(|r| match &r.kind {
            RecordKind::File { sha256, .. } => Some((
                r.path.as_str(),
                sha256.strip_prefix("sha256:").unwrap_or(sha256),
            )),
            _ => None,
        })
        .collect();
    let mut pins = Pins::default();
    let mut out = Vec::with_capacity(plans.len());
    let mut verifier_part = None;
    for (plan, info) in plans.iter().zip(layers) {
        let mut items = Vec::with_capacity(plan.entries.len());
        let mut dirs = 0;
        for e in &plan.entries {
            let is_verifier = plan.role == LayerRole::Verifier && e.path == NODE_PATH;
            let kind = match &e.kind {
                EntryKind::Dir => {
                    dirs += 1;
                    continue;
                }
                EntryKind::Symlink(target) => ItemKind::Symlink { target },
                // Its digests are known (remembered, or computed once for
                // the layer), wherever its bytes are.
                EntryKind::File(content) if is_verifier => {
                    let sums = verifier.sums()?;
                    let (sha256, sha1) = (hex(&sums.sha256), hex(&sums.sha1));
                    verifier_part = Some(VerifierPart {
                        sha256: sha256.clone(),
                        sha1: sha1.clone(),
                        size: content.size(),
                        crates: None,
                    });
                    ItemKind::File {
                        size: content.size(),
                        sha256: sha256.into(),
                        sha1: Some(sha1),
                    }
                }
                EntryKind::File(Content::Memory { bytes, sha256 }) => {
                    if plan.role == LayerRole::Config
                        && let Some(read) = pins::read(&e.path, bytes)
                    {
                        let read = read.map_err(|message| PackageError::Invalid {
                            what: "the image's package holds".into(),
                            message,
                        })?;
                        pins.file = read.file;
                        pins.packages.extend(read.packages);
                        pins.patterns.extend(read.patterns);
                    }
                    let sha1 = hex_sha1(bytes);
                    let sha256 = hex(sha256);
                    ItemKind::File {
                        size: bytes.len() as u64,
                        sha256: sha256.into(),
                        sha1: Some(sha1),
                    }
                }
                EntryKind::File(Content::Disk { path, size, .. }) => {
                    let sha256 = match overlay_sums.get(e.path.as_str()) {
                        Some(s) => std::borrow::Cow::Borrowed(*s),
                        None if source.overlay.is_none() => hash_file(path)?.into(),
                        None => {
                            return Err(PackageError::Invalid {
                                what: format!("overlay file `/{}`", e.path),
                                message: "has no digest from the blueprint id (did the overlay change during the build?)".into(),
                            });
                        }
                    };
                    ItemKind::File {
                        size: *size,
                        sha256,
                        sha1: None,
                    }
                }
            };
            items.push(Item {
                path: &e.path,
                mode: e.mode,
                kind,
            });
        }
        out.push(Layer { info, items, dirs });
    }
    let mut verifier_part = verifier_part.ok_or_else(|| PackageError::Invalid {
        what: "the verifier layer".into(),
        message: format!("holds no /{NODE_PATH}"),
    })?;
    verifier_part.crates =
        crates::from_section(verifier.crate_list()).map_err(|message| PackageError::Verifier {
            path: verifier.source().to_path_buf(),
            message,
        })?;
    pins.packages.sort();
    pins.patterns.sort();
    Ok(Contents {
        meta,
        created,
        manifest,
        config,
        source,
        layers: out,
        pins,
        verifier: verifier_part,
    })
}

/// SHA-256 of an overlay file, for a caller that has no digests from the
/// blueprint id (a library user building without one).
fn hash_file(path: &std::path::Path) -> Result<String, PackageError> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(path).map_err(PackageError::io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match f.read(&mut buf).map_err(PackageError::io(path))? {
            0 => break,
            n => h.update(&buf[..n]),
        }
    }
    Ok(hex(&h.finalize()))
}
