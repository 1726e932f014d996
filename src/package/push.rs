//! Pushing an OCI image layout to a registry: the image under its tag, then what the
//! layout holds about it — signatures and attestations under their cosign tags
//! (`sha256-<hex>.sig`, `.att`) and OCI 1.1 referrers (SBOMs) by digest, with the
//! `sha256-<hex>` fallback tag kept for registries without the referrers API
//! (distribution spec 1.1, "Pushing Manifests with Subject").
//!
//! Nothing the layout or the registry says is trusted: the tag is checked against the
//! distribution grammar before any request (`registry::reference`), every blob is checked
//! against its descriptor before the first upload, descriptor sizes are checked against
//! the files before anything is allocated, and every response body is read with a
//! bound. Blobs the registry already has are skipped; manifests are uploaded as the exact
//! bytes of the layout, and afterwards the registry's digest for the tag must equal the
//! local manifest digest, or the push fails. Plain HTTP is used only when asked for
//! (`insecure`, meant for loopback registries). Every failure says which registry and
//! reference, and a failed push never reports success. Blobs are streamed from their
//! files, so memory does not grow with the layer size.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::credentials;
use super::digest::BlobRef;
use super::digest::Digest;
use super::layout_reader::{Attachment, LocalImage};
use super::registry::{self, Access, Reference, Registry, RegistryError};

pub use super::registry::Options as PushOptions;
/// Push failures are the registry client's.
pub type PushError = RegistryError;

/// One blob and whether it was uploaded or already there.
#[derive(Debug, Clone, Serialize)]
pub struct BlobPush {
    pub digest: Digest,
    pub size: u64,
    pub uploaded: bool,
}

/// One manifest about the image, pushed after it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentPush {
    pub digest: Digest,
    /// The cosign tag it was put under, or `None` for a referrer put by digest.
    pub tag: Option<String>,
    pub artifact_type: Option<String>,
    /// For a referrer: `api` when the registry indexes referrers itself, `fallback-tag`
    /// when nodeimg keeps the `sha256-<hex>` index.
    pub referrers: Option<&'static str>,
    /// The registry already holds another manifest under the cosign tag (signatures of
    /// other signers): it was not replaced, and its layers and the layout's are to be
    /// merged by the caller (`trust::registry`), so no signature is lost.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub to_merge: bool,
}

/// A successful push.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushReport {
    /// `registry/repository:tag`.
    pub reference: String,
    /// The manifest digest, confirmed by the registry.
    pub digest: Digest,
    pub blobs: Vec<BlobPush>,
    /// Signatures, attestations and referrers pushed after the image.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentPush>,
    /// The auth file the credentials came from; `None` when anonymous.
    pub credentials: Option<PathBuf>,
}

/// Parses REF. Without a tag, `default_tag` (the layout's) is used; a
/// digest reference is refused, since a push names a tag. Every part is checked
/// against the distribution grammar.
pub fn parse_reference(reference: &str, default_tag: Option<&str>) -> Result<Reference, PushError> {
    Reference::for_push(reference, default_tag).map_err(|e| PushError::Reference {
        reference: reference.to_string(),
        message: e.0,
    })
}

/// Pushes the one image of the layout at `layout` to `reference`, then its attachments.
pub fn push(layout: &Path, reference: &str, opts: &PushOptions) -> Result<PushReport, PushError> {
    let image = LocalImage::open(layout)?;
    let target = parse_reference(reference, image.tag.as_deref())?;
    image.verify()?;
    let creds = credentials::lookup(target.api_host(), target.repository(), &opts.auth_files)?;
    registry::block_on(target.api_host(), opts, async {
        let session = registry::connect(&target, creds.as_ref(), opts, Access::PullPush).await?;
        upload(&session, &image, &target, creds.as_ref()).await
    })
}

async fn upload(
    registry: &Registry<'_>,
    image: &LocalImage,
    target: &Reference,
    creds: Option<&credentials::Credentials>,
) -> Result<PushReport, PushError> {
    let tag = target.tag().unwrap_or_default();
    let mut blobs = Vec::new();
    for blob in image.blobs() {
        blobs.push(upload_blob(registry, image, &blob).await?);
    }
    registry
        .put_manifest(
            tag,
            &image.manifest_media_type,
            image.manifest_bytes.clone(),
        )
        .await?;
    let remote = registry
        .manifest_digest(tag, &image.manifest_media_type)
        .await?;
    if remote != image.manifest.digest.to_string() {
        return Err(PushError::Mismatch {
            reference: target.whole(),
            local: image.manifest.digest.clone(),
            remote,
        });
    }
    let mut attachments = Vec::new();
    for a in &image.attachments {
        for blob in &a.blobs {
            upload_blob(registry, image, blob).await?;
        }
        attachments.push(push_attachment(registry, image, a).await?);
    }
    Ok(PushReport {
        reference: target.whole(),
        digest: image.manifest.digest.clone(),
        blobs,
        attachments,
        credentials: creds.map(|c| c.source.clone()),
    })
}

async fn upload_blob(
    registry: &Registry<'_>,
    image: &LocalImage,
    blob: &BlobRef,
) -> Result<BlobPush, PushError> {
    let present = registry.blob_exists(&blob.digest).await?;
    if !present {
        registry
            .upload_blob(&blob.digest, blob.size, &image.blob_path(&blob.digest))
            .await?;
    }
    Ok(BlobPush {
        digest: blob.digest.clone(),
        size: blob.size,
        uploaded: !present,
    })
}

async fn push_attachment(
    registry: &Registry<'_>,
    image: &LocalImage,
    a: &Attachment,
) -> Result<AttachmentPush, PushError> {
    let by = a
        .ref_name
        .clone()
        .filter(|_| !a.referrer)
        .unwrap_or_else(|| a.manifest.digest.to_string());
    if !a.referrer
        && let Some(tag) = &a.ref_name
        && let Some((_, remote)) = registry.get_manifest(tag, &[&a.media_type]).await?
        && Digest::of(&remote) != a.manifest.digest
    {
        return Ok(AttachmentPush {
            digest: a.manifest.digest.clone(),
            tag: Some(tag.clone()),
            artifact_type: a.artifact_type.clone(),
            referrers: None,
            to_merge: true,
        });
    }
    registry
        .put_manifest(&by, &a.media_type, a.manifest_bytes.clone())
        .await?;
    let referrers = if a.referrer {
        Some(super::referrers::publish(registry, &image.manifest.digest, a).await?)
    } else {
        None
    };
    Ok(AttachmentPush {
        digest: a.manifest.digest.clone(),
        tag: a.ref_name.clone().filter(|_| !a.referrer),
        artifact_type: a.artifact_type.clone(),
        referrers,
        to_merge: false,
    })
}
