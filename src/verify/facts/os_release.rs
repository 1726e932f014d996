//! The distribution, from `/etc/os-release` (or `/usr/lib/os-release`, its fallback).
//!
//! The file is shell-like `KEY=value` lines; values may be quoted with `"` or `'` and use
//! backslash escapes inside double quotes. The blueprint pins distro and version, so `ID`
//! and `VERSION_ID` are lifted out; every field is kept for the acceptance record.
//!
//! `VERSION_ID` is parsed here into a [`Version`], once: checks compare versions
//! (`12.10` is after `12.9`, `22.04` is `22.4`), never text, and a value that is no
//! version (`VERSION_ID=rolling`) is an unknown fact that names the field.

use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OsRelease {
    /// `ID`, e.g. `ubuntu`, `rhel`, `rocky`.
    pub id: Fact<String>,
    /// `VERSION_ID`, e.g. `22.04`, `9.4`, `12` (Debian names only the major release).
    pub version_id: Fact<Version>,
    pub pretty_name: Fact<String>,
    /// Every field of the file.
    pub fields: BTreeMap<String, String>,
}

pub fn collect(host: &dyn Host) -> Fact<OsRelease> {
    let text = match host.read_text(Path::new("/etc/os-release")) {
        Ok(text) => text,
        Err(first) => match host.read_text(Path::new("/usr/lib/os-release")) {
            Ok(text) => text,
            Err(_) => return Fact::unknown(first.to_string()),
        },
    };
    Fact::Known(parse(&text))
}

pub fn parse(text: &str) -> OsRelease {
    let fields: BTreeMap<String, String> = text
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.starts_with('#') {
                return None;
            }
            let (key, value) = line.split_once('=')?;
            Some((key.trim().to_owned(), unquote(value.trim())))
        })
        .collect();
    let field = |key: &str| match fields.get(key) {
        Some(value) => Fact::Known(value.clone()),
        None => Fact::unknown(format!("os-release has no {key}")),
    };
    let version_id = field("VERSION_ID").and_then(|text| match text.parse::<Version>() {
        Ok(version) => Fact::Known(version),
        Err(why) => Fact::unknown(format!(
            "os-release VERSION_ID {text:?} is not a version: {why}"
        )),
    });
    OsRelease {
        id: field("ID"),
        version_id,
        pretty_name: field("PRETTY_NAME"),
        fields,
    }
}

fn unquote(value: &str) -> String {
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return inner.to_owned();
    }
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(escaped) = chars.next() {
                out.push(escaped);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quoted_and_bare_values() {
        let release = parse(
            "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\n# c\nPRETTY_NAME='Ubuntu 22.04.4 LTS'\nX=\"a \\\"b\\\"\"\n",
        );
        assert_eq!(release.id, Fact::Known("ubuntu".to_owned()));
        assert_eq!(
            release.version_id.known().map(Version::as_str),
            Some("22.04")
        );
        assert_eq!(
            release.pretty_name,
            Fact::Known("Ubuntu 22.04.4 LTS".to_owned())
        );
        assert_eq!(release.fields.get("X").map(String::as_str), Some("a \"b\""));
    }

    #[test]
    fn version_id_is_a_version() {
        let version = |text: &str| parse(text).version_id;
        let v = |text: &str| text.parse::<Version>().unwrap_or_else(|e| panic!("{e}"));
        // As versions, not as text: 12.10 comes after 12.9.
        let newer = version("VERSION_ID=\"12.10\"\n");
        assert!(newer.known().is_some_and(|n| *n > v("12.9")));
        assert_eq!(version("VERSION_ID='9.4'\n").known(), Some(&v("9.4")));
        assert_eq!(version("VERSION_ID=12\n").known(), Some(&v("12")));
        let Fact::Unknown { reason } = version("VERSION_ID=rolling\n") else {
            panic!("`rolling` is no version");
        };
        assert!(reason.contains("VERSION_ID \"rolling\""), "{reason}");
        assert!(matches!(version("ID=arch\n"), Fact::Unknown { .. }));
    }
}
