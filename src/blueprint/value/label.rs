//! Kubernetes label keys (`[prefix/]name`) and values, with the API server's
//! own syntax rules, so that a bad label fails here and not at node join.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LabelKey(String);

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LabelValue(String);

impl LabelKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl LabelValue {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A label name or value body: ≤63 chars, alphanumeric at both ends,
/// `-`, `_`, `.` inside.
fn check_name(s: &str, what: &str, allow_empty: bool) -> Result<(), String> {
    if s.is_empty() {
        return if allow_empty {
            Ok(())
        } else {
            Err(format!("{what} must not be empty"))
        };
    }
    if s.len() > 63 {
        return Err(format!("{what} `{s}` is longer than 63 characters"));
    }
    let ok_inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if !s.chars().all(ok_inner) {
        return Err(format!(
            "{what} `{s}` may hold only letters, digits, `-`, `_` and `.`"
        ));
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !alnum(s.chars().next()) || !alnum(s.chars().last()) {
        return Err(format!(
            "{what} `{s}` must start and end with a letter or digit"
        ));
    }
    Ok(())
}

/// A DNS-1123 subdomain (a label key's prefix).
fn check_subdomain(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 253 {
        return Err(format!("label prefix `{s}` must be 1–253 characters"));
    }
    for part in s.split('.') {
        super::name::check_dns_label(part).map_err(|e| format!("label prefix `{s}`: {e}"))?;
    }
    Ok(())
}

impl FromStr for LabelKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once('/') {
            Some((prefix, name)) => {
                check_subdomain(prefix)?;
                check_name(name, "label name", false)?;
            }
            None => check_name(s, "label name", false)?,
        }
        Ok(Self(s.to_string()))
    }
}

impl FromStr for LabelValue {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        check_name(s, "label value", true)?;
        Ok(Self(s.to_string()))
    }
}

impl fmt::Display for LabelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for LabelValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

text_value!(
    LabelKey,
    "label-key",
    "A Kubernetes label key: optional DNS-subdomain prefix and `/`, then a name of at most 63 characters.",
    numbers = false
);
text_value!(
    LabelValue,
    "label-value",
    "A Kubernetes label value: at most 63 letters, digits, `-`, `_`, `.`; may be empty.",
    numbers = true
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert!("nvidia.com/gpu.product".parse::<LabelKey>().is_ok());
        assert!(
            "feature.node.kubernetes.io/pci-10de.present"
                .parse::<LabelKey>()
                .is_ok()
        );
        assert!(
            "Bad_Prefix.com/x"
                .parse::<LabelKey>()
                .unwrap_err()
                .contains("prefix")
        );
        assert!("a/b/c".parse::<LabelKey>().is_err());
        assert!(
            "-x".parse::<LabelKey>()
                .unwrap_err()
                .contains("start and end")
        );
    }

    #[test]
    fn values() {
        assert!("".parse::<LabelValue>().is_ok());
        assert!("NVIDIA-H100-80GB-HBM3".parse::<LabelValue>().is_ok());
        assert!("a b".parse::<LabelValue>().is_err());
    }
}
