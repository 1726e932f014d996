//! `Fact<T>`: a value read from the machine, or the reason it could not be read.
//!
//! Verify fails closed: a value that cannot be read must never look like `0`, `""` or
//! `false` to a check. Every fact that can fail to be read is a `Fact`, which serialises to
//! the plain value when known and to `{"unknown": "<reason>"}` otherwise.

use super::host::HostError;
use crate::blueprint::value::Version;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A value read from the machine, or why it is unknown.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact<T> {
    Known(T),
    Unknown { reason: String },
}

impl<T> Fact<T> {
    pub fn unknown(reason: impl Into<String>) -> Self {
        Fact::Unknown {
            reason: reason.into(),
        }
    }

    /// The value, if known.
    pub fn known(&self) -> Option<&T> {
        match self {
            Fact::Known(value) => Some(value),
            Fact::Unknown { .. } => None,
        }
    }

    pub fn into_known(self) -> Option<T> {
        match self {
            Fact::Known(value) => Some(value),
            Fact::Unknown { .. } => None,
        }
    }

    pub fn is_known(&self) -> bool {
        matches!(self, Fact::Known(_))
    }

    /// Why the value is unknown, if it is.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Fact::Known(_) => None,
            Fact::Unknown { reason } => Some(reason),
        }
    }

    pub fn as_ref(&self) -> Fact<&T> {
        match self {
            Fact::Known(value) => Fact::Known(value),
            Fact::Unknown { reason } => Fact::unknown(reason.clone()),
        }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Fact<U> {
        match self {
            Fact::Known(value) => Fact::Known(f(value)),
            Fact::Unknown { reason } => Fact::Unknown { reason },
        }
    }

    pub fn and_then<U>(self, f: impl FnOnce(T) -> Fact<U>) -> Fact<U> {
        match self {
            Fact::Known(value) => f(value),
            Fact::Unknown { reason } => Fact::Unknown { reason },
        }
    }
}

impl Fact<String> {
    /// The text as a [`Version`], parsed once here at the edge so that checks compare
    /// versions, never text; text that is not a version is unknown with the reason
    /// (`what` names where it came from), never a pass.
    pub fn version(self, what: &str) -> Fact<Version> {
        self.and_then(|text| match text.parse::<Version>() {
            Ok(version) => Fact::Known(version),
            Err(why) => Fact::unknown(format!("{what} {text:?} is not a version: {why}")),
        })
    }
}

impl<T> From<Result<T, HostError>> for Fact<T> {
    fn from(result: Result<T, HostError>) -> Self {
        match result {
            Ok(value) => Fact::Known(value),
            Err(err) => Fact::unknown(err.to_string()),
        }
    }
}

impl<T: Serialize> Serialize for Fact<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Fact::Known(value) => value.serialize(serializer),
            Fact::Unknown { reason } => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("unknown", reason)?;
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_to_value_or_reason() {
        let known: Fact<u32> = Fact::Known(400_000);
        let unknown: Fact<u32> =
            Fact::unknown("read /sys/class/net/ib0/speed: invalid argument (EINVAL)");
        assert_eq!(
            serde_json::to_string(&known).ok().as_deref(),
            Some("400000")
        );
        assert_eq!(
            serde_json::to_string(&unknown).ok().as_deref(),
            Some(r#"{"unknown":"read /sys/class/net/ib0/speed: invalid argument (EINVAL)"}"#)
        );
    }
}
