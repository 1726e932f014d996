//! `REV:PATH` as a blueprint argument (`nodeimg diff main:bp.yaml bp.yaml`): the blueprint
//! as it was at a git revision, with the overlay and certificates of that revision, so a
//! review compares both sides with their own files. The blueprint's folder at `REV` is
//! written (`git archive`) into a temporary folder and loaded from there; the temporary
//! folder goes when the comparison is done.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A blueprint checked out of a revision; the folder is removed on drop.
pub struct AtRevision {
    _dir: tempfile::TempDir,
    pub file: PathBuf,
}

/// `text` as `REV:PATH` when it is not a file that exists and has a revision part.
pub fn parse(text: &Path) -> Option<(String, String)> {
    if text.exists() {
        return None;
    }
    let s = text.to_str()?;
    let (rev, path) = s.split_once(':')?;
    (!rev.is_empty() && !path.is_empty()).then(|| (rev.to_owned(), path.to_owned()))
}

/// The blueprint `path` (relative to the current folder, as git reads it) and its folder
/// at `rev`.
pub fn checkout(rev: &str, path: &str) -> Result<AtRevision, String> {
    let git = |args: &[&str]| -> Result<Vec<u8>, String> {
        let out = Command::new("git")
            .args(args)
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(out.stdout)
    };
    // Paths in the archive are from the repository's top; the argument is from here.
    let prefix = String::from_utf8_lossy(&git(&["rev-parse", "--show-prefix"])?)
        .trim()
        .to_owned();
    let full = normalise(&format!("{prefix}{path}"))
        .ok_or_else(|| format!("{rev}:{path}: the path leaves the repository"))?;
    let folder = Path::new(&full)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty());
    // From the top: in a subfolder, git archive would archive that subfolder alone.
    let top = String::from_utf8_lossy(&git(&["rev-parse", "--show-toplevel"])?)
        .trim()
        .to_owned();
    let mut args = vec!["-C", top.as_str(), "archive", "--format=tar", rev, "--"];
    if let Some(f) = folder.as_deref() {
        args.push(f);
    }
    let tar = git(&args)?;
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    tar::Archive::new(tar.as_slice())
        .unpack(dir.path())
        .map_err(|e| format!("cannot unpack {rev}:{}: {e}", folder.unwrap_or_default()))?;
    let file = dir.path().join(&full);
    if !file.is_file() {
        return Err(format!("{rev}:{path}: no such file at that revision"));
    }
    Ok(AtRevision { _dir: dir, file })
}

/// `a/./b/../c` as `a/c`; `None` when it climbs above the top.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_inside_the_repository() {
        assert_eq!(normalise("a/./b/../c.yaml").as_deref(), Some("a/c.yaml"));
        assert_eq!(normalise("../x"), None);
        assert_eq!(
            parse(Path::new("main:bp.yaml")),
            Some(("main".into(), "bp.yaml".into()))
        );
        assert_eq!(parse(Path::new("Cargo.toml")), None);
        assert_eq!(parse(Path::new(":bp.yaml")), None);
    }
}
