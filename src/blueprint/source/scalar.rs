//! What a YAML scalar means under the YAML 1.2 core schema, as JSON: null, booleans,
//! integers (decimal, `0x`, `0o`) and floats only in their core spellings (so `yes` and
//! `on` stay text), quoted scalars always text, the core tags honoured and any other tag
//! refused, on a scalar or a collection. A number JSON cannot hold (`.inf`, `.nan`,
//! `1e400`, integers past 64 bits) is an error, not text.

use saphyr_parser::ScalarStyle;
use serde_json::{Number, Value};

/// Accepts the core schema's own tag for a list or a mapping; refuses any other tag on a
/// collection, as on a scalar (`!!python/object/apply:os.system [...]` is not data).
pub(super) fn collection_tag(tag: &str, is_seq: bool) -> Result<(), String> {
    let (own, what) = if is_seq {
        ("seq", "a list")
    } else {
        ("map", "a mapping")
    };
    let core = tag
        .strip_prefix("tag:yaml.org,2002:")
        .or_else(|| tag.strip_prefix("!!"));
    if tag == "!" || core == Some(own) {
        Ok(())
    } else {
        Err(format!("unsupported YAML tag `{tag}` on {what}"))
    }
}

/// Resolves one scalar per the YAML 1.2 core schema.
pub(super) fn scalar(text: &str, style: ScalarStyle, tag: Option<&str>) -> Result<Value, String> {
    match tag {
        Some("tag:yaml.org,2002:str") | Some("!!str") => return Ok(Value::String(text.into())),
        Some("tag:yaml.org,2002:int") | Some("!!int") => {
            return int(text)
                .ok_or_else(|| format!("`{text}` is tagged !!int but is not an integer"));
        }
        Some("tag:yaml.org,2002:float") | Some("!!float") => {
            return float(text)?
                .ok_or_else(|| format!("`{text}` is tagged !!float but is not a number"));
        }
        Some("tag:yaml.org,2002:bool") | Some("!!bool") => {
            return boolean(text)
                .ok_or_else(|| format!("`{text}` is tagged !!bool but is not true or false"));
        }
        Some("tag:yaml.org,2002:null") | Some("!!null") => return Ok(Value::Null),
        Some("!") | None => {}
        Some(other) => return Err(format!("unsupported YAML tag `{other}`")),
    }
    if style != ScalarStyle::Plain || tag == Some("!") {
        return Ok(Value::String(text.into()));
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if let Some(b) = boolean(text) {
        return Ok(b);
    }
    if let Some(i) = int(text) {
        return Ok(i);
    }
    if is_integer_literal(text) {
        return Err(format!(
            "`{text}` is an integer outside the 64-bit range; quote it if it is text"
        ));
    }
    if let Some(f) = float(text)? {
        return Ok(f);
    }
    Ok(Value::String(text.into()))
}

/// Decimal digits with an optional sign: what the core schema reads as an integer.
fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn boolean(text: &str) -> Option<Value> {
    match text {
        "true" | "True" | "TRUE" => Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => Some(Value::Bool(false)),
        _ => None,
    }
}

fn int(text: &str) -> Option<Value> {
    let (neg, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let parsed = if let Some(h) = digits.strip_prefix("0x") {
        (!neg && !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| i128::from_str_radix(h, 16).ok())
            .flatten()
    } else if let Some(o) = digits.strip_prefix("0o") {
        (!neg && !o.is_empty() && o.bytes().all(|b| (b'0'..=b'7').contains(&b)))
            .then(|| i128::from_str_radix(o, 8).ok())
            .flatten()
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i128>().ok()
    } else {
        None
    }?;
    let n = if neg { -parsed } else { parsed };
    if let Ok(i) = i64::try_from(n) {
        Some(Value::Number(i.into()))
    } else {
        u64::try_from(n).ok().map(|u| Value::Number(u.into()))
    }
}

/// A core-schema float: `Ok(None)` when the text is not one, an error when it is one
/// that JSON cannot hold (`.inf`, `.nan`, `1e400`): no blueprint field takes such a
/// number, and reading it as text instead would hide the mistake.
fn float(text: &str) -> Result<Option<Value>, String> {
    let t = text.strip_prefix(['+', '-']).unwrap_or(text);
    if matches!(t, ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN") {
        return Err(format!(
            "`{text}` is an infinite or not-a-number float, which no field accepts; quote it if it is text"
        ));
    }
    let looks_numeric = t.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && t.bytes().any(|b| b.is_ascii_digit());
    if !looks_numeric {
        return Ok(None);
    }
    let Ok(f) = text.parse::<f64>() else {
        return Ok(None);
    };
    match Number::from_f64(f) {
        Some(n) => Ok(Some(Value::Number(n))),
        None => Err(format!(
            "`{text}` is too large for a 64-bit float; quote it if it is text"
        )),
    }
}
