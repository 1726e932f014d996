//! Signatures and attestations in a registry: adding a signer's layer to an image's
//! `sha256-<hex>.sig` (or `.att`) manifest, and fetching what verification needs.
//!
//! Adding reads the manifest already under the tag (another signer's, skopeo's,
//! cosign's), adds the new layer unless it is there, uploads the layer and config blobs
//! the registry lacks and puts the manifest back under the tag — as containers/image
//! does, so no signature already there is lost. Checking pulls the image manifest, its
//! config and its attachments (not the layers) into a temporary layout and verifies that
//! ([`super::verify_image`]), so the registry path and the layout path are one code.

use std::path::Path;

use super::attachment::{self, Kind};
use super::attestation::Provenance;
use super::key::{PublicKey, SigningKey};
use super::layout::{Dir, Layout};
use super::sign::{self, Attachment, Signed};
use super::verdict::Report;
use super::verify::{Expect, verify_image};
use crate::package::credentials;
use crate::package::pull::{self, Parts};
use crate::package::registry::{
    self, Access, Options, Reference, Registry, RegistryError, TagPolicy,
};
use crate::package::{BlobRef, Digest};

/// Parses `REF@sha256:…` (a tag alone is refused).
pub fn reference(text: &str) -> Result<Reference, RegistryError> {
    Reference::for_pull(text, TagPolicy::DigestOnly).map_err(|e| RegistryError::Reference {
        reference: text.to_owned(),
        // A signature binds a digest: there is no tag-only form to allow here.
        message: e.0.replace(", or pass --allow-tag", ""),
    })
}

/// The name a signature made for `r` names: `registry/repository:tag` with a tag,
/// `registry/repository@sha256:…` without.
pub fn identity(r: &Reference) -> String {
    match (r.tag(), r.digest()) {
        (Some(t), _) => format!("{}:{t}", r.name()),
        (None, Some(d)) => format!("{}@{d}", r.name()),
        (None, None) => r.name(),
    }
}

/// Signs the image `reference` names (it must be in the registry) with `key`: the
/// signature, and the provenance attestation when `provenance` describes that image.
pub fn sign(
    reference: &Reference,
    key: &SigningKey,
    identity_override: Option<&str>,
    provenance: Option<&Provenance>,
    opts: &Options,
) -> Result<Signed, RegistryError> {
    let image = reference
        .digest()
        .cloned()
        .ok_or_else(|| RegistryError::Reference {
            reference: reference.whole(),
            message: "names no digest".into(),
        })?;
    let identity = identity_override
        .map(str::to_owned)
        .unwrap_or_else(|| identity(reference));
    let sig = sign::signature(key, &image, &identity);
    let att = provenance
        .filter(|p| p.manifest.digest == image)
        .map(|p| sign::provenance(key, p));
    let creds = credentials::lookup(
        reference.api_host(),
        reference.repository(),
        &opts.auth_files,
    )?;
    registry::block_on(reference.api_host(), opts, async {
        let session = registry::connect(reference, creds.as_ref(), opts, Access::PullPush).await?;
        let what = format!("the image {}", reference.whole());
        session
            .get_manifest(
                &image.to_string(),
                &[
                    attachment::MANIFEST_MEDIA_TYPE,
                    "application/vnd.docker.distribution.manifest.v2+json",
                ],
            )
            .await?
            .ok_or_else(|| RegistryError::NotFound {
                registry: reference.api_host().to_owned(),
                what,
            })?;
        let (signature, added) = add(&session, &image, &sig).await?;
        let attestation = match &att {
            Some(a) => Some(add(&session, &image, a).await?.0),
            None => None,
        };
        Ok(Signed {
            image: image.clone(),
            target: reference.name(),
            key: key.public().id().clone(),
            identity: identity.clone(),
            signature,
            attestation,
            added,
        })
    })
}

/// Adds `a` to the image's attachment manifest of its kind; returns the manifest put and
/// whether the layer was new.
pub async fn add(
    session: &Registry<'_>,
    image: &Digest,
    a: &Attachment,
) -> Result<(BlobRef, bool), RegistryError> {
    add_layers(session, image, a.kind, &[(a.layer.clone(), a.blob.clone())]).await
}

/// Adds `layers` (each with its blob) to the `kind` attachment manifest of `image` in the
/// registry, keeping every layer already there.
pub async fn add_layers(
    session: &Registry<'_>,
    image: &Digest,
    kind: Kind,
    layers: &[(attachment::Layer, Vec<u8>)],
) -> Result<(BlobRef, bool), RegistryError> {
    let tag = kind.tag(image);
    let what = format!("the attachment manifest {tag}");
    let mut manifest = match session
        .get_manifest(&tag, &[attachment::MANIFEST_MEDIA_TYPE])
        .await?
    {
        Some((_, bytes)) => attachment::Manifest::parse(&bytes)
            .map_err(|m| session.content_error(&what, format!("{m}; not replaced")))?,
        None => attachment::Manifest::default(),
    };
    let mut added = false;
    for (layer, _) in layers {
        added |= manifest.add(layer.clone());
    }
    let docs = manifest.documents();
    for (layer, blob) in layers {
        upload(session, &layer.digest, blob).await?;
    }
    upload(session, &docs.config_ref().digest, &docs.config).await?;
    session
        .put_manifest(&tag, attachment::MANIFEST_MEDIA_TYPE, docs.manifest.clone())
        .await?;
    Ok((docs.manifest_ref(), added))
}

/// Uploads `bytes` as blob `digest` unless the registry has it (through a temporary
/// file: the client streams blobs from files).
async fn upload(
    session: &Registry<'_>,
    digest: &Digest,
    bytes: &[u8],
) -> Result<(), RegistryError> {
    if session.blob_exists(digest).await? {
        return Ok(());
    }
    let local = |e: std::io::Error, p: &Path| RegistryError::Local {
        path: p.to_path_buf(),
        message: e.to_string(),
    };
    let tmp = tempfile::NamedTempFile::new().map_err(|e| local(e, Path::new("temporary file")))?;
    std::fs::write(tmp.path(), bytes).map_err(|e| local(e, tmp.path()))?;
    session
        .upload_blob(digest, bytes.len() as u64, tmp.path())
        .await
}

/// Checks the image `reference` names against `keys`: pulls its manifest, config and
/// attachments (not its layers) into a temporary layout and verifies that.
pub fn verify(
    reference: &Reference,
    keys: &[PublicKey],
    expect: &Expect,
    opts: &Options,
) -> Result<Report, RegistryError> {
    let tmp = tempfile::tempdir().map_err(|e| RegistryError::Local {
        path: std::env::temp_dir(),
        message: e.to_string(),
    })?;
    let dest = tmp.path().join("image");
    pull::pull_parts(reference, &dest, opts, Parts::AboutOnly)?;
    let dir = Dir(dest.clone());
    let layout = Layout::open(&dir).map_err(|e| RegistryError::Local {
        path: dest.clone(),
        message: e.message,
    })?;
    let mut report = verify_image(&layout, keys, expect).map_err(|e| RegistryError::Local {
        path: dest.clone(),
        message: e.message,
    })?;
    // The documents are pulled, the layers are not: the SBOMs' manifests are checked
    // (subject, digest), their documents against the image only in a whole layout.
    report.source = reference.whole();
    Ok(report)
}

/// After a push: merges the layout's attachment manifests under `tags` (which the
/// registry already held other manifests under) into the registry's, layer by layer, so
/// the registry keeps every signer's signatures and gains the layout's.
pub fn merge_from_layout(
    layout: &Path,
    reference: &Reference,
    tags: &[String],
    opts: &Options,
) -> Result<Vec<BlobRef>, RegistryError> {
    let dir = Dir(layout.to_path_buf());
    let local = |message: String| RegistryError::Local {
        path: layout.to_path_buf(),
        message,
    };
    let l = Layout::open(&dir).map_err(|e| local(e.message))?;
    let mut work = Vec::new();
    for tag in tags {
        let (image, kind) = Kind::parse_tag(tag)
            .ok_or_else(|| local(format!("`{tag}` is not a signature or attestation tag")))?;
        let entry = l
            .entries()
            .iter()
            .find(|e| e.tag.as_deref() == Some(tag.as_str()))
            .ok_or_else(|| local(format!("index.json lists no `{tag}`")))?;
        let m = attachment::Manifest::parse(&l.manifest(entry).map_err(|e| local(e.message))?)
            .map_err(|m| local(format!("{tag}: {m}")))?;
        let mut layers = Vec::new();
        for layer in m.layers {
            let blob = BlobRef {
                digest: layer.digest.clone(),
                size: layer.size,
            };
            let bytes = l
                .blob(&blob, super::dsse::MAX_ENVELOPE_BYTES)
                .map_err(|e| local(e.message))?;
            layers.push((layer, bytes));
        }
        work.push((image, kind, layers));
    }
    let creds = credentials::lookup(
        reference.api_host(),
        reference.repository(),
        &opts.auth_files,
    )?;
    registry::block_on(reference.api_host(), opts, async {
        let session = registry::connect(reference, creds.as_ref(), opts, Access::PullPush).await?;
        let mut out = Vec::new();
        for (image, kind, layers) in &work {
            out.push(add_layers(&session, image, *kind, layers).await?.0);
        }
        Ok(out)
    })
}
