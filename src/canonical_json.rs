//! JSON text that depends only on the value: object keys sorted by their
//! UTF-8 bytes at every level, compact (for hashing) or indented (for files
//! people read, such as the lock).
//!
//! Everything nodeimg hashes goes through here: the blueprint id and the
//! lock, the image config, manifest and index. serde_json's own map sorts
//! its keys only while its `preserve_order` feature is off, and a
//! dependency may switch that on for the whole build (feature
//! unification); the OCI types keep annotations in `HashMap`s whose order
//! changes from run to run. Sorting here defends the digests against both.

use serde::Serialize;
use serde_json::Value;

/// The compact canonical encoding of `value` (no insignificant whitespace).
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    Ok(value_to_vec(&serde_json::to_value(value)?))
}

/// The compact canonical encoding of a JSON value.
pub fn value_to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write(v, None, &mut out);
    out
}

/// The canonical encoding indented by two spaces, as `serde_json`'s pretty
/// printer lays it out, with a final newline.
pub fn value_to_pretty(v: &Value) -> String {
    let mut out = Vec::new();
    write(v, Some(0), &mut out);
    out.push(b'\n');
    // Only JSON text and the UTF-8 of strings and keys were written.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn newline(indent: Option<usize>, out: &mut Vec<u8>) {
    if let Some(n) = indent {
        out.push(b'\n');
        out.resize(out.len() + 2 * n, b' ');
    }
}

/// Writes `v`; `indent` is the current depth when pretty-printing.
fn write(v: &Value, indent: Option<usize>, out: &mut Vec<u8>) {
    let inner = indent.map(|n| n + 1);
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(inner, out);
                write(item, inner, out);
            }
            newline(indent, out);
            out.push(b']');
        }
        Value::Object(map) if !map.is_empty() => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(inner, out);
                string(k, out);
                out.push(b':');
                if indent.is_some() {
                    out.push(b' ');
                }
                write(&map[k], inner, out);
            }
            newline(indent, out);
            out.push(b'}');
        }
        Value::Array(_) => out.extend_from_slice(b"[]"),
        Value::Object(_) => out.extend_from_slice(b"{}"),
        Value::String(s) => string(s, out),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
    }
}

/// A JSON string literal, escaped as serde_json escapes it (`"`, `\`,
/// control characters; everything else verbatim).
pub(crate) fn string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    escaped(s, out);
    out.push(b'"');
}

/// `s` escaped as inside a JSON string literal, without the quotes: for a
/// literal written in parts (`"file:/` and a path).
pub(crate) fn escaped(s: &str, out: &mut Vec<u8>) {
    // Runs of bytes that need no escape (everything but control characters,
    // `"` and `\`; UTF-8 sequences never contain those bytes) are copied
    // whole: an SBOM writes tens of thousands of paths and digests.
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b if b < 0x20 => {
                out.extend_from_slice(&bytes[start..i]);
                out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(escape);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn keys_are_sorted_at_every_level() {
        let mut inner = HashMap::new();
        for k in ["zeta", "alpha", "mid", "Beta", "é"] {
            inner.insert(k.to_string(), format!("v\"{k}\n"));
        }
        let v = serde_json::json!({"b": [inner, 1, null, true], "a": 2.5});
        let text = String::from_utf8(to_vec(&v).unwrap()).unwrap();
        assert_eq!(
            text,
            r#"{"a":2.5,"b":[{"Beta":"v\"Beta\n","alpha":"v\"alpha\n","mid":"v\"mid\n","zeta":"v\"zeta\n","é":"v\"é\n"},1,null,true]}"#
        );
    }

    #[test]
    fn strings_and_numbers_are_written_as_serde_json_writes_them() {
        // Keys already in order, so the comparison holds with or without
        // serde_json's `preserve_order`.
        let v = serde_json::json!({
            "e": [{}, [], ""],
            "n": [0, -3, 18446744073709551615u64, 1.5, -0.25, 1e300],
            "s": "tab\there \u{1} \u{7f} \\ \" \u{8}\u{c}\r é 🚀",
        });
        assert_eq!(
            String::from_utf8(value_to_vec(&v)).unwrap(),
            serde_json::to_string(&v).unwrap(),
            "compact"
        );
        assert_eq!(
            value_to_pretty(&v),
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap()),
            "pretty"
        );
    }

    #[test]
    fn pretty_text_parses_back_to_the_value() {
        let v = serde_json::json!({"z": {"b": [1, {"y": null, "x": false}], "a": {}}, "a": []});
        let back: Value = serde_json::from_str(&value_to_pretty(&v)).unwrap();
        assert_eq!(back, v);
    }
}
