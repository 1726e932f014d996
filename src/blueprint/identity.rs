//! A blueprint's id: `sha256:` over its canonical resolved form, and the
//! lock file that carries that form into the image.
//!
//! Canonical means: defaults applied, mapping keys sorted, and absent
//! optional fields, empty lists and empty mappings omitted — so that adding
//! an optional field to a later schema, or reordering keys in the YAML, does
//! not change the id of a blueprint that means the same thing.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::diagnostic::{Collector, Diagnostic};
use super::model::RawBlueprint;
use super::yaml_path::YamlPath;
use super::{Blueprint, schema, source};

/// The canonical JSON text of a blueprint.
pub fn canonical_json(bp: &RawBlueprint) -> String {
    let mut v = serde_json::to_value(bp).expect("a blueprint always serialises");
    prune(&mut v);
    let mut out = String::new();
    write(&v, &mut out);
    out
}

/// File name of the lock nodeimg renders into the image.
pub const LOCK_FILE: &str = "blueprint.lock.json";

/// `path` names a lock file (`…/blueprint.lock.json`).
pub fn is_lock(path: &std::path::Path) -> bool {
    path.file_name().is_some_and(|n| n == LOCK_FILE)
}

/// Loads a lock file (`etc/nodeimg/blueprint.lock.json`) as trusted input:
/// it was validated when the image was built — possibly with a site
/// matrix the node does not have — so it is only parsed, checked against
/// the schema and deserialised; the compatibility rules do not run again.
/// When `expected_id` is given (`etc/nodeimg/blueprint.id`), the lock must
/// hash to it.
pub fn load_lock(
    bytes: &[u8],
    file: &std::path::Path,
    expected_id: Option<&str>,
) -> Result<Blueprint, Vec<Diagnostic>> {
    let located = |e: source::SourceError, code: &str| {
        let mut c = Collector::new(file, None);
        c.error_pos(code, &e.path, e.pos, e.message);
        c.finish()
    };
    let text = source::decode(bytes).map_err(|e| located(e, "unreadable"))?;
    let mut doc = source::parse(text).map_err(|e| located(e, "syntax"))?;
    schema::drop_nulls(&mut doc.value);
    let mut out = Collector::new(file, Some(&doc.map));
    schema::check(&doc.value, &mut out);
    if out.has_errors() {
        return Err(out.finish());
    }
    let raw: RawBlueprint = match serde_path_to_error::deserialize(&doc.value) {
        Ok(raw) => raw,
        Err(e) => {
            let path = YamlPath::parse(&e.path().to_string());
            out.error("invalid-value", &path, e.inner().to_string());
            return Err(out.finish());
        }
    };
    let have = id(&raw);
    if let Some(want) = expected_id
        && want.trim() != have
    {
        out.error(
            "lock-id",
            &YamlPath::root(),
            format!(
                "the lock hashes to {have}, not to the image's blueprint id {}; the image was altered",
                want.trim()
            ),
        );
        return Err(out.finish());
    }
    Ok(Blueprint::trusted(raw, have, file))
}

/// `sha256:<hex>` of the canonical JSON.
pub fn id(bp: &RawBlueprint) -> String {
    let digest = Sha256::digest(canonical_json(bp).as_bytes());
    let mut hex = String::with_capacity(71);
    hex.push_str("sha256:");
    for b in digest.iter() {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// The canonical form as `path → leaf` (`kubernetes.kubelet.maxPods`,
/// `network.nics[0].mtu`, `kubernetes.labels["a/b"]`), sorted by path.
/// Lists of scalars stay whole; lists holding mappings are indexed. This is
/// what `explain` prints and `diff` compares.
pub fn leaves(bp: &RawBlueprint) -> std::collections::BTreeMap<String, Value> {
    let mut v = serde_json::to_value(bp).expect("a blueprint always serialises");
    prune(&mut v);
    let mut out = std::collections::BTreeMap::new();
    flatten("", &v, &mut out);
    out
}

fn flatten(prefix: &str, v: &Value, out: &mut std::collections::BTreeMap<String, Value>) {
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

/// Writes JSON with keys in byte order and no whitespace.
fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write(&o[*k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
