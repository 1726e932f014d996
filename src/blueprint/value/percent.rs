//! Percentages such as `85%` or `7.5%` (cache watermarks, eviction thresholds).

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub struct Percent {
    text: String,
    value: f64,
}

impl Percent {
    /// The number before the `%` (0–100).
    pub fn value(&self) -> f64 {
        self.value
    }
}

impl FromStr for Percent {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let num = s
            .strip_suffix('%')
            .ok_or_else(|| format!("`{s}` is not a percentage; write it with `%`, e.g. 85%"))?;
        let value: f64 = num
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                format!("`{s}` is not a percentage; write a number then `%`, e.g. 85%")
            })?;
        if !(0.0..=100.0).contains(&value) {
            return Err(format!("`{s}` is outside 0%–100%"));
        }
        Ok(Self {
            text: s.to_string(),
            value,
        })
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

text_value!(
    Percent,
    "percent",
    "A percentage, e.g. 85% or 7.5%.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::Percent;

    #[test]
    fn parses_and_bounds() {
        assert_eq!("85%".parse::<Percent>().unwrap().value(), 85.0);
        assert_eq!("7.5%".parse::<Percent>().unwrap().value(), 7.5);
        assert!("85".parse::<Percent>().unwrap_err().contains("with `%`"));
        assert!("101%".parse::<Percent>().unwrap_err().contains("outside"));
        assert!("x%".parse::<Percent>().is_err());
    }
}
