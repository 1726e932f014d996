//! Paths: absolute paths on the node (`/var/lib/containerd`), log file
//! globs (`/var/log/nodeimg/*.log`) and paths relative to the blueprint file
//! (`overlay/`), all free of `..` so that nothing a blueprint names can
//! escape where it is meant to be.
//!
//! A node path reaches many formats: TOML and YAML (escaped), but also
//! tmpfiles.d, audit rules, systemd units and `ExecStart=` lines, where a
//! blank splits a field, `%` starts a specifier and `$` an environment
//! variable. So node paths are held to the characters every one of those
//! formats carries as they are: letters, digits and `/ . _ - + @ : , = ~`.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AbsPath(String);

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(String);

/// Absolute path or glob of log files for logrotate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogGlob(String);

/// Characters a node path may hold besides ASCII letters and digits.
const NODE_PATH_EXTRA: &str = "/._-+@:,=~";

fn check_components(s: &str) -> Result<(), String> {
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!("path {s:?} contains the control character {c:?}"));
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

/// Absolute, normalised, and made of letters, digits and `extra`.
fn check_node_path(s: &str, extra: &str, what: &str) -> Result<(), String> {
    if !s.starts_with('/') {
        return Err(format!("{what} `{s}` must be absolute (start with `/`)"));
    }
    check_components(s)?;
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || extra.contains(*c)))
    {
        let shown = extra
            .chars()
            .map(String::from)
            .collect::<Vec<_>>()
            .join(" ");
        return Err(format!(
            "{what} {s:?} holds {c:?}; node paths are limited to letters, digits and {shown}, which every rendered config format carries as they are"
        ));
    }
    if s.contains("//") || s.split('/').any(|c| c == ".") || (s.len() > 1 && s.ends_with('/')) {
        return Err(format!(
            "{what} `{s}` must be normalised (no `//`, `.` or trailing `/`)"
        ));
    }
    Ok(())
}

impl FromStr for AbsPath {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        check_node_path(s, NODE_PATH_EXTRA, "path")?;
        Ok(Self(s.to_string()))
    }
}

impl LogGlob {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for LogGlob {
    type Err = String;

    /// A node path that may also hold the glob characters `*`, `?`, `[`,
    /// `]` and `!`. logrotate splits its file list on blanks, reads quotes,
    /// and treats `{`, `}` and `#` as syntax, so none of those may appear.
    fn from_str(s: &str) -> Result<Self, String> {
        let extra = format!("{NODE_PATH_EXTRA}*?[]!");
        check_node_path(s, &extra, "log path")?;
        Ok(Self(s.to_string()))
    }
}

impl fmt::Display for LogGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

text_value!(
    LogGlob,
    "log-glob",
    "An absolute path or glob of log files, e.g. /var/log/nodeimg/*.log.",
    numbers = false
);

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
        for bad in [
            "/run/cdi${X}",
            "/var/cache/%m",
            "/a b",
            "/a\"b",
            "/a\\x20b",
            "/a#b",
            "/a\tb",
        ] {
            assert!(bad.parse::<AbsPath>().is_err(), "{bad:?}");
        }
        assert!(
            "/var/lib/kubelet/pods-1.2_x+y@z:a,b=c~"
                .parse::<AbsPath>()
                .is_ok()
        );
    }

    #[test]
    fn log_globs() {
        assert!("/var/log/nodeimg/*.log".parse::<LogGlob>().is_ok());
        assert!("/var/log/[!a]?.log".parse::<LogGlob>().is_ok());
        for bad in [
            "var/log/x",
            "/var/log/x}",
            "/var/log/{",
            "/var/log/a b",
            "/var/log/#x",
            "/var/log/\"x",
        ] {
            assert!(bad.parse::<LogGlob>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn relative() {
        assert!("overlay".parse::<RelPath>().is_ok());
        assert!("/overlay".parse::<RelPath>().is_err());
        assert!("a/../../etc".parse::<RelPath>().is_err());
    }
}
