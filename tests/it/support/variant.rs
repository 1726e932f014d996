//! Blueprint variants for tests, edited as data: an example (or any blueprint text) is
//! parsed once, fields are set or removed by YAML path, and the result is loaded through
//! the real loader. Unlike text substitution, an edit cannot hit the wrong section, does
//! not depend on the example's whitespace, and fails loudly when the path is not there.
//!
//! ```ignore
//! let bp = Variant::of("cpu-minimal")
//!     .set("runtime.containerd.root", json!("/var/lib/my containerd"))
//!     .load();
//! ```

use std::path::{Path, PathBuf};

use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::diagnostic::Diagnostic;
use nodeimg::blueprint::yaml_path::{Segment, YamlPath};
use nodeimg::blueprint::{Blueprint, load_bytes, source};
use serde_json::{Map, Value};

use super::root;

/// A blueprint being edited.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Where the original lives: diagnostics name it and relative paths resolve beside it.
    file: PathBuf,
    value: Value,
}

impl Variant {
    /// The example `blueprints/<name>.yaml`.
    pub fn of(name: &str) -> Self {
        let file = root().join("blueprints").join(format!("{name}.yaml"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        Self::parse(file, &text)
    }

    /// Blueprint `text`, as if read from `file`.
    pub fn parse(file: impl Into<PathBuf>, text: &str) -> Self {
        let file = file.into();
        let doc =
            source::parse(text).unwrap_or_else(|e| panic!("{}: {}", file.display(), e.message));
        Self {
            file,
            value: doc.value,
        }
    }

    /// Sets the value at a dotted path (`network.nics[1].model`), creating missing
    /// mappings on the way. Keys that hold dots need [`Variant::set_at`].
    pub fn set(self, path: &str, value: Value) -> Self {
        self.set_at(&YamlPath::parse(path), value)
    }

    /// Sets the value at `path`.
    pub fn set_at(mut self, path: &YamlPath, value: Value) -> Self {
        let (last, parents) = path
            .segments()
            .split_last()
            .expect("the root cannot be replaced; use Variant::parse");
        let mut node = &mut self.value;
        for (i, segment) in parents.iter().enumerate() {
            let next_is_index = matches!(path.segments()[i + 1], Segment::Index(_));
            node = step(node, segment, next_is_index, path);
        }
        match (last, node) {
            (Segment::Key(k), Value::Object(map)) => {
                map.insert(k.clone(), value);
            }
            (Segment::Index(i), Value::Array(items)) if *i < items.len() => items[*i] = value,
            (Segment::Index(i), Value::Array(items)) if *i == items.len() => items.push(value),
            (_, other) => panic!("{path}: cannot set inside {other}"),
        }
        self
    }

    /// Removes the value at a dotted path; it must be there.
    pub fn remove(self, path: &str) -> Self {
        self.remove_at(&YamlPath::parse(path))
    }

    /// Removes the value at `path`; it must be there.
    pub fn remove_at(mut self, path: &YamlPath) -> Self {
        let (last, parents) = path.segments().split_last().expect("not the root");
        let mut node = &mut self.value;
        for segment in parents {
            node = step(node, segment, false, path);
        }
        let removed = match (last, node) {
            (Segment::Key(k), Value::Object(map)) => map.remove(k).is_some(),
            (Segment::Index(i), Value::Array(items)) if *i < items.len() => {
                items.remove(*i);
                true
            }
            _ => false,
        };
        assert!(removed, "{path}: nothing to remove");
        self
    }

    /// The value at a dotted path, for assertions about the variant itself.
    pub fn get(&self, path: &str) -> Option<&Value> {
        let path = YamlPath::parse(path);
        path.segments()
            .iter()
            .try_fold(&self.value, |node, segment| match (segment, node) {
                (Segment::Key(k), Value::Object(map)) => map.get(k),
                (Segment::Index(i), Value::Array(items)) => items.get(*i),
                _ => None,
            })
    }

    /// The edited blueprint as text (JSON, which every YAML reader takes).
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(&self.value).expect("a JSON value serialises")
    }

    /// Writes the edited blueprint to `path` and returns `path`.
    pub fn write(&self, path: &Path) -> PathBuf {
        std::fs::write(path, self.text()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path.to_path_buf()
    }

    /// Loads it with the built-in matrix; relative paths resolve beside the original.
    pub fn load(&self) -> Blueprint {
        self.load_with(&Matrix::builtin())
    }

    /// Loads it with the built-in matrix, returning the diagnostics of a variant that
    /// does not load.
    pub fn try_load(&self) -> Result<Blueprint, Vec<Diagnostic>> {
        let base = self.file.parent().unwrap_or(Path::new("."));
        load_bytes(
            self.text().as_bytes(),
            &self.file,
            Some(base),
            &Matrix::builtin(),
        )
        .map(|loaded| loaded.blueprint)
    }

    /// Loads it with `matrix`: the blueprint when it loads, and the warnings, or the
    /// errors of a variant that does not load.
    pub fn diagnose_with(&self, matrix: &Matrix) -> (Option<Blueprint>, Vec<Diagnostic>) {
        let base = self.file.parent().unwrap_or(Path::new("."));
        match load_bytes(self.text().as_bytes(), &self.file, Some(base), matrix) {
            Ok(l) => (Some(l.blueprint), l.warnings),
            Err(d) => (None, d),
        }
    }

    /// Loads it with `matrix`.
    pub fn load_with(&self, matrix: &Matrix) -> Blueprint {
        let base = self.file.parent().unwrap_or(Path::new("."));
        load_bytes(self.text().as_bytes(), &self.file, Some(base), matrix)
            .unwrap_or_else(|d| {
                panic!(
                    "{} variant does not load:\n{}",
                    self.file.display(),
                    d.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            })
            .blueprint
    }
}

/// One step down from `node`; a missing key becomes an empty mapping (or sequence, when
/// an index comes next).
fn step<'a>(
    node: &'a mut Value,
    segment: &Segment,
    next_is_index: bool,
    path: &YamlPath,
) -> &'a mut Value {
    match (segment, node) {
        (Segment::Key(k), Value::Object(map)) => map.entry(k.clone()).or_insert_with(|| {
            if next_is_index {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            }
        }),
        (Segment::Index(i), Value::Array(items)) => {
            let len = items.len();
            items
                .get_mut(*i)
                .unwrap_or_else(|| panic!("{path}: index {i}, but the sequence has {len}"))
        }
        (_, other) => panic!("{path}: no {segment:?} in {other}"),
    }
}
