//! The image's software bill of materials, written by `build` from what it
//! already knows — every file of every layer with its digest, the packages
//! the holds file pins, the base OS, the verifier and the crates compiled
//! into it — in two formats: SPDX 2.3 JSON ([`spdx`]) and CycloneDX 1.6
//! JSON ([`cyclonedx`]). Each is attached to the image as an OCI referrer
//! (see [`super::referrer`]).
//!
//! Deterministic: the time is SOURCE_DATE_EPOCH, the SPDX namespace and the
//! CycloneDX serial number are name-based UUIDs of the image manifest's
//! digest, lists are in tar or sorted order, and the JSON is canonical. The
//! nodeimg version appears nowhere (as in the image itself), so the same
//! image gives the same SBOM bytes.

pub mod attached;
pub mod contents;
pub mod crates;
pub mod cyclonedx;
pub mod pins;
pub mod spdx;

pub use attached::{Attached, check, sbom_referrers};
pub use contents::{Contents, Source};

use sha1::{Digest as _, Sha1};

/// The SPDX JSON media type (the referrer's `artifactType`).
pub const SPDX_MEDIA_TYPE: &str = "application/spdx+json";
/// The CycloneDX JSON media type.
pub const CYCLONEDX_MEDIA_TYPE: &str = "application/vnd.cyclonedx+json";
/// Where document namespaces and property names live.
pub const NAMESPACE_BASE: &str = "https://nodeimg.dev";
/// CycloneDX property names are `dev.nodeimg:<name>`.
pub const PROPERTY_PREFIX: &str = "dev.nodeimg:";
/// The creator both documents name (no version: see the module's documentation).
pub const TOOL: &str = "Tool: nodeimg";

/// The two formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Spdx,
    Cyclonedx,
}

impl Format {
    pub const ALL: [Format; 2] = [Format::Spdx, Format::Cyclonedx];

    pub fn media_type(self) -> &'static str {
        match self {
            Format::Spdx => SPDX_MEDIA_TYPE,
            Format::Cyclonedx => CYCLONEDX_MEDIA_TYPE,
        }
    }

    pub fn from_media_type(media_type: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.media_type() == media_type)
    }

    /// The file name the referrer's layer is annotated with.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Spdx => "sbom.spdx.json",
            Format::Cyclonedx => "sbom.cdx.json",
        }
    }

    /// The format and version, in words (`SPDX 2.3`).
    pub fn words(self) -> &'static str {
        match self {
            Format::Spdx => "SPDX 2.3",
            Format::Cyclonedx => "CycloneDX 1.6",
        }
    }

    /// The document, as canonical JSON.
    pub fn write(self, c: &Contents<'_>) -> Vec<u8> {
        match self {
            Format::Spdx => spdx::write(c),
            Format::Cyclonedx => cyclonedx::write(c),
        }
    }
}

/// A name-based (version 5, SHA-1) UUID in the URL namespace of RFC 4122,
/// of `name` under [`NAMESPACE_BASE`].
pub fn uuid_v5(name: &str) -> String {
    // 6ba7b811-9dad-11d1-80b4-00c04fd430c8, the URL namespace.
    const URL_NS: [u8; 16] = [
        0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30,
        0xc8,
    ];
    let mut h = Sha1::new();
    h.update(URL_NS);
    h.update(NAMESPACE_BASE.as_bytes());
    h.update(b"/");
    h.update(name.as_bytes());
    let d = h.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let x = super::digest::hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..]
    )
}

/// `pkg:oci/<name>@sha256%3A<hex>?arch=<arch>&tag=<tag>` (purl-spec `oci`:
/// the name is the repository's last segment, the version the manifest
/// digest; the registry is not known at build time).
pub fn image_purl(c: &Contents<'_>) -> String {
    format!(
        "pkg:oci/{}@sha256%3A{}?arch={}&tag={}",
        pins::percent(&c.meta.name.to_lowercase()),
        c.manifest.digest.hex(),
        pins::percent(&c.meta.architecture),
        pins::percent(c.meta.tag.as_str())
    )
}

/// `pkg:cargo/<name>@<version>` for a crate from crates.io (the purl `cargo`
/// type means crates.io); `None` for a git, local or other-registry crate.
pub fn crate_purl(p: &auditable_serde::Package) -> Option<String> {
    matches!(p.source, auditable_serde::Source::CratesIo).then(|| {
        format!(
            "pkg:cargo/{}@{}",
            pins::percent(&p.name),
            pins::percent(&p.version.to_string())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_v5_matches_rfc_4122() {
        // Python: uuid.uuid5(uuid.NAMESPACE_URL, "https://nodeimg.dev/x")
        assert_eq!(uuid_v5("x"), "9d832734-2094-5070-beaa-3dd11e00d7df");
        assert_ne!(uuid_v5("x"), uuid_v5("y"));
    }
}
