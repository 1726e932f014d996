//! What was built, and by which nodeimg: the build report (printed by
//! `nodeimg build --format json`) and the provenance record written to
//! `OUT/provenance.json`.
//!
//! The nodeimg version lives only here, outside the content-addressed
//! blobs, so a tool upgrade does not change any digest. The record is still
//! deterministic (no wall-clock time, no host name): the same input and the
//! same nodeimg version give the same bytes.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::digest::BlobRef;
use super::error::PackageError;
use super::layer::LayerInfo;
use super::meta::Tag;
use super::output;
use super::plan::LayerRole;

/// File name of the provenance record inside OUT.
pub const PROVENANCE_FILE: &str = "provenance.json";

/// Every digest and size of one image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageSummary {
    pub name: String,
    pub version: String,
    pub blueprint_id: String,
    pub tag: Tag,
    /// `os/architecture`, e.g. `linux/amd64`.
    pub platform: String,
    /// RFC 3339 form of `source_date_epoch`.
    pub created: String,
    pub source_date_epoch: u64,
    pub manifest: BlobRef,
    pub config: BlobRef,
    /// The layers, bottom to top: overlay (when the blueprint has one),
    /// verifier, config.
    pub layers: Vec<LayerInfo>,
    /// The SBOMs attached to the image as referrers (SPDX, CycloneDX): each
    /// one's artifact manifest and document digests. Empty with `--no-sbom`.
    pub sbom: Vec<super::referrer::Written>,
}

impl ImageSummary {
    /// The layer with `role`, if the image has one.
    pub fn layer(&self, role: LayerRole) -> Option<&LayerInfo> {
        self.layers.iter().find(|l| l.role == role)
    }
}

/// The result of `package::build`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildReport {
    /// The OCI image layout folder.
    pub out: PathBuf,
    /// `OUT/provenance.json`.
    pub provenance: PathBuf,
    #[serde(flatten)]
    pub image: ImageSummary,
    /// Layers taken unchanged from the previous build in OUT.
    pub reused: Vec<LayerRole>,
    /// How many crates the verifier's embedded crate list names (`None`:
    /// it carries none, or no SBOM was made).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifier_crates: Option<usize>,
    /// How long the SBOM took (`-v` reports it; a clock reading, so never in
    /// the JSON report, which stays the same for the same inputs).
    #[serde(skip)]
    pub sbom_time: Option<std::time::Duration>,
}

#[derive(Serialize)]
struct Builder {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Record<'a> {
    builder: Builder,
    #[serde(flatten)]
    image: &'a ImageSummary,
}

/// Writes `root/provenance.json`.
pub fn write(root: &Path, image: &ImageSummary) -> Result<(), PackageError> {
    let record = Record {
        builder: Builder {
            name: env!("CARGO_PKG_NAME"),
            version: env!("CARGO_PKG_VERSION"),
        },
        image,
    };
    let mut bytes = serde_json::to_vec_pretty(&record).map_err(|e| PackageError::Spec {
        what: "provenance",
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    output::write_file(&root.join(PROVENANCE_FILE), &bytes)
}
