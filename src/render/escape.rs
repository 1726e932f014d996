//! Escaping for every target format, as template filters.
//!
//! A value from a blueprint must never change the structure of a rendered
//! file: a quote, newline, `]`, `#` or `\` inside a value stays inside the
//! value. Structured formats (TOML, YAML, JSON) are escaped; line-oriented
//! formats (chrony, sshd, logrotate, sysctl, modprobe, audit, tmpfiles.d,
//! unit files, the kernel command line) have no escape for a newline or a
//! comment character, so the filters refuse such values with an error
//! instead. systemd `Exec` lines expand `%` specifiers and `$` variables;
//! both are doubled there, and refused in unit settings that may or may not
//! be an `Exec` argument.
//!
//! The blueprint's value types already keep such characters out of every
//! field that reaches these formats; the filters hold the same line for
//! templates given other values (`--templates`).

use crate::yaml_text::{yaml_block_text, yaml_inline, yaml_string};
use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind};

fn invalid(msg: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg)
}

/// A TOML basic string with every special character escaped.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `|toml`: a TOML value (string, integer, float, boolean or array of those).
pub fn toml(v: Value) -> Result<String, Error> {
    match v.kind() {
        ValueKind::String => Ok(toml_string(v.as_str().unwrap_or_default())),
        ValueKind::Bool => Ok(if v.is_true() {
            "true".into()
        } else {
            "false".into()
        }),
        ValueKind::Number => Ok(v.to_string()),
        ValueKind::Seq => {
            let items: Result<Vec<String>, Error> = v.try_iter()?.map(toml).collect();
            Ok(format!("[{}]", items?.join(", ")))
        }
        other => Err(invalid(format!("cannot write a {other:?} as a TOML value"))),
    }
}

/// `|json`: JSON text (also a valid YAML flow value).
pub fn json(v: Value) -> Result<String, Error> {
    serde_json::to_string(&v).map_err(|e| invalid(format!("cannot encode as JSON: {e}")))
}

/// `|yaml`: an inline YAML value (strings plain when safe, else quoted;
/// collections in flow style).
pub fn yaml(v: Value) -> Result<String, Error> {
    let j: serde_json::Value =
        serde_json::to_value(&v).map_err(|e| invalid(format!("cannot encode as YAML: {e}")))?;
    Ok(match &j {
        serde_json::Value::String(s) => yaml_string(s),
        serde_json::Value::Array(a) => format!(
            "[{}]",
            a.iter().map(yaml_inline).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    })
}

/// `|yaml_block(indent)`: block YAML (see [`yaml_block_text`]).
pub fn yaml_block(v: Value, indent: Option<usize>) -> Result<String, Error> {
    let j: serde_json::Value =
        serde_json::to_value(&v).map_err(|e| invalid(format!("cannot encode as YAML: {e}")))?;
    let text = yaml_block_text(&j, indent.unwrap_or(0));
    Ok(text.trim_end_matches('\n').to_string())
}

/// `|line`: a value for a line-oriented config file. Refuses what those
/// formats cannot escape: line breaks, control characters, and `#`, which
/// starts a comment in every one of them.
pub fn line(v: Value) -> Result<String, Error> {
    let s = v.to_string();
    if let Some(c) = s.chars().find(|c| c.is_control() || *c == '#') {
        return Err(invalid(format!(
            "{s:?} contains {c:?}, which a line-oriented config file cannot hold"
        )));
    }
    Ok(s)
}

/// `|comment`: text after a `#` that starts a comment line: one line (a line
/// break would end the comment), anything else stays text there, `#` included.
pub fn comment(v: Value) -> Result<String, Error> {
    let s = v.to_string();
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(invalid(format!(
            "{s:?} contains {c:?}, which a comment line cannot hold"
        )));
    }
    Ok(s)
}

/// Characters that mean something in at least one line-based format a
/// token is written to: quotes and `\` (sshd, logrotate, tmpfiles quoting),
/// `{` `}` (logrotate blocks), `%` (tmpfiles specifiers), `$` (shell and
/// unit variables), `;` (sysctl.d comments).
const TOKEN_SYNTAX: &[char] = &['"', '\'', '\\', '{', '}', '%', '$', ';'];

/// `|token`: one plain word (a user name, a host, a path) that no
/// line-based format reads as anything but itself.
pub fn token(v: Value) -> Result<String, Error> {
    let s = line(v)?;
    if s.is_empty() || s.chars().any(char::is_whitespace) {
        return Err(invalid(format!("{s:?} must be one token without spaces")));
    }
    if let Some(c) = s.chars().find(|c| TOKEN_SYNTAX.contains(c)) {
        return Err(invalid(format!(
            "{s:?} contains {c:?}, which a line-oriented config file cannot hold as text"
        )));
    }
    Ok(s)
}

/// `|shell_quote`: one POSIX shell word in single quotes, a `'` inside closed,
/// escaped and reopened, so nothing in it is expanded or split.
pub fn shell_quote(v: Value) -> Result<String, Error> {
    Ok(format!("'{}'", v.to_string().replace('\'', "'\\''")))
}

/// `|cmdline`: a kernel argument; a narrow character set, since GRUB's
/// config is sourced by a shell and the kernel splits on spaces. The same set
/// the blueprint's kernel-argument type accepts, so a valid blueprint renders.
pub fn cmdline(v: Value) -> Result<String, Error> {
    let s = v.to_string();
    let ok = !s.is_empty() && s.chars().all(crate::blueprint::value::carried_char);
    if !ok {
        return Err(invalid(format!(
            "kernel argument {s:?} has characters the command line cannot carry"
        )));
    }
    Ok(s)
}

/// `|unit`: one argument of a systemd `Exec` line: one line, `%` doubled
/// (it starts a specifier), `$` doubled (it starts a variable), and, when it
/// holds spaces, quotes or backslashes, written as one quoted word with
/// C-style escapes (systemd.service(5), "Command lines").
pub fn unit(v: Value) -> Result<String, Error> {
    let s = v.to_string();
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(invalid(format!(
            "{s:?} contains {c:?}, which a unit file cannot hold"
        )));
    }
    let s = s.replace('%', "%%").replace('$', "$$");
    if s.is_empty()
        || s.chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ';'))
    {
        let mut q = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                c => q.push(c),
            }
        }
        q.push('"');
        return Ok(q);
    }
    Ok(s)
}

/// `|unit_word`: a value for a unit setting that takes one word or path
/// (`Where=`, `What=`, `ConditionPathExists=`, `Description=` names, or a
/// word inside an `Exec` argument): no quoting exists there, so whitespace,
/// quotes and backslashes are refused, and so is `$`, which an `Exec` line
/// expands and other settings keep (no one escape is right for both); `%`
/// is doubled.
pub fn unit_word(v: Value) -> Result<String, Error> {
    let s = v.to_string();
    if s.is_empty()
        || s.chars()
            .any(|c| c.is_control() || c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | '$'))
    {
        return Err(invalid(format!(
            "{s:?} cannot be written as one word in a unit file"
        )));
    }
    Ok(s.replace('%', "%%"))
}

/// `|unit_path`: a path escaped the way `systemd-escape --path` does, for
/// mount unit names (`/var/lib/containerd` → `var-lib-containerd`).
pub fn unit_path(v: Value) -> Result<String, Error> {
    let s = v.to_string();
    let trimmed = s.trim_matches('/');
    if trimmed.is_empty() {
        return Ok("-".into());
    }
    let mut out = String::new();
    for (i, b) in trimmed.bytes().enumerate() {
        match b {
            b'/' => out.push('-'),
            b'.' if i == 0 => out.push_str("\\x2e"),
            // systemd's VALID_CHARS less `-` and `\` (unit_name_path_escape).
            b if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':') => {
                out.push(b as char)
            }
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NASTY: &str = "a\"b\nc]d#e\\f";

    #[test]
    fn shell_quote_keeps_a_word_whole() {
        let nasty = format!("{NASTY}'$(x) `y` *");
        let script = format!(
            "printf %s {}",
            shell_quote(Value::from(nasty.as_str())).unwrap()
        );
        let o = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(o.stdout).unwrap(), nasty);
    }

    #[test]
    fn toml_round_trips_nasty_strings() {
        let doc = format!("k = {}\n", toml(Value::from(NASTY)).unwrap());
        let parsed: ::toml::Table = ::toml::from_str(&doc).unwrap();
        assert_eq!(parsed["k"].as_str(), Some(NASTY));
        let arr = toml(Value::from(vec![NASTY, "x"])).unwrap();
        let parsed: ::toml::Table = ::toml::from_str(&format!("k = {arr}\n")).unwrap();
        assert_eq!(parsed["k"][0].as_str(), Some(NASTY));
    }

    #[test]
    fn yaml_round_trips_nasty_strings() {
        for s in [
            NASTY, "yes", "No", "on", "0644", "1.30", "", "- a", "a: b", "@x", "null", "~", "y",
        ] {
            let doc = format!("k: {}\n", yaml(Value::from(s)).unwrap());
            let parsed: serde_yaml::Value = serde_yaml::from_str(&doc).unwrap();
            assert_eq!(parsed["k"].as_str(), Some(s), "{doc}");
            // The YAML 1.1 words must be quoted, so Go's yaml.v2 reads text too.
            if ["yes", "No", "on", "y", "0644"].contains(&s) {
                assert!(doc.contains('"'), "{doc}");
            }
        }
        assert_eq!(
            yaml(Value::from("nvidia.com/gpu")).unwrap(),
            "nvidia.com/gpu"
        );
    }

    #[test]
    fn line_formats_refuse_what_they_cannot_escape() {
        for bad in ["a\nb", "a#b", "a\rb", "a\0b"] {
            assert!(line(Value::from(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(
            line(Value::from("pool.ntp.org iburst")).unwrap(),
            "pool.ntp.org iburst"
        );
        assert!(token(Value::from("a b")).is_err());
        assert!(cmdline(Value::from("a\"b")).is_err());
        assert!(cmdline(Value::from("$(reboot)")).is_err());
        assert_eq!(cmdline(Value::from("iommu=pt")).unwrap(), "iommu=pt");
    }

    #[test]
    fn tokens_refuse_format_syntax() {
        for bad in [
            "a\"b",
            "a'b",
            "a\\x20b",
            "/var/log/x}",
            "{",
            "/var/%m",
            "${X}",
            "a;b",
            "a b",
            "",
        ] {
            assert!(token(Value::from(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(
            token(Value::from("/var/log/*.log")).unwrap(),
            "/var/log/*.log"
        );
    }

    #[test]
    fn unit_values() {
        assert_eq!(unit(Value::from("/usr/bin/x")).unwrap(), "/usr/bin/x");
        assert_eq!(unit(Value::from("50%")).unwrap(), "50%%");
        assert_eq!(unit(Value::from("/run/cdi${X}")).unwrap(), "/run/cdi$${X}");
        assert!(unit_word(Value::from("/run/cdi${X}")).is_err());
        assert_eq!(unit_word(Value::from("/var/%h")).unwrap(), "/var/%%h");
        assert_eq!(unit(Value::from("a b\"c")).unwrap(), "\"a b\\\"c\"");
        assert!(unit(Value::from("a\nb")).is_err());
        assert_eq!(
            unit_path(Value::from("/var/lib/containerd")).unwrap(),
            "var-lib-containerd"
        );
        assert_eq!(
            unit_path(Value::from("/var/cache/my-models")).unwrap(),
            "var-cache-my\\x2dmodels"
        );
        assert_eq!(unit_path(Value::from("/srv/data:1")).unwrap(), "srv-data:1");
    }
}
