//! Artifacts attached to the image as OCI referrers (image-spec 1.1): an
//! artifact manifest whose `subject` is the image manifest, whose
//! `artifactType` says what it carries, whose `config` is the empty
//! descriptor (`application/vnd.oci.empty.v1+json`, `{}`), and whose one
//! layer is the artifact's blob. In the layout each is listed in
//! `index.json` beside the image, with its `artifactType` and the
//! annotation [`ANNOTATION_REFERRER`]; only the image carries the
//! `org.opencontainers.image.ref.name` tag, so `skopeo … oci:OUT:TAG` still
//! picks the image, and readers tell the two apart by `artifactType` (an
//! image descriptor has none).

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use oci_spec::image::{
    ANNOTATION_CREATED, ANNOTATION_TITLE, Descriptor, DescriptorBuilder, ImageManifestBuilder,
    MediaType,
};

use super::digest::BlobRef;
use super::digest::Digest;
use super::error::PackageError;
use super::output;

/// The annotation on a referrer's `index.json` entry saying what it is
/// (`sbom`).
pub const ANNOTATION_REFERRER: &str = "dev.nodeimg.referrer";
/// The empty JSON blob every artifact manifest's config points at.
pub const EMPTY_JSON: &[u8] = b"{}";
/// Largest artifact manifest read back (the distribution spec lets
/// registries refuse larger manifests).
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

/// One referrer written into a layout.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Written {
    pub artifact_type: String,
    /// What the referrer is, for its index entry (`sbom`).
    pub kind: String,
    /// The artifact manifest.
    pub manifest: BlobRef,
    /// The artifact's blob.
    pub blob: BlobRef,
}

fn oci_digest(d: &Digest) -> Result<oci_spec::image::Digest, PackageError> {
    oci_spec::image::Digest::from_str(&d.to_string()).map_err(PackageError::spec("digest"))
}

/// Writes `content` and its artifact manifest (subject: the image manifest
/// `subject`) into `blobs` (`…/blobs/sha256`), and the empty config blob;
/// the caller flushes them with `unsynced`.
#[allow(clippy::too_many_arguments)]
pub fn write(
    unsynced: &mut output::Unsynced,
    blobs: &Path,
    subject: &BlobRef,
    artifact_type: &str,
    kind: &str,
    file_name: &str,
    content: &[u8],
    created: &str,
) -> Result<Written, PackageError> {
    let empty = write_blob(unsynced, blobs, EMPTY_JSON)?;
    let blob = write_blob(unsynced, blobs, content)?;
    let mut layer = Descriptor::new(
        MediaType::from(artifact_type),
        blob.size,
        oci_digest(&blob.digest)?,
    );
    layer.set_annotations(Some(HashMap::from([(
        ANNOTATION_TITLE.to_string(),
        file_name.to_string(),
    )])));
    let manifest = ImageManifestBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageManifest)
        .artifact_type(MediaType::from(artifact_type))
        .config(Descriptor::new(
            MediaType::EmptyJSON,
            empty.size,
            oci_digest(&empty.digest)?,
        ))
        .layers(vec![layer])
        .subject(Descriptor::new(
            MediaType::ImageManifest,
            subject.size,
            oci_digest(&subject.digest)?,
        ))
        .annotations(HashMap::from([(
            ANNOTATION_CREATED.to_string(),
            created.to_string(),
        )]))
        .build()
        .map_err(PackageError::spec("artifact manifest"))?;
    let bytes = crate::canonical_json::to_vec(&manifest).map_err(|e| PackageError::Spec {
        what: "artifact manifest",
        message: e.to_string(),
    })?;
    Ok(Written {
        artifact_type: artifact_type.to_string(),
        kind: kind.to_string(),
        manifest: write_blob(unsynced, blobs, &bytes)?,
        blob,
    })
}

/// The referrer's entry in `index.json`.
pub fn index_entry(w: &Written) -> Result<Descriptor, PackageError> {
    DescriptorBuilder::default()
        .media_type(MediaType::ImageManifest)
        .digest(oci_digest(&w.manifest.digest)?)
        .size(w.manifest.size)
        .artifact_type(MediaType::from(w.artifact_type.as_str()))
        .annotations(HashMap::from([(
            ANNOTATION_REFERRER.to_string(),
            w.kind.clone(),
        )]))
        .build()
        .map_err(PackageError::spec("referrer descriptor"))
}

fn write_blob(
    unsynced: &mut output::Unsynced,
    blobs: &Path,
    bytes: &[u8],
) -> Result<BlobRef, PackageError> {
    let digest = Digest::of(bytes);
    unsynced.write_new(&blobs.join(digest.hex()), bytes)?;
    Ok(BlobRef {
        digest,
        size: bytes.len() as u64,
    })
}
