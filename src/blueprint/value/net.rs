//! Network names as configuration files take them: host names and IP
//! addresses (chrony servers), DNS domains (resolver search domains),
//! registry hosts (`name[:port]`) and registry mirror URLs.
//!
//! Each is a narrow grammar, so a value that validates is one token in every
//! line-based format it reaches (chrony.conf, resolved.conf) and one path
//! segment where it names a folder (`certs.d/<host>/`).

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;

use super::text_value;

/// A DNS name (RFC 1123 labels: letters, digits, `-`, `_` inside; labels
/// 1–63, the whole at most 253, an optional trailing dot).
fn check_dns_name(s: &str, what: &str) -> Result<(), String> {
    let body = s.strip_suffix('.').unwrap_or(s);
    if body.is_empty() || body.len() > 253 {
        return Err(format!("{what} `{s}` must be 1–253 characters"));
    }
    for label in body.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !ok {
            return Err(format!(
                "{what} `{s}` is not a DNS name (labels of letters, digits and `-`, separated by `.`)"
            ));
        }
    }
    Ok(())
}

macro_rules! text_newtype {
    ($name:ident) => {
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}
pub(crate) use text_newtype;

/// A host name or an IP address (an NTP server, say).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostName(String);
text_newtype!(HostName);

impl FromStr for HostName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.parse::<IpAddr>().is_ok() || check_dns_name(s, "host").is_ok() {
            return Ok(Self(s.to_string()));
        }
        Err(format!(
            "`{s}` is neither a host name (e.g. time.example.com) nor an IP address"
        ))
    }
}

text_value!(
    HostName,
    "host-name",
    "A host name (time.example.com) or an IP address.",
    numbers = false
);

/// A DNS domain for resolver search lists; a leading `~` makes it a
/// routing-only domain (systemd-resolved), and `~.` routes every domain.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DomainName(String);
text_newtype!(DomainName);

impl FromStr for DomainName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let body = s.strip_prefix('~').unwrap_or(s);
        if body == "." && s.starts_with('~') {
            return Ok(Self(s.to_string()));
        }
        check_dns_name(body, "domain")?;
        Ok(Self(s.to_string()))
    }
}

text_value!(
    DomainName,
    "domain-name",
    "A DNS domain, e.g. corp.example.com (`~domain` for a routing-only domain).",
    numbers = false
);

/// A registry as image references name it: `host[:port]`, the host a DNS
/// name, an IPv4 address or a bracketed IPv6 address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegistryHost(String);
text_newtype!(RegistryHost);

fn split_host_port(s: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(rest) = s.strip_prefix('[') {
        let (ip, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("`{s}` opens `[` without closing it"))?;
        ip.parse::<Ipv6Addr>()
            .map_err(|_| format!("`[{ip}]` is not an IPv6 address"))?;
        return match after {
            "" => Ok((ip, None)),
            p => p
                .strip_prefix(':')
                .map(|p| (ip, Some(p)))
                .ok_or_else(|| format!("`{s}` has text after `]` that is not `:port`")),
        };
    }
    Ok(match s.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    })
}

fn check_port(p: &str, s: &str) -> Result<(), String> {
    match p.parse::<u16>() {
        Ok(n) if n > 0 && !p.starts_with('+') => Ok(()),
        _ => Err(format!("`{s}`: `{p}` is not a port (1–65535)")),
    }
}

impl FromStr for RegistryHost {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let why = "a registry host is `name[:port]`, without a scheme or a path";
        if s.contains("://") || s.contains('/') {
            return Err(format!("`{s}` is not a registry host: {why}"));
        }
        let (host, port) = split_host_port(s).map_err(|e| format!("{e}; {why}"))?;
        if !s.starts_with('[') && host.parse::<std::net::Ipv4Addr>().is_err() {
            check_dns_name(host, "registry host").map_err(|e| format!("{e}; {why}"))?;
        }
        if let Some(p) = port {
            check_port(p, s)?;
        }
        Ok(Self(s.to_string()))
    }
}

text_value!(
    RegistryHost,
    "registry-host",
    "A registry host as image names spell it: `docker.io`, `registry.corp:5000`, `[fd00::1]:5000`.",
    numbers = false
);

/// A registry mirror: `http://` or `https://`, a registry host, and an
/// optional path of plain segments (no query, fragment or credentials).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MirrorUrl(String);
text_newtype!(MirrorUrl);

impl FromStr for MirrorUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("mirror `{s}` is not an http(s) URL: {why}");
        let rest = s
            .strip_prefix("https://")
            .or_else(|| s.strip_prefix("http://"))
            .ok_or_else(|| bad("it must start with https:// or http://"))?;
        let (host, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if host.contains('@') {
            return Err(bad("credentials do not belong in the URL"));
        }
        host.parse::<RegistryHost>().map_err(|e| bad(&e))?;
        if let Some(c) = path
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_' | '~')))
        {
            return Err(bad(&format!(
                "its path holds `{}`; use letters, digits and / . - _ ~",
                c.escape_debug()
            )));
        }
        if path.split('/').any(|seg| seg == "..") {
            return Err(bad("its path must not contain `..`"));
        }
        Ok(Self(s.to_string()))
    }
}

text_value!(
    MirrorUrl,
    "mirror-url",
    "A registry mirror endpoint: https://host[:port][/path].",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for ok in [
            "time.example.com",
            "10.0.0.1",
            "fd00::1",
            "ntp_1.corp",
            "a.",
        ] {
            assert!(ok.parse::<HostName>().is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a b",
            "a#b",
            "-a",
            "a..b",
            "pool.ntp.org iburst",
            "a\"b",
            "%m",
        ] {
            assert!(bad.parse::<HostName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn domains() {
        for ok in ["corp.example.com", "~corp.example.com", "~."] {
            assert!(ok.parse::<DomainName>().is_ok(), "{ok}");
        }
        for bad in ["", ".", "a b", "a#b", "~"] {
            assert!(bad.parse::<DomainName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn registries() {
        for ok in [
            "docker.io",
            "registry.corp:5000",
            "10.1.2.3:5000",
            "[fd00::1]:5000",
            "[fd00::1]",
            "localhost",
        ] {
            assert!(ok.parse::<RegistryHost>().is_ok(), "{ok}");
        }
        for bad in [
            "https://docker.io",
            "docker.io/library",
            "a:0",
            "a:99999",
            "[zz]:1",
            "a b",
            "a\"b",
            "..",
            "",
        ] {
            assert!(bad.parse::<RegistryHost>().is_err(), "{bad:?}");
        }
        for ok in ["https://mirror.corp", "http://10.0.0.1:5000/v2/proxy"] {
            assert!(ok.parse::<MirrorUrl>().is_ok(), "{ok}");
        }
        for bad in [
            "mirror.corp",
            "https://u:p@mirror.corp",
            "https://m.corp/a?b",
            "https://m.corp/a\"b",
            "https://m.corp/../x",
            "ftp://m.corp",
        ] {
            assert!(bad.parse::<MirrorUrl>().is_err(), "{bad:?}");
        }
    }
}
