//! YAML text as nodeimg writes it, wherever it writes YAML (rendered files, the
//! acceptance record, rollout manifests): a string is a plain scalar only where no YAML
//! 1.1 reader (Go's yaml.v2, which kubelet and most Kubernetes tooling use) or YAML 1.2
//! reader could take it for anything else, and double-quoted with JSON escapes otherwise;
//! a value in block style, one `key: value` or `- item` per line. A leaf: render's
//! template filters and verify's record writer both use it.

/// Words YAML 1.1 readers (Go's yaml.v2, which kubelet and most Kubernetes
/// tooling use) take for booleans or null when unquoted.
const YAML11_SPECIAL: &[&str] = &[
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
];

/// A YAML scalar for a string: plain when no YAML 1.1 or 1.2 reader could
/// take it for anything but that string, double-quoted (JSON escapes) otherwise.
pub fn yaml_string(s: &str) -> String {
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'))
        && !YAML11_SPECIAL.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("strings encode")
    }
}

/// A scalar inline: strings through [`yaml_string`], numbers, booleans and null as JSON
/// writes them.
pub fn yaml_inline(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => yaml_string(s),
        other => other.to_string(),
    }
}

/// Block-style YAML for any value, indented by `indent` spaces, one
/// `key: value` or `- item` per line. Keys and strings go through
/// [`yaml_string`]; empty collections are written `{}` / `[]`.
pub fn yaml_block_text(v: &serde_json::Value, indent: usize) -> String {
    use serde_json::Value as J;
    let pad = " ".repeat(indent);
    let mut out = String::new();
    match v {
        J::Object(o) if !o.is_empty() => {
            for (k, x) in o {
                match x {
                    J::Object(m) if !m.is_empty() => {
                        out.push_str(&format!(
                            "{pad}{}:\n{}",
                            yaml_string(k),
                            yaml_block_text(x, indent + 2)
                        ));
                    }
                    J::Array(a) if !a.is_empty() => {
                        out.push_str(&format!(
                            "{pad}{}:\n{}",
                            yaml_string(k),
                            yaml_block_text(x, indent + 2)
                        ));
                    }
                    _ => out.push_str(&format!(
                        "{pad}{}: {}\n",
                        yaml_string(k),
                        yaml_inline_empty(x)
                    )),
                }
            }
        }
        J::Array(a) if !a.is_empty() => {
            for x in a {
                match x {
                    J::Object(m) if !m.is_empty() => {
                        let inner = yaml_block_text(x, indent + 2);
                        out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                    }
                    J::Array(b) if !b.is_empty() => {
                        out.push_str(&format!("{pad}-\n{}", yaml_block_text(x, indent + 2)));
                    }
                    _ => out.push_str(&format!("{pad}- {}\n", yaml_inline_empty(x))),
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", yaml_inline_empty(other))),
    }
    out
}

fn yaml_inline_empty(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(_) => "{}".into(),
        serde_json::Value::Array(_) => "[]".into(),
        other => yaml_inline(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_blocks_round_trip() {
        let v: serde_json::Value = serde_json::json!({
            "a": {"b": [1, "x\ny", {"c": "yes", "d": []}], "e": {}},
            "k#": "v]",
        });
        let text = yaml_block_text(&v, 0);
        let back: serde_json::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(back, v, "{text}");
    }
}
