//! Expectations and how an observed value is judged against them: exact text, numeric
//! ranges, version constraints ([`VersionReq`]), sets and regular expressions.
//!
//! Facts are typed ([`Judged`]): a [`Version`] is compared as a version and a number as a
//! number, without a round trip through text. A value that cannot be understood for the
//! comparison (text that is not a version, a number that is not one) is an error verdict,
//! never a pass.

use crate::blueprint::value::{Version, VersionReq};
use regex::Regex;
use std::fmt;

/// What a check expects of one observed value.
#[derive(Debug, Clone)]
pub enum Expect {
    /// Exactly this text.
    Equal(String),
    /// A number within `min..=max` (either bound optional).
    Range { min: Option<f64>, max: Option<f64> },
    /// A version satisfying the constraint.
    Version(VersionReq),
    /// One of these texts.
    OneOf(Vec<String>),
    /// Text matching the pattern.
    Pattern(Regex),
    /// Any of several expectations.
    Any(Vec<Expect>),
}

impl Expect {
    pub fn equal(text: impl fmt::Display) -> Self {
        Expect::Equal(text.to_string())
    }

    pub fn at_least(min: f64) -> Self {
        Expect::Range {
            min: Some(min),
            max: None,
        }
    }

    pub fn at_most(max: f64) -> Self {
        Expect::Range {
            min: None,
            max: Some(max),
        }
    }

    pub fn exactly(value: f64) -> Self {
        Expect::Range {
            min: Some(value),
            max: Some(value),
        }
    }

    /// Judges `observed`; `Err` when it cannot be compared (an error verdict).
    pub fn matches(&self, observed: &str) -> Result<bool, String> {
        match self {
            Expect::Equal(want) => Ok(observed == want),
            Expect::OneOf(set) => Ok(set.iter().any(|want| want == observed)),
            Expect::Pattern(regex) => Ok(regex.is_match(observed)),
            Expect::Range { min, max } => {
                let value: f64 = observed
                    .trim()
                    .parse()
                    .map_err(|_| format!("{observed:?} is not a number"))?;
                Ok(min.is_none_or(|min| value >= min) && max.is_none_or(|max| value <= max))
            }
            Expect::Version(req) => {
                let version: Version = observed
                    .trim()
                    .parse()
                    .map_err(|e| format!("{observed:?} is not a version: {e}"))?;
                Ok(req.matches(&version))
            }
            Expect::Any(options) => {
                let mut first_error = None;
                for option in options {
                    match option.matches(observed) {
                        Ok(true) => return Ok(true),
                        Ok(false) => {}
                        Err(e) => first_error = first_error.or(Some(e)),
                    }
                }
                match first_error {
                    Some(e) if options.len() == 1 => Err(e),
                    _ => Ok(false),
                }
            }
        }
    }
}

/// An observed value an [`Expect`] can judge.
pub trait Judged: fmt::Display {
    /// `Err` when the value cannot be compared (an error verdict).
    fn judged_by(&self, expect: &Expect) -> Result<bool, String>;
}

impl Judged for String {
    fn judged_by(&self, expect: &Expect) -> Result<bool, String> {
        expect.matches(self)
    }
}

impl Judged for Version {
    fn judged_by(&self, expect: &Expect) -> Result<bool, String> {
        match expect {
            Expect::Version(req) => Ok(req.matches(self)),
            Expect::Any(options) => Ok(options
                .iter()
                .any(|option| self.judged_by(option).unwrap_or(false))),
            other => other.matches(self.as_str()),
        }
    }
}

macro_rules! judged_number {
    ($($t:ty),*) => {$(
        impl Judged for $t {
            fn judged_by(&self, expect: &Expect) -> Result<bool, String> {
                match expect {
                    Expect::Range { min, max } => {
                        let value = *self as f64;
                        Ok(min.is_none_or(|min| value >= min) && max.is_none_or(|max| value <= max))
                    }
                    other => other.matches(&self.to_string()),
                }
            }
        }
    )*};
}
judged_number!(u32, u64, f64);

fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Equal(want) => f.write_str(want),
            Expect::Range {
                min: Some(min),
                max: Some(max),
            } if min == max => f.write_str(&number(*min)),
            Expect::Range { min, max } => match (min, max) {
                (Some(min), Some(max)) => write!(f, "{}..{}", number(*min), number(*max)),
                (Some(min), None) => write!(f, ">= {}", number(*min)),
                (None, Some(max)) => write!(f, "<= {}", number(*max)),
                (None, None) => f.write_str("any number"),
            },
            Expect::Version(req) => write!(f, "version {}", req.as_str()),
            Expect::OneOf(set) => write!(f, "one of {}", set.join(", ")),
            Expect::Pattern(regex) => write!(f, "matches /{}/", regex.as_str()),
            Expect::Any(options) => {
                let texts: Vec<String> = options.iter().map(ToString::to_string).collect();
                f.write_str(&texts.join(" or "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(text: &str) -> VersionReq {
        text.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn judges_each_kind() {
        assert_eq!(Expect::equal("x16").matches("x16"), Ok(true));
        assert_eq!(Expect::equal("x16").matches("x8"), Ok(false));
        assert_eq!(Expect::at_least(400.0).matches("400"), Ok(true));
        assert_eq!(Expect::at_least(400.0).matches("200"), Ok(false));
        assert!(Expect::at_least(1.0).matches("fast").is_err());
        assert_eq!(
            Expect::Version(req(">=550.54, <560")).matches("550.127.05"),
            Ok(true)
        );
        assert_eq!(
            Expect::Version(req(">=550.54, <560")).matches("570.1"),
            Ok(false)
        );
        assert!(Expect::Version(req("1.0")).matches("N/A").is_err());
        let set = Expect::OneOf(vec!["active".into(), "activating".into()]);
        assert_eq!(set.matches("active"), Ok(true));
        assert_eq!(set.matches("failed"), Ok(false));
        let pattern =
            Expect::Pattern(Regex::new(r"(?i)\bMI300X\b").unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(pattern.matches("AMD Instinct MI300X"), Ok(true));
        assert_eq!(pattern.matches("AMD Instinct MI300A"), Ok(false));
        assert_eq!(Expect::exactly(8.0).to_string(), "8");
        assert_eq!(Expect::at_least(2.5).to_string(), ">= 2.5");
    }

    #[test]
    fn typed_values_are_judged_without_text() {
        let version: Version = "570.172.08".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            version.judged_by(&Expect::Version(req(">=570.124"))),
            Ok(true)
        );
        assert_eq!(version.judged_by(&Expect::Version(req("<570"))), Ok(false));
        assert_eq!(8u64.judged_by(&Expect::at_least(16.0)), Ok(false));
        assert_eq!(16u64.judged_by(&Expect::exactly(16.0)), Ok(true));
    }
}
