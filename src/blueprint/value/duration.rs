//! Durations written as a sum of units: `90s`, `5m30s`, `14d`, `1h30m`, `250ms`.
//!
//! Units: ns, us, ms, s, m, h, d, w. Go durations (Kubernetes) and systemd
//! time spans (journald) both read this subset; rendering converts as needed.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration {
    text: String,
    nanos: u128,
}

impl Duration {
    pub fn as_secs(&self) -> u128 {
        self.nanos / 1_000_000_000
    }

    pub fn nanos(&self) -> u128 {
        self.nanos
    }
}

impl FromStr for Duration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("`{s}` is not a duration ({why}); examples: 90s, 5m30s, 14d");
        if s.is_empty() {
            return Err(bad("empty"));
        }
        let mut rest = s;
        let mut nanos: u128 = 0;
        while !rest.is_empty() {
            let n_end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            if n_end == 0 {
                return Err(bad("expected a number"));
            }
            let n: u128 = rest[..n_end].parse().map_err(|_| bad("number too large"))?;
            rest = &rest[n_end..];
            let u_end = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            let unit: u128 = match &rest[..u_end] {
                "ns" => 1,
                "us" | "µs" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                "d" => 86_400_000_000_000,
                "w" => 604_800_000_000_000,
                "" => return Err(bad("missing unit")),
                other => return Err(bad(&format!("unknown unit `{other}`"))),
            };
            rest = &rest[u_end..];
            nanos = n
                .checked_mul(unit)
                .and_then(|v| v.checked_add(nanos))
                .ok_or_else(|| bad("too large"))?;
        }
        if nanos > i64::MAX as u128 {
            return Err(bad(
                "longer than 292 years, the most Go and systemd durations hold",
            ));
        }
        Ok(Self {
            text: s.to_string(),
            nanos,
        })
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

text_value!(
    Duration,
    "duration",
    "A duration: 90s, 5m30s, 14d, 250ms.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::Duration;

    #[test]
    fn sums_units() {
        assert_eq!("5m30s".parse::<Duration>().unwrap().as_secs(), 330);
        assert_eq!("14d".parse::<Duration>().unwrap().as_secs(), 14 * 86400);
        assert_eq!("250ms".parse::<Duration>().unwrap().nanos(), 250_000_000);
        assert!(
            "5".parse::<Duration>()
                .unwrap_err()
                .contains("missing unit")
        );
        assert!(
            "5y".parse::<Duration>()
                .unwrap_err()
                .contains("unknown unit `y`")
        );
        assert!("m5".parse::<Duration>().is_err());
        assert!(
            "99999999999999999d"
                .parse::<Duration>()
                .unwrap_err()
                .contains("292 years")
        );
        assert!("292y".parse::<Duration>().is_err());
        assert!("15250w".parse::<Duration>().is_ok());
    }
}
