//! Rendered files read back as values, the way their consumers read them: YAML with the
//! blueprint's own strict reader ([`crate::blueprint::source`]: YAML 1.2 core schema,
//! duplicate keys and unknown tags refused) and TOML with `toml_edit`, the crate that
//! writes the containerd `extraConfig` merge: one reader per format in the binary. The
//! self-check and the taint cross-check both read the rendered tree through these.

use serde_json::Value;

use crate::blueprint::source;

/// What the YAML reader calls a rendered file in its errors.
const RENDERED: source::Kind = source::Kind {
    noun: "a rendered file",
    starts_with: None,
};

/// A rendered YAML file as a value, or why it is not YAML.
pub(super) fn yaml(bytes: &[u8]) -> Result<Value, String> {
    source::read(bytes, RENDERED)
        .map(|doc| doc.value)
        .map_err(|e| format!("not YAML: {e}"))
}

/// A rendered TOML file as a value (tables become objects), or why it is not TOML.
pub(super) fn toml(text: &str) -> Result<Value, String> {
    toml_edit::de::from_str(text).map_err(|e| format!("not TOML: {e}"))
}
