//! Typed leaf values of the blueprint: versions and constraints, Kubernetes
//! quantities, percentages, durations, label keys and values, taints, paths,
//! file modes and names.
//!
//! Each type parses its text once (`FromStr`) and prints it back (`Display`).
//! In the JSON Schema each appears as a string with its own `format`; the
//! structural check runs the same parser for that format, so a bad value is
//! reported with the parser's own message at the value's line and column.

mod duration;
mod file_mode;
mod label;
mod name;
mod path;
mod percent;
mod quantity;
mod taint;
mod version;

pub use duration::Duration;
pub use file_mode::FileMode;
pub use label::{LabelKey, LabelValue};
pub use name::DnsLabel;
pub use path::{AbsPath, RelPath};
pub use percent::Percent;
pub use quantity::Quantity;
pub use taint::{Taint, TaintEffect};
pub use version::{Version, VersionReq};

/// Implements Serialize, Deserialize and JsonSchema for a type that has
/// `FromStr<Err = String>` and `Display`. `numbers` lets YAML numbers stand in
/// for the text (a quantity written `2`, say).
macro_rules! text_value {
    ($ty:ty, $format:literal, $desc:literal, numbers = $numbers:literal) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = match serde_json::Value::deserialize(d)? {
                    serde_json::Value::String(s) => s,
                    serde_json::Value::Number(n) if $numbers => n.to_string(),
                    other => {
                        return Err(serde::de::Error::custom(format!(
                            "expected {}, found {other}",
                            $format
                        )));
                    }
                };
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($ty))
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                if $numbers {
                    schemars::json_schema!({
                        "type": ["string", "number"],
                        "format": $format,
                        "description": $desc,
                    })
                } else {
                    schemars::json_schema!({
                        "type": "string",
                        "format": $format,
                        "description": $desc,
                    })
                }
            }
        }
    };
}
pub(crate) use text_value;

/// Every custom `format` used in the schema with the parser that checks it.
/// The message is the parser's own.
pub fn check_format(format: &str, text: &str) -> Option<Result<(), String>> {
    fn ok<T>(r: Result<T, String>) -> Result<(), String> {
        r.map(|_| ())
    }
    Some(match format {
        "version" => ok(text.parse::<Version>()),
        "version-constraint" => ok(text.parse::<VersionReq>()),
        "k8s-quantity" => ok(text.parse::<Quantity>()),
        "percent" => ok(text.parse::<Percent>()),
        "duration" => ok(text.parse::<Duration>()),
        "label-key" => ok(text.parse::<LabelKey>()),
        "label-value" => ok(text.parse::<LabelValue>()),
        "taint" => ok(text.parse::<Taint>()),
        "absolute-path" => ok(text.parse::<AbsPath>()),
        "relative-path" => ok(text.parse::<RelPath>()),
        "file-mode" => ok(text.parse::<FileMode>()),
        "dns-label" => ok(text.parse::<DnsLabel>()),
        _ => return None,
    })
}

/// The format names above, for registering with the schema validator.
pub const FORMATS: &[&str] = &[
    "version",
    "version-constraint",
    "k8s-quantity",
    "percent",
    "duration",
    "label-key",
    "label-value",
    "taint",
    "absolute-path",
    "relative-path",
    "file-mode",
    "dns-label",
];

/// Like [`check_format`], for formats defined beside the model.
pub fn check_model_format(format: &str, text: &str) -> Option<Result<(), String>> {
    match format {
        "eviction-threshold" => Some(
            text.parse::<crate::blueprint::model::Threshold>()
                .map(|_| ()),
        ),
        _ => check_format(format, text),
    }
}
