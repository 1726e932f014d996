//! The SBOMs attached to an image in an OCI layout, found and checked the
//! way a consumer would: index.json's referrer entries with an SBOM
//! `artifactType` → each artifact manifest (read with a bound, its digest
//! checked) → its `subject` must be this image's manifest, its one layer the
//! document → the document's digest, and what it says it describes: the
//! image's manifest digest (SPDX: the `SPDXRef-Image` package's SHA256;
//! CycloneDX: `metadata.component`'s SHA-256).
//!
//! A layout is input like any other (it may have come from a registry): a
//! referrer pointing at another subject, a document larger than
//! [`MAX_DOCUMENT_BYTES`], one nested deeper than serde_json's recursion
//! limit (128), or one about another image is a clear error. The document is
//! streamed through its hash and a reader that keeps only the few fields
//! checked, so memory does not grow with its size.

use std::io::Read;
use std::path::Path;

use oci_spec::image::ImageManifest;
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::Format;
use crate::package::digest::BlobRef;
use crate::package::digest::HashingReader;
use crate::package::layout_reader::{Attachment, LayoutError, LocalImage};

/// Largest SBOM document read (an overlay of a million files makes a
/// CycloneDX document of about 300 MB).
pub const MAX_DOCUMENT_BYTES: u64 = 512 << 20;

/// One SBOM attached to the image.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Attached {
    pub format: Format,
    /// `artifactType` and the document's media type.
    pub media_type: &'static str,
    /// The artifact manifest (the referrer).
    pub manifest: BlobRef,
    /// The SBOM document.
    pub document: BlobRef,
}

/// The SBOMs index.json lists for the image of the layout at `layout`, each
/// artifact manifest checked (its digest, its subject, its one layer) and
/// its document present with the size the manifest gives; in index order.
/// The documents themselves are checked by [`check`].
pub fn sbom_referrers(layout: &Path) -> Result<Vec<Attached>, LayoutError> {
    let image = LocalImage::open(layout)?;
    image
        .attachments
        .iter()
        .filter_map(|a| {
            let format = Format::from_media_type(a.artifact_type.as_deref()?)?;
            Some((format, a))
        })
        .map(|(format, a)| attached(&image, format, a))
        .collect()
}

fn attached(
    image: &LocalImage,
    format: Format,
    entry: &Attachment,
) -> Result<Attached, LayoutError> {
    let path = image.blob_path(&entry.manifest.digest);
    let err = |message: String| LayoutError {
        path: path.clone(),
        message,
    };
    let m = ImageManifest::from_reader(entry.manifest_bytes.as_slice())
        .map_err(|e| err(format!("not an artifact manifest: {e}")))?;
    let subject = m.subject().as_ref().ok_or_else(|| {
        err(format!(
            "the {} referrer has no subject; it must name the image {}",
            format.words(),
            image.manifest.digest
        ))
    })?;
    if subject.digest().to_string() != image.manifest.digest.to_string()
        || subject.size() != image.manifest.size
    {
        return Err(err(format!(
            "the {} referrer points at another subject ({}, {} bytes), not this layout's image {} ({} bytes)",
            format.words(),
            subject.digest(),
            subject.size(),
            image.manifest.digest,
            image.manifest.size
        )));
    }
    let declared = m.artifact_type().as_ref().map(|t| t.to_string());
    if declared.as_deref() != Some(format.media_type()) {
        return Err(err(format!(
            "its artifactType is {:?}, but index.json lists it as {}",
            declared,
            format.media_type()
        )));
    }
    let [layer] = m.layers().as_slice() else {
        return Err(err(format!(
            "holds {} layers; an SBOM referrer holds exactly one, the document",
            m.layers().len()
        )));
    };
    if layer.media_type().to_string() != format.media_type() {
        return Err(err(format!(
            "its layer has media type {}, not {}",
            layer.media_type(),
            format.media_type()
        )));
    }
    if layer.size() > MAX_DOCUMENT_BYTES {
        return Err(err(format!(
            "its document is {} bytes; at most {MAX_DOCUMENT_BYTES} are read",
            layer.size()
        )));
    }
    let document = BlobRef {
        digest: layer
            .digest()
            .to_string()
            .parse()
            .map_err(|e: String| err(e))?,
        size: layer.size(),
    };
    let doc_path = image.blob_path(&document.digest);
    let len = std::fs::metadata(&doc_path)
        .map_err(|e| LayoutError {
            path: doc_path.clone(),
            message: format!("missing SBOM document: {e}"),
        })?
        .len();
    if len != document.size {
        return Err(LayoutError {
            path: doc_path,
            message: format!("is {len} bytes, the referrer says {}", document.size),
        });
    }
    Ok(Attached {
        format,
        media_type: format.media_type(),
        manifest: entry.manifest.clone(),
        document,
    })
}

#[derive(Deserialize)]
struct SpdxDoc {
    #[serde(rename = "spdxVersion")]
    version: String,
    #[serde(default)]
    packages: Vec<SpdxPackage>,
}

#[derive(Deserialize)]
struct SpdxPackage {
    #[serde(rename = "SPDXID")]
    id: String,
    #[serde(default)]
    checksums: Vec<SpdxChecksum>,
    #[serde(flatten)]
    _rest: IgnoredMap,
}

#[derive(Deserialize)]
struct SpdxChecksum {
    algorithm: String,
    #[serde(rename = "checksumValue")]
    value: String,
}

#[derive(Deserialize)]
struct CdxDoc {
    #[serde(rename = "bomFormat")]
    format: String,
    #[serde(rename = "specVersion")]
    version: String,
    metadata: CdxMetadata,
}

#[derive(Deserialize)]
struct CdxMetadata {
    component: CdxComponent,
}

#[derive(Deserialize)]
struct CdxComponent {
    #[serde(default)]
    hashes: Vec<CdxHash>,
}

#[derive(Deserialize)]
struct CdxHash {
    alg: String,
    content: String,
}

/// Swallows the fields of an object the check does not keep.
#[derive(Default)]
struct IgnoredMap;

impl<'de> Deserialize<'de> for IgnoredMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = IgnoredMap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<IgnoredMap, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IgnoredMap)
            }
        }
        d.deserialize_map(V)
    }
}

/// Checks the attached document: its digest and size, that it parses as
/// its format, and that it describes this layout's image.
pub fn check(layout: &Path, a: &Attached) -> Result<(), LayoutError> {
    let image = LocalImage::open(layout)?;
    let path = image.blob_path(&a.document.digest);
    let err = |message: String| LayoutError {
        path: path.clone(),
        message,
    };
    let file = crate::input::open(&path, 0).map_err(|e| err(e.to_string()))?;
    let mut reader = HashingReader::new(file.take(a.document.size.saturating_add(1)));
    let described: Option<String> = {
        let mut de = serde_json::Deserializer::from_reader(&mut reader);
        let bad = |e: serde_json::Error| err(format!("not {} JSON: {e}", a.format.words()));
        let sums = match a.format {
            Format::Spdx => {
                let doc = SpdxDoc::deserialize(&mut de).map_err(bad)?;
                if doc.version != "SPDX-2.3" {
                    return Err(err(format!("spdxVersion is {}, not SPDX-2.3", doc.version)));
                }
                doc.packages
                    .into_iter()
                    .find(|p| p.id == "SPDXRef-Image")
                    .and_then(|p| {
                        p.checksums
                            .into_iter()
                            .find(|c| c.algorithm == "SHA256")
                            .map(|c| c.value)
                    })
            }
            Format::Cyclonedx => {
                let doc = CdxDoc::deserialize(&mut de).map_err(bad)?;
                if doc.format != "CycloneDX" || doc.version != "1.6" {
                    return Err(err(format!(
                        "is {} {}, not CycloneDX 1.6",
                        doc.format, doc.version
                    )));
                }
                doc.metadata
                    .component
                    .hashes
                    .into_iter()
                    .find(|h| h.alg == "SHA-256")
                    .map(|h| h.content)
            }
        };
        de.end().map_err(bad)?;
        sums
    };
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(|e| err(e.to_string()))?;
    let (digest, len) = reader.finish();
    if len != a.document.size || digest != a.document.digest {
        return Err(err(format!(
            "content does not match its descriptor ({len} bytes, {digest}; expected {} bytes, {})",
            a.document.size, a.document.digest
        )));
    }
    match described {
        Some(hex) if hex == image.manifest.digest.hex() => Ok(()),
        Some(hex) => Err(err(format!(
            "the {} document describes the image sha256:{hex}, not this layout's {}",
            a.format.words(),
            image.manifest.digest
        ))),
        None => Err(err(format!(
            "the {} document names no image manifest digest",
            a.format.words()
        ))),
    }
}
