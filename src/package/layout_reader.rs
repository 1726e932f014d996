//! Reading an OCI image layout back for `nodeimg push`: index.json → the
//! one image manifest → its config and layer blobs.
//!
//! Every blob read is checked against its descriptor's size and digest, so
//! a corrupted or hand-edited layout is refused before anything is
//! uploaded. A layout is input like any other: its JSON files are read with
//! a bound, and a descriptor's size is compared with the file before
//! anything is allocated for it (a manifest that claims a terabyte is an
//! error, not an allocation).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use oci_spec::image::{ImageIndex, ImageManifest, MediaType};
use thiserror::Error;

use super::digest::{Digest, HashingWriter};
use super::layout::BlobRef;

/// Largest `oci-layout` file read (it is one short JSON object).
const MAX_LAYOUT_FILE_BYTES: u64 = 64 * 1024;
/// Largest `index.json` read.
const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;
/// Largest manifest read; the distribution spec lets registries refuse larger ones.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Error)]
#[error("OCI layout {}: {message}", path.display())]
pub struct LayoutError {
    pub path: PathBuf,
    pub message: String,
}

/// One image of a layout, ready to upload.
#[derive(Debug, Clone)]
pub struct LocalImage {
    pub root: PathBuf,
    /// The manifest's `org.opencontainers.image.ref.name`, if any.
    pub tag: Option<String>,
    pub manifest: BlobRef,
    pub manifest_media_type: String,
    /// The manifest's exact bytes (pushed as they are, so the registry's
    /// digest equals ours).
    pub manifest_bytes: Vec<u8>,
    pub config: BlobRef,
    pub layers: Vec<BlobRef>,
    /// Each layer's media type and `dev.nodeimg.layer.role`, in the order of `layers`.
    pub layer_kinds: Vec<LayerKind>,
}

/// How a layer is compressed, and what it holds by nodeimg's annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerKind {
    pub media_type: String,
    pub role: Option<String>,
}

impl LocalImage {
    /// Opens the layout at `root`; it must hold exactly one manifest.
    pub fn open(root: &Path) -> Result<Self, LayoutError> {
        let err = |path: &Path, message: String| LayoutError {
            path: path.to_path_buf(),
            message,
        };
        let layout_file = root.join("oci-layout");
        let text = crate::input::read_text(&layout_file, MAX_LAYOUT_FILE_BYTES).map_err(|e| {
            err(
                &layout_file,
                format!("cannot read it ({e}); is this an OCI image layout?"),
            )
        })?;
        let layout: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| err(&layout_file, format!("not valid JSON: {e}")))?;
        if layout.get("imageLayoutVersion").and_then(|v| v.as_str()) != Some("1.0.0") {
            return Err(err(&layout_file, "imageLayoutVersion is not 1.0.0".into()));
        }
        let index_path = root.join("index.json");
        let index = crate::input::read(&index_path, MAX_INDEX_BYTES)
            .map_err(|e| err(&index_path, e.to_string()))
            .and_then(|b| {
                ImageIndex::from_reader(b.as_slice()).map_err(|e| err(&index_path, e.to_string()))
            })?;
        let images: Vec<_> = index
            .manifests()
            .iter()
            .filter(|d| !is_attachment(d))
            .collect();
        let [desc] = images.as_slice() else {
            return Err(err(
                &index_path,
                format!("holds {} images; push needs exactly one", images.len()),
            ));
        };
        if desc.media_type() != &MediaType::ImageManifest {
            return Err(err(
                &index_path,
                format!(
                    "the manifest has media type {}, not an image manifest",
                    desc.media_type()
                ),
            ));
        }
        let tag = desc
            .annotations()
            .as_ref()
            .and_then(|a| a.get(oci_spec::image::ANNOTATION_REF_NAME).cloned());
        let manifest = blob_ref(&index_path, desc.digest().as_ref(), desc.size())?;
        let mut image = LocalImage {
            root: root.to_path_buf(),
            tag,
            manifest_media_type: desc.media_type().to_string(),
            manifest: manifest.clone(),
            manifest_bytes: Vec::new(),
            config: manifest.clone(),
            layers: Vec::new(),
            layer_kinds: Vec::new(),
        };
        image.manifest_bytes = image.read_manifest(&manifest)?;
        let parsed = ImageManifest::from_reader(image.manifest_bytes.as_slice())
            .map_err(|e| err(&image.blob_path(&manifest.digest), e.to_string()))?;
        let mpath = image.blob_path(&manifest.digest);
        image.config = blob_ref(
            &mpath,
            parsed.config().digest().as_ref(),
            parsed.config().size(),
        )?;
        image.layers = parsed
            .layers()
            .iter()
            .map(|l| blob_ref(&mpath, l.digest().as_ref(), l.size()))
            .collect::<Result<_, _>>()?;
        image.layer_kinds = parsed
            .layers()
            .iter()
            .map(|l| LayerKind {
                media_type: l.media_type().to_string(),
                role: l
                    .annotations()
                    .as_ref()
                    .and_then(|a| a.get(super::layout::ANNOTATION_LAYER_ROLE).cloned()),
            })
            .collect();
        for blob in image.blobs() {
            let p = image.blob_path(&blob.digest);
            let len = std::fs::metadata(&p)
                .map_err(|e| err(&p, format!("missing blob: {e}")))?
                .len();
            if len != blob.size {
                return Err(err(
                    &p,
                    format!("is {len} bytes, the manifest says {}", blob.size),
                ));
            }
        }
        Ok(image)
    }

    /// Layers then config: the order they are uploaded in.
    pub fn blobs(&self) -> Vec<BlobRef> {
        let mut v = self.layers.clone();
        v.push(self.config.clone());
        v
    }

    pub fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.root.join("blobs").join("sha256").join(digest.hex())
    }

    /// The manifest's bytes, checked against its descriptor's size (before anything is
    /// allocated: against the limit and the file's size) and digest.
    fn read_manifest(&self, blob: &BlobRef) -> Result<Vec<u8>, LayoutError> {
        let path = self.blob_path(&blob.digest);
        let err = |message: String| LayoutError {
            path: path.clone(),
            message,
        };
        if blob.size > MAX_MANIFEST_BYTES {
            return Err(err(format!(
                "index.json gives the manifest a size of {} bytes; a manifest may be at most {MAX_MANIFEST_BYTES}",
                blob.size
            )));
        }
        let len = std::fs::metadata(&path)
            .map_err(|e| err(format!("missing manifest: {e}")))?
            .len();
        if len != blob.size {
            return Err(err(format!(
                "is {len} bytes, index.json says {}",
                blob.size
            )));
        }
        let capacity = usize::try_from(blob.size).unwrap_or(0);
        self.check_blob(blob, Vec::with_capacity(capacity))
    }

    /// Checks every blob against its size and digest without keeping the
    /// bytes, so a corrupted layout is refused before any upload starts.
    pub fn verify(&self) -> Result<(), LayoutError> {
        for blob in self.blobs() {
            self.check_blob(&blob, std::io::sink())?;
        }
        Ok(())
    }

    fn check_blob<W: Write>(&self, blob: &BlobRef, sink: W) -> Result<W, LayoutError> {
        let path = self.blob_path(&blob.digest);
        let err = |message: String| LayoutError {
            path: path.clone(),
            message,
        };
        let file = crate::input::open(&path, 0).map_err(|e| err(e.to_string()))?;
        let mut w = HashingWriter::new(sink);
        std::io::copy(&mut file.take(blob.size.saturating_add(1)), &mut w)
            .map_err(|e| err(e.to_string()))?;
        let (sink, digest, len) = w.finish();
        if len != blob.size || digest != blob.digest {
            return Err(err(format!(
                "content does not match its descriptor ({len} bytes, {digest}; expected {} bytes, {})",
                blob.size, blob.digest
            )));
        }
        Ok(sink)
    }
}

/// An entry that belongs to the image rather than being one: a signature or attestation
/// manifest stored under cosign's `sha256-<64 hex>.<kind>` tag (`nodeimg sign`), or an
/// artifact (an entry with an `artifactType`, such as an SBOM referrer).
pub fn is_attachment(d: &oci_spec::image::Descriptor) -> bool {
    let tag = d
        .annotations()
        .as_ref()
        .and_then(|a| a.get(oci_spec::image::ANNOTATION_REF_NAME));
    d.artifact_type().is_some() || tag.is_some_and(|t| is_attachment_tag(t))
}

/// True for cosign's attachment tags: `sha256-<64 hex>.<suffix>`.
pub fn is_attachment_tag(tag: &str) -> bool {
    tag.strip_prefix("sha256-")
        .and_then(|t| t.split_once('.'))
        .is_some_and(|(hex, suffix)| {
            hex.len() == 64
                && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
                && !suffix.is_empty()
                && suffix.bytes().all(|b| b.is_ascii_lowercase())
        })
}

fn blob_ref(context: &Path, digest: &str, size: u64) -> Result<BlobRef, LayoutError> {
    let digest = Digest::from_str(digest).map_err(|message| LayoutError {
        path: context.to_path_buf(),
        message,
    })?;
    Ok(BlobRef { digest, size })
}
