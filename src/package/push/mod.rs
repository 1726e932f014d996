//! Pushing an OCI image layout to a registry (OCI distribution API, spoken directly
//! over reqwest on a current-thread tokio runtime; see `registry`).
//!
//! Nothing the layout or the registry says is trusted: the tag is checked against the
//! distribution grammar before any request (`target`), every blob is checked against
//! its descriptor before the first upload, descriptor sizes are checked against the files
//! before anything is allocated, and every response body is read with a bound. Blobs the
//! registry already has are skipped; the manifest is uploaded as the exact bytes of the
//! layout, and afterwards the registry's digest for the tag must equal the local manifest
//! digest, or the push fails. Plain HTTP is used only when asked for (`insecure`, meant
//! for loopback registries). Every failure says which registry and reference, and a
//! failed push never reports success. Blobs are streamed from their files, so memory does
//! not grow with the layer size.

mod challenge;
mod registry;
mod target;

pub use registry::{ERROR_BODY_LIMIT, MANIFEST_LIMIT, TOKEN_LIMIT};
pub use target::{Target, check_tag};

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use thiserror::Error;

use super::credentials::{self, CredentialsError};
use super::digest::Digest;
use super::layout_reader::{LayoutError, LocalImage};
use registry::Registry;

/// How to push.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// Plain HTTP instead of HTTPS.
    pub insecure: bool,
    /// Limit for the whole push.
    pub timeout: Duration,
    /// Auth files to consult, in order (see [`credentials::auth_files`]).
    pub auth_files: Vec<PathBuf>,
}

impl Default for PushOptions {
    fn default() -> Self {
        Self {
            insecure: false,
            timeout: Duration::from_secs(600),
            auth_files: credentials::auth_files(),
        }
    }
}

/// One blob and whether it was uploaded or already there.
#[derive(Debug, Clone, Serialize)]
pub struct BlobPush {
    pub digest: Digest,
    pub size: u64,
    pub uploaded: bool,
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
    /// The auth file the credentials came from; `None` when anonymous.
    pub credentials: Option<PathBuf>,
}

#[derive(Debug, Error)]
pub enum PushError {
    #[error("reference `{reference}`: {message}")]
    Reference { reference: String, message: String },
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    #[error("registry {registry}: authentication failed ({message}); {hint}")]
    Auth {
        registry: String,
        message: String,
        hint: String,
    },
    #[error("registry {registry}: cannot reach it: {message}")]
    Unreachable { registry: String, message: String },
    #[error("registry {registry}: {what} failed: {message}")]
    Transfer {
        registry: String,
        what: String,
        message: String,
    },
    #[error(
        "registry {reference}: the registry reports manifest {remote}, but the pushed manifest is {local}"
    )]
    Mismatch {
        reference: String,
        local: Digest,
        remote: String,
    },
    #[error("registry {registry}: no answer within {seconds} s; the push did not complete")]
    Timeout { registry: String, seconds: u64 },
    #[error("cannot start the network runtime: {0}")]
    Runtime(std::io::Error),
}

impl PushError {
    /// True when the input (reference, layout, credentials file) is at
    /// fault rather than the registry or the network.
    pub fn is_unusable_input(&self) -> bool {
        matches!(
            self,
            PushError::Reference { .. } | PushError::Layout(_) | PushError::Credentials(_)
        )
    }
}

/// Parses REF. Without a tag, `default_tag` (the layout's) is used; a
/// digest reference is refused, since a push names a tag. Every part is checked
/// against the distribution grammar.
pub fn parse_reference(reference: &str, default_tag: Option<&str>) -> Result<Target, PushError> {
    Target::parse(reference, default_tag).map_err(|e| PushError::Reference {
        reference: reference.to_string(),
        message: e.0,
    })
}

/// Pushes the one image of the layout at `layout` to `reference`.
pub fn push(layout: &Path, reference: &str, opts: &PushOptions) -> Result<PushReport, PushError> {
    let image = LocalImage::open(layout)?;
    let target = parse_reference(reference, image.tag.as_deref())?;
    image.verify()?;
    let registry = target.api_host().to_string();
    let creds = credentials::lookup(&registry, target.repository(), &opts.auth_files)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PushError::Runtime)?;
    let seconds = opts.timeout.as_secs();
    runtime.block_on(async {
        tokio::time::timeout(opts.timeout, upload(&image, &target, creds.as_ref(), opts))
            .await
            .unwrap_or(Err(PushError::Timeout { registry, seconds }))
    })
}

async fn upload(
    image: &LocalImage,
    target: &Target,
    creds: Option<&credentials::Credentials>,
    opts: &PushOptions,
) -> Result<PushReport, PushError> {
    let host = target.api_host();
    let source = creds.map(|c| c.source.clone());
    let hint = match &source {
        Some(p) => format!("check the entry for {host} in {}", p.display()),
        None => format!(
            "no credentials for {host} in {}",
            opts.auth_files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut registry = Registry::new(target, creds, opts.insecure, hint)?;
    registry.authenticate().await?;

    let mut blobs = Vec::new();
    for blob in image.blobs() {
        let present = registry.blob_exists(&blob.digest).await?;
        if !present {
            registry
                .upload_blob(&blob.digest, blob.size, &image.blob_path(&blob.digest))
                .await?;
        }
        blobs.push(BlobPush {
            digest: blob.digest.clone(),
            size: blob.size,
            uploaded: !present,
        });
    }

    registry
        .put_manifest(&image.manifest_media_type, image.manifest_bytes.clone())
        .await?;
    let remote = registry.manifest_digest(&image.manifest_media_type).await?;
    if remote != image.manifest.digest.to_string() {
        return Err(PushError::Mismatch {
            reference: target.whole(),
            local: image.manifest.digest.clone(),
            remote,
        });
    }
    Ok(PushReport {
        reference: target.whole(),
        digest: image.manifest.digest.clone(),
        blobs,
        credentials: source,
    })
}
