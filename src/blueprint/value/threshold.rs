//! kubelet eviction thresholds: a quantity (`100Mi`, `5%` of what the signal
//! measures is a [`Percent`]) that is never negative.

use std::fmt;
use std::str::FromStr;

use super::{Percent, Quantity, text_value};

/// An eviction threshold: a quantity (`100Mi`) or a percentage (`10%`).
#[derive(Debug, Clone, PartialEq)]
pub enum Threshold {
    Quantity(Quantity),
    Percent(Percent),
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Threshold::Quantity(q) => q.fmt(f),
            Threshold::Percent(p) => p.fmt(f),
        }
    }
}

impl FromStr for Threshold {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.ends_with('%') {
            return s.parse().map(Threshold::Percent);
        }
        let q: Quantity = s.parse()?;
        if q.nanos() < 0 {
            return Err(format!("`{s}`: an eviction threshold cannot be negative"));
        }
        Ok(Threshold::Quantity(q))
    }
}

text_value!(
    Threshold,
    "eviction-threshold",
    "An eviction threshold: a quantity such as 100Mi or a percentage such as 10%.",
    numbers = true
);

#[cfg(test)]
mod tests {
    use super::Threshold;

    #[test]
    fn quantities_and_percentages() {
        assert!(matches!("100Mi".parse(), Ok(Threshold::Quantity(_))));
        assert!(matches!("10%".parse(), Ok(Threshold::Percent(_))));
        assert!(
            "-1Gi"
                .parse::<Threshold>()
                .unwrap_err()
                .contains("cannot be negative")
        );
    }
}
