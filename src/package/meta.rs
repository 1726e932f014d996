//! What the image says about itself: the blueprint it was built from, its
//! tag and its platform. These values go into the hashed config and
//! manifest, so nothing here may depend on the build machine or on the
//! nodeimg version.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::blueprint::Blueprint;

use super::error::PackageError;

/// An OCI tag: `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Tag(String);

impl Tag {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Tag {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let ok = !s.is_empty()
            && s.len() <= 128
            && s.bytes().enumerate().all(|(i, b)| {
                b.is_ascii_alphanumeric() || b == b'_' || (i > 0 && (b == b'.' || b == b'-'))
            });
        if ok {
            Ok(Self(s.to_string()))
        } else {
            Err(format!(
                "`{s}` is not a valid image tag (letters, digits, `_`, then also `.` and `-`; at most 128)"
            ))
        }
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Identity and platform of the image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageMeta {
    /// Blueprint `metadata.name` (the image title).
    pub name: String,
    /// Blueprint `metadata.version`.
    pub version: String,
    /// Blueprint id, `sha256:…` of its canonical form.
    pub blueprint_id: String,
    /// `org.opencontainers.image.ref.name` in index.json.
    pub tag: Tag,
    /// GOARCH-style architecture, e.g. `amd64`, `arm64`.
    pub architecture: String,
    /// GOOS-style operating system: `linux`.
    pub os: String,
}

impl ImageMeta {
    /// Name, version and id from the blueprint; the tag is its version;
    /// the platform `linux/amd64` (set `architecture` for other nodes).
    pub fn from_blueprint(bp: &Blueprint) -> Result<Self, PackageError> {
        let version = bp.spec().metadata.version.to_string();
        let tag = version.parse().map_err(|message| PackageError::Invalid {
            what: "metadata.version as the image tag".into(),
            message,
        })?;
        Ok(Self {
            name: bp.name().to_string(),
            version,
            blueprint_id: bp.id().to_string(),
            tag,
            architecture: "amd64".into(),
            os: "linux".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        for ok in ["2026.11.1", "latest", "_x", "A-b.c_9"] {
            assert!(ok.parse::<Tag>().is_ok(), "{ok}");
        }
        let long = "a".repeat(129);
        for bad in ["", ".x", "-x", "a b", "a:b", "a/b", long.as_str()] {
            assert!(bad.parse::<Tag>().is_err(), "{bad}");
        }
    }
}
