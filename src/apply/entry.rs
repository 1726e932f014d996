//! What an image puts at one path of a root: a folder, a regular file (its
//! digest), or a symbolic link, with mode and owner — and the checked,
//! relative path it goes to.
//!
//! `RelPath` is the one way a path from an image (a tar header) or from the
//! node's own state files becomes a path under the root: never absolute,
//! no `..`, no empty or `.` components, no NUL. Everything later joins it
//! to the root without checking again.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::package::digest::Digest;

/// Longest path accepted from an image (Linux's PATH_MAX).
const MAX_PATH_BYTES: usize = 4096;

/// A normalised path relative to a root (`etc/containerd/config.toml`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RelPath(String);

impl RelPath {
    /// Parses a path as it stands in a tar header or a state file: a
    /// leading `./` or `/` is the archive's own prefix; `..`, empty
    /// components and control characters are refused.
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.len() > MAX_PATH_BYTES {
            return Err(format!(
                "a path of {} bytes (at most {MAX_PATH_BYTES})",
                raw.len()
            ));
        }
        if raw.bytes().any(|b| b == 0 || b == b'\n' || b == b'\r') {
            return Err(format!("the path {raw:?} holds a NUL or line break"));
        }
        let trimmed = raw.trim_start_matches("./").trim_end_matches('/');
        let mut parts = Vec::new();
        for part in trimmed.split('/') {
            match part {
                "" | "." => continue,
                ".." => return Err(format!("the path {raw:?} climbs out with `..`")),
                p => parts.push(p),
            }
        }
        if parts.is_empty() {
            return Err(format!("the path {raw:?} names the root itself"));
        }
        Ok(RelPath(parts.join("/")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path under `root`.
    pub fn under(&self, root: &Path) -> PathBuf {
        root.join(&self.0)
    }

    /// The folder holding this path, `None` for a top-level name.
    pub fn parent(&self) -> Option<RelPath> {
        self.0.rsplit_once('/').map(|(p, _)| RelPath(p.to_string()))
    }

    /// The last component.
    pub fn name(&self) -> &str {
        self.0.rsplit_once('/').map_or(&self.0, |(_, n)| n)
    }

    /// `self` is `dir` or lies below it.
    pub fn is_within(&self, dir: &RelPath) -> bool {
        self.0 == dir.0
            || (self.0.starts_with(&dir.0) && self.0.as_bytes().get(dir.0.len()) == Some(&b'/'))
    }

    /// A child of this folder.
    pub fn join(&self, name: &str) -> Result<RelPath, String> {
        RelPath::parse(&format!("{}/{name}", self.0))
    }

    /// Number of components (for ordering children before parents).
    pub fn depth(&self) -> usize {
        self.0.bytes().filter(|&b| b == b'/').count() + 1
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}", self.0)
    }
}

impl TryFrom<String> for RelPath {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        RelPath::parse(&s)
    }
}

impl From<RelPath> for String {
    fn from(p: RelPath) -> String {
        p.0
    }
}

/// What stands at a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Kind {
    Dir,
    File { sha256: Digest, size: u64 },
    Symlink { target: String },
}

/// One path of an image or of a saved state: kind, permission bits, owner.
/// (Flat in apply's state files; serde cannot refuse unknown fields of a
/// flattened struct, and these files are apply's own, never a user's.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: RelPath,
    #[serde(flatten)]
    pub kind: Kind,
    /// Permission bits (`0o7777`); symbolic links carry 0o777.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

impl Entry {
    pub fn is_dir(&self) -> bool {
        matches!(self.kind, Kind::Dir)
    }

    /// `kind rwx owner`, for log lines and error messages.
    pub fn describe(&self) -> String {
        let kind = match &self.kind {
            Kind::Dir => "folder".to_string(),
            Kind::File { sha256, size } => format!("file {size} bytes {sha256}"),
            Kind::Symlink { target } => format!("link → {target}"),
        };
        format!(
            "{kind}, mode {:04o}, owner {}:{}",
            self.mode, self.uid, self.gid
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_from_archives_are_normalised_and_never_climb_out() {
        assert_eq!(RelPath::parse("./etc/x").unwrap().as_str(), "etc/x");
        assert_eq!(RelPath::parse("/etc//x/").unwrap().as_str(), "etc/x");
        assert_eq!(RelPath::parse("etc/./x").unwrap().as_str(), "etc/x");
        for bad in ["../etc", "etc/../../x", "", ".", "./", "a\0b", "a\nb"] {
            assert!(RelPath::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(RelPath::parse(&"a/".repeat(3000)).is_err());
    }

    #[test]
    fn within_is_by_component() {
        let etc = RelPath::parse("etc").unwrap();
        assert!(RelPath::parse("etc/x").unwrap().is_within(&etc));
        assert!(etc.is_within(&etc));
        assert!(!RelPath::parse("etcetera").unwrap().is_within(&etc));
        assert_eq!(
            RelPath::parse("a/b/c").unwrap().parent().unwrap().as_str(),
            "a/b"
        );
        assert_eq!(RelPath::parse("a").unwrap().parent(), None);
    }
}
