//! Merges `runtime.containerd.extraConfig` into the rendered config.toml.
//!
//! The keys are dotted TOML paths into tables the template may or may not
//! have written. Merging in the parsed document (toml_edit keeps the
//! template's layout and comments) is the only way to add a key to a table
//! the template opened without producing a duplicate table.

use std::collections::BTreeMap;

use serde_json::Value;
use toml_edit::{DocumentMut, Item, Table};

use super::{Context, RenderError};
use crate::blueprint::value::TomlKeyPath;

fn to_toml(v: &Value) -> Result<toml_edit::Value, String> {
    Ok(match v {
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) => f.into(),
            _ => return Err(format!("number {n} does not fit TOML")),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for x in a {
                arr.push(to_toml(x)?);
            }
            arr.into()
        }
        Value::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, x) in o {
                t.insert(k, to_toml(x)?);
            }
            t.into()
        }
        Value::Null => return Err("null has no TOML form".into()),
    })
}

/// The plan's post step for `etc/containerd/config.toml`.
pub fn merge_containerd(text: String, ctx: &Context<'_>) -> Result<String, RenderError> {
    merge(text, ctx.containerd.extra_config)
}

fn merge(text: String, extra: &BTreeMap<TomlKeyPath, Value>) -> Result<String, RenderError> {
    if extra.is_empty() {
        return Ok(text);
    }
    let mut doc: DocumentMut = text.parse().map_err(|e| RenderError::SelfCheck {
        path: "etc/containerd/config.toml".into(),
        message: format!("not TOML before the extraConfig merge: {e}"),
    })?;
    for (key, value) in extra {
        let err = |message: String| RenderError::ExtraConfig {
            key: key.to_string(),
            message,
        };
        let (last, tables) = key.split_last();
        let mut table: &mut Table = doc.as_table_mut();
        for name in tables {
            let entry = table.entry(name).or_insert_with(|| {
                let mut t = Table::new();
                t.set_implicit(true);
                Item::Table(t)
            });
            table = entry
                .as_table_mut()
                .ok_or_else(|| err(format!("`{name}` is not a table")))?;
        }
        let v = to_toml(value).map_err(err)?;
        table.insert(last, Item::Value(v));
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_into_open_and_new_tables() {
        let base = "version = 2\n\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  enable_cdi = true\n";
        let mut extra = BTreeMap::new();
        extra.insert(
            "plugins.\"io.containerd.grpc.v1.cri\".max_concurrent_downloads"
                .parse()
                .unwrap(),
            Value::from(8),
        );
        extra.insert(
            "metrics.address".parse().unwrap(),
            Value::from("127.0.0.1:1338"),
        );
        let out = merge(base.to_string(), &extra).unwrap();
        let parsed: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(
            parsed["plugins"]["io.containerd.grpc.v1.cri"]["max_concurrent_downloads"].as_integer(),
            Some(8)
        );
        assert_eq!(
            parsed["plugins"]["io.containerd.grpc.v1.cri"]["enable_cdi"].as_bool(),
            Some(true)
        );
        assert_eq!(
            parsed["metrics"]["address"].as_str(),
            Some("127.0.0.1:1338")
        );
    }
}
