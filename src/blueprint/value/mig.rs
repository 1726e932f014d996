//! MIG configuration names (`all-1g.10gb`, `all-balanced`): the names
//! mig-parted configurations carry. The MIG manager reads the wanted one
//! from the node label `nvidia.com/mig.config`, so a name must also be a
//! valid, non-empty label value.

use std::fmt;
use std::str::FromStr;

use super::net::text_newtype;
use super::{LabelValue, text_value};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MigProfile(String);
text_newtype!(MigProfile);

impl FromStr for MigProfile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("a MIG profile must not be empty, e.g. all-1g.10gb".into());
        }
        s.parse::<LabelValue>()
            .map_err(|e| format!("MIG profile `{s}` must be a valid label value: {e}"))?;
        Ok(Self(s.to_string()))
    }
}

text_value!(
    MigProfile,
    "mig-profile",
    "A mig-parted configuration name, e.g. all-1g.10gb or all-balanced.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::MigProfile;

    #[test]
    fn profiles() {
        assert!("all-1g.10gb".parse::<MigProfile>().is_ok());
        for bad in ["", "all 1g", "-x", "a\nb"] {
            assert!(bad.parse::<MigProfile>().is_err(), "{bad:?}");
        }
    }
}
