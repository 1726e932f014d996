//! What a node keeps of the image it runs: a small OCI image layout at
//! `var/lib/nodeimg/image/` holding the image manifest, its config, its configuration
//! layer (the one that holds `etc/nodeimg/blueprint.lock.json`) and every signature,
//! attestation and referrer (SBOM) the image came with — not the large layers.
//!
//! It is part of what the image puts in the root, so the transaction owns it like any
//! file of the image: a rollback brings back the previous image's receipt, a re-apply
//! of the same image changes nothing. From it, `verify` can check at every boot that the
//! lock it judges by is the one in an image signed by a trusted key (the configuration
//! layer's digest is in the signed manifest, the lock's bytes are in that layer), and
//! the acceptance record names the manifest, the key and the SBOM it ran.

use serde_json::json;

use super::entry::RelPath;
use crate::package::digest::BlobRef;
use crate::package::layout_reader::LocalImage;

/// Where the receipt lies in a root.
pub const DIR: &str = "var/lib/nodeimg/image";
/// Largest configuration layer or attachment blob kept.
pub const MAX_BLOB: u64 = 64 << 20;

/// The receipt's files, as (path in the root, bytes).
pub fn files(image: &LocalImage) -> Result<Vec<(RelPath, Vec<u8>)>, String> {
    let mut blobs: Vec<(BlobRef, Vec<u8>)> = Vec::new();
    let mut keep = |blob: &BlobRef| -> Result<(), String> {
        if !blobs.iter().any(|(b, _)| b.digest == blob.digest) {
            let bytes = image.read_blob(blob, MAX_BLOB).map_err(|e| e.to_string())?;
            blobs.push((blob.clone(), bytes));
        }
        Ok(())
    };
    keep(&image.manifest)?;
    keep(&image.config)?;
    for (layer, kind) in image.layers.iter().zip(&image.layer_kinds) {
        if kind.role.as_deref() == Some("config") {
            keep(layer)?;
        }
    }
    let mut manifests = vec![json!({
        "mediaType": image.manifest_media_type,
        "digest": image.manifest.digest.to_string(),
        "size": image.manifest.size,
    })];
    for a in &image.attachments {
        keep(&a.manifest)?;
        for b in &a.blobs {
            keep(b)?;
        }
        let mut entry = json!({
            "mediaType": a.media_type,
            "digest": a.manifest.digest.to_string(),
            "size": a.manifest.size,
        });
        if let Some(t) = &a.artifact_type {
            entry["artifactType"] = json!(t);
        }
        if let Some(name) = a.ref_name.as_ref().filter(|_| !a.referrer) {
            entry["annotations"] = json!({ oci_spec::image::ANNOTATION_REF_NAME: name });
        }
        manifests.push(entry);
    }
    // Attachments in digest order: the same image with the same attachments gives the
    // same receipt, whichever layout or registry it came from.
    manifests[1..].sort_by(|x, y| x["digest"].as_str().cmp(&y["digest"].as_str()));
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": manifests,
    });
    let at = |name: &str| RelPath::parse(&format!("{DIR}/{name}")).map_err(|e| e.to_string());
    let mut out = vec![
        (
            at("oci-layout")?,
            br#"{"imageLayoutVersion":"1.0.0"}"#.to_vec(),
        ),
        (
            at("index.json")?,
            crate::canonical_json::value_to_vec(&index),
        ),
    ];
    for (blob, bytes) in blobs {
        out.push((at(&format!("blobs/sha256/{}", blob.digest.hex()))?, bytes));
    }
    Ok(out)
}
