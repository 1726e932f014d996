//! Diagnostics: one problem in one blueprint file, located by YAML path and,
//! where the source map knows it, line and column.
//!
//! Loading collects every diagnostic it can find before giving up, so a user
//! fixes a file in one round instead of one error at a time.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::source::{Pos, SourceMap};
use super::yaml_path::YamlPath;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable identifier of the rule or problem kind, e.g. `unknown-field`.
    pub code: String,
    pub file: PathBuf,
    /// YAML path, e.g. `kubernetes.kubelet.kubeReserved.memory`.
    #[serde(serialize_with = "path_text")]
    pub path: YamlPath,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

fn path_text<S: serde::Serializer>(p: &YamlPath, s: S) -> Result<S::Ok, S::Error> {
    if p.is_root() {
        s.serialize_str("")
    } else {
        s.collect_str(p)
    }
}

impl Diagnostic {
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl Diagnostic {
    /// Writes the diagnostic as [`Display`](fmt::Display) does, with the
    /// severity word (`error`, `warning`) passed through `paint` (terminal
    /// colour, for instance).
    pub fn write_styled(
        &self,
        f: &mut dyn fmt::Write,
        paint: impl Fn(Severity, &str) -> String,
    ) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, ": {}[{}]: ", paint(self.severity, sev), self.code)?;
        if !self.path.is_root() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_styled(f, |_, word| word.to_owned())
    }
}

/// Collects diagnostics for one file, placing each with the source map.
#[derive(Debug)]
pub struct Collector<'a> {
    file: &'a Path,
    map: Option<&'a SourceMap>,
    pub items: Vec<Diagnostic>,
}

impl<'a> Collector<'a> {
    pub fn new(file: &'a Path, map: Option<&'a SourceMap>) -> Self {
        Self {
            file,
            map,
            items: Vec::new(),
        }
    }

    fn push(
        &mut self,
        severity: Severity,
        code: &str,
        path: &YamlPath,
        pos: Option<Pos>,
        message: String,
    ) -> &mut Diagnostic {
        self.items.push(Diagnostic {
            severity,
            code: code.to_string(),
            file: self.file.to_path_buf(),
            path: path.clone(),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.column),
            message,
            hint: None,
        });
        self.items.last_mut().expect("just pushed")
    }

    /// Where a diagnostic about `path` points: at its value when the file
    /// holds it, else at the key of the nearest enclosing field that the
    /// file does hold (a missing `deviceInjection` points at `kubernetes:`).
    fn place(&self, path: &YamlPath) -> Option<Pos> {
        let map = self.map?;
        if map.contains(path) {
            map.value_pos(path)
        } else {
            map.key_pos(path)
        }
    }

    /// True when the file itself holds `path` (it was written, not defaulted).
    pub fn written(&self, path: &YamlPath) -> bool {
        self.map.is_some_and(|m| m.contains(path))
    }

    /// An error at a value.
    pub fn error(
        &mut self,
        code: &str,
        path: &YamlPath,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let pos = self.place(path);
        self.push(Severity::Error, code, path, pos, message.into())
    }

    /// An error at the key that introduces `path` (unknown fields).
    pub fn error_at_key(
        &mut self,
        code: &str,
        path: &YamlPath,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let pos = self.map.and_then(|m| m.key_pos(path));
        self.push(Severity::Error, code, path, pos, message.into())
    }

    /// An error placed at a known position (syntax errors).
    pub fn error_pos(
        &mut self,
        code: &str,
        path: &YamlPath,
        pos: Option<Pos>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Error, code, path, pos, message.into());
    }

    pub fn warning(
        &mut self,
        code: &str,
        path: &YamlPath,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let pos = self.place(path);
        self.push(Severity::Warning, code, path, pos, message.into())
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    /// Diagnostics in file order, errors before warnings at the same place.
    pub fn finish(mut self) -> Vec<Diagnostic> {
        self.items.sort_by(|a, b| {
            (a.line.unwrap_or(0), a.column.unwrap_or(0), a.severity).cmp(&(
                b.line.unwrap_or(0),
                b.column.unwrap_or(0),
                b.severity,
            ))
        });
        self.items
    }
}

/// The closest candidate to `word` (for "did you mean"), if close enough.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::jaro_winkler(&word.to_lowercase(), &c.to_lowercase()),
                c,
            )
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn suggestions() {
        assert_eq!(
            suggest("maxPod", ["maxPods", "kubeReserved"]),
            Some("maxPods")
        );
        assert_eq!(
            suggest("kubeReserve", ["maxPods", "kubeReserved", "systemReserved"]),
            Some("kubeReserved")
        );
        assert_eq!(suggest("zzz", ["maxPods"]), None);
    }
}
