//! Paths: absolute paths on the node (`/var/lib/containerd`) and paths
//! relative to the blueprint file (`overlay/`), both free of `..` so that
//! nothing a blueprint names can escape where it is meant to be.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AbsPath(String);

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(String);

fn check_components(s: &str) -> Result<(), String> {
    if s.contains('\0') || s.contains('\n') {
        return Err(format!("path {s:?} contains a NUL or newline"));
    }
    for c in s.split('/') {
        if c == ".." {
            return Err(format!("path `{s}` must not contain `..`"));
        }
    }
    Ok(())
}

impl AbsPath {
    /// A path known to be valid at compile time (defaults).
    pub(crate) fn from_const(s: &str) -> Self {
        debug_assert!(s.parse::<AbsPath>().is_ok(), "{s}");
        Self(s.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path without its leading `/`, as it appears inside an image layer.
    pub fn in_layer(&self) -> &str {
        self.0.trim_start_matches('/')
    }

    /// True when `self` is `other` or lies below it.
    pub fn is_within(&self, other: &AbsPath) -> bool {
        self.0 == other.0 || other.0 == "/" || self.0.starts_with(&format!("{}/", other.0))
    }
}

impl RelPath {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for AbsPath {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if !s.starts_with('/') {
            return Err(format!("path `{s}` must be absolute (start with `/`)"));
        }
        check_components(s)?;
        if s.contains("//") || s.split('/').any(|c| c == ".") || (s.len() > 1 && s.ends_with('/')) {
            return Err(format!(
                "path `{s}` must be normalised (no `//`, `.` or trailing `/`)"
            ));
        }
        Ok(Self(s.to_string()))
    }
}

impl FromStr for RelPath {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("path must not be empty".into());
        }
        if s.starts_with('/') {
            return Err(format!("path `{s}` must be relative to the blueprint file"));
        }
        check_components(s)?;
        Ok(Self(s.to_string()))
    }
}

impl fmt::Display for AbsPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

text_value!(
    AbsPath,
    "absolute-path",
    "An absolute, normalised path on the node, without `..`.",
    numbers = false
);
text_value!(
    RelPath,
    "relative-path",
    "A path relative to the blueprint file, without `..`.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute() {
        assert!("/var/lib/containerd".parse::<AbsPath>().is_ok());
        assert!(
            "var/lib"
                .parse::<AbsPath>()
                .unwrap_err()
                .contains("absolute")
        );
        assert!("/var/../etc".parse::<AbsPath>().unwrap_err().contains(".."));
        assert!(
            "/var//lib"
                .parse::<AbsPath>()
                .unwrap_err()
                .contains("normalised")
        );
        let p: AbsPath = "/var/lib/containerd".parse().unwrap();
        assert!(p.is_within(&"/var/lib".parse().unwrap()));
        assert!(!p.is_within(&"/var/li".parse().unwrap()));
    }

    #[test]
    fn relative() {
        assert!("overlay".parse::<RelPath>().is_ok());
        assert!("/overlay".parse::<RelPath>().is_err());
        assert!("a/../../etc".parse::<RelPath>().is_err());
    }
}
