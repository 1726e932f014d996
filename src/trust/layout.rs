//! An image and its attachments in an OCI image layout: which `index.json` entry is the
//! image, which are its signatures and attestations, and adding an attachment.
//!
//! The image is the one image-manifest entry of `index.json` that is not an attachment
//! (cosign's `sha256-<hex>.sig` / `.att` tags, kept as `org.opencontainers.image.ref.name`,
//! which is where `skopeo copy oci:…` and the OCI layout readers look for tags) and not
//! an artifact (an entry with an `artifactType`). Every blob is read with a bound and
//! checked against its descriptor's size and digest, so what this module returns is what
//! the digests say.
//!
//! A layout is reached through [`Files`]: a folder on this machine ([`Dir`]), or the copy
//! `apply` keeps on a node read through verify's host, so the same verification serves
//! `verify-image`, `apply` and `verify --phase boot`.

use std::path::{Path, PathBuf};

use oci_spec::image::ANNOTATION_REF_NAME;
use serde_json::{Value, json};
use thiserror::Error;

use super::attachment::{self, Kind};
use crate::package::{BlobRef, Digest};

/// Largest `index.json` read.
pub const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;
/// Largest manifest read (image or attachment).
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;
/// Most entries read from `index.json`.
const MAX_ENTRIES: usize = 4096;

/// The image manifest media types an image entry may have.
const IMAGE_MANIFEST_TYPES: [&str; 2] = [
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];

/// Read access to the files of one layout.
pub trait Files {
    /// The bytes of `rel` (`index.json`, `blobs/sha256/<hex>`), refused past `limit`;
    /// `Ok(None)` when there is no such file.
    fn read(&self, rel: &str, limit: u64) -> Result<Option<Vec<u8>>, String>;
    /// Where the layout is, for messages.
    fn location(&self) -> String;
}

/// A layout in a folder on this machine.
#[derive(Debug, Clone)]
pub struct Dir(pub PathBuf);

impl Files for Dir {
    fn read(&self, rel: &str, limit: u64) -> Result<Option<Vec<u8>>, String> {
        match crate::input::read(&self.0.join(rel), limit) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(format!("{rel}: {e}")),
        }
    }

    fn location(&self) -> String {
        self.0.display().to_string()
    }
}

/// A layout that cannot be used.
#[derive(Debug, Error)]
#[error("OCI layout {location}: {message}")]
pub struct LayoutError {
    pub location: String,
    pub message: String,
}

/// One entry of `index.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub media_type: String,
    pub blob: BlobRef,
    /// `org.opencontainers.image.ref.name`.
    pub tag: Option<String>,
    pub artifact_type: Option<String>,
}

/// A layout's index, read once.
pub struct Layout<'a> {
    files: &'a dyn Files,
    /// The whole `index.json`, kept to rewrite it with other entries untouched.
    index: Value,
    entries: Vec<Entry>,
}

/// The path of a blob inside a layout.
pub fn blob_path(digest: &Digest) -> String {
    format!("blobs/sha256/{}", digest.hex())
}

impl<'a> Layout<'a> {
    /// Reads `oci-layout` and `index.json`.
    pub fn open(files: &'a dyn Files) -> Result<Self, LayoutError> {
        let err = |message: String| LayoutError {
            location: files.location(),
            message,
        };
        let marker = files
            .read("oci-layout", 64 * 1024)
            .map_err(&err)?
            .ok_or_else(|| err("has no `oci-layout` file; is this an OCI image layout?".into()))?;
        let marker: Value =
            serde_json::from_slice(&marker).map_err(|e| err(format!("oci-layout: {e}")))?;
        if marker["imageLayoutVersion"] != "1.0.0" {
            return Err(err("oci-layout: imageLayoutVersion is not 1.0.0".into()));
        }
        let bytes = files
            .read("index.json", MAX_INDEX_BYTES)
            .map_err(&err)?
            .ok_or_else(|| err("has no index.json".into()))?;
        let index: Value =
            serde_json::from_slice(&bytes).map_err(|e| err(format!("index.json: {e}")))?;
        let list = index["manifests"]
            .as_array()
            .ok_or_else(|| err("index.json: `manifests` is not a list".into()))?;
        if list.len() > MAX_ENTRIES {
            return Err(err(format!(
                "index.json: {} entries, more than {MAX_ENTRIES}",
                list.len()
            )));
        }
        let entries = list
            .iter()
            .enumerate()
            .map(|(i, d)| entry(d).map_err(|m| err(format!("index.json: manifests[{i}]: {m}"))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            files,
            index,
            entries,
        })
    }

    pub fn location(&self) -> String {
        self.files.location()
    }

    fn err(&self, message: String) -> LayoutError {
        LayoutError {
            location: self.files.location(),
            message,
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The image: the one image-manifest entry that is neither an attachment nor an
    /// artifact.
    pub fn image(&self) -> Result<&Entry, LayoutError> {
        let images: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| {
                IMAGE_MANIFEST_TYPES.contains(&e.media_type.as_str())
                    && e.artifact_type.is_none()
                    && e.tag
                        .as_deref()
                        .is_none_or(|t| Kind::parse_tag(t).is_none())
            })
            .collect();
        match images.as_slice() {
            [one] => Ok(one),
            [] => Err(self.err("index.json lists no image manifest".into())),
            many => Err(self.err(format!(
                "index.json lists {} images ({}); one is expected",
                many.len(),
                many.iter()
                    .map(|e| e.blob.digest.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// The attachment manifest of `kind` for `image`, if the index lists one.
    pub fn attachment(&self, image: &Digest, kind: Kind) -> Option<&Entry> {
        let tag = kind.tag(image);
        self.entries
            .iter()
            .find(|e| e.tag.as_deref() == Some(tag.as_str()))
    }

    /// A blob's bytes, checked against `blob`'s size (before reading, against `limit`) and
    /// digest.
    pub fn blob(&self, blob: &BlobRef, limit: u64) -> Result<Vec<u8>, LayoutError> {
        if blob.size > limit {
            return Err(self.err(format!(
                "blob {} claims {} bytes; at most {limit} are read",
                blob.digest, blob.size
            )));
        }
        let bytes = self
            .files
            .read(&blob_path(&blob.digest), blob.size)
            .map_err(|m| self.err(m))?
            .ok_or_else(|| self.err(format!("blob {} is missing", blob.digest)))?;
        let digest = Digest::of(&bytes);
        if bytes.len() as u64 != blob.size || digest != blob.digest {
            return Err(self.err(format!(
                "blob {} does not match its descriptor ({} bytes, {digest}; expected {} bytes)",
                blob.digest,
                bytes.len(),
                blob.size
            )));
        }
        Ok(bytes)
    }

    /// A manifest's bytes ([`MAX_MANIFEST_BYTES`] at most).
    pub fn manifest(&self, entry: &Entry) -> Result<Vec<u8>, LayoutError> {
        self.blob(&entry.blob, MAX_MANIFEST_BYTES)
    }
}

fn entry(d: &Value) -> Result<Entry, String> {
    let media_type = d["mediaType"].as_str().ok_or("no `mediaType`")?.to_owned();
    let digest: Digest = d["digest"].as_str().ok_or("no `digest`")?.parse()?;
    let size = d["size"].as_u64().ok_or("no `size`")?;
    let text = |v: &Value| v.as_str().map(str::to_owned);
    Ok(Entry {
        media_type,
        blob: BlobRef { digest, size },
        tag: text(&d["annotations"][ANNOTATION_REF_NAME]),
        artifact_type: text(&d["artifactType"]),
    })
}

/// Adds `layer` (with its blob `payload`) to the `kind` attachment manifest of `image` in
/// the layout folder `root`: the payload, the new config and manifest blobs are written
/// first, then `index.json` is replaced atomically with the entry for the attachment tag
/// pointing at the new manifest (other entries untouched). Returns the attachment
/// manifest and whether the layer was new.
pub fn add_attachment(
    root: &Path,
    image: &Digest,
    kind: Kind,
    layer: attachment::Layer,
    payload: &[u8],
) -> Result<(BlobRef, bool), LayoutError> {
    let dir = Dir(root.to_path_buf());
    let layout = Layout::open(&dir)?;
    let err = |message: String| LayoutError {
        location: root.display().to_string(),
        message,
    };
    let mut manifest = match layout.attachment(image, kind) {
        Some(e) => attachment::Manifest::parse(&layout.manifest(e)?)
            .map_err(|m| err(format!("{}: {m}", kind.tag(image))))?,
        None => attachment::Manifest::default(),
    };
    let added = manifest.add(layer);
    let docs = manifest.documents();
    let write = |bytes: &[u8]| {
        let digest = Digest::of(bytes);
        let path = root.join(blob_path(&digest));
        crate::atomic::write_file(&path, bytes)
            .map_err(|e| err(format!("cannot write {}: {e}", path.display())))
    };
    write(payload)?;
    write(&docs.config)?;
    write(&docs.manifest)?;
    let tag = kind.tag(image);
    let mref = docs.manifest_ref();
    let mut index = layout.index;
    let list = index["manifests"]
        .as_array_mut()
        .ok_or_else(|| err("index.json: `manifests` is not a list".into()))?;
    list.retain(|d| d["annotations"][ANNOTATION_REF_NAME].as_str() != Some(tag.as_str()));
    list.push(json!({
        "mediaType": attachment::MANIFEST_MEDIA_TYPE,
        "digest": mref.digest.to_string(),
        "size": mref.size,
        "annotations": { ANNOTATION_REF_NAME: tag },
    }));
    let bytes = crate::canonical_json::value_to_vec(&index);
    crate::atomic::write_file(&root.join("index.json"), &bytes)
        .map_err(|e| err(format!("cannot write index.json: {e}")))?;
    Ok((mref, added))
}
