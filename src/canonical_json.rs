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

/// A JSON object written straight into a buffer, member by member, in the
/// compact canonical encoding: for documents too large to build as values
/// first (an SBOM names hundreds of packages and thousands of
/// relationships, each of which would be a map of owned strings). The
/// caller gives the members in the canonical order of their keys (byte
/// order, as [`value_to_vec`] sorts them); a debug build checks it.
pub(crate) struct Object<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    #[cfg(debug_assertions)]
    last: Option<&'static str>,
}

impl<'a> Object<'a> {
    /// Opens the object.
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Self {
            out,
            first: true,
            #[cfg(debug_assertions)]
            last: None,
        }
    }

    /// Writes the member `key`'s name; its value goes next into the
    /// returned buffer, written by the caller as canonical JSON.
    pub(crate) fn key(&mut self, key: &'static str) -> &mut Vec<u8> {
        #[cfg(debug_assertions)]
        {
            if let Some(last) = self.last {
                assert!(
                    last.as_bytes() < key.as_bytes(),
                    "member `{key}` written after `{last}`: not canonical order"
                );
            }
            self.last = Some(key);
        }
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        string(key, self.out);
        self.out.push(b':');
        self.out
    }

    /// A member whose value is a string.
    pub(crate) fn str(&mut self, key: &'static str, value: &str) -> &mut Self {
        string(value, self.key(key));
        self
    }

    /// A member whose value is `true` or `false`.
    pub(crate) fn bool(&mut self, key: &'static str, value: bool) -> &mut Self {
        let v: &[u8] = if value { b"true" } else { b"false" };
        self.key(key).extend_from_slice(v);
        self
    }

    /// A member whose value is an array of two-member objects, one per
    /// pair: `[{k1: a, k2: b}, …]` (`k1` before `k2` in byte order).
    pub(crate) fn pairs(
        &mut self,
        key: &'static str,
        (k1, k2): (&'static str, &'static str),
        pairs: &[(&str, &str)],
    ) -> &mut Self {
        let mut list = Array::new(self.key(key));
        for (a, b) in pairs {
            let mut o = list.object();
            o.str(k1, a).str(k2, b);
            o.end();
        }
        list.end();
        self
    }

    /// Closes the object.
    pub(crate) fn end(self) {
        self.out.push(b'}');
    }
}

/// A JSON array written straight into a buffer, item by item (see
/// [`Object`]).
pub(crate) struct Array<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Array<'a> {
    /// Opens the array.
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'[');
        Self { out, first: true }
    }

    /// Starts the next item: it goes into the returned buffer, written by
    /// the caller as canonical JSON.
    pub(crate) fn item(&mut self) -> &mut Vec<u8> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out
    }

    /// An item that is an object, opened.
    pub(crate) fn object(&mut self) -> Object<'_> {
        Object::new(self.item())
    }

    /// An item that is a string.
    pub(crate) fn str(&mut self, value: &str) {
        string(value, self.item());
    }

    /// Closes the array.
    pub(crate) fn end(self) {
        self.out.push(b']');
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
    fn objects_written_member_by_member_are_the_canonical_encoding() {
        let mut out = Vec::new();
        let mut doc = Object::new(&mut out);
        doc.str("A", "x\"y\n").bool("b", true);
        let mut list = Array::new(doc.key("c"));
        list.str("é");
        let mut inner = list.object();
        inner.bool("k", false).str("z", "");
        inner.end();
        Array::new(list.item()).end();
        Object::new(list.item()).end();
        list.end();
        doc.key("d").extend_from_slice(b"1");
        doc.end();
        let v = serde_json::json!({"d": 1, "c": ["é", {"z": "", "k": false}, [], {}], "b": true, "A": "x\"y\n"});
        assert_eq!(
            String::from_utf8(out).unwrap(),
            String::from_utf8(value_to_vec(&v)).unwrap()
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not canonical order")]
    fn a_member_out_of_key_order_is_caught() {
        let mut out = Vec::new();
        let mut doc = Object::new(&mut out);
        doc.str("name", "a").str("SPDXID", "b");
    }

    #[test]
    fn pretty_text_parses_back_to_the_value() {
        let v = serde_json::json!({"z": {"b": [1, {"y": null, "x": false}], "a": {}}, "a": []});
        let back: Value = serde_json::from_str(&value_to_pretty(&v)).unwrap();
        assert_eq!(back, v);
    }
}
