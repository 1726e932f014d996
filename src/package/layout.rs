//! The OCI image layout around the layer: config, manifest, index.json and
//! oci-layout, built from the typed oci-spec structures and serialised as
//! canonical JSON (see `canonical_json`).
//!
//! Everything written here is a function of the layer and the
//! [`ImageMeta`]: the creation time is SOURCE_DATE_EPOCH and the nodeimg
//! version appears nowhere, so upgrading the tool does not change digests.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use oci_spec::image::{
    ANNOTATION_CREATED, ANNOTATION_REF_NAME, ANNOTATION_TITLE, ANNOTATION_VERSION, Arch,
    ConfigBuilder, Descriptor, DescriptorBuilder, HistoryBuilder, ImageConfigurationBuilder,
    ImageIndexBuilder, ImageManifestBuilder, MediaType, OciLayoutBuilder, Os, PlatformBuilder,
    RootFsBuilder,
};
use serde::Serialize;

use super::canonical_json;
use super::digest::Digest;
use super::error::PackageError;
use super::layer::LayerInfo;
use super::meta::ImageMeta;
use super::output;
use super::source_date::SourceDate;

/// The blueprint-id annotation (and config label).
pub const ANNOTATION_BLUEPRINT_ID: &str = "dev.nodeimg.blueprint.id";

/// A blob's digest and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlobRef {
    pub digest: Digest,
    pub size: u64,
}

/// The JSON documents written around the layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Documents {
    pub config: BlobRef,
    pub manifest: BlobRef,
}

fn descriptor(media: MediaType, blob: &BlobRef) -> Result<Descriptor, PackageError> {
    let digest = oci_spec::image::Digest::from_str(&blob.digest.to_string())
        .map_err(PackageError::spec("digest"))?;
    Ok(Descriptor::new(media, blob.size, digest))
}

fn annotations(meta: &ImageMeta, created: &str) -> HashMap<String, String> {
    HashMap::from([
        (ANNOTATION_TITLE.to_string(), meta.name.clone()),
        (ANNOTATION_VERSION.to_string(), meta.version.clone()),
        (
            ANNOTATION_BLUEPRINT_ID.to_string(),
            meta.blueprint_id.clone(),
        ),
        (ANNOTATION_CREATED.to_string(), created.to_string()),
    ])
}

/// Writes config and manifest blobs into `root/blobs/sha256`, then
/// `index.json` and `oci-layout` into `root`.
pub fn write_documents(
    root: &Path,
    layer: &LayerInfo,
    meta: &ImageMeta,
    created: SourceDate,
) -> Result<Documents, PackageError> {
    let blobs = root.join("blobs").join("sha256");
    let created = created.rfc3339();

    let config = ImageConfigurationBuilder::default()
        .created(created.clone())
        .architecture(Arch::from(meta.architecture.as_str()))
        .os(Os::from(meta.os.as_str()))
        .config(
            ConfigBuilder::default()
                .labels(annotations(meta, &created))
                .build()
                .map_err(PackageError::spec("config"))?,
        )
        .rootfs(
            RootFsBuilder::default()
                .typ("layers")
                .diff_ids(vec![layer.diff_id.to_string()])
                .build()
                .map_err(PackageError::spec("rootfs"))?,
        )
        .history(vec![
            HistoryBuilder::default()
                .created(created.clone())
                .created_by("nodeimg build")
                .comment(format!("blueprint {} {}", meta.name, meta.blueprint_id))
                .build()
                .map_err(PackageError::spec("history"))?,
        ])
        .build()
        .map_err(PackageError::spec("config"))?;
    let config_bytes = json("config", &config)?;
    let config_ref = write_blob(&blobs, &config_bytes)?;

    let layer_media = MediaType::from(layer.media_type);
    let layer_ref = BlobRef {
        digest: layer.digest.clone(),
        size: layer.size,
    };
    let manifest = ImageManifestBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageManifest)
        .config(descriptor(MediaType::ImageConfig, &config_ref)?)
        .layers(vec![descriptor(layer_media, &layer_ref)?])
        .annotations(annotations(meta, &created))
        .build()
        .map_err(PackageError::spec("manifest"))?;
    let manifest_bytes = json("manifest", &manifest)?;
    let manifest_ref = write_blob(&blobs, &manifest_bytes)?;

    let platform = PlatformBuilder::default()
        .architecture(Arch::from(meta.architecture.as_str()))
        .os(Os::from(meta.os.as_str()))
        .build()
        .map_err(PackageError::spec("platform"))?;
    let digest = oci_spec::image::Digest::from_str(&manifest_ref.digest.to_string())
        .map_err(PackageError::spec("digest"))?;
    let index = ImageIndexBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageIndex)
        .manifests(vec![
            DescriptorBuilder::default()
                .media_type(MediaType::ImageManifest)
                .digest(digest)
                .size(manifest_ref.size)
                .platform(platform)
                .annotations(HashMap::from([(
                    ANNOTATION_REF_NAME.to_string(),
                    meta.tag.to_string(),
                )]))
                .build()
                .map_err(PackageError::spec("index descriptor"))?,
        ])
        .build()
        .map_err(PackageError::spec("index"))?;
    output::write_file(&root.join("index.json"), &json("index", &index)?)?;

    let layout = OciLayoutBuilder::default()
        .image_layout_version("1.0.0")
        .build()
        .map_err(PackageError::spec("oci-layout"))?;
    output::write_file(&root.join("oci-layout"), &json("oci-layout", &layout)?)?;

    Ok(Documents {
        config: config_ref,
        manifest: manifest_ref,
    })
}

fn json<T: Serialize>(what: &'static str, value: &T) -> Result<Vec<u8>, PackageError> {
    canonical_json::to_vec(value).map_err(|e| PackageError::Spec {
        what,
        message: e.to_string(),
    })
}

fn write_blob(blobs: &Path, bytes: &[u8]) -> Result<BlobRef, PackageError> {
    let digest = Digest::of(bytes);
    output::write_file(&blobs.join(digest.hex()), bytes)?;
    Ok(BlobRef {
        digest,
        size: bytes.len() as u64,
    })
}
