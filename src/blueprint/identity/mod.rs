//! A blueprint's identity: its id, and the lock that carries it into the
//! image together with everything the id covers.
//!
//! The id is `sha256:` over the canonical JSON of the *lock document*:
//!
//! ```text
//! { "blueprint": <the canonical resolved blueprint>,
//!   "matrix":    "sha256:…"   the matrix entries it was validated with,
//!   "overlay":   "sha256:…" } its overlay tree (absent without one)
//! ```
//!
//! Canonical means: defaults applied, mapping keys sorted, and absent
//! optional fields, empty lists and empty mappings omitted — so adding an
//! optional field to a later schema, or reordering keys in the YAML, does
//! not change the id of a blueprint that means the same thing. Changing
//! what an overlay file holds, its mode or a link target does change it, as
//! does a different matrix row for the blueprint's CUDA or ROCm release,
//! GPU model or rules: the image would then be checked against something
//! else at boot.
//!
//! The image carries the lock (`etc/nodeimg/blueprint.lock.json`), the
//! matrix entries beside it (`blueprint.matrix.json`) and the id
//! (`blueprint.id`); [`lock`] loads them back as trusted input.

pub mod digests;
pub mod lock;
pub mod overlay;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::compat::Matrix;
use super::model::{RawBlueprint, Vendor};
use super::yaml_path::YamlPath;
use crate::fault::overrides::Catalog;
pub use digests::FileDigests;
pub use lock::{
    ID_FILE, LOCK_FILE, MATRIX_FILE, is_lock, load_lock, load_lock_beside, load_lock_file,
};
pub use overlay::{OverlayRecord, OverlayTree, RecordKind};

/// What identifies a checked blueprint; computed once, when it is loaded.
#[derive(Debug, Clone)]
pub struct Identity {
    id: String,
    /// The canonical resolved blueprint.
    blueprint: Value,
    /// The matrix entries the blueprint was validated with.
    matrix: Matrix,
    /// `matrix` as written beside the lock, and its digest.
    matrix_doc: Value,
    matrix_digest: String,
    overlay: Option<OverlayTree>,
}

/// Why an identity could not be computed, at the blueprint path it is about.
#[derive(Debug, Clone)]
pub struct IdentityError {
    pub code: &'static str,
    pub path: YamlPath,
    pub message: String,
}

impl Identity {
    /// The identity of a blueprint that passed its checks against `matrix`
    /// (a [`Spec`](super::Spec): only the loader computes one).
    /// With `base_dir` (the blueprint's folder) its overlay is read and
    /// hashed; without it (a blueprint read without its folder) the id
    /// covers no overlay. `digests` are overlay file digests a build
    /// remembered (see [`digests`]); the id is the same with or without them.
    pub fn compute(
        bp: &super::Spec,
        matrix: &Matrix,
        base_dir: Option<&Path>,
        digests: Option<&FileDigests>,
    ) -> Result<Self, IdentityError> {
        let blueprint = canonical_value(bp).map_err(|e| IdentityError {
            code: "identity",
            path: YamlPath::root(),
            message: format!("cannot be written as JSON: {e}"),
        })?;
        let overlay = match (&bp.files, base_dir) {
            (Some(files), Some(base)) => {
                let modes = files
                    .modes
                    .iter()
                    .map(|m| (m.path.in_layer().to_string(), m.mode.bits()));
                let tree = OverlayTree::read(&base.join(files.overlay.as_str()), modes, digests)
                    .map_err(|message| IdentityError {
                        code: "overlay",
                        path: YamlPath::parse("files.overlay"),
                        message,
                    })?;
                Some(tree)
            }
            _ => None,
        };
        Self::assemble(blueprint, in_use(bp, matrix), overlay)
    }

    /// Puts the parts together and hashes them.
    fn assemble(
        blueprint: Value,
        matrix: Matrix,
        overlay: Option<OverlayTree>,
    ) -> Result<Self, IdentityError> {
        let matrix_doc = matrix_doc(&matrix).map_err(|e| IdentityError {
            code: "identity",
            path: YamlPath::root(),
            message: format!("the compatibility matrix cannot be written as JSON: {e}"),
        })?;
        let matrix_digest = digest(&crate::canonical_json::value_to_vec(&matrix_doc));
        let mut id = Self {
            id: String::new(),
            blueprint,
            matrix,
            matrix_doc,
            matrix_digest,
            overlay,
        };
        id.id = digest(&crate::canonical_json::value_to_vec(&id.lock_doc()));
        Ok(id)
    }

    /// `sha256:…` of the canonical lock document.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The matrix entries the blueprint was validated with: its CUDA
    /// release's row, its ROCm release's row, its GPU model, and the rules
    /// that apply to it. `verify` checks against these.
    pub fn matrix(&self) -> &Matrix {
        &self.matrix
    }

    /// The overlay tree, when the blueprint has one and it was read.
    pub fn overlay(&self) -> Option<&OverlayTree> {
        self.overlay.as_ref()
    }

    /// The canonical resolved blueprint as JSON.
    pub fn canonical(&self) -> &Value {
        &self.blueprint
    }

    fn lock_doc(&self) -> Value {
        let mut doc = serde_json::Map::new();
        doc.insert("blueprint".into(), self.blueprint.clone());
        doc.insert("matrix".into(), Value::String(self.matrix_digest.clone()));
        if let Some(o) = &self.overlay {
            doc.insert("overlay".into(), Value::String(o.digest().to_string()));
        }
        Value::Object(doc)
    }

    /// The lock file's text: the lock document, keys sorted, indented.
    pub fn lock_text(&self) -> String {
        crate::canonical_json::value_to_pretty(&self.lock_doc())
    }

    /// The text of the matrix file beside the lock: a matrix file of its
    /// own (`--matrix` reads it too) holding only the entries in use.
    pub fn matrix_text(&self) -> String {
        crate::canonical_json::value_to_pretty(&self.matrix_doc)
    }

    /// The canonical form as `path → leaf` (`kubernetes.kubelet.maxPods`,
    /// `network.nics[0].mtu`, `kubernetes.labels["a/b"]`), sorted by path.
    /// Lists of scalars stay whole; lists holding mappings are indexed.
    /// This is what `explain` prints and `diff` compares.
    pub fn leaves(&self) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        flatten("", &self.blueprint, &mut out);
        out
    }
}

/// The entries of `m` that validating `bp` consulted (see
/// `rules::compat`): the row of its CUDA release (NVIDIA) or ROCm release
/// (AMD), its GPU model, the rules that apply to it, and its NIC models.
fn in_use(bp: &RawBlueprint, m: &Matrix) -> Matrix {
    let acc = bp.accelerators.as_ref();
    let cuda = acc
        .filter(|a| a.vendor == Vendor::Nvidia)
        .and_then(|a| a.cuda.as_ref())
        .and_then(|c| m.cuda_driver(c));
    let rocm = acc
        .filter(|a| a.vendor == Vendor::Amd)
        .and_then(|a| a.rocm.as_ref())
        .and_then(|r| m.rocm_release(r));
    let model = acc.and_then(|a| m.model(a.vendor, &a.model));
    let mut nics: Vec<_> = Vec::new();
    for nic in bp.network.nics.iter().filter_map(|n| m.nic(&n.model)) {
        if !nics
            .iter()
            .any(|have: &crate::blueprint::compat::NicModel| have.model == nic.model)
        {
            nics.push(nic.clone());
        }
    }
    Matrix::of(
        cuda.into_iter().cloned().collect(),
        rocm.into_iter().cloned().collect(),
        model.into_iter().cloned().collect(),
        super::rules::applicable_rules(bp, m)
            .into_iter()
            .cloned()
            .collect(),
        nics,
        // The overrides of the blueprint's GPU vendor's catalogs: verify applies them on
        // the node.
        m.faults
            .iter()
            .filter(|f| match acc.map(|a| a.vendor) {
                Some(Vendor::Nvidia) => {
                    matches!(f.catalog, Catalog::NvidiaXid | Catalog::NvidiaSxid)
                }
                Some(Vendor::Amd) => f.catalog == Catalog::AmdRas,
                None => false,
            })
            .cloned()
            .collect(),
    )
}

/// A matrix as a matrix file's JSON. Nothing is pruned: every field reads
/// back as it was (a rule's empty `when` is still required).
fn matrix_doc(m: &Matrix) -> Result<Value, serde_json::Error> {
    serde_json::to_value(m)
}

/// The canonical resolved blueprint as a JSON value.
fn canonical_value(bp: &RawBlueprint) -> Result<Value, serde_json::Error> {
    let mut v = serde_json::to_value(bp)?;
    prune(&mut v);
    Ok(v)
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    hex_digest(Sha256::digest(bytes).as_slice())
}

pub(crate) fn hex_digest(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(7 + 2 * bytes.len());
    hex.push_str("sha256:");
    for b in bytes {
        hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(b & 0xf)]));
    }
    hex
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let plain = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                let p = match (prefix.is_empty(), plain) {
                    (true, true) => k.clone(),
                    (false, true) => format!("{prefix}.{k}"),
                    (_, false) => format!("{prefix}[{k:?}]"),
                };
                flatten(&p, x, out);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object()) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), x, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// Drops nulls, empty lists and empty mappings, bottom-up.
fn prune(v: &mut Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(a) => {
            for x in a.iter_mut() {
                prune(x);
            }
            !a.is_empty()
        }
        Value::Object(o) => {
            o.retain(|_, x| prune(x));
            !o.is_empty()
        }
        _ => true,
    }
}
