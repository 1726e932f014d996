//! Free text that ends up in a rendered file, a report line or an image
//! label: one line, not empty, no control characters and no blanks at either
//! end. Parsed once, so a new text field is safe by its type, not by a list
//! of fields someone has to remember to extend.

use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OneLine(String);

impl OneLine {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The checks [`OneLine`] makes, for types that add their own on top.
pub(crate) fn check_one_line(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("must not be empty".into());
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{s:?} holds the control character {:?}; write one line of printable text",
            c
        ));
    }
    if s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace) {
        return Err(format!("{s:?} starts or ends with a blank"));
    }
    Ok(())
}

impl FromStr for OneLine {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        check_one_line(s)?;
        Ok(Self(s.to_string()))
    }
}

impl fmt::Display for OneLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Deref for OneLine {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for OneLine {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for OneLine {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

text_value!(
    OneLine,
    "one-line",
    "One line of printable text, not empty, without blanks at either end.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::OneLine;

    #[test]
    fn one_line() {
        assert_eq!(&*"H100 SXM".parse::<OneLine>().unwrap(), "H100 SXM");
        for bad in [
            "",
            "a\nb",
            "a\rb",
            "a\tb",
            "a\u{1b}[2Jb",
            " a",
            "a ",
            "a\u{85}b",
        ] {
            assert!(bad.parse::<OneLine>().is_err(), "{bad:?}");
        }
    }
}
