//! What `sign` and `verify-image` act on: an OCI layout folder, or an image in a registry
//! named by digest (`registry/repository@sha256:…`). A tag alone is refused: a signature
//! binds a manifest digest, and a tag can move between signing and checking.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::package::Digest;

/// A registry image by digest, optionally with the tag it was pushed under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestRef {
    /// `registry/repository`, as written.
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Digest,
}

impl fmt::Display for DigestRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.repository, self.digest)
    }
}

impl DigestRef {
    /// Parses `registry/repository[:tag]@sha256:<hex>`. The repository and tag are checked
    /// against the distribution grammar where the registry is spoken to.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, digest) = text.rsplit_once('@').ok_or_else(|| {
            format!(
                "`{}` names no digest; sign and verify-image need `registry/repository@sha256:…` (a tag can move; `nodeimg push` prints the digest)",
                text.escape_debug()
            )
        })?;
        let digest: Digest = digest.parse()?;
        let (repository, tag) = match name.rfind(':') {
            Some(i) if !name[i..].contains('/') => (&name[..i], Some(name[i + 1..].to_owned())),
            _ => (name, None),
        };
        if !repository.contains('/') || repository.is_empty() {
            return Err(format!(
                "`{}` is not `registry/repository@sha256:…`",
                text.escape_debug()
            ));
        }
        Ok(Self {
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// The name a signature made here is for: `registry/repository:tag` with a tag,
    /// `registry/repository@sha256:…` without.
    pub fn identity(&self) -> String {
        match &self.tag {
            Some(t) => format!("{}:{t}", self.repository),
            None => self.to_string(),
        }
    }
}

/// A layout folder or a registry image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageTarget {
    Layout(PathBuf),
    Registry(DigestRef),
}

impl ImageTarget {
    /// A folder that exists is a layout; anything else must be a digest reference.
    pub fn parse(text: &str) -> Result<Self, String> {
        if Path::new(text).is_dir() {
            return Ok(ImageTarget::Layout(PathBuf::from(text)));
        }
        if !text.contains('@')
            && (text.starts_with('.') || text.starts_with('/') || !text.contains('/'))
        {
            return Err(format!(
                "`{}` is not a folder (an OCI layout) nor `registry/repository@sha256:…`",
                text.escape_debug()
            ));
        }
        DigestRef::parse(text).map(ImageTarget::Registry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_need_a_digest() {
        let hex = "ab".repeat(32);
        let r = DigestRef::parse(&format!("127.0.0.1:5000/nodes/h100:v1@sha256:{hex}")).unwrap();
        assert_eq!(r.repository, "127.0.0.1:5000/nodes/h100");
        assert_eq!(r.tag.as_deref(), Some("v1"));
        assert_eq!(r.identity(), "127.0.0.1:5000/nodes/h100:v1");
        let r = DigestRef::parse(&format!("127.0.0.1:5000/nodes/h100@sha256:{hex}")).unwrap();
        assert_eq!(
            r.identity(),
            format!("127.0.0.1:5000/nodes/h100@sha256:{hex}")
        );
        for bad in [
            "127.0.0.1:5000/nodes/h100:v1".to_string(),
            "h100@sha256:00".to_string(),
            format!("h100@sha256:{hex}"),
            format!("reg/x@sha512:{hex}"),
        ] {
            assert!(DigestRef::parse(&bad).is_err(), "{bad}");
        }
        let e = ImageTarget::parse("reg.example/nodes/h100:v1").unwrap_err();
        assert!(e.contains("names no digest"), "{e}");
        assert!(ImageTarget::parse("/no/such/layout").is_err());
    }
}
