//! The record as a file: JSON, or YAML for `.yaml`/`.yml`, written in the record's field
//! order, and read back (either form) refusing another schema, with the path of a field
//! that does not fit.

use super::SCHEMA;
use super::node::AcceptanceRecord;
use crate::stdio::Output;
use serde::Deserialize;
use std::io::Write;
use std::path::Path;

/// Most bytes of a record file read back (a record is a few hundred KiB at most).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

impl AcceptanceRecord {
    /// YAML for `.yaml`/`.yml` files, JSON otherwise.
    pub fn render_for(&self, path: &Path) -> Result<String, String> {
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        if is_yaml(path) {
            let tree: yaml::Tree = serde_json::from_str(&json).map_err(|e| e.to_string())?;
            Ok(tree.to_yaml())
        } else {
            Ok(json + "\n")
        }
    }

    /// Writes the record to `output`: a file (atomically; YAML for `.yaml`/`.yml`, JSON
    /// otherwise), or JSON on `stdout` for `-`.
    pub fn write_to(&self, output: &Output, stdout: &mut dyn Write) -> Result<(), String> {
        let text = self.render_for(output.path().unwrap_or(Path::new("-")))?;
        output
            .write(text.as_bytes(), stdout)
            .map_err(|e| e.to_string())
    }

    /// The record file at `path` (JSON, or YAML for `.yaml`/`.yml`, at most 16 MiB):
    /// `None` when there is no such file, an error naming the file
    /// when it cannot be read or is not a record.
    pub fn read_file(path: &Path) -> Result<Option<Self>, String> {
        let text = match crate::input::read_text(path, MAX_FILE_BYTES) {
            Ok(text) => text,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        AcceptanceRecord::parse(&text, path)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads a record (JSON, or YAML for `.yaml`/`.yml`), refusing another schema.
    pub fn parse(text: &str, path: &Path) -> Result<Self, String> {
        let value: serde_json::Value = if is_yaml(path) {
            crate::blueprint::source::parse(text)
                .map_err(|e| match e.pos {
                    Some(p) => format!("line {}: {}", p.line, e.message),
                    None => e.message,
                })?
                .value
        } else {
            serde_json::from_str(text).map_err(|e| format!("line {}: {e}", e.line()))?
        };
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA) => {}
            Some(other) => return Err(format!("schema `{other}`: this version reads `{SCHEMA}`")),
            None => return Err("no `schema`: not an acceptance record".to_owned()),
        }
        let mut track = serde_path_to_error::Track::new();
        let de = serde_path_to_error::Deserializer::new(value, &mut track);
        AcceptanceRecord::deserialize(de).map_err(|e| format!("{}: {}", track.path(), e))
    }
}

fn is_yaml(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Block YAML in the record's field order (a `serde_json::Value` would sort the keys).
mod yaml {
    use crate::yaml_text::yaml_string;
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    pub enum Tree {
        Scalar(String),
        Seq(Vec<Tree>),
        Map(Vec<(String, Tree)>),
    }

    impl<'de> Deserialize<'de> for Tree {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Tree;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_unit<E>(self) -> Result<Tree, E> {
                    Ok(Tree::Scalar("null".into()))
                }
                fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
                    Ok(Tree::Scalar(v.to_string()))
                }
                fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
                    Ok(Tree::Scalar(v.to_string()))
                }
                fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
                    Ok(Tree::Scalar(v.to_string()))
                }
                fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
                    Ok(Tree::Scalar(
                        serde_json::Number::from_f64(v).map_or("null".into(), |n| n.to_string()),
                    ))
                }
                fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
                    Ok(Tree::Scalar(yaml_string(v)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                    let mut items = Vec::new();
                    while let Some(x) = a.next_element()? {
                        items.push(x);
                    }
                    Ok(Tree::Seq(items))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                    let mut items = Vec::new();
                    while let Some((k, v)) = a.next_entry::<String, Tree>()? {
                        items.push((k, v));
                    }
                    Ok(Tree::Map(items))
                }
            }
            d.deserialize_any(V)
        }
    }

    impl Tree {
        pub fn to_yaml(&self) -> String {
            let mut out = String::new();
            self.block(0, &mut out);
            out
        }

        fn inline(&self) -> Option<String> {
            match self {
                Tree::Scalar(s) => Some(s.clone()),
                Tree::Seq(v) if v.is_empty() => Some("[]".into()),
                Tree::Map(m) if m.is_empty() => Some("{}".into()),
                _ => None,
            }
        }

        fn block(&self, indent: usize, out: &mut String) {
            let pad = " ".repeat(indent);
            match self {
                Tree::Map(items) => {
                    for (k, v) in items {
                        match v.inline() {
                            Some(s) => out.push_str(&format!("{pad}{}: {s}\n", yaml_string(k))),
                            None => {
                                out.push_str(&format!("{pad}{}:\n", yaml_string(k)));
                                v.block(indent + 2, out);
                            }
                        }
                    }
                }
                Tree::Seq(items) => {
                    for v in items {
                        match v.inline() {
                            Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                            None => {
                                let mut inner = String::new();
                                v.block(indent + 2, &mut inner);
                                out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                            }
                        }
                    }
                }
                Tree::Scalar(s) => out.push_str(&format!("{pad}{s}\n")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_keeps_the_field_order_and_reads_back() {
        let json = r#"{"b": {"x": [1, {"k": "v: w"}, []], "a": {}}, "a": "0000:13:00.0"}"#;
        let tree: yaml::Tree = serde_json::from_str(json).unwrap();
        let text = tree.to_yaml();
        assert_eq!(
            text,
            "b:\n  x:\n    - 1\n    - k: \"v: w\"\n    - []\n  a: {}\na: \"0000:13:00.0\"\n"
        );
        let back = crate::blueprint::source::parse(&text).unwrap().value;
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(json).unwrap()
        );
    }

    #[test]
    fn a_record_file_is_read_once_missing_is_none_and_damage_names_the_file() {
        let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/verify");
        for name in ["record.yaml", "record.json"] {
            let record = AcceptanceRecord::read_file(&golden.join(name))
                .unwrap()
                .unwrap();
            assert_eq!(record.schema, super::SCHEMA, "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            AcceptanceRecord::read_file(&dir.path().join("none.yaml")),
            Ok(None)
        ));
        let damaged = dir.path().join("damaged.yaml");
        std::fs::write(&damaged, "schema: other/v9\n").unwrap();
        let why = AcceptanceRecord::read_file(&damaged).unwrap_err();
        assert!(
            why.starts_with(&damaged.display().to_string()) && why.contains("other/v9"),
            "{why}"
        );
        // A file past the limit is refused, not read whole.
        let huge = dir.path().join("huge.json");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        assert!(
            AcceptanceRecord::read_file(&huge)
                .unwrap_err()
                .contains("larger than 16 MiB")
        );
    }
}
