//! Helpers shared by the integration tests: load and render the examples.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use nodeimg::blueprint::{Blueprint, compat::Matrix, load_bytes, load_file};
use nodeimg::render::{Rendered, Templates, render};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn example(name: &str) -> Blueprint {
    load_file(
        &root().join("blueprints").join(format!("{name}.yaml")),
        &Matrix::builtin(),
    )
    .unwrap_or_else(|d| panic!("{name}: {d:?}"))
    .blueprint
}

/// An example blueprint with text substitutions, loaded as if it sat in
/// blueprints/ (so its relative paths resolve).
pub fn variant(name: &str, subs: &[(&str, &str)]) -> Blueprint {
    let path = root().join("blueprints").join(format!("{name}.yaml"));
    let mut text = std::fs::read_to_string(&path).unwrap();
    for (a, b) in subs {
        assert!(text.contains(a), "{name} has no `{a}`");
        text = text.replacen(a, b, 1);
    }
    load_bytes(
        text.as_bytes(),
        &path,
        Some(&root().join("blueprints")),
        &Matrix::builtin(),
    )
    .unwrap_or_else(|d| {
        panic!(
            "{name} variant: {}",
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
    .blueprint
}

pub fn rendered(bp: &Blueprint) -> Rendered {
    render(bp, &Templates::embedded()).unwrap_or_else(|e| panic!("{}: {e}", bp.name()))
}

pub const EXAMPLES: &[&str] = &["h100-sxm-ubuntu", "mi300x-rhel", "cpu-minimal"];

/// Writes one rendered layer file to `dir` and returns its path.
pub fn write_file(dir: &Path, r: &Rendered, path: &str) -> PathBuf {
    let bytes = r
        .layer
        .file(path)
        .unwrap_or_else(|| panic!("{path} not rendered"));
    let out = dir.join(path.replace('/', "_"));
    std::fs::write(&out, bytes).unwrap();
    out
}
