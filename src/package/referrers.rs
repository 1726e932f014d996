//! OCI 1.1 referrers on a registry: publishing a manifest whose `subject` is an image,
//! and listing an image's referrers, with the fallback every registry serves.
//!
//! A registry with the referrers API indexes a manifest pushed with a `subject` itself
//! (`GET /v2/<name>/referrers/<digest>`). One without it (Debian's distribution 2.8,
//! older Harbor, ECR before 2024) is given the fallback the distribution spec 1.1
//! defines: an image index under the tag `sha256-<hex of the subject>` listing the
//! referrers, which the client reads, extends and puts back ("Pushing Manifests with
//! Subject", "Referrers Tag Schema"). oras, cosign (`--registry-referrers-mode`) and
//! regclient read the same tag.

use std::str::FromStr;

use oci_spec::image::{Descriptor, ImageIndex};
use serde_json::{Value, json};

use super::digest::Digest;
use super::layout_reader::Attachment;
use super::registry::{Registry, RegistryError};

/// Media type of the fallback index and of the API's answer.
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// Most referrers one image's fallback index may list; more is refused, not grown.
pub const MAX_REFERRERS: usize = 1024;

/// The fallback tag of `subject`: `sha256-<hex>`.
pub fn fallback_tag(subject: &Digest) -> String {
    format!("sha256-{}", subject.hex())
}

/// Makes `a` (already put by digest) findable as a referrer of `subject`: nothing more
/// when the registry serves the referrers API, else by adding it to the fallback index.
/// Returns how: `api` or `fallback-tag`.
pub async fn publish(
    registry: &Registry<'_>,
    subject: &Digest,
    a: &Attachment,
) -> Result<&'static str, RegistryError> {
    if registry.referrers(subject).await?.is_some() {
        return Ok("api");
    }
    let tag = fallback_tag(subject);
    let what = format!("the referrers index under tag {tag}");
    let mut entries: Vec<Value> = match registry.get_manifest(&tag, &[INDEX_MEDIA_TYPE]).await? {
        Some((_, bytes)) => {
            let index: Value = serde_json::from_slice(&bytes).map_err(|e| {
                registry.content_error(&what, format!("is not JSON ({e}); not overwritten"))
            })?;
            if index.get("mediaType").and_then(Value::as_str) != Some(INDEX_MEDIA_TYPE) {
                return Err(registry.content_error(
                    &what,
                    "is not an image index; a tag of that name is not nodeimg's to replace".into(),
                ));
            }
            index
                .get("manifests")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        }
        None => Vec::new(),
    };
    let digest = a.manifest.digest.to_string();
    if !entries
        .iter()
        .any(|e| e.get("digest").and_then(Value::as_str) == Some(digest.as_str()))
    {
        if entries.len() >= MAX_REFERRERS {
            return Err(registry.content_error(
                &what,
                format!("already lists {MAX_REFERRERS} referrers; not extended"),
            ));
        }
        let mut entry = json!({
            "mediaType": a.media_type,
            "digest": digest,
            "size": a.manifest.size,
        });
        if let Some(t) = &a.artifact_type {
            entry["artifactType"] = json!(t);
        }
        entries.push(entry);
        entries.sort_by(|x, y| x["digest"].as_str().cmp(&y["digest"].as_str()));
        let index = json!({
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "manifests": entries,
        });
        registry
            .put_manifest(
                &tag,
                INDEX_MEDIA_TYPE,
                crate::canonical_json::value_to_vec(&index),
            )
            .await?;
    }
    Ok("fallback-tag")
}

/// The descriptors of `subject`'s referrers: from the API, or the fallback tag; empty
/// when there are none. At most [`MAX_REFERRERS`].
pub async fn list(
    registry: &Registry<'_>,
    subject: &Digest,
) -> Result<Vec<Descriptor>, RegistryError> {
    let tag = fallback_tag(subject);
    let (what, bytes) = match registry.referrers(subject).await? {
        Some(bytes) => (format!("the referrers of {subject}"), Some(bytes)),
        None => (
            format!("the referrers index under tag {tag}"),
            registry
                .get_manifest(&tag, &[INDEX_MEDIA_TYPE])
                .await?
                .map(|(_, b)| b),
        ),
    };
    let Some(bytes) = bytes else {
        return Ok(Vec::new());
    };
    let index = ImageIndex::from_reader(bytes.as_slice())
        .map_err(|e| registry.content_error(&what, format!("is not an image index: {e}")))?;
    if index.manifests().len() > MAX_REFERRERS {
        return Err(registry.content_error(
            &what,
            format!(
                "lists {} referrers; at most {MAX_REFERRERS} are read",
                index.manifests().len()
            ),
        ));
    }
    for d in index.manifests() {
        Digest::from_str(d.digest().as_ref()).map_err(|e| registry.content_error(&what, e))?;
    }
    Ok(index.manifests().clone())
}
