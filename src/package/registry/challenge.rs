//! The `WWW-Authenticate` challenge of a registry's `401` (RFC 7235 section 4.1):
//! `Basic realm="..."`, or `Bearer realm="https://auth.example/token",service="..."`
//! for the token flow of the distribution spec
//! (<https://distribution.github.io/distribution/spec/auth/token/>).

use std::collections::BTreeMap;

/// What the registry asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
    },
}

/// Parses one challenge; `None` when the scheme is neither Basic nor Bearer (or a Bearer
/// challenge names no realm).
pub fn parse(header: &str) -> Option<Challenge> {
    let header = header.trim();
    let (scheme, rest) = header
        .split_once(char::is_whitespace)
        .unwrap_or((header, ""));
    if scheme.eq_ignore_ascii_case("basic") {
        return Some(Challenge::Basic);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let params = params(rest);
    Some(Challenge::Bearer {
        realm: params.get("realm")?.clone(),
        service: params.get("service").cloned(),
    })
}

/// `key=value, key="quoted \"value\""` → map with lowercase keys.
fn params(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && *c != ','))
            .collect::<String>()
            .trim()
            .to_ascii_lowercase();
        if key.is_empty() || chars.next() != Some('=') {
            break;
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'"').is_some() {
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => value.extend(chars.next()),
                    c => value.push(c),
                }
            }
        } else {
            value.extend(std::iter::from_fn(|| chars.next_if(|c| *c != ',')));
            value = value.trim().to_owned();
        }
        out.insert(key, value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_and_bearer_challenges() {
        assert_eq!(parse("Basic realm=\"Registry\""), Some(Challenge::Basic));
        assert_eq!(
            parse(
                "Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\",scope=\"repository:a/b:pull\""
            ),
            Some(Challenge::Bearer {
                realm: "https://auth.docker.io/token".into(),
                service: Some("registry.docker.io".into()),
            })
        );
        assert_eq!(
            parse("bearer service=x, realm=https://t.example/token"),
            Some(Challenge::Bearer {
                realm: "https://t.example/token".into(),
                service: Some("x".into()),
            })
        );
        assert_eq!(
            parse("Bearer realm=\"a\\\"b\""),
            Some(Challenge::Bearer {
                realm: "a\"b".into(),
                service: None
            })
        );
        assert_eq!(parse("Bearer service=x"), None);
        assert_eq!(parse("Negotiate"), None);
        assert_eq!(parse(""), None);
    }
}
