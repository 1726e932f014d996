//! Maps whose keys are parsed values with several spellings (`a."b"` and
//! `a.b`, `kernel/x` and `kernel.x`). Two spellings of one key are refused
//! at the second one, instead of the later silently replacing the earlier.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, Visitor};

/// `#[serde(deserialize_with = "unique_keys")]` for a `BTreeMap<K, V>`.
pub fn unique_keys<'de, D, K, V>(d: D) -> Result<BTreeMap<K, V>, D::Error>
where
    D: Deserializer<'de>,
    K: FromStr<Err = String> + Ord + fmt::Display,
    V: Deserialize<'de>,
{
    d.deserialize_map(Visit(PhantomData))
}

struct Visit<K, V>(PhantomData<(K, V)>);

/// Fails while reading the value of a key, so the error carries that
/// key's path.
struct Refuse<V>(String, PhantomData<V>);

impl<'de, V> DeserializeSeed<'de> for Refuse<V> {
    type Value = V;

    fn deserialize<D: Deserializer<'de>>(self, _: D) -> Result<V, D::Error> {
        Err(D::Error::custom(self.0))
    }
}

impl<'de, K, V> Visitor<'de> for Visit<K, V>
where
    K: FromStr<Err = String> + Ord + fmt::Display,
    V: Deserialize<'de>,
{
    type Value = BTreeMap<K, V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BTreeMap::new();
        let mut spelled: BTreeMap<K, String> = BTreeMap::new();
        while let Some(text) = map.next_key::<String>()? {
            let key: K = match text.parse() {
                Ok(k) => k,
                Err(e) => return map.next_value_seed(Refuse(e, PhantomData)).map(|_: V| out),
            };
            if let Some(first) = spelled.get(&key) {
                let msg = format!("`{text}` and `{first}` name the same key; keep one");
                return map
                    .next_value_seed(Refuse(msg, PhantomData))
                    .map(|_: V| out);
            }
            let value = map.next_value()?;
            spelled.insert(key, text.clone());
            out.insert(text.parse().map_err(A::Error::custom)?, value);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::TomlKeyPath;

    #[derive(serde::Deserialize, Debug)]
    struct M {
        #[serde(deserialize_with = "super::unique_keys")]
        m: BTreeMap<TomlKeyPath, u32>,
    }

    #[test]
    fn second_spelling_is_refused_at_its_key() {
        let ok: M = serde_json::from_str(r#"{"m": {"a.b": 1, "a.c": 2}}"#).unwrap();
        assert_eq!(ok.m.len(), 2);
        let json = r#"{"m": {"a.b": 1, "a.\"b\"": 2}}"#;
        let mut de = serde_json::Deserializer::from_str(json);
        let e = serde_path_to_error::deserialize::<_, M>(&mut de).unwrap_err();
        assert!(e.inner().to_string().contains("name the same key"), "{e}");
        let last = e.path().iter().next_back().map(|s| s.to_string());
        assert_eq!(last.as_deref(), Some("a.\"b\""));
    }
}
