//! `SOURCE_DATE_EPOCH`: the one timestamp a reproducible build may use.
//!
//! It becomes every tar entry's mtime and the image's `created` time, so two
//! builds of the same input agree byte for byte no matter when they run.
//! See <https://reproducible-builds.org/specs/source-date-epoch/>.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// Seconds since 1970-01-01T00:00:00Z, at most 9999-12-31T23:59:59Z.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct SourceDate(u64);

/// The last second RFC 3339's four-digit year can express.
const MAX: u64 = 253_402_300_799;

impl SourceDate {
    pub const ENV: &'static str = "SOURCE_DATE_EPOCH";

    pub fn new(seconds: u64) -> Result<Self, String> {
        if seconds > MAX {
            return Err(format!("{seconds} is after the year 9999"));
        }
        Ok(Self(seconds))
    }

    /// `SOURCE_DATE_EPOCH` from the environment; 0 when unset or empty.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(Self::ENV) {
            Ok(v) if v.is_empty() => Ok(Self(0)),
            Ok(v) => v.parse().map_err(|e| format!("{}={v:?}: {e}", Self::ENV)),
            Err(std::env::VarError::NotPresent) => Ok(Self(0)),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(format!("{} is not valid UTF-8", Self::ENV))
            }
        }
    }

    pub fn seconds(self) -> u64 {
        self.0
    }

    /// RFC 3339 in UTC with a `Z`, e.g. `1970-01-01T00:00:00Z`.
    pub fn rfc3339(self) -> String {
        crate::time::rfc3339(self.0)
    }
}

impl FromStr for SourceDate {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err("expected a non-negative whole number of seconds".into());
        }
        let n: u64 = s.parse().map_err(|_| "number too large".to_string())?;
        Self::new(n)
    }
}

impl fmt::Display for SourceDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        let f = |s: u64| SourceDate::new(s).unwrap().rfc3339();
        assert_eq!(f(0), "1970-01-01T00:00:00Z");
        // `date -u -d @951782400` → 2000-02-29 00:00:00 (a leap day).
        assert_eq!(f(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(f(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(f(MAX), "9999-12-31T23:59:59Z");
        assert!(SourceDate::new(MAX + 1).is_err());
    }

    #[test]
    fn parses_whole_seconds_only() {
        assert_eq!("42".parse::<SourceDate>().unwrap().seconds(), 42);
        for bad in ["", "-1", "1.5", " 1", "1e3", "99999999999999999999"] {
            assert!(bad.parse::<SourceDate>().is_err(), "{bad}");
        }
    }
}
