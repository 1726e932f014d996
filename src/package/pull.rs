//! Pulling an image from a registry into an OCI image layout: the image manifest named
//! by digest (a tag alone only when the caller allows it), its config and layers, and
//! what the registry holds about it — cosign signatures and attestations
//! (`sha256-<hex>.sig`, `.att`) and OCI 1.1 referrers (SBOMs) — so that `apply`,
//! signature verification and the node's record work from one local layout.
//!
//! Bounded: manifests are read with the registry client's limit and hashed against the
//! digest that named them; every blob is streamed to its file and refused past its
//! descriptor's size or on another digest; an image may hold at most [`MAX_LAYERS`]
//! layers and [`MAX_IMAGE_BYTES`] in all, an attachment blob at most
//! [`MAX_ATTACHMENT_BLOB_BYTES`]; a referrer whose `subject` is another image is
//! refused. The layout is written into a folder that must not exist yet, so nothing a
//! user has is touched; on failure it is removed.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use oci_spec::image::{Descriptor, ImageManifest};
use serde::Serialize;
use serde_json::{Value, json};

use super::credentials;
use super::digest::BlobRef;
use super::digest::Digest;
use super::referrers;
use super::registry::{self, Access, Options, Reference, Registry, RegistryError};

/// Most layers an image pulled may have.
pub const MAX_LAYERS: usize = 128;
/// Most bytes an image's blobs may have in all (the limit `apply` unpacks).
pub const MAX_IMAGE_BYTES: u64 = 256 << 30;
/// Most bytes of one blob of a signature, attestation or referrer (an SBOM).
pub const MAX_ATTACHMENT_BLOB_BYTES: u64 = 64 << 20;
/// Most attachments (signatures, attestations, referrers) pulled with an image.
pub const MAX_ATTACHMENTS: usize = 64;

const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";

/// What was pulled.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PullReport {
    /// The reference as given.
    pub reference: String,
    /// The image manifest's digest (the one asked for, or the tag's when allowed).
    pub digest: Digest,
    /// Config and layers.
    pub blobs: Vec<BlobRef>,
    /// Cosign tags found (`sha256-<hex>.sig`, `.att`) and referrers, by digest.
    pub attachments: Vec<PulledAttachment>,
    pub layout: PathBuf,
}

/// One manifest about the image that was pulled with it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PulledAttachment {
    pub digest: Digest,
    pub tag: Option<String>,
    pub artifact_type: Option<String>,
}

/// What of the image a pull fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    /// The manifest, config, layers and attachments: an image to apply.
    Whole,
    /// The manifest, config and attachments, without the layers: enough to check the
    /// image's signatures, attestations and SBOMs (`verify-image`, `rollout plan`).
    AboutOnly,
}

/// Pulls `reference` into a new OCI layout at `dest` (which must not exist).
pub fn pull(
    reference: &Reference,
    dest: &Path,
    opts: &Options,
) -> Result<PullReport, RegistryError> {
    pull_parts(reference, dest, opts, Parts::Whole)
}

/// [`pull`], fetching `parts` of the image.
pub fn pull_parts(
    reference: &Reference,
    dest: &Path,
    opts: &Options,
    parts: Parts,
) -> Result<PullReport, RegistryError> {
    let local = |e: std::io::Error| RegistryError::Local {
        path: dest.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir(dest).map_err(local)?;
    let result = (|| {
        std::fs::create_dir_all(dest.join("blobs/sha256")).map_err(local)?;
        let creds = credentials::lookup(
            reference.api_host(),
            reference.repository(),
            &opts.auth_files,
        )?;
        registry::block_on(reference.api_host(), opts, async {
            let session = registry::connect(reference, creds.as_ref(), opts, Access::Pull).await?;
            fetch(&session, reference, dest, parts).await
        })
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(dest);
    }
    result
}

async fn fetch(
    registry: &Registry<'_>,
    reference: &Reference,
    dest: &Path,
    parts: Parts,
) -> Result<PullReport, RegistryError> {
    let what = format!("the image {reference}");
    let wanted = reference.manifest_ref();
    let (media_type, bytes) = registry
        .get_manifest(
            &wanted,
            &[OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST],
        )
        .await?
        .ok_or_else(|| RegistryError::NotFound {
            registry: reference.api_host().to_owned(),
            what: what.clone(),
        })?;
    let digest = Digest::of(&bytes);
    if media_type == OCI_INDEX || media_type == DOCKER_LIST {
        return Err(registry.content_error(
            &what,
            "is an image index (several platforms); name the digest of the one image manifest to apply".into(),
        ));
    }
    if media_type == DOCKER_MANIFEST {
        return Err(registry.content_error(
            &what,
            "is a Docker v2 manifest; node images are OCI image manifests (`nodeimg build`)".into(),
        ));
    }
    let manifest = parse_manifest(registry, &what, &bytes)?;
    let (layers, total) = manifest.layers().iter().try_fold(
        (Vec::new(), 0u64),
        |(mut v, total), l| -> Result<_, RegistryError> {
            v.push(blob_ref(registry, &what, l)?);
            Ok((v, total.saturating_add(l.size())))
        },
    )?;
    if layers.len() > MAX_LAYERS || total > MAX_IMAGE_BYTES {
        return Err(registry.content_error(
            &what,
            format!(
                "has {} layers of {total} bytes; at most {MAX_LAYERS} layers and {MAX_IMAGE_BYTES} bytes are pulled",
                layers.len()
            ),
        ));
    }
    let config = blob_ref(registry, &what, manifest.config())?;
    let mut blobs = match parts {
        Parts::Whole => layers,
        Parts::AboutOnly => Vec::new(),
    };
    blobs.push(config);
    for b in &blobs {
        fetch_blob(registry, dest, b).await?;
    }
    write_blob(dest, &digest, &bytes)?;

    let mut entries = vec![entry(&media_type, &digest, &bytes, reference.tag(), None)];
    let mut attachments = Vec::new();
    // Cosign's tags: the signature and the attestations.
    for suffix in ["sig", "att"] {
        let tag = format!("sha256-{}.{suffix}", digest.hex());
        let Some((media, body)) = registry
            .get_manifest(&tag, &[OCI_MANIFEST, DOCKER_MANIFEST])
            .await?
        else {
            continue;
        };
        let d = Digest::of(&body);
        fetch_attachment(registry, dest, &tag, &body, None).await?;
        entries.push(entry(&media, &d, &body, Some(&tag), None));
        attachments.push(PulledAttachment {
            digest: d,
            tag: Some(tag),
            artifact_type: None,
        });
    }
    // OCI 1.1 referrers (SBOMs), from the API or the fallback tag.
    let referrers = referrers::list(registry, &digest).await?;
    if referrers.len() + attachments.len() > MAX_ATTACHMENTS {
        return Err(registry.content_error(
            &what,
            format!(
                "has {} signatures and referrers; at most {MAX_ATTACHMENTS} are pulled",
                referrers.len() + attachments.len()
            ),
        ));
    }
    for r in referrers {
        let d =
            Digest::from_str(r.digest().as_ref()).map_err(|e| registry.content_error(&what, e))?;
        let label = format!("referrer {d}");
        let (media, body) = registry
            .get_manifest(&d.to_string(), &[OCI_MANIFEST])
            .await?
            .ok_or_else(|| RegistryError::NotFound {
                registry: reference.api_host().to_owned(),
                what: label.clone(),
            })?;
        let artifact_type = fetch_attachment(registry, dest, &label, &body, Some(&digest)).await?;
        let artifact_type = artifact_type.or(r.artifact_type().as_ref().map(|t| t.to_string()));
        entries.push(entry(&media, &d, &body, None, artifact_type.as_deref()));
        attachments.push(PulledAttachment {
            digest: d,
            tag: None,
            artifact_type,
        });
    }

    let index = json!({
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": entries,
    });
    let write = |name: &str, bytes: &[u8]| {
        crate::atomic::write_file(&dest.join(name), bytes).map_err(|e| RegistryError::Local {
            path: dest.join(name),
            message: e.to_string(),
        })
    };
    write("oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#)?;
    write("index.json", &crate::canonical_json::value_to_vec(&index))?;
    Ok(PullReport {
        reference: reference.whole(),
        digest,
        blobs,
        attachments,
        layout: dest.to_path_buf(),
    })
}

fn parse_manifest(
    registry: &Registry<'_>,
    what: &str,
    bytes: &[u8],
) -> Result<ImageManifest, RegistryError> {
    ImageManifest::from_reader(bytes)
        .map_err(|e| registry.content_error(what, format!("is not an image manifest: {e}")))
}

fn blob_ref(registry: &Registry<'_>, what: &str, d: &Descriptor) -> Result<BlobRef, RegistryError> {
    let digest =
        Digest::from_str(d.digest().as_ref()).map_err(|e| registry.content_error(what, e))?;
    Ok(BlobRef {
        digest,
        size: d.size(),
    })
}

/// A manifest's index.json entry.
fn entry(
    media_type: &str,
    digest: &Digest,
    bytes: &[u8],
    ref_name: Option<&str>,
    artifact_type: Option<&str>,
) -> Value {
    let mut e = json!({
        "mediaType": if media_type.is_empty() { OCI_MANIFEST } else { media_type },
        "digest": digest.to_string(),
        "size": bytes.len(),
    });
    if let Some(name) = ref_name {
        e["annotations"] = json!({ oci_spec::image::ANNOTATION_REF_NAME: name });
    }
    if let Some(t) = artifact_type {
        e["artifactType"] = json!(t);
    }
    e
}

/// Fetches the blobs of an attachment manifest (bounded) and stores the manifest;
/// a referrer's `subject` must be `subject`. Returns the manifest's `artifactType`.
async fn fetch_attachment(
    registry: &Registry<'_>,
    dest: &Path,
    what: &str,
    bytes: &[u8],
    subject: Option<&Digest>,
) -> Result<Option<String>, RegistryError> {
    let manifest = parse_manifest(registry, what, bytes)?;
    if let Some(subject) = subject {
        let about = manifest.subject().as_ref().map(|s| s.digest().to_string());
        if about.as_deref() != Some(subject.to_string().as_str()) {
            return Err(registry.content_error(
                what,
                format!(
                    "is listed as a referrer of {subject} but its subject is {}",
                    about.unwrap_or_else(|| "none".into())
                ),
            ));
        }
    }
    if manifest.layers().len() > MAX_LAYERS {
        return Err(registry.content_error(what, "has too many layers".into()));
    }
    let mut descriptors: Vec<&Descriptor> = manifest.layers().iter().collect();
    descriptors.push(manifest.config());
    for d in descriptors {
        let b = blob_ref(registry, what, d)?;
        if b.size > MAX_ATTACHMENT_BLOB_BYTES {
            return Err(registry.content_error(
                what,
                format!(
                    "has a blob of {} bytes; at most {MAX_ATTACHMENT_BLOB_BYTES} are pulled for a signature or referrer",
                    b.size
                ),
            ));
        }
        fetch_blob(registry, dest, &b).await?;
    }
    write_blob(dest, &Digest::of(bytes), bytes)?;
    Ok(manifest.artifact_type().as_ref().map(|t| t.to_string()))
}

async fn fetch_blob(
    registry: &Registry<'_>,
    dest: &Path,
    b: &BlobRef,
) -> Result<(), RegistryError> {
    let path = dest.join("blobs/sha256").join(b.digest.hex());
    if path.exists() {
        return Ok(());
    }
    registry.get_blob(&b.digest, b.size, &path).await
}

fn write_blob(dest: &Path, digest: &Digest, bytes: &[u8]) -> Result<(), RegistryError> {
    let path = dest.join("blobs/sha256").join(digest.hex());
    crate::atomic::write_file(&path, bytes).map_err(|e| RegistryError::Local {
        path,
        message: e.to_string(),
    })
}
