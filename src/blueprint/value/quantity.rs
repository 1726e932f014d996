//! Kubernetes resource quantities (`2Gi`, `500m`, `1.5`, `1e3`, `100Mi`).
//!
//! The grammar is Kubernetes' own: a signed decimal number and an optional
//! binary (`Ki`…`Ei`), decimal (`n u m k M G T P E`) or exponent (`e3`) suffix.
//! Values are kept exactly, in billionths of the unit, so reservation
//! arithmetic never rounds behind the user's back.

use std::fmt;
use std::str::FromStr;

use super::text_value;

const NANO: i128 = 1_000_000_000;
const MIB: i128 = 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Quantity {
    text: String,
    nanos: i128,
}

impl Quantity {
    /// Whole bytes (or whole units), rounded up.
    pub fn units_ceil(&self) -> i128 {
        (self.nanos + NANO - 1).div_euclid(NANO)
    }

    /// Thousandths of the unit (millicores for CPU), rounded up.
    pub fn millis_ceil(&self) -> i128 {
        (self.nanos + 999_999).div_euclid(1_000_000)
    }

    /// Exact value in billionths of the unit.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    pub fn from_millis(m: i128) -> Self {
        let text = if m % 1000 == 0 {
            format!("{}", m / 1000)
        } else {
            format!("{m}m")
        };
        Self {
            text,
            nanos: m * 1_000_000,
        }
    }

    pub fn from_mib(mib: i128) -> Self {
        let text = if mib % 1024 == 0 && mib != 0 {
            format!("{}Gi", mib / 1024)
        } else {
            format!("{mib}Mi")
        };
        Self {
            text,
            nanos: mib * MIB * NANO,
        }
    }

    pub fn from_bytes(bytes: i128) -> Self {
        let text = if bytes % (1 << 30) == 0 && bytes != 0 {
            format!("{}Gi", bytes >> 30)
        } else if bytes % MIB == 0 && bytes != 0 {
            format!("{}Mi", bytes / MIB)
        } else if bytes % 1024 == 0 && bytes != 0 {
            format!("{}Ki", bytes / 1024)
        } else {
            bytes.to_string()
        };
        Self {
            text,
            nanos: bytes * NANO,
        }
    }

    /// Bytes expressed in MiB, rounded up (for showing memory arithmetic).
    pub fn mib_ceil(&self) -> i128 {
        (self.units_ceil() + MIB - 1).div_euclid(MIB)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl FromStr for Quantity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!("`{s}` is not a Kubernetes quantity ({why}); examples: 2Gi, 500m, 1.5, 100Mi")
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(bad("empty"));
        }
        let (sign, body) = match t.as_bytes()[0] {
            b'-' => (-1, &t[1..]),
            b'+' => (1, &t[1..]),
            _ => (1, t),
        };
        let num_end = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (number, suffix) = body.split_at(num_end);
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(bad("no number"));
        }
        let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
        // (multiplier numerator, extra power of ten) applied to the decimal number.
        let (mult, exp10): (i128, i32) = match suffix {
            "" => (1, 0),
            "Ki" => (1 << 10, 0),
            "Mi" => (1 << 20, 0),
            "Gi" => (1 << 30, 0),
            "Ti" => (1 << 40, 0),
            "Pi" => (1 << 50, 0),
            "Ei" => (1 << 60, 0),
            "n" => (1, -9),
            "u" => (1, -6),
            "m" => (1, -3),
            "k" => (1, 3),
            "M" => (1, 6),
            "G" => (1, 9),
            "T" => (1, 12),
            "P" => (1, 15),
            "E" => (1, 18),
            e if e.starts_with(['e', 'E']) => {
                let n: i32 = e[1..].parse().map_err(|_| bad("bad exponent"))?;
                if !(-9..=18).contains(&n) {
                    return Err(bad("exponent out of range"));
                }
                (1, n)
            }
            other => return Err(bad(&format!("unknown suffix `{other}`"))),
        };
        if int_part.len() + frac_part.len() > 24 {
            return Err(bad("too many digits"));
        }
        // value = digits * 10^(exp10 - frac_len) * mult, in nanos: * 10^9
        let digits: i128 = format!("{int_part}{frac_part}")
            .parse()
            .map_err(|_| bad("no number"))?;
        let shift = exp10 - frac_part.len() as i32 + 9;
        let scaled = if shift >= 0 {
            10i128
                .checked_pow(shift as u32)
                .and_then(|p| digits.checked_mul(p))
                .and_then(|v| v.checked_mul(mult))
        } else {
            let div = 10i128.pow((-shift) as u32);
            let total = digits.checked_mul(mult);
            match total {
                Some(t) if t % div == 0 => Some(t / div),
                Some(_) => return Err(bad("finer than 1n")),
                None => None,
            }
        };
        let nanos = scaled.ok_or_else(|| bad("too large"))?;
        Ok(Self {
            text: s.to_string(),
            nanos: sign * nanos,
        })
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

text_value!(
    Quantity,
    "k8s-quantity",
    "A Kubernetes quantity: 2Gi, 500m, 1.5, 100Mi.",
    numbers = true
);

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        s.parse().unwrap()
    }

    #[test]
    fn parses_kubernetes_suffixes() {
        assert_eq!(q("2Gi").units_ceil(), 2 << 30);
        assert_eq!(q("500m").millis_ceil(), 500);
        assert_eq!(q("1.5").millis_ceil(), 1500);
        assert_eq!(q("1e3").units_ceil(), 1000);
        assert_eq!(q("100Mi").mib_ceil(), 100);
        assert_eq!(q("1.5Gi").units_ceil(), 3 << 29);
        assert_eq!(q("10k").units_ceil(), 10_000);
        assert_eq!(q("-1"), Quantity::from_millis(-1000));
    }

    #[test]
    fn rejects_nonsense() {
        for bad in ["", "Gi", "2GB", "1.2.3", "abc", "2 Gi", "1n5"] {
            assert!(bad.parse::<Quantity>().is_err(), "{bad}");
        }
        assert!(
            "2GB"
                .parse::<Quantity>()
                .unwrap_err()
                .contains("unknown suffix `GB`")
        );
    }

    #[test]
    fn constructors_print_canonically() {
        assert_eq!(Quantity::from_mib(1465).to_string(), "1465Mi");
        assert_eq!(Quantity::from_mib(2048).to_string(), "2Gi");
        assert_eq!(Quantity::from_millis(550).to_string(), "550m");
        assert_eq!(Quantity::from_millis(2000).to_string(), "2");
        assert_eq!(q("1Gi"), Quantity::from_mib(1024));
    }
}
