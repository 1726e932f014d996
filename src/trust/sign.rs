//! Signing an image: the simple-signing signature of its manifest digest and, when the
//! build's provenance is at hand, the signed SLSA provenance attestation — as attachment
//! layers ready to store in a layout or a registry.
//!
//! The signature's identity (`docker-reference`) is the name the image is published
//! under: `registry/repository:tag` when a tag is known (what skopeo's default
//! `matchRepoDigestOrExact` accepts for the tag and for the digest), otherwise
//! `registry/repository@sha256:…` (accepted when the image is pulled by digest, and by
//! `matchRepository` in any case).

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use serde::Serialize;

use super::attachment::{Kind, Layer};
use super::attestation::{self, Provenance};
use super::key::{KeyId, SigningKey};
use super::layout::{self, Dir, Layout, LayoutError};
use super::payload::{self, Payload};
use crate::package::{BlobRef, Digest, PROVENANCE_FILE};

/// One attachment layer and its blob.
#[derive(Debug, Clone)]
pub struct Attachment {
    pub kind: Kind,
    pub layer: Layer,
    pub blob: Vec<u8>,
}

/// The signature layer of `image` under `identity`.
pub fn signature(key: &SigningKey, image: &Digest, identity: &str) -> Attachment {
    let bytes = Payload::new(image, identity).to_bytes();
    let sig = base64::engine::general_purpose::STANDARD.encode(key.sign(&bytes));
    Attachment {
        kind: Kind::Signature,
        layer: Layer::of(
            payload::MEDIA_TYPE,
            &bytes,
            BTreeMap::from([(payload::SIGNATURE_ANNOTATION.to_owned(), sig)]),
        ),
        blob: bytes,
    }
}

/// The provenance attestation layer of the image `provenance` describes.
pub fn provenance(key: &SigningKey, provenance: &Provenance) -> Attachment {
    let blob = attestation::sign(provenance, key);
    Attachment {
        kind: Kind::Attestation,
        layer: Layer::of(attestation::MEDIA_TYPE, &blob, attestation::annotations()),
        blob,
    }
}

/// What signing stored.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Signed {
    /// The image manifest digest signed.
    pub image: Digest,
    /// The layout folder, or `registry/repository`.
    pub target: String,
    pub key: KeyId,
    pub identity: String,
    /// The `.sig` manifest now stored.
    pub signature: BlobRef,
    /// The `.att` manifest now stored, when a provenance attestation was made.
    pub attestation: Option<BlobRef>,
    /// False when the same signature was already there.
    pub added: bool,
}

/// The image's own name in a layout, for the identity: `<metadata.name>:<tag>` from the
/// build's provenance, or the index's tag.
fn layout_identity(provenance: Option<&Provenance>, tag: Option<&str>) -> String {
    match (provenance, tag) {
        (Some(p), _) => format!("{}:{}", p.name, p.tag),
        (None, Some(t)) => format!("nodeimg-image:{t}"),
        (None, None) => "nodeimg-image".into(),
    }
}

/// Signs the image of the layout in `root` with `key`, storing the `.sig` (and, with the
/// layout's `provenance.json` about the same manifest, the `.att`) attachment in the
/// layout. `identity` overrides the name signed (`registry/repository[:tag]`, what the
/// image will be published as).
pub fn sign_layout(
    root: &Path,
    key: &SigningKey,
    identity: Option<&str>,
) -> Result<Signed, LayoutError> {
    let dir = Dir(root.to_path_buf());
    let layout = Layout::open(&dir)?;
    let entry = layout.image()?.clone();
    layout.manifest(&entry)?;
    let image = entry.blob.digest.clone();
    let prov_path = root.join(PROVENANCE_FILE);
    let prov = if prov_path.exists() {
        let p = Provenance::read(&prov_path).map_err(|message| LayoutError {
            location: root.display().to_string(),
            message,
        })?;
        if p.manifest.digest != image {
            return Err(LayoutError {
                location: root.display().to_string(),
                message: format!(
                    "{PROVENANCE_FILE} describes manifest {}, but the layout's image is {image}; rebuild the layout",
                    p.manifest.digest
                ),
            });
        }
        Some(p)
    } else {
        None
    };
    let identity = identity
        .map(str::to_owned)
        .unwrap_or_else(|| layout_identity(prov.as_ref(), entry.tag.as_deref()));
    drop(layout);
    let sig = signature(key, &image, &identity);
    let (sig_ref, added) = layout::add_attachment(root, &image, sig.kind, sig.layer, &sig.blob)?;
    let attestation = match &prov {
        Some(p) => {
            let att = provenance(key, p);
            Some(layout::add_attachment(root, &image, att.kind, att.layer, &att.blob)?.0)
        }
        None => None,
    };
    Ok(Signed {
        target: root.display().to_string(),
        key: key.public().id().clone(),
        image,
        identity,
        signature: sig_ref,
        attestation,
        added,
    })
}
