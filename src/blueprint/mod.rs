//! The node blueprint: loading, checking and the checked [`Blueprint`].
//!
//! [`load_file`]/[`load_bytes`] are the only way to get a `Blueprint` (besides
//! a lock whose id matched, [`identity::load_lock`]): they read the YAML with
//! positions, check the structure against the schema (all problems at once),
//! deserialise the typed model, then run the semantic rules. Later stages
//! (render, package, verify, accept) take a `Blueprint` or its checked
//! [`Spec`], never the raw model, and never re-check it.

pub mod amd_chart;
pub mod cmdline;
pub mod compat;
pub mod diagnostic;
pub mod examples;
pub mod identity;
pub mod kernel;
pub mod known_fields;
pub mod model;
mod partial;
pub mod pem;
pub mod reservation;
pub mod resolve;
mod rules;
pub mod runtime_classes;
pub mod schema;
pub mod source;
pub mod spec;
pub mod value;
pub mod yaml_path;

use std::path::{Path, PathBuf};

use compat::Matrix;
use diagnostic::{Collector, Diagnostic, Severity};
use model::RawBlueprint;
pub use spec::Spec;
use yaml_path::YamlPath;

/// A blueprint that passed every check.
#[derive(Debug, Clone)]
pub struct Blueprint {
    raw: Spec,
    identity: identity::Identity,
    file: PathBuf,
    /// The folder relative paths resolve against, when not the file's own (standard
    /// input under `diff --base-dir`).
    base: Option<PathBuf>,
}

impl Blueprint {
    /// The checked model (see [`Spec`]: the only form of it later stages take).
    pub fn spec(&self) -> &Spec {
        &self.raw
    }

    /// `sha256:…` of the canonical resolved form, the matrix entries it
    /// was validated with and its overlay tree (see [`identity`]).
    pub fn id(&self) -> &str {
        self.identity.id()
    }

    /// The id and what it covers: the canonical form, the matrix entries
    /// in use, the overlay tree.
    pub fn identity(&self) -> &identity::Identity {
        &self.identity
    }

    /// The file it was read from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The folder its relative paths (overlay, certificates, keys) resolve against: the
    /// one it was loaded with, else the file's own.
    pub fn base_dir(&self) -> &Path {
        self.base
            .as_deref()
            .unwrap_or_else(|| crate::atomic::parent_dir(&self.file))
    }

    pub fn name(&self) -> &str {
        self.raw.metadata.name.as_str()
    }

    /// Resolved kubelet values (reservations with their arithmetic).
    pub fn kubelet(&self) -> resolve::Kubelet {
        resolve::kubelet(&self.raw)
    }
}

impl Blueprint {
    /// A blueprint taken as already checked (a lock file whose id matched;
    /// see [`identity::load_lock`]).
    pub(crate) fn trusted(raw: RawBlueprint, identity: identity::Identity, file: &Path) -> Self {
        Self {
            raw: Spec::checked(raw),
            identity,
            file: file.to_path_buf(),
            base: None,
        }
    }
}

/// A successful load: the blueprint and any warnings.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub blueprint: Blueprint,
    pub warnings: Vec<Diagnostic>,
}

/// A serde path as a YAML path (keys holding dots stay one key).
pub(crate) fn yaml_path_of(path: &serde_path_to_error::Path) -> YamlPath {
    use serde_path_to_error::Segment;
    let mut out = YamlPath::root();
    for seg in path.iter() {
        out = match seg {
            Segment::Seq { index } => out.index(*index),
            Segment::Map { key } => out.key(key.clone()),
            Segment::Enum { variant } => out.key(variant.clone()),
            Segment::Unknown => out,
        };
    }
    out
}

/// Reads and checks a blueprint file. Relative paths inside it (overlay,
/// certificates) are resolved against the file's folder and must exist.
/// A file that cannot be read at all (missing, a folder, a FIFO, too
/// large) gives one unlocated `unreadable` diagnostic.
pub fn load_file(path: &Path, matrix: &Matrix) -> Result<Loaded, Vec<Diagnostic>> {
    load_file_with(path, matrix, None)
}

/// [`load_file`], reusing the overlay file digests a build remembered
/// (see [`identity::digests`]).
pub fn load_file_with(
    path: &Path,
    matrix: &Matrix,
    digests: Option<&identity::FileDigests>,
) -> Result<Loaded, Vec<Diagnostic>> {
    // Bounded before it is read (one byte over the limit is enough to refuse it), and a
    // FIFO or a device is refused without blocking.
    let bytes = crate::input::read(path, source::MAX_BYTES as u64).map_err(|e| {
        let message = match e {
            crate::input::InputError::TooLarge { limit } => format!(
                "file is larger than {limit} bytes; a blueprint may be at most {limit} bytes"
            ),
            e => format!("cannot read the file: {e}"),
        };
        let mut c = Collector::new(path, None);
        c.error_pos("unreadable", &YamlPath::root(), None, message);
        c.finish()
    })?;
    load_bytes_with(
        &bytes,
        path,
        Some(crate::atomic::parent_dir(path)),
        matrix,
        digests,
    )
}

/// Checks blueprint text. `base_dir` resolves relative paths; `None` skips
/// the checks that they exist.
pub fn load_bytes(
    bytes: &[u8],
    file: &Path,
    base_dir: Option<&Path>,
    matrix: &Matrix,
) -> Result<Loaded, Vec<Diagnostic>> {
    load_bytes_with(bytes, file, base_dir, matrix, None)
}

/// [`load_bytes`], reusing the overlay file digests a build remembered.
pub fn load_bytes_with(
    bytes: &[u8],
    file: &Path,
    base_dir: Option<&Path>,
    matrix: &Matrix,
    digests: Option<&identity::FileDigests>,
) -> Result<Loaded, Vec<Diagnostic>> {
    let located = |e: source::SourceError, code: &str| {
        let mut c = Collector::new(file, None);
        c.error_pos(code, &e.path, e.pos, e.message);
        c.finish()
    };
    let text = source::decode(bytes).map_err(|e| located(e, "unreadable"))?;
    let mut doc = source::parse(text).map_err(|e| located(e, "syntax"))?;
    schema::drop_nulls(&mut doc.value);
    let mut out = Collector::new(file, Some(&doc.map));
    if !doc.value.is_object() {
        out.error(
            "wrong-type",
            &YamlPath::root(),
            "a blueprint is a YAML mapping (`apiVersion: …`, `kind: …`, …)",
        );
        return Err(out.finish());
    }
    schema::check(&doc.value, &mut out);
    if out.has_errors() {
        // Every problem at once: the rules also judge what the structural
        // errors leave intact (see [`partial`]).
        let faulty: Vec<YamlPath> = out
            .items
            .iter()
            .filter(|d| d.code != "missing-field")
            .map(|d| d.path.clone())
            .collect();
        let ctx = rules::Context { matrix, base_dir };
        partial::rule_findings(
            &doc.value,
            &faulty,
            |raw, c| rules::check(raw, &ctx, c),
            &mut out,
        );
        return Err(out.finish());
    }
    let mut raw: RawBlueprint = match serde_path_to_error::deserialize(&doc.value) {
        Ok(raw) => raw,
        Err(e) => {
            let path = yaml_path_of(e.path());
            out.error("invalid-value", &path, e.inner().to_string());
            return Err(out.finish());
        }
    };
    rules::check(&raw, &rules::Context { matrix, base_dir }, &mut out);
    if out.has_errors() {
        return Err(out.finish());
    }
    canonicalise(&mut raw, matrix);
    // Every check passed: from here on the model is the checked `Spec`, the
    // id included.
    let spec = Spec::checked(raw);
    // The id covers the overlay's content: reading it here also refuses,
    // at validation, what the layer could not carry.
    let identity = match identity::Identity::compute(&spec, matrix, base_dir, digests) {
        Ok(i) => i,
        Err(e) => {
            out.error(e.code, &e.path, e.message);
            return Err(out.finish());
        }
    };
    Ok(Loaded {
        blueprint: Blueprint {
            raw: spec,
            identity,
            file: file.to_path_buf(),
            base: base_dir
                .filter(|b| *b != crate::atomic::parent_dir(file))
                .map(Path::to_path_buf),
        },
        warnings: out.finish(),
    })
}

/// Spellings that mean the same thing become one, so they give one id: a
/// GPU model the matrix knows takes the matrix's spelling (`l40s` → `L40S`).
fn canonicalise(raw: &mut RawBlueprint, matrix: &Matrix) {
    if let Some(acc) = raw.accelerators.as_mut()
        && let Some(name) = matrix.spelling(acc.vendor, &acc.model)
        && let Ok(name) = name.parse()
    {
        acc.model = name;
    }
}

/// True when any diagnostic is an error (or a warning, under `strict`).
pub fn fails(diags: &[Diagnostic], strict: bool) -> bool {
    diags
        .iter()
        .any(|d| d.severity == Severity::Error || (strict && d.severity == Severity::Warning))
}
