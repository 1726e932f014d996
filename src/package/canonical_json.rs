//! JSON bytes that depend only on the value: object keys sorted by their
//! UTF-8 bytes, no insignificant whitespace.
//!
//! The OCI structures keep annotations in `HashMap`s, whose iteration order
//! changes from run to run; serialising them directly would give a config
//! or manifest — and so a digest — that differs between two builds of the
//! same input. Everything that is hashed goes through here.

use serde::Serialize;
use serde_json::Value;

/// The canonical JSON encoding of `value`.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let v = serde_json::to_value(value)?;
    let mut out = Vec::new();
    write(&v, &mut out)?;
    Ok(out)
}

fn write(v: &Value, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    match v {
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, k)?;
                out.push(b':');
                write(&map[k], out)?;
            }
            out.push(b'}');
        }
        scalar => serde_json::to_writer(&mut *out, scalar)?,
    }
    Ok(())
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
}
