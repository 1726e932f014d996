//! Entries of sshd's `AllowUsers` and `AllowGroups`: a name pattern with
//! sshd's wildcards (`*`, `?`), an optional leading `!` (negation) and, for
//! users, an optional `@host` part (a host pattern, an address or a CIDR
//! block), per sshd_config(5) PATTERNS.
//!
//! sshd splits these lines on blanks, treats `"` as quoting and `#` at a
//! word's start as a comment, so a pattern holding any of them would end
//! the line early or make sshd refuse the whole file (and with it every
//! login). The grammar here keeps a pattern one plain word.

use std::fmt;
use std::str::FromStr;

use super::net::text_newtype;
use super::text_value;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SshPattern(String);
text_newtype!(SshPattern);

impl FromStr for SshPattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let rule = "a user or group pattern is letters, digits, `.`, `_`, `-`, the wildcards `*` and `?`, an optional leading `!` and, for users, `@host`";
        if s.is_empty() || s.len() > 255 {
            return Err(format!("`{s}` must be 1–255 characters; {rule}"));
        }
        let body = s.strip_prefix('!').unwrap_or(s);
        let (name, host) = match body.split_once('@') {
            Some((n, h)) => (n, Some(h)),
            None => (body, None),
        };
        let name_ok = !name.is_empty()
            && !name.starts_with('-')
            && name.chars().enumerate().all(|(i, c)| {
                c.is_ascii_alphanumeric()
                    || matches!(c, '.' | '_' | '-' | '*' | '?')
                    // Samba machine accounts end in `$`.
                    || (c == '$' && i == name.len() - 1)
            });
        let host_ok = host.is_none_or(|h| {
            !h.is_empty()
                && h.chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(c, '.' | '_' | '-' | '*' | '?' | ':' | '/')
                })
        });
        if name_ok && host_ok {
            Ok(Self(s.to_string()))
        } else {
            Err(format!("`{s}` is not an sshd pattern; {rule}"))
        }
    }
}

text_value!(
    SshPattern,
    "ssh-pattern",
    "An sshd AllowUsers/AllowGroups pattern: a name with optional `*`/`?` wildcards, a leading `!`, and `@host` for users.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::SshPattern;

    #[test]
    fn patterns() {
        for ok in [
            "ops",
            "gpu-ops",
            "svc_*",
            "!guest",
            "admin@10.0.0.0/8",
            "a@*.corp",
            "host$",
        ] {
            assert!(ok.parse::<SshPattern>().is_ok(), "{ok}");
        }
        for bad in [
            "", "gpu\"ops", "a b", "#a", "a#b", "-o", "a@", "@h", "a\\b", "a$b", "a,b", "a\nb",
        ] {
            assert!(bad.parse::<SshPattern>().is_err(), "{bad:?}");
        }
    }
}
