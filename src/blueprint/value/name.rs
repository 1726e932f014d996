//! DNS-1123 labels: the names Kubernetes and nodeimg use for things
//! (`h100-sxm-ubuntu`): lower-case letters, digits and `-`, at most 63.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DnsLabel(String);

impl DnsLabel {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `s` is a DNS-1123 label, for a field that keeps it as text (a namespace
    /// or a Kubernetes object's name inside a larger value).
    pub fn is_valid(s: &str) -> bool {
        check_dns_label(s).is_ok()
    }
}

/// Checks the DNS-1123 label rule; shared by label prefixes and taint keys.
pub(crate) fn check_dns_label(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 63 {
        return Err(format!("`{s}` must be 1–63 characters long"));
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(format!(
            "`{s}` may hold only lower-case letters, digits and `-`"
        ));
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Err(format!("`{s}` must start and end with a letter or digit"));
    }
    Ok(())
}

impl FromStr for DnsLabel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        check_dns_label(s)?;
        Ok(Self(s.to_string()))
    }
}

impl fmt::Display for DnsLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

text_value!(
    DnsLabel,
    "dns-label",
    "A DNS-1123 label: lower-case letters, digits and `-`, 1–63 characters.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::DnsLabel;

    #[test]
    fn dns_labels() {
        assert!("h100-sxm".parse::<DnsLabel>().is_ok());
        assert!(
            "H100"
                .parse::<DnsLabel>()
                .unwrap_err()
                .contains("lower-case")
        );
        assert!(
            "-a".parse::<DnsLabel>()
                .unwrap_err()
                .contains("start and end")
        );
        assert!("a".repeat(64).parse::<DnsLabel>().is_err());
    }
}
