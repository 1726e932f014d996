//! Unix file modes written in octal text (`"0644"`).
//!
//! YAML 1.2 reads an unquoted `0644` as the decimal 644, so a mode must be
//! quoted; a bare number is refused with that hint rather than misread.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileMode(u32);

impl FileMode {
    pub fn bits(self) -> u32 {
        self.0
    }

    pub fn new(bits: u32) -> Self {
        Self(bits & 0o7777)
    }
}

impl FromStr for FileMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let digits = s.strip_prefix("0o").unwrap_or(s);
        if digits.is_empty()
            || digits.len() > 4
            || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b))
        {
            return Err(format!(
                "`{s}` is not an octal file mode; write it quoted, e.g. \"0644\""
            ));
        }
        u32::from_str_radix(digits, 8)
            .map(Self)
            .map_err(|_| format!("`{s}` is not an octal file mode"))
    }
}

impl fmt::Display for FileMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04o}", self.0)
    }
}

text_value!(
    FileMode,
    "file-mode",
    "An octal file mode as quoted text, e.g. \"0644\".",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::FileMode;

    #[test]
    fn octal_text() {
        assert_eq!("0644".parse::<FileMode>().unwrap().bits(), 0o644);
        assert_eq!("0o755".parse::<FileMode>().unwrap().to_string(), "0755");
        assert!("0999".parse::<FileMode>().is_err());
        assert!(
            "rw-r--r--"
                .parse::<FileMode>()
                .unwrap_err()
                .contains("quoted")
        );
    }
}
