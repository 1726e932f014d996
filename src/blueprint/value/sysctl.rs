//! Kernel parameters for sysctl.d(5): names in one canonical spelling and
//! values of the kinds the kernel takes.
//!
//! sysctl.d reads `kernel/kptr_restrict` and `kernel.kptr_restrict` as the
//! same parameter: when the first separator is `/`, slashes and dots swap
//! (so `net/ipv4/conf/eth0.100/rp_filter` is
//! `net.ipv4.conf.eth0/100.rp_filter`). A name is kept in the dotted form,
//! so two spellings of one parameter collide as one key instead of both
//! being written with the last one silently winning.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SysctlKey(String);

impl SysctlKey {
    /// The dotted spelling.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The spelling as a path under /proc/sys.
    pub fn proc_path(&self) -> String {
        self.0
            .chars()
            .map(|c| match c {
                '.' => '/',
                '/' => '.',
                c => c,
            })
            .collect()
    }
}

impl FromStr for SysctlKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let ok = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
            && !s.starts_with(['.', '/', '-'])
            && !s.ends_with(['.', '/'])
            && !s.contains("..")
            && !s.contains("//");
        if !ok {
            return Err(format!(
                "`{s}` is not a sysctl name (words of letters, digits, `_`, `-`, separated by `.`), e.g. kernel.kptr_restrict"
            ));
        }
        let first_sep = s.find(['.', '/']);
        let canonical = match first_sep.map(|i| &s[i..=i]) {
            Some("/") => s
                .chars()
                .map(|c| match c {
                    '/' => '.',
                    '.' => '/',
                    c => c,
                })
                .collect(),
            _ => s.to_string(),
        };
        Ok(Self(canonical))
    }
}

impl fmt::Display for SysctlKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

text_value!(
    SysctlKey,
    "sysctl-key",
    "A kernel parameter name, e.g. kernel.kptr_restrict (the /proc/sys path spelling is read too).",
    numbers = false
);

/// A sysctl value: an integer, or text for the parameters that take words
/// or several numbers (`net.ipv4.ip_local_port_range: "32768 60999"`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum SysctlValue {
    Number(i64),
    Text(SysctlText),
}

impl schemars::JsonSchema for SysctlValue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("SysctlValue")
    }

    // One node, not `anyOf`, so a bad value gets the text parser's own
    // message at its line; `format` applies to the text form only.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["integer", "string"],
            "format": "sysctl-text",
            "description": "An integer, or text for parameters that take words or several numbers (\"32768 60999\").",
        })
    }
}

/// `security.sysctls`: parameters by canonical name. Two spellings of one
/// parameter (`kernel/kptr_restrict`, `kernel.kptr_restrict`) are refused
/// at the second one, rather than one silently replacing the other.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct Sysctls(BTreeMap<SysctlKey, SysctlValue>);

impl Sysctls {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Deref for Sysctls {
    type Target = BTreeMap<SysctlKey, SysctlValue>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Sysctls {
    type Item = (&'a SysctlKey, &'a SysctlValue);
    type IntoIter = std::collections::btree_map::Iter<'a, SysctlKey, SysctlValue>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'de> serde::Deserialize<'de> for Sysctls {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::unique_keys::unique_keys(d).map(Sysctls)
    }
}

impl schemars::JsonSchema for Sysctls {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Sysctls")
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let value = g.subschema_for::<SysctlValue>();
        schemars::json_schema!({
            "type": "object",
            "propertyNames": {"type": "string", "format": "sysctl-key"},
            "additionalProperties": value,
        })
    }
}

impl fmt::Display for SysctlValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SysctlValue::Number(n) => write!(f, "{n}"),
            SysctlValue::Text(t) => f.write_str(t.as_str()),
        }
    }
}

/// Text for a sysctl: one line of words. sysctl.d takes everything after
/// the first `=` as the value, so a value holding `=` (`"1 = 2"`) is almost
/// always a mistake; `#` and `;` start comments there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysctlText(String);

impl SysctlText {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SysctlText {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        super::text::check_one_line(s).map_err(|e| format!("a sysctl value {e}"))?;
        if let Some(c) = s.chars().find(|c| matches!(c, '=' | '#' | ';')) {
            return Err(format!(
                "sysctl value `{s}` holds `{c}`; a value is an integer or words such as \"32768 60999\""
            ));
        }
        Ok(Self(s.to_string()))
    }
}

impl fmt::Display for SysctlText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

text_value!(
    SysctlText,
    "sysctl-text",
    "Text for a sysctl that takes words or several numbers, e.g. \"32768 60999\".",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_per_parameter() {
        let a: SysctlKey = "kernel/kptr_restrict".parse().unwrap();
        let b: SysctlKey = "kernel.kptr_restrict".parse().unwrap();
        assert_eq!(a, b);
        let vlan: SysctlKey = "net/ipv4/conf/eth0.100/rp_filter".parse().unwrap();
        assert_eq!(vlan.as_str(), "net.ipv4.conf.eth0/100.rp_filter");
        assert_eq!(vlan.proc_path(), "net/ipv4/conf/eth0.100/rp_filter");
        for bad in ["", ".a", "a..b", "a b", "a=b", "a#b", "/a", "a."] {
            assert!(bad.parse::<SysctlKey>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn values() {
        assert!("32768 60999".parse::<SysctlText>().is_ok());
        for bad in ["1 = 2", "2 # x", "", "a\nb", " 1"] {
            assert!(bad.parse::<SysctlText>().is_err(), "{bad:?}");
        }
        let v: SysctlValue = serde_json::from_str("2").unwrap();
        assert_eq!(v, SysctlValue::Number(2));
        assert!(serde_json::from_str::<SysctlValue>("\"1 = 2\"").is_err());
    }

    #[test]
    fn two_spellings_of_one_sysctl_are_refused() {
        let json = r#"{"kernel/kptr_restrict": 1, "kernel.kptr_restrict": 2}"#;
        let mut de = serde_json::Deserializer::from_str(json);
        let e = serde_path_to_error::deserialize::<_, Sysctls>(&mut de).unwrap_err();
        assert!(e.inner().to_string().contains("name the same key"), "{e}");
        let last = e.path().iter().next_back().map(|s| s.to_string());
        assert_eq!(last.as_deref(), Some("kernel.kptr_restrict"));
    }
}
