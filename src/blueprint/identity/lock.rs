//! Loading the image's lock as trusted input.
//!
//! A lock (`etc/nodeimg/blueprint.lock.json`) was validated when the image
//! was built — possibly with a site matrix the node does not have — so it
//! is not validated again: it is parsed, its blueprint checked against the
//! schema and deserialised, and the whole is checked against the id beside
//! it (`blueprint.id`). The matrix entries it was validated with come from
//! `blueprint.matrix.json` beside it, and must hash to what the lock says.
//! Anything altered after the build is refused.

use std::path::Path;

use serde_json::Value;

use super::overlay::OverlayTree;
use super::{Identity, canonical_value};
use crate::blueprint::compat::Matrix;
use crate::blueprint::diagnostic::{Collector, Diagnostic};
use crate::blueprint::model::RawBlueprint;
use crate::blueprint::yaml_path::YamlPath;
use crate::blueprint::{Blueprint, schema, source};

/// File name of the lock nodeimg renders into the image.
pub const LOCK_FILE: &str = "blueprint.lock.json";
/// The matrix entries the blueprint was validated with, beside the lock.
pub const MATRIX_FILE: &str = "blueprint.matrix.json";
/// The blueprint id, beside the lock.
pub const ID_FILE: &str = "blueprint.id";

/// `path` names a lock file (`…/blueprint.lock.json`).
pub fn is_lock(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == LOCK_FILE)
}

/// Loads the lock at `path` with the id and matrix files beside it.
pub fn load_lock_file(path: &Path) -> Result<Blueprint, Vec<Diagnostic>> {
    let lock = read_bounded(path)
        .map_err(|e| one(path, "unreadable", format!("cannot read the file: {e}")))?;
    load_lock_beside(&lock, path)
}

/// Loads a lock already read from `path`, with the id and matrix files
/// beside it.
pub fn load_lock_beside(lock: &[u8], path: &Path) -> Result<Blueprint, Vec<Diagnostic>> {
    let read = |p: &Path| {
        read_bounded(p).map_err(|e| {
            one(
                p,
                "unreadable",
                format!("cannot read the file: {e}; an image's lock is checked against its {ID_FILE} and {MATRIX_FILE}"),
            )
        })
    };
    let id_path = path.with_file_name(ID_FILE);
    let id = read(&id_path)?;
    let id = std::str::from_utf8(&id)
        .map_err(|_| one(&id_path, "unreadable", "not UTF-8 text".into()))?;
    let matrix_path = path.with_file_name(MATRIX_FILE);
    let matrix = read(&matrix_path)?;
    load_lock(lock, &matrix, path, id)
}

/// Loads a lock from its bytes and those of the matrix file beside it; the
/// whole must hash to `expected_id`.
pub fn load_lock(
    lock: &[u8],
    matrix: &[u8],
    file: &Path,
    expected_id: &str,
) -> Result<Blueprint, Vec<Diagnostic>> {
    let located = |e: source::SourceError, code: &str| {
        let mut c = Collector::new(file, None);
        c.error_pos(code, &e.path, e.pos, e.message);
        c.finish()
    };
    let text = source::decode(lock).map_err(|e| located(e, "unreadable"))?;
    let mut doc = source::parse(text).map_err(|e| located(e, "syntax"))?;
    schema::drop_nulls(&mut doc.value);
    let parts = match parts(&doc.value) {
        Ok(p) => p,
        Err((path, message)) => {
            let mut out = Collector::new(file, Some(&doc.map));
            out.error("lock", &path, message);
            return Err(out.finish());
        }
    };

    // The blueprint, as any blueprint: schema, then the typed model (paths
    // in the diagnostics are inside `blueprint`).
    let mut bp_out = Collector::new(file, None);
    schema::check(parts.blueprint, &mut bp_out);
    if bp_out.has_errors() {
        return Err(bp_out.finish());
    }
    let raw: RawBlueprint = serde_path_to_error::deserialize(parts.blueprint).map_err(|e| {
        let path = YamlPath::parse(&e.path().to_string());
        one_at(file, "invalid-value", &path, e.inner().to_string())
    })?;

    let matrix_file = file.with_file_name(MATRIX_FILE);
    let matrix_name = matrix_file.display().to_string();
    let matrix = std::str::from_utf8(matrix)
        .map_err(|_| one(&matrix_file, "unreadable", "not UTF-8 text".into()))
        .and_then(|t| {
            Matrix::parse(t, &matrix_name).map_err(|e| one(&matrix_file, "matrix", e.to_string()))
        })?;

    let blueprint = canonical_value(&raw).map_err(|e| {
        one(
            file,
            "invalid-value",
            format!("cannot be written as JSON: {e}"),
        )
    })?;
    let overlay = parts.overlay.map(OverlayTree::from_digest);
    let identity = Identity::assemble(blueprint, matrix, overlay)
        .map_err(|e| one_at(file, e.code, &e.path, e.message))?;
    if identity.matrix_digest != parts.matrix {
        return Err(one(
            &matrix_file,
            "lock-matrix",
            format!(
                "hashes to {}, not to {} as the lock says; the image was altered",
                identity.matrix_digest, parts.matrix
            ),
        ));
    }
    let want = expected_id.trim();
    if identity.id() != want {
        return Err(one(
            file,
            "lock-id",
            format!(
                "the lock hashes to {}, not to the image's blueprint id {want}; the image was altered",
                identity.id()
            ),
        ));
    }
    Ok(Blueprint::trusted(raw, identity, file))
}

/// The members of a lock document.
struct Parts<'a> {
    blueprint: &'a Value,
    matrix: &'a str,
    overlay: Option<&'a str>,
}

fn parts(doc: &Value) -> Result<Parts<'_>, (YamlPath, String)> {
    let root = YamlPath::root();
    let obj = doc.as_object().ok_or_else(|| {
        (
            root.clone(),
            "a lock is a JSON object with `blueprint`, `matrix` and (with an overlay) `overlay`"
                .to_string(),
        )
    })?;
    if let Some(k) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "blueprint" | "matrix" | "overlay"))
    {
        return Err((
            root.key(k.clone()),
            format!("unknown member `{k}` in a lock"),
        ));
    }
    let digest = |key: &str| -> Result<Option<&str>, (YamlPath, String)> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if is_digest(s) => Ok(Some(s)),
            Some(_) => Err((root.key(key), "must be a `sha256:<64 hex>` digest".into())),
        }
    };
    Ok(Parts {
        blueprint: obj
            .get("blueprint")
            .filter(|b| b.is_object())
            .ok_or_else(|| (root.key("blueprint"), "the lock holds no blueprint".into()))?,
        matrix: digest("matrix")?.ok_or_else(|| {
            (
                root.key("matrix"),
                "the lock names no matrix digest".to_string(),
            )
        })?,
        overlay: digest("overlay")?,
    })
}

fn is_digest(s: &str) -> bool {
    s.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

fn one(file: &Path, code: &str, message: String) -> Vec<Diagnostic> {
    one_at(file, code, &YamlPath::root(), message)
}

fn one_at(file: &Path, code: &str, path: &YamlPath, message: String) -> Vec<Diagnostic> {
    let mut c = Collector::new(file, None);
    c.error(code, path, message);
    c.finish()
}

/// Reads a small input file whole, refusing without blocking what is not a
/// regular file and anything over the blueprint size limit.
fn read_bounded(path: &Path) -> Result<Vec<u8>, crate::input::InputError> {
    crate::input::read(path, source::MAX_BYTES as u64)
}
