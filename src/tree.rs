//! The rendered file tree, in memory: what goes into the image layer.
//!
//! Render produces it, `nodeimg render` writes it to a folder, the packager
//! turns it into a tar layer. Paths are relative to the layer root (`etc/…`,
//! no leading `/`), use `/` separators, never contain `.` or `..` parts, and
//! are kept sorted so every consumer sees the same order.

use std::collections::BTreeMap;
use std::fmt;

/// What sits at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File { mode: u32, bytes: Vec<u8> },
    Dir { mode: u32 },
    Symlink { target: String },
}

/// Why a path cannot be in a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for TreeError {}

/// A sorted tree; parent directories are implied (mode 0755) unless set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    nodes: BTreeMap<String, Node>,
}

/// Checks a layer path: relative, `/`-separated, no NUL, no empty, `.` or
/// `..` parts.
pub fn check_path(path: &str) -> Result<(), TreeError> {
    let bad = |m: &str| {
        Err(TreeError {
            path: path.to_string(),
            message: m.to_string(),
        })
    };
    if path.is_empty() {
        return bad("empty path");
    }
    if path.starts_with('/') {
        return bad("layer paths are relative (no leading `/`)");
    }
    // `\` is an ordinary byte in a Linux path, and systemd names units
    // after their paths with `\x2d`-style escapes (`var-lib-k8s\x2ddata.mount`).
    if path.contains('\0') {
        return bad("path contains NUL");
    }
    if path
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return bad("path has an empty, `.` or `..` component");
    }
    Ok(())
}

impl Tree {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a regular file; refuses a path that is already taken.
    pub fn add_file(&mut self, path: &str, mode: u32, bytes: Vec<u8>) -> Result<(), TreeError> {
        self.insert(
            path,
            Node::File {
                mode: mode & 0o7777,
                bytes,
            },
        )
    }

    /// Adds a directory with an explicit mode.
    pub fn add_dir(&mut self, path: &str, mode: u32) -> Result<(), TreeError> {
        self.insert(
            path,
            Node::Dir {
                mode: mode & 0o7777,
            },
        )
    }

    /// Adds a symbolic link. The target must stay inside the layer: relative
    /// targets may not climb above the root, absolute ones are layer-rooted.
    pub fn add_symlink(&mut self, path: &str, target: &str) -> Result<(), TreeError> {
        check_path(path)?;
        let escapes = if target.starts_with('/') {
            target.split('/').any(|p| p == "..")
        } else {
            let mut depth: i64 = path.matches('/').count() as i64;
            let mut escaped = false;
            for part in target.split('/') {
                match part {
                    ".." => depth -= 1,
                    "" | "." => {}
                    _ => depth += 1,
                }
                if depth < 0 {
                    escaped = true;
                }
            }
            escaped
        };
        if target.is_empty() || escapes || target.contains('\0') {
            return Err(TreeError {
                path: path.into(),
                message: format!("symlink target `{target}` leaves the layer"),
            });
        }
        self.insert(
            path,
            Node::Symlink {
                target: target.to_string(),
            },
        )
    }

    fn insert(&mut self, path: &str, node: Node) -> Result<(), TreeError> {
        check_path(path)?;
        // A parent of this path must not be a file or a link.
        let mut parent = path;
        while let Some((p, _)) = parent.rsplit_once('/') {
            if let Some(n) = self.nodes.get(p)
                && !matches!(n, Node::Dir { .. })
            {
                return Err(TreeError {
                    path: path.into(),
                    message: format!("`{p}` is not a directory"),
                });
            }
            parent = p;
        }
        match self.nodes.get(path) {
            Some(Node::Dir { .. }) if matches!(node, Node::Dir { .. }) => {
                self.nodes.insert(path.to_string(), node);
                Ok(())
            }
            Some(_) => Err(TreeError {
                path: path.into(),
                message: "produced twice".into(),
            }),
            None => {
                self.nodes.insert(path.to_string(), node);
                Ok(())
            }
        }
    }

    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(path)
    }

    /// File contents at `path`, if it is a regular file.
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        match self.nodes.get(path) {
            Some(Node::File { bytes, .. }) => Some(bytes),
            _ => None,
        }
    }

    /// Every entry with its implied parents, sorted by path, parents first.
    pub fn entries(&self) -> Vec<(String, Node)> {
        let mut all: BTreeMap<String, Node> = BTreeMap::new();
        for (path, node) in &self.nodes {
            let mut cur = path.as_str();
            while let Some((p, _)) = cur.rsplit_once('/') {
                all.entry(p.to_string())
                    .or_insert(Node::Dir { mode: 0o755 });
                cur = p;
            }
            all.insert(path.clone(), node.clone());
        }
        // Sorting by path components puts "a/b" right after "a" and before
        // "a-b" and "a.b", so parents always precede their children.
        let mut v: Vec<(String, Node)> = all.into_iter().collect();
        v.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
        v
    }

    /// Number of explicit entries (files, dirs, links).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Files only, sorted by path.
    pub fn files(&self) -> impl Iterator<Item = (&str, u32, &[u8])> {
        self.nodes.iter().filter_map(|(p, n)| match n {
            Node::File { mode, bytes } => Some((p.as_str(), *mode, bytes.as_slice())),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_first_and_implied() {
        let mut t = Tree::new();
        t.add_file("etc/b.conf", 0o644, b"b".to_vec()).unwrap();
        t.add_file("etc-x/a", 0o644, b"a".to_vec()).unwrap();
        t.add_file("etc/a/c", 0o600, b"c".to_vec()).unwrap();
        let paths: Vec<String> = t.entries().into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            paths,
            ["etc", "etc/a", "etc/a/c", "etc/b.conf", "etc-x", "etc-x/a"]
        );
    }

    #[test]
    fn refuses_bad_paths_and_escapes() {
        let mut t = Tree::new();
        assert!(t.add_file("/etc/x", 0o644, vec![]).is_err());
        assert!(t.add_file("etc/../x", 0o644, vec![]).is_err());
        assert!(t.add_symlink("etc/link", "../../outside").is_err());
        assert!(t.add_symlink("etc/link", "../usr/lib").is_ok());
        t.add_file("etc/f", 0o644, vec![]).unwrap();
        assert!(
            t.add_file("etc/f", 0o644, vec![])
                .unwrap_err()
                .message
                .contains("twice")
        );
        assert!(
            t.add_file("etc/f/g", 0o644, vec![])
                .unwrap_err()
                .message
                .contains("not a directory")
        );
    }
}
