//! Audit watch rules (`-w PATH -p PERMS -k KEY`, auditctl(8)): the
//! permission filter and the key. auditctl splits rule lines on blanks and
//! has no quoting, so both are plain words by construction.

use std::fmt;
use std::str::FromStr;

use super::net::text_newtype;
use super::text_value;

/// Any of `r`, `w`, `x`, `a` (read, write, execute, attribute change), each
/// at most once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AuditPerms(String);
text_newtype!(AuditPerms);

impl FromStr for AuditPerms {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut seen = String::new();
        for c in s.chars() {
            if !"rwxa".contains(c) || seen.contains(c) {
                return Err(format!(
                    "`{s}` is not an audit permission filter: any of r, w, x, a, each once"
                ));
            }
            seen.push(c);
        }
        if s.is_empty() {
            return Err("an audit permission filter names at least one of r, w, x, a".into());
        }
        Ok(Self(s.to_string()))
    }
}

text_value!(
    AuditPerms,
    "audit-perms",
    "Audit permission filter: any of r, w, x, a, e.g. wa.",
    numbers = false
);

/// The key that tags matching audit records: 1–31 letters, digits, `-`, `_`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AuditKey(String);
text_newtype!(AuditKey);

impl FromStr for AuditKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let ok = !s.is_empty()
            && s.len() <= 31
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if ok {
            Ok(Self(s.to_string()))
        } else {
            Err(format!(
                "`{s}` is not an audit key: 1–31 letters, digits, `-` or `_`"
            ))
        }
    }
}

text_value!(
    AuditKey,
    "audit-key",
    "Audit record key: 1–31 letters, digits, `-` or `_`.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perms_and_keys() {
        assert!("wa".parse::<AuditPerms>().is_ok());
        for bad in ["", "rr", "q", "w a", "w -k x"] {
            assert!(bad.parse::<AuditPerms>().is_err(), "{bad:?}");
        }
        assert!("gpu-driver".parse::<AuditKey>().is_ok());
        for bad in ["", "a b", &"k".repeat(32), "a;b"] {
            assert!(bad.parse::<AuditKey>().is_err(), "{bad:?}");
        }
    }
}
