//! Pushing an OCI image layout to a registry (OCI distribution API, via
//! oci-client on a current-thread tokio runtime).
//!
//! Blobs the registry already has are skipped; the manifest is uploaded as
//! the exact bytes of the layout, and afterwards the registry's digest for
//! the tag must equal the local manifest digest, or the push fails. Plain
//! HTTP is used only when asked for (`insecure`, meant for loopback
//! registries). Every failure says which registry and reference, and a
//! failed push never reports success. Each blob that needs uploading is
//! read into memory once and checked against its digest before it is
//! sent, so memory use peaks at the size of the largest layer.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use serde::Serialize;
use thiserror::Error;

use super::credentials::{self, Credentials, CredentialsError};
use super::digest::Digest;
use super::layout_reader::{LayoutError, LocalImage};

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
/// digest reference is refused, since a push names a tag.
pub fn parse_reference(reference: &str, default_tag: Option<&str>) -> Result<Reference, PushError> {
    let bad = |message: String| PushError::Reference {
        reference: reference.to_string(),
        message,
    };
    if reference.contains('@') {
        return Err(bad("push needs a tag (`name:tag`), not a digest".into()));
    }
    let parsed = Reference::from_str(reference).map_err(|e| {
        bad(format!(
            "{e}; expected `registry[:port]/repository[:tag]`, e.g. `registry.example:5000/nodes/h100:2026.11.1`"
        ))
    })?;
    let last = reference.rsplit('/').next().unwrap_or(reference);
    if last.contains(':') {
        return Ok(parsed);
    }
    let tag = default_tag
        .ok_or_else(|| bad("has no tag and the layout's index names none; add `:tag`".into()))?;
    Ok(Reference::with_tag(
        parsed.registry().to_string(),
        parsed.repository().to_string(),
        tag.to_string(),
    ))
}

/// Pushes the one image of the layout at `layout` to `reference`.
pub fn push(layout: &Path, reference: &str, opts: &PushOptions) -> Result<PushReport, PushError> {
    let image = LocalImage::open(layout)?;
    let reference = parse_reference(reference, image.tag.as_deref())?;
    image.verify()?;
    let registry = reference.resolve_registry().to_string();
    let creds = credentials::lookup(&registry, reference.repository(), &opts.auth_files)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PushError::Runtime)?;
    let seconds = opts.timeout.as_secs();
    runtime.block_on(async {
        tokio::time::timeout(opts.timeout, upload(&image, &reference, creds, opts))
            .await
            .unwrap_or(Err(PushError::Timeout { registry, seconds }))
    })
}

async fn upload(
    image: &LocalImage,
    reference: &Reference,
    creds: Option<Credentials>,
    opts: &PushOptions,
) -> Result<PushReport, PushError> {
    let registry = reference.resolve_registry().to_string();
    let client = Client::new(ClientConfig {
        protocol: if opts.insecure {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        },
        connect_timeout: Some(Duration::from_secs(10)),
        read_timeout: Some(Duration::from_secs(60)),
        ..ClientConfig::default()
    });
    let auth = match &creds {
        Some(c) => RegistryAuth::Basic(c.username.clone(), c.password.clone()),
        None => RegistryAuth::Anonymous,
    };
    let source = creds.as_ref().map(|c| c.source.clone());
    let hint = match &source {
        Some(p) => format!("check the entry for {registry} in {}", p.display()),
        None => format!(
            "no credentials for {registry} in {}",
            opts.auth_files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let fail = |what: &str, e: OciDistributionError| {
        let mut err = classify(&registry, &hint, what, e);
        if let PushError::Unreachable { message, .. } = &mut err
            && !opts.insecure
        {
            message.push_str(" (a registry that speaks plain HTTP needs --insecure)");
        }
        err
    };

    client
        .auth(reference, &auth, RegistryOperation::Push)
        .await
        .map_err(|e| fail("authentication", e))?;

    let mut blobs = Vec::new();
    for blob in image.blobs() {
        let what = format!("checking for blob {}", blob.digest);
        let present = client
            .blob_exists(reference, &blob.digest.to_string())
            .await
            .map_err(|e| fail(&what, e))?;
        if !present {
            let bytes = image.read_blob(&blob)?;
            let what = format!("upload of blob {} ({} bytes)", blob.digest, blob.size);
            client
                .push_blob(reference, bytes, &blob.digest.to_string())
                .await
                .map_err(|e| fail(&what, e))?;
        }
        blobs.push(BlobPush {
            digest: blob.digest.clone(),
            size: blob.size,
            uploaded: !present,
        });
    }

    let content_type = image.manifest_media_type.parse().map_err(|_| {
        PushError::Layout(LayoutError {
            path: image.root.join("index.json"),
            message: format!(
                "media type `{}` is not a valid header value",
                image.manifest_media_type
            ),
        })
    })?;
    client
        .push_manifest_raw(reference, image.manifest_bytes.clone(), content_type)
        .await
        .map_err(|e| fail("upload of the manifest", e))?;
    let remote = client
        .fetch_manifest_digest(reference, &auth)
        .await
        .map_err(|e| fail("reading back the manifest digest", e))?;
    if remote != image.manifest.digest.to_string() {
        return Err(PushError::Mismatch {
            reference: reference.whole(),
            local: image.manifest.digest.clone(),
            remote,
        });
    }
    Ok(PushReport {
        reference: reference.whole(),
        digest: image.manifest.digest.clone(),
        blobs,
        credentials: source,
    })
}

/// The full chain of causes, `a: b: c`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = c.source();
    }
    s
}

/// Sorts an oci-client error into auth / unreachable / transfer.
fn classify(registry: &str, hint: &str, what: &str, e: OciDistributionError) -> PushError {
    let message = chain(&e);
    let auth = |message: String| PushError::Auth {
        registry: registry.to_string(),
        message,
        hint: hint.to_string(),
    };
    match &e {
        OciDistributionError::AuthenticationFailure(_)
        | OciDistributionError::UnauthorizedError { .. } => return auth(message),
        OciDistributionError::ServerError {
            code: 401 | 403, ..
        } => return auth(message),
        OciDistributionError::RegistryError { envelope, .. }
            if envelope
                .errors
                .iter()
                .any(|x| matches!(x.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)) =>
        {
            return auth(message);
        }
        OciDistributionError::RequestError(re) => {
            if matches!(re.status().map(|s| s.as_u16()), Some(401 | 403)) {
                return auth(message);
            }
            if re.is_connect() {
                return PushError::Unreachable {
                    registry: registry.to_string(),
                    message,
                };
            }
        }
        _ => {}
    }
    PushError::Transfer {
        registry: registry.to_string(),
        what: what.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        let r = parse_reference("127.0.0.1:5000/nodes/h100:v1", Some("x")).unwrap();
        assert_eq!(
            (r.registry(), r.repository(), r.tag()),
            ("127.0.0.1:5000", "nodes/h100", Some("v1"))
        );
        let r = parse_reference("127.0.0.1:5000/nodes/h100", Some("2026.11.1")).unwrap();
        assert_eq!(r.tag(), Some("2026.11.1"));
        assert!(parse_reference("127.0.0.1:5000/nodes/h100", None).is_err());
        for bad in [
            "",
            "a b",
            "reg:5000/x@sha256:abc",
            "x::y",
            "reg:5000/x:-bad",
            "reg/x/",
        ] {
            let e = parse_reference(bad, Some("t")).unwrap_err();
            assert!(e.is_unusable_input(), "{bad}: {e}");
            assert!(e.to_string().contains("reference"), "{e}");
        }
    }
}
