//! `metadata.version`: the blueprint's own revision, which is also the image
//! tag `nodeimg build` writes by default, so it follows the OCI tag grammar
//! (`[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`, distribution-spec "Pulling
//! manifests"). A revision that cannot be a tag is refused at validation,
//! where it is located, not at build time.

use std::fmt;
use std::str::FromStr;

use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ImageVersion(String);

impl ImageVersion {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ImageVersion {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let rule = "an image tag holds letters, digits, `_`, `.` and `-`, starts with a letter, digit or `_`, and is at most 128 long";
        if s.is_empty() {
            return Err(format!("the version must not be empty ({rule})"));
        }
        if s.len() > 128 {
            return Err(format!(
                "`{s}` is {} characters long; {rule}",
                s.chars().count()
            ));
        }
        if let Some(c) = s
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        {
            let fix = s.replace(
                |c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')),
                "-",
            );
            return Err(format!(
                "`{s}` cannot be an image tag: it holds `{}`; {rule} (e.g. `{fix}`)",
                c.escape_debug()
            ));
        }
        if s.starts_with(['.', '-']) {
            return Err(format!("`{s}` cannot be an image tag: {rule}"));
        }
        Ok(Self(s.to_string()))
    }
}

impl fmt::Display for ImageVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for ImageVersion {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

text_value!(
    ImageVersion,
    "image-version",
    "The blueprint's revision, also the default image tag: letters, digits, `_`, `.`, `-` (not first), at most 128, e.g. 2026.11.1.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::ImageVersion;

    #[test]
    fn tag_grammar() {
        for ok in ["2026.11.1", "1", "v1-build.7", "_x", "A-b.c_9"] {
            assert!(ok.parse::<ImageVersion>().is_ok(), "{ok}");
        }
        let e = "v1+build.7".parse::<ImageVersion>().unwrap_err();
        assert!(e.contains("holds `+`") && e.contains("`v1-build.7`"), "{e}");
        assert!("".parse::<ImageVersion>().is_err());
        assert!(".x".parse::<ImageVersion>().is_err());
        assert!("-x".parse::<ImageVersion>().is_err());
        assert!("a b".parse::<ImageVersion>().is_err());
        assert!("a\nb".parse::<ImageVersion>().unwrap_err().contains("\\n"));
        assert!("a".repeat(129).parse::<ImageVersion>().is_err());
        assert!("a".repeat(128).parse::<ImageVersion>().is_ok());
    }
}
