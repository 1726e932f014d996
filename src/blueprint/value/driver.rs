//! Kernel driver names (`mlx5_core`, `bnxt_en`, `ice`): what sysfs shows as
//! a device's `driver` link and udev matches with `DRIVERS==`. A name is
//! letters, digits, `_` and `-` — the characters of a module name — so it
//! can be written into a udev match as is and compared with sysfs exactly.

use std::fmt;
use std::str::FromStr;

use super::net::text_newtype;
use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DriverName(String);
text_newtype!(DriverName);

impl FromStr for DriverName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        // MODULE_NAME_LEN is 64 bytes with the terminating NUL.
        if s.is_empty() || s.len() > 63 {
            return Err(format!(
                "a kernel driver name is 1–63 characters, e.g. mlx5_core; found `{}`",
                s.escape_debug()
            ));
        }
        if !s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!(
                "kernel driver `{}` may hold only letters, digits, `_` and `-`, as sysfs names drivers",
                s.escape_debug()
            ));
        }
        Ok(Self(s.to_string()))
    }
}

text_value!(
    DriverName,
    "driver-name",
    "A kernel driver as sysfs names it, e.g. mlx5_core: letters, digits, `_` and `-`.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::DriverName;

    #[test]
    fn driver_names() {
        for ok in ["mlx5_core", "bnxt_en", "ice", "ib_ipoib", "r8169"] {
            assert!(ok.parse::<DriverName>().is_ok(), "{ok}");
        }
        for bad in ["", "mlx5\"", "a b", "mlx5*", "a\nb", &"x".repeat(64)] {
            assert!(bad.parse::<DriverName>().is_err(), "{bad:?}");
        }
    }
}
