//! The image a node runs: the small layout `apply` keeps of it, and whether the files
//! verify reads on the node are the ones that image carries.
//!
//! `apply` keeps, under [`KEPT_DIR`] in the root, an OCI layout of the image it applied
//! (its receipt, `apply::receipt`): `oci-layout`, `index.json`, the image manifest and
//! config, its signature and attestation manifests with their blobs, and the **config
//! layer** blob (the layer holding `etc/nodeimg/blueprint.lock.json`); the big layers are
//! left out. With it, `verify --phase boot` checks the signature the node's trust policy
//! asks for ([`super::verify_image`]) and, with [`bind`], that the lock, its matrix, the
//! blueprint id and the trust keys on disk are byte for byte the files of that signed
//! config layer: the manifest names the layer's digest, the layer holds the files.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::Serialize;

use super::layout::Layout;
use crate::package::{BlobRef, Digest};

/// Where `apply` keeps the applied image, relative to the root.
pub const KEPT_DIR: &str = "var/lib/nodeimg/image";
/// The config layer's role annotation (`dev.nodeimg.layer.role`).
const CONFIG_ROLE: &str = "config";
/// The files of the config layer verify relies on: exact paths, and folders (ending in `/`)
/// whose files all count.
pub const BOUND: [&str; 4] = [
    "etc/nodeimg/blueprint.lock.json",
    "etc/nodeimg/blueprint.matrix.json",
    "etc/nodeimg/blueprint.id",
    "etc/nodeimg/trust/",
];
/// Largest config layer blob read.
const MAX_CONFIG_LAYER_BYTES: u64 = 64 * 1024 * 1024;
/// Most bytes its tar may expand to.
const MAX_TAR_BYTES: u64 = 256 * 1024 * 1024;
/// Largest bound file kept in memory.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// An image manifest's layers, as far as the node needs them.
#[derive(Debug, Clone)]
struct ImageManifest {
    layers: Vec<(BlobRef, String, Option<String>)>,
}

fn parse_manifest(bytes: &[u8]) -> Result<ImageManifest, String> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the image manifest: {e}"))?;
    let blob = |d: &serde_json::Value| -> Result<BlobRef, String> {
        Ok(BlobRef {
            digest: d["digest"]
                .as_str()
                .ok_or("a descriptor without digest")?
                .parse()?,
            size: d["size"].as_u64().ok_or("a descriptor without size")?,
        })
    };
    let layers = v["layers"]
        .as_array()
        .ok_or("the image manifest has no layers")?
        .iter()
        .take(1024)
        .map(|l| {
            Ok((
                blob(l)?,
                l["mediaType"].as_str().unwrap_or_default().to_owned(),
                l["annotations"][crate::package::layout::ANNOTATION_LAYER_ROLE]
                    .as_str()
                    .map(str::to_owned),
            ))
        })
        .collect::<Result<_, String>>()?;
    Ok(ImageManifest { layers })
}

/// The config layer of the layout's image: the layer annotated `config`, else the top one.
fn config_layer(layout: &Layout<'_>, image: &Digest) -> Result<(BlobRef, String), String> {
    let entry = layout
        .entries()
        .iter()
        .find(|e| &e.blob.digest == image)
        .ok_or_else(|| format!("index.json does not list manifest {image}"))?;
    let m = parse_manifest(&layout.manifest(entry).map_err(|e| e.message)?)?;
    let (blob, media, _) = m
        .layers
        .iter()
        .find(|(_, _, role)| role.as_deref() == Some(CONFIG_ROLE))
        .or(m.layers.last())
        .ok_or("the image has no layers")?;
    Ok((blob.clone(), media.clone()))
}

fn is_bound(path: &str) -> bool {
    BOUND.iter().any(|b| match b.strip_suffix('/') {
        Some(dir) => path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1),
        None => path == *b,
    })
}

/// The bound files ([`BOUND`]) the image's config layer holds, by path, and the layer's
/// digest. The layer blob is checked against the (signed) manifest's descriptor.
pub fn config_files(
    layout: &Layout<'_>,
    image: &Digest,
) -> Result<(Digest, BTreeMap<String, Vec<u8>>), String> {
    let (blob, media) = config_layer(layout, image)?;
    let bytes = layout
        .blob(&blob, MAX_CONFIG_LAYER_BYTES)
        .map_err(|e| e.message)?;
    let decoded: Box<dyn Read + '_> = match media.as_str() {
        "application/vnd.oci.image.layer.v1.tar+zstd" => {
            Box::new(zstd::stream::read::Decoder::new(bytes.as_slice()).map_err(|e| e.to_string())?)
        }
        "application/vnd.oci.image.layer.v1.tar+gzip"
        | "application/vnd.docker.image.rootfs.diff.tar.gzip" => {
            Box::new(flate2::read::GzDecoder::new(bytes.as_slice()))
        }
        "application/vnd.oci.image.layer.v1.tar" => Box::new(bytes.as_slice()),
        other => return Err(format!("the config layer has media type {other}")),
    };
    let at = |e: std::io::Error| format!("config layer {}: {e}", blob.digest);
    let mut archive = tar::Archive::new(decoded.take(MAX_TAR_BYTES));
    let mut files = BTreeMap::new();
    for item in archive.entries().map_err(at)? {
        let mut item = item.map_err(at)?;
        let path = String::from_utf8_lossy(&item.path_bytes())
            .trim_start_matches("./")
            .to_owned();
        if !is_bound(&path) || item.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        if item.size() > MAX_FILE_BYTES {
            return Err(format!(
                "config layer {}: {path} is larger than {MAX_FILE_BYTES} bytes",
                blob.digest
            ));
        }
        let mut content = Vec::new();
        (&mut item)
            .take(MAX_FILE_BYTES)
            .read_to_end(&mut content)
            .map_err(at)?;
        files.insert(path, content);
    }
    Ok((blob.digest, files))
}

/// How one bound file on the node compares with the signed image's copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileState {
    Same,
    /// The node's file differs from the image's.
    Differs,
    /// The image has it; the node does not.
    Missing,
    /// The node has it under a bound folder; the image does not.
    Extra,
}

/// The bound files of the node against the signed config layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    /// The config layer's digest (named by the signed manifest).
    pub layer: Digest,
    pub files: BTreeMap<String, FileState>,
}

impl Binding {
    /// True when every bound file is the image's.
    pub fn holds(&self) -> bool {
        self.files.values().all(|s| *s == FileState::Same)
    }

    /// The files that are not, with their state.
    pub fn broken(&self) -> Vec<(&str, FileState)> {
        self.files
            .iter()
            .filter(|(_, s)| **s != FileState::Same)
            .map(|(p, s)| (p.as_str(), *s))
            .collect()
    }
}

/// What the node holds, for [`bind`]: a bound file's bytes (`None`: absent) and the names
/// in a bound folder.
pub trait NodeFiles {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String>;
    fn list(&self, dir: &str) -> Result<Vec<String>, String>;
}

/// Compares the node's bound files with the image's config layer. Call it for an image
/// whose signature verified: the layer digest comes from its manifest.
pub fn bind(layout: &Layout<'_>, image: &Digest, node: &dyn NodeFiles) -> Result<Binding, String> {
    let (layer, files) = config_files(layout, image)?;
    let mut states = BTreeMap::new();
    for (path, bytes) in &files {
        let state = match node.read(path)? {
            Some(b) if &b == bytes => FileState::Same,
            Some(_) => FileState::Differs,
            None => FileState::Missing,
        };
        states.insert(path.clone(), state);
    }
    for dir in BOUND.iter().filter_map(|b| b.strip_suffix('/')) {
        for name in node.list(dir)? {
            let path = format!("{dir}/{name}");
            states.entry(path).or_insert(FileState::Extra);
        }
    }
    Ok(Binding {
        layer,
        files: states,
    })
}

/// The node's files under a root folder on this machine.
pub struct RootFiles<'a>(pub &'a Path);

impl NodeFiles for RootFiles<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        match crate::input::read(&self.0.join(path), MAX_FILE_BYTES) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(format!("{path}: {e}")),
        }
    }

    fn list(&self, dir: &str) -> Result<Vec<String>, String> {
        match std::fs::read_dir(self.0.join(dir)) {
            Ok(rd) => {
                let mut names: Vec<String> = rd
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                Ok(names)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(format!("{dir}: {e}")),
        }
    }
}
