//! Sizes and CPU amounts: Kubernetes quantities that must not be negative.
//!
//! A size lands in files that read it as an unsigned byte count (repart's
//! `SizeMinBytes=`, journald's `SystemMaxUse=`, logrotate's `maxsize`, the
//! /dev/shm mount option, kubelet reservations), so it is whole bytes, not
//! negative, and fits in 64 bits. A quantity that breaks any of these is
//! refused where it is written.

use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

use super::{Quantity, text_value};

/// A whole number of bytes, 0 ≤ n ≤ 2⁶⁴−1, written as a quantity (`64Gi`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(Quantity);

impl ByteSize {
    pub fn bytes(&self) -> u64 {
        u64::try_from(self.0.units_ceil()).expect("checked when parsed")
    }

    pub fn quantity(&self) -> &Quantity {
        &self.0
    }
}

impl FromStr for ByteSize {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let q: Quantity = s.parse()?;
        if q.nanos() < 0 {
            return Err(format!("`{s}` is negative; a size is 0 or more bytes"));
        }
        if q.nanos() % 1_000_000_000 != 0 {
            return Err(format!(
                "`{s}` is not a whole number of bytes (`m` means thousandths); did you mean `{}Mi`?",
                s.trim_end_matches('m')
            ));
        }
        if u64::try_from(q.units_ceil()).is_err() {
            return Err(format!(
                "`{s}` is more bytes than fit in 64 bits (16Ei at most)"
            ));
        }
        Ok(Self(q))
    }
}

impl Deref for ByteSize {
    type Target = Quantity;

    fn deref(&self) -> &Quantity {
        &self.0
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

text_value!(
    ByteSize,
    "byte-size",
    "A size in bytes as a Kubernetes quantity: 64Gi, 500Mi, 1e9 (not negative, whole bytes).",
    numbers = true
);

/// An amount of CPU (`500m`, `2`): not negative, at most 2³¹ cores.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CpuAmount(Quantity);

impl FromStr for CpuAmount {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let q: Quantity = s.parse()?;
        if q.nanos() < 0 {
            return Err(format!("`{s}` is negative; a CPU amount is 0 or more"));
        }
        if q.millis_ceil() > i128::from(i32::MAX) * 1000 {
            return Err(format!("`{s}` is more CPUs than any node has"));
        }
        Ok(Self(q))
    }
}

impl Deref for CpuAmount {
    type Target = Quantity;

    fn deref(&self) -> &Quantity {
        &self.0
    }
}

impl fmt::Display for CpuAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

text_value!(
    CpuAmount,
    "cpu-amount",
    "An amount of CPU as a Kubernetes quantity: 500m, 2 (not negative).",
    numbers = true
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!("64Gi".parse::<ByteSize>().unwrap().bytes(), 64 << 30);
        assert_eq!("0".parse::<ByteSize>().unwrap().bytes(), 0);
        assert_eq!(
            "15Ei".parse::<ByteSize>().unwrap().bytes(),
            15 * (1u64 << 60)
        );
        assert!("-1Gi".parse::<ByteSize>().unwrap_err().contains("negative"));
        assert!("16Ei".parse::<ByteSize>().unwrap_err().contains("64 bits"));
        assert!(
            "99999999999999999999Ki"
                .parse::<ByteSize>()
                .unwrap_err()
                .contains("64 bits")
        );
        assert!("100m".parse::<ByteSize>().unwrap_err().contains("`100Mi`"));
        assert_eq!("1.5Gi".parse::<ByteSize>().unwrap().bytes(), 3 << 29);
    }

    #[test]
    fn cpus() {
        assert!("500m".parse::<CpuAmount>().is_ok());
        assert!("-1".parse::<CpuAmount>().unwrap_err().contains("negative"));
    }
}
