//! Typed leaf values of the blueprint: versions and constraints, Kubernetes
//! quantities, percentages, durations, label keys and values, taints, paths,
//! file modes, names and kernel arguments.
//!
//! Each type parses its text once (`FromStr`) and prints it back (`Display`).
//! In the JSON Schema each appears as a string with its own `format`; the
//! structural check runs the same parser for that format, so a bad value is
//! reported with the parser's own message at the value's line and column.

mod audit;
mod driver;
mod duration;
mod file_mode;
mod image_version;
mod kernel_arg;
mod label;
mod mig;
mod name;
mod net;
mod path;
mod pcie;
mod percent;
mod quantity;
mod size;
mod ssh;
mod sysctl;
mod taint;
mod text;
mod threshold;
mod toml_key;
mod unique_keys;
mod version;

pub use audit::{AuditKey, AuditPerms};
pub use driver::DriverName;
pub use duration::Duration;
pub use file_mode::FileMode;
pub use image_version::ImageVersion;
pub use kernel_arg::{Judgement, KernelArg, carried_char};
pub use label::{LabelKey, LabelValue};
pub use mig::MigProfile;
pub use name::DnsLabel;
pub use net::{DomainName, HostName, MirrorUrl, RegistryHost};
pub use path::{AbsPath, LogGlob, RelPath};
pub use pcie::{LinkWidth, PcieGen};
pub use percent::Percent;
pub use quantity::Quantity;
pub use size::{ByteSize, CpuAmount};
pub use ssh::SshPattern;
pub use sysctl::{SysctlKey, SysctlText, SysctlValue, Sysctls};
pub use taint::{Taint, TaintEffect};
pub use text::OneLine;
pub use threshold::Threshold;
pub use toml_key::TomlKeyPath;
pub use unique_keys::unique_keys;
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

/// Checks text with a type's own parser, keeping only its message.
fn parses<T: std::str::FromStr<Err = String>>(text: &str) -> Result<(), String> {
    text.parse::<T>().map(|_| ())
}

/// A format's checker: `Err` holds the parser's own message.
pub type FormatCheck = fn(&str) -> Result<(), String>;

/// Every custom `format` of the schema and the parser that checks it: the
/// one table the schema validator registers and the loader reports from.
pub const FORMATS: &[(&str, FormatCheck)] = &[
    ("version", parses::<Version>),
    ("version-constraint", parses::<VersionReq>),
    ("k8s-quantity", parses::<Quantity>),
    ("byte-size", parses::<ByteSize>),
    ("cpu-amount", parses::<CpuAmount>),
    ("percent", parses::<Percent>),
    ("duration", parses::<Duration>),
    ("eviction-threshold", parses::<Threshold>),
    ("label-key", parses::<LabelKey>),
    ("label-value", parses::<LabelValue>),
    ("taint", parses::<Taint>),
    ("absolute-path", parses::<AbsPath>),
    ("relative-path", parses::<RelPath>),
    ("log-glob", parses::<LogGlob>),
    ("file-mode", parses::<FileMode>),
    ("dns-label", parses::<DnsLabel>),
    ("one-line", parses::<OneLine>),
    ("image-version", parses::<ImageVersion>),
    ("host-name", parses::<HostName>),
    ("domain-name", parses::<DomainName>),
    ("registry-host", parses::<RegistryHost>),
    ("mirror-url", parses::<MirrorUrl>),
    ("ssh-pattern", parses::<SshPattern>),
    ("audit-perms", parses::<AuditPerms>),
    ("audit-key", parses::<AuditKey>),
    ("sysctl-key", parses::<SysctlKey>),
    ("sysctl-text", parses::<SysctlText>),
    ("toml-key-path", parses::<TomlKeyPath>),
    ("mig-profile", parses::<MigProfile>),
    ("driver-name", parses::<DriverName>),
    ("kernel-arg", parses::<KernelArg>),
];

/// Checks `text` against a custom format; `None` for a format not listed.
pub fn check_format(format: &str, text: &str) -> Option<Result<(), String>> {
    FORMATS
        .iter()
        .find(|(name, _)| *name == format)
        .map(|(_, check)| check(text))
}
