//! Reading an OCI image layout back (for `push`, `apply`, signing and verification):
//! index.json → the one image manifest → its config and layer blobs, and the
//! image's attachments beside it — cosign-style signatures and attestations (ref
//! name `sha256-<hex>.sig` / `.att`) and OCI 1.1 referrers (a manifest whose
//! `subject` is the image: the SBOMs) — each with its own blobs.
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

use super::digest::BlobRef;
use super::digest::{Digest, HashingWriter};

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
    /// Manifests about the image listed beside it in index.json.
    pub attachments: Vec<Attachment>,
}

/// A manifest about the image, listed beside it in the layout's index.json: a
/// signature or attestation stored under a cosign tag (`sha256-<hex>.sig`, `.att`),
/// or an OCI 1.1 referrer (its `subject` is the image; e.g. an SBOM).
#[derive(Debug, Clone)]
pub struct Attachment {
    pub manifest: BlobRef,
    pub media_type: String,
    /// The cosign tag it is stored under, for tag-addressed attachments.
    pub ref_name: Option<String>,
    /// The descriptor's or manifest's `artifactType`.
    pub artifact_type: Option<String>,
    /// The manifest's exact bytes.
    pub manifest_bytes: Vec<u8>,
    /// Its config and layers, in upload order (layers, then config).
    pub blobs: Vec<BlobRef>,
    /// Whether the manifest names the image as its `subject` (a referrer).
    pub referrer: bool,
}

/// Whether `name` is a tag nodeimg and cosign give to things about an image rather
/// than to an image: `sha256-<64 hex>` (the referrers fallback) or that with a suffix
/// (`.sig`, `.att`, `.sbom`). Returns the hex digits.
pub fn attachment_tag_hex(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("sha256-")?;
    let hex = rest.get(..64)?;
    let tail = &rest[64..];
    let ok_hex = hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let ok_tail = tail.is_empty()
        || tail
            .strip_prefix('.')
            .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric()));
    (ok_hex && ok_tail).then_some(hex)
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
        // The image is the one entry that is not about another manifest: not under a
        // cosign or fallback tag, without an artifactType.
        let is_attachment = |d: &oci_spec::image::Descriptor| {
            d.artifact_type().is_some()
                || d.annotations()
                    .as_ref()
                    .and_then(|a| a.get(oci_spec::image::ANNOTATION_REF_NAME))
                    .is_some_and(|n| attachment_tag_hex(n).is_some())
        };
        let images: Vec<_> = index
            .manifests()
            .iter()
            .filter(|d| !is_attachment(d))
            .collect();
        let [desc] = images.as_slice() else {
            return Err(err(
                &index_path,
                format!(
                    "holds {} images beside their signatures and referrers; exactly one is needed",
                    images.len()
                ),
            ));
        };
        let desc = *desc;
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
            attachments: Vec::new(),
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
        for d in index.manifests().iter().filter(|d| is_attachment(d)) {
            let attachment = image.attachment(&index_path, d)?;
            image.attachments.push(attachment);
        }
        Ok(image)
    }

    /// One attachment entry of index.json, read and checked: its manifest against its
    /// descriptor, what it is about against the image, its blobs present at their sizes.
    fn attachment(
        &self,
        index_path: &Path,
        d: &oci_spec::image::Descriptor,
    ) -> Result<Attachment, LayoutError> {
        let err = |path: &Path, message: String| LayoutError {
            path: path.to_path_buf(),
            message,
        };
        let manifest = blob_ref(index_path, d.digest().as_ref(), d.size())?;
        if d.media_type() != &MediaType::ImageManifest {
            return Err(err(
                index_path,
                format!(
                    "the attachment {} has media type {}, not an image manifest",
                    manifest.digest,
                    d.media_type()
                ),
            ));
        }
        let manifest_bytes = self.read_manifest(&manifest)?;
        let mpath = self.blob_path(&manifest.digest);
        let parsed = ImageManifest::from_reader(manifest_bytes.as_slice())
            .map_err(|e| err(&mpath, e.to_string()))?;
        let ref_name = d
            .annotations()
            .as_ref()
            .and_then(|a| a.get(oci_spec::image::ANNOTATION_REF_NAME).cloned());
        let subject = parsed.subject().as_ref().map(|s| s.digest().to_string());
        let referrer = subject.is_some();
        let about = match (&subject, ref_name.as_deref().and_then(attachment_tag_hex)) {
            (Some(subject), _) => subject.clone(),
            (None, Some(hex)) => format!("sha256:{hex}"),
            (None, None) => {
                return Err(err(
                    &mpath,
                    "an attachment (artifactType set) without a subject: it is about no image"
                        .into(),
                ));
            }
        };
        if about != self.manifest.digest.to_string() {
            return Err(err(
                &mpath,
                format!(
                    "is about {about}, not about the layout's image {}",
                    self.manifest.digest
                ),
            ));
        }
        let mut blobs: Vec<BlobRef> = parsed
            .layers()
            .iter()
            .map(|l| blob_ref(&mpath, l.digest().as_ref(), l.size()))
            .collect::<Result<_, _>>()?;
        blobs.push(blob_ref(
            &mpath,
            parsed.config().digest().as_ref(),
            parsed.config().size(),
        )?);
        for blob in &blobs {
            let p = self.blob_path(&blob.digest);
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
        let artifact_type = d
            .artifact_type()
            .as_ref()
            .or(parsed.artifact_type().as_ref())
            .map(|t| t.to_string());
        Ok(Attachment {
            manifest,
            media_type: d.media_type().to_string(),
            ref_name,
            artifact_type,
            manifest_bytes,
            blobs,
            referrer,
        })
    }

    /// Reads a blob of the layout whole, checked against its size and digest; at most
    /// `limit` bytes (a larger descriptor is refused before anything is read).
    pub fn read_blob(&self, blob: &BlobRef, limit: u64) -> Result<Vec<u8>, LayoutError> {
        if blob.size > limit {
            return Err(LayoutError {
                path: self.blob_path(&blob.digest),
                message: format!(
                    "is {} bytes by its descriptor; at most {limit} are read",
                    blob.size
                ),
            });
        }
        let capacity = usize::try_from(blob.size).unwrap_or(0);
        self.check_blob(blob, Vec::with_capacity(capacity))
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
        for a in &self.attachments {
            for blob in &a.blobs {
                self.check_blob(blob, std::io::sink())?;
            }
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

fn blob_ref(context: &Path, digest: &str, size: u64) -> Result<BlobRef, LayoutError> {
    let digest = Digest::from_str(digest).map_err(|message| LayoutError {
        path: context.to_path_buf(),
        message,
    })?;
    Ok(BlobRef { digest, size })
}
