//! Dotted TOML key paths (`plugins."io.containerd.grpc.v1.cri".enable_cdi`),
//! the keys of `runtime.containerd.extraConfig`.
//!
//! Parsed once, with TOML's own key grammar (toml_edit), into the list of
//! table names it walks: bare keys, basic and literal quoted keys with
//! their escapes, blanks around the dots. Later stages take the parts and
//! never split text again.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone)]
pub struct TomlKeyPath {
    text: String,
    parts: Vec<String>,
}

impl TomlKeyPath {
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The key names, outermost first; never empty.
    pub fn parts(&self) -> &[String] {
        &self.parts
    }

    /// The tables walked and the key set in the last one.
    pub fn split_last(&self) -> (&String, &[String]) {
        self.parts
            .split_last()
            .expect("a key path has at least one part by construction")
    }

    /// True when `prefix` names this key or a table that holds it.
    pub fn starts_with(&self, prefix: &[&str]) -> bool {
        prefix.len() <= self.parts.len() && self.parts.iter().zip(prefix).all(|(a, b)| a == b)
    }

    /// The path in TOML's canonical spelling: bare keys where TOML allows
    /// them, basic-quoted otherwise.
    pub fn canonical(&self) -> String {
        self.parts
            .iter()
            .map(|p| toml_edit::Key::new(p.as_str()).display_repr().into_owned())
            .collect::<Vec<_>>()
            .join(".")
    }
}

impl FromStr for TomlKeyPath {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let keys = toml_edit::Key::parse(s).map_err(|e| {
            let why = e.message().trim().trim_end_matches('.');
            format!(
                "`{s}` is not a TOML key path ({why}); quote plugin ids: plugins.\"io.containerd.grpc.v1.cri\".key"
            )
        })?;
        if keys.is_empty() {
            return Err(format!("`{s}` is not a TOML key path"));
        }
        Ok(Self {
            text: s.to_string(),
            parts: keys.iter().map(|k| k.get().to_string()).collect(),
        })
    }
}

impl fmt::Display for TomlKeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

// Two spellings of one path are one key (`a."b"` is `a.b`).
impl PartialEq for TomlKeyPath {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
    }
}

impl Eq for TomlKeyPath {}

impl PartialOrd for TomlKeyPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TomlKeyPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts.cmp(&other.parts)
    }
}

text_value!(
    TomlKeyPath,
    "toml-key-path",
    "A dotted TOML key path; quote parts holding dots: plugins.\"io.containerd.grpc.v1.cri\".max_concurrent_downloads.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::TomlKeyPath;

    fn parts(s: &str) -> Vec<String> {
        s.parse::<TomlKeyPath>().unwrap().parts().to_vec()
    }

    #[test]
    fn toml_key_grammar() {
        assert_eq!(parts("a.\"b.c\".d"), ["a", "b.c", "d"]);
        assert_eq!(parts("a.'b.c'.d"), ["a", "b.c", "d"]);
        assert_eq!(parts("a . b"), ["a", "b"]);
        assert_eq!(parts("a.\"b\\\"c\""), ["a", "b\"c"]);
        assert_eq!(parts("a.\"\\u0041\""), ["a", "A"]);
        for bad in ["", "a..b", "a.", ".a", "a.\"b", "a b", "a.b]"] {
            assert!(bad.parse::<TomlKeyPath>().is_err(), "{bad:?}");
        }
        let a: TomlKeyPath = "plugins.\"x\".y".parse().unwrap();
        let b: TomlKeyPath = "plugins.x.y".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.canonical(), "plugins.x.y");
        let c: TomlKeyPath = "plugins.'io.containerd.grpc.v1.cri'.x".parse().unwrap();
        assert_eq!(c.canonical(), "plugins.\"io.containerd.grpc.v1.cri\".x");
        assert!(c.starts_with(&["plugins", "io.containerd.grpc.v1.cri"]));
    }
}
