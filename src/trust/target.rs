//! What `sign` and `verify-image` act on: an OCI layout folder, or an image in a registry
//! named by digest (`registry/repository[:tag]@sha256:…`; a tag alone is refused where
//! the reference is parsed, since a signature binds a manifest digest and a tag can move).

use std::path::{Path, PathBuf};

/// A layout folder or a registry reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageTarget {
    Layout(PathBuf),
    Registry(String),
}

impl ImageTarget {
    /// A folder that exists is a layout; a name with a registry part (`host/…`) is a
    /// registry reference; anything else is refused.
    pub fn parse(text: &str) -> Result<Self, String> {
        if Path::new(text).is_dir() {
            return Ok(ImageTarget::Layout(PathBuf::from(text)));
        }
        let looks_like_path = text.starts_with('.') || text.starts_with('/') || !text.contains('/');
        if looks_like_path {
            return Err(format!(
                "`{}` is neither a folder (an OCI layout) nor `registry/repository@sha256:…`",
                text.escape_debug()
            ));
        }
        Ok(ImageTarget::Registry(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_layouts_and_names_are_references() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        assert_eq!(ImageTarget::parse(d), Ok(ImageTarget::Layout(d.into())));
        assert_eq!(
            ImageTarget::parse("reg.example/nodes/h100@sha256:00"),
            Ok(ImageTarget::Registry(
                "reg.example/nodes/h100@sha256:00".into()
            ))
        );
        for bad in ["/no/such/layout", "./out", "out"] {
            assert!(ImageTarget::parse(bad).is_err(), "{bad}");
        }
    }
}
