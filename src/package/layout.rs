//! The OCI image layout around the layers: config, manifest, index.json and
//! oci-layout, built from the typed oci-spec structures and serialised as
//! canonical JSON (see `canonical_json`).
//!
//! Everything written here is a function of the layers and the
//! [`ImageMeta`]: the creation time is SOURCE_DATE_EPOCH and the nodeimg
//! version appears nowhere, so upgrading the tool does not change digests.
//! Each layer descriptor carries its role (`overlay`, `verifier`,
//! `config`) as the annotation [`ANNOTATION_LAYER_ROLE`], and the config's
//! history has one entry per layer saying the same.

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

use super::digest::{BlobRef, Digest};
use super::error::PackageError;
use super::layer::LayerInfo;
use super::meta::ImageMeta;
use super::output;
use super::source_date::SourceDate;
use crate::canonical_json;

/// The blueprint-id annotation (and config label).
pub const ANNOTATION_BLUEPRINT_ID: &str = "dev.nodeimg.blueprint.id";
/// The annotation on each layer descriptor naming what the layer holds.
pub const ANNOTATION_LAYER_ROLE: &str = "dev.nodeimg.layer.role";

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

/// Writes config and manifest blobs into `root/blobs/sha256`, and
/// `oci-layout` into `root`; [`write_index`] comes last, once the
/// referrers are written. `layers` go bottom to top.
pub fn write_documents(
    root: &Path,
    layers: &[LayerInfo],
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
                .diff_ids(
                    layers
                        .iter()
                        .map(|l| l.diff_id.to_string())
                        .collect::<Vec<_>>(),
                )
                .build()
                .map_err(PackageError::spec("rootfs"))?,
        )
        .history(
            layers
                .iter()
                .map(|l| {
                    HistoryBuilder::default()
                        .created(created.clone())
                        .created_by(format!("nodeimg build: {} layer", l.role.as_str()))
                        .comment(format!("blueprint {} {}", meta.name, meta.blueprint_id))
                        .build()
                        .map_err(PackageError::spec("history"))
                })
                .collect::<Result<Vec<_>, _>>()?,
        )
        .build()
        .map_err(PackageError::spec("config"))?;
    let config_bytes = json("config", &config)?;
    let config_ref = write_blob(&blobs, &config_bytes)?;

    let mut layer_descriptors = Vec::with_capacity(layers.len());
    for l in layers {
        let mut d = descriptor(
            MediaType::from(l.media_type),
            &BlobRef {
                digest: l.digest.clone(),
                size: l.size,
            },
        )?;
        d.set_annotations(Some(HashMap::from([(
            ANNOTATION_LAYER_ROLE.to_string(),
            l.role.as_str().to_string(),
        )])));
        layer_descriptors.push(d);
    }
    let manifest = ImageManifestBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageManifest)
        .config(descriptor(MediaType::ImageConfig, &config_ref)?)
        .layers(layer_descriptors)
        .annotations(annotations(meta, &created))
        .build()
        .map_err(PackageError::spec("manifest"))?;
    let manifest_bytes = json("manifest", &manifest)?;
    let manifest_ref = write_blob(&blobs, &manifest_bytes)?;

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

/// Writes `root/index.json`: the image manifest, tagged, then each referrer
/// (see [`super::referrer`]).
pub fn write_index(
    root: &Path,
    meta: &ImageMeta,
    manifest: &BlobRef,
    referrers: &[super::referrer::Written],
) -> Result<(), PackageError> {
    let platform = PlatformBuilder::default()
        .architecture(Arch::from(meta.architecture.as_str()))
        .os(Os::from(meta.os.as_str()))
        .build()
        .map_err(PackageError::spec("platform"))?;
    let digest = oci_spec::image::Digest::from_str(&manifest.digest.to_string())
        .map_err(PackageError::spec("digest"))?;
    let mut manifests = vec![
        DescriptorBuilder::default()
            .media_type(MediaType::ImageManifest)
            .digest(digest)
            .size(manifest.size)
            .platform(platform)
            .annotations(HashMap::from([(
                ANNOTATION_REF_NAME.to_string(),
                meta.tag.to_string(),
            )]))
            .build()
            .map_err(PackageError::spec("index descriptor"))?,
    ];
    for r in referrers {
        manifests.push(super::referrer::index_entry(r)?);
    }
    let index = ImageIndexBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageIndex)
        .manifests(manifests)
        .build()
        .map_err(PackageError::spec("index"))?;
    output::write_file(&root.join("index.json"), &json("index", &index)?)
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
