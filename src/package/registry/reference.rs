//! Image references — registry, repository, and a tag and/or a digest — each part checked
//! against the grammar of the OCI distribution spec before any request is made.
//!
//! A push names a tag (from the user's REF or from the layout's `index.json`
//! `org.opencontainers.image.ref.name`, input from whoever wrote the layout); a pull
//! names a digest, and a tag alone only when the caller allows it. A tag is
//! `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}` (ASCII), a digest `sha256:` and 64 lowercase hex
//! digits, so `..`, `/`, `?` and `#` can never reach a URL; URLs are built segment by
//! segment as well, so nothing in a name is ever read as URL syntax.
//!
//! Grammar: <https://github.com/opencontainers/distribution-spec/blob/main/spec.md#pulling-manifests>.

use std::str::FromStr;

use oci_spec::distribution::Reference as Parsed;

use crate::package::digest::Digest;

/// A checked image reference: where the image is, and which one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]` as the user wrote it (`docker.io` for Docker Hub).
    registry: String,
    /// The host the API is spoken to (`index.docker.io` for Docker Hub).
    api_host: String,
    repository: String,
    tag: Option<String>,
    digest: Option<Digest>,
}

/// Why a reference or tag cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceError(pub String);

/// Checks a tag: ASCII `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
pub fn check_tag(tag: &str) -> Result<(), String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut chars = tag.chars();
    let valid = tag.len() <= 128
        && chars.next().is_some_and(word)
        && chars.all(|c| word(c) || c == '.' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a tag: a tag is 1 to 128 of A-Z a-z 0-9 _ . - and does not start with . or -",
            tag.escape_debug()
        ))
    }
}

/// Checks a repository path: lowercase components joined by `/`, each
/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
fn check_repository(repository: &str) -> Result<(), String> {
    let component = |c: &str| {
        let bytes = c.as_bytes();
        let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if !bytes.first().copied().is_some_and(alnum) || !bytes.last().copied().is_some_and(alnum) {
            return false;
        }
        let mut i = 0;
        while i < bytes.len() {
            if alnum(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && !alnum(bytes[i]) {
                i += 1;
            }
            let sep = &c[start..i];
            let dashes = sep.bytes().all(|b| b == b'-');
            if !(sep == "." || sep == "_" || sep == "__" || dashes) {
                return false;
            }
        }
        true
    };
    if repository.len() <= 255 && repository.split('/').all(component) {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a repository name: lowercase letters and digits, separated by . _ __ - and /",
            repository.escape_debug()
        ))
    }
}

/// Checks a registry host: `host[:port]` of letters, digits, `.`, `-` (or a bracketed
/// IPv6 address).
fn check_registry(registry: &str) -> Result<(), String> {
    let (host, port) = match registry.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && !p.contains(']') => (h, Some(p)),
        _ => (registry, None),
    };
    let host_ok = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        !v6.is_empty()
            && v6
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
    } else {
        !host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            })
    };
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|n| n > 0));
    if host_ok && port_ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a registry host (`host[:port]`)",
            registry.escape_debug()
        ))
    }
}

/// Whether a pull may name an image by tag alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagPolicy {
    /// A digest is required: a tag can be moved to another image at any time.
    DigestOnly,
    /// A tag alone is taken (the caller asked for it, e.g. `--allow-tag`).
    AllowTag,
}

impl Reference {
    /// Parses a push destination, REF (`registry[:port]/repository[:tag]`). Without a
    /// tag, `default_tag` (the layout's) is used and checked; a digest reference is
    /// refused, since a push names a tag.
    pub fn for_push(reference: &str, default_tag: Option<&str>) -> Result<Self, ReferenceError> {
        let bad = |message: String| ReferenceError(message);
        if reference.contains('@') {
            return Err(bad("push needs a tag (`name:tag`), not a digest".into()));
        }
        let (parsed, explicit) = parse(reference)?;
        let tag = match explicit {
            Some(tag) => tag,
            None => {
                let tag = default_tag.ok_or_else(|| {
                    bad("has no tag and the layout's index names none; add `:tag`".into())
                })?;
                check_tag(tag).map_err(|m| {
                    bad(format!(
                        "has no tag, and the one the layout's index.json names cannot be used: {m}; add `:tag` to REF"
                    ))
                })?;
                tag.to_owned()
            }
        };
        Ok(Reference {
            tag: Some(tag),
            digest: None,
            ..parsed
        })
    }

    /// Parses an image to pull, `registry[:port]/repository[:tag]@sha256:<hex>`. A
    /// reference without a digest is refused unless `policy` allows a tag alone; one with
    /// neither a tag nor a digest is always refused (no implicit `latest`).
    pub fn for_pull(reference: &str, policy: TagPolicy) -> Result<Self, ReferenceError> {
        let bad = |message: String| ReferenceError(message);
        let (name, digest) = match reference.split_once('@') {
            Some((name, digest)) => {
                let digest = Digest::from_str(digest).map_err(|e| {
                    bad(format!(
                        "`{}` is not a sha256 digest ({e}); expected `@sha256:` and 64 hex digits",
                        digest.escape_debug()
                    ))
                })?;
                (name, Some(digest))
            }
            None => (reference, None),
        };
        let (parsed, tag) = parse(name)?;
        match (&tag, &digest, policy) {
            (_, Some(_), _) | (Some(_), None, TagPolicy::AllowTag) => {}
            (Some(tag), None, TagPolicy::DigestOnly) => {
                return Err(bad(format!(
                    "names the image by its tag `{tag}` alone, and a tag can be moved to another image; \
                     give the digest (`{name}@sha256:…`, printed by `nodeimg push`), or pass --allow-tag"
                )));
            }
            (None, None, _) => {
                return Err(bad(
                    "names no image: add `@sha256:<digest>` (or `:tag` with --allow-tag)".into(),
                ));
            }
        }
        Ok(Reference {
            tag,
            digest,
            ..parsed
        })
    }

    /// The same repository, naming `tag` (a tag nodeimg makes, e.g. `sha256-<hex>.sig`).
    pub fn with_tag(&self, tag: &str) -> Result<Self, ReferenceError> {
        check_tag(tag).map_err(ReferenceError)?;
        Ok(Reference {
            tag: Some(tag.to_owned()),
            digest: None,
            ..self.clone()
        })
    }

    /// The same repository, naming the manifest `digest`.
    pub fn with_digest(&self, digest: &Digest) -> Self {
        Reference {
            tag: None,
            digest: Some(digest.clone()),
            ..self.clone()
        }
    }

    /// `host[:port]` as written (what credentials are looked up by).
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The host the registry API is spoken to.
    pub fn api_host(&self) -> &str {
        &self.api_host
    }

    pub fn repository(&self) -> &str {
        &self.repository
    }

    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    pub fn digest(&self) -> Option<&Digest> {
        self.digest.as_ref()
    }

    /// What a manifest request names: the digest when there is one, else the tag.
    pub fn manifest_ref(&self) -> String {
        match (&self.digest, &self.tag) {
            (Some(d), _) => d.to_string(),
            (None, Some(t)) => t.clone(),
            (None, None) => String::new(),
        }
    }

    /// `registry/repository`, the name without tag or digest.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// `registry/repository[:tag][@digest]`.
    pub fn whole(&self) -> String {
        let mut s = self.name();
        if let Some(t) = &self.tag {
            s.push(':');
            s.push_str(t);
        }
        if let Some(d) = &self.digest {
            s.push('@');
            s.push_str(&d.to_string());
        }
        s
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.whole())
    }
}

/// `registry[:port]/repository[:tag]` (no digest), checked; the tag when one is written.
fn parse(reference: &str) -> Result<(Reference, Option<String>), ReferenceError> {
    let bad = |message: String| ReferenceError(message);
    let parsed = Parsed::from_str(reference).map_err(|e| {
        bad(format!(
            "{e}; expected `registry[:port]/repository[:tag]`, e.g. `registry.example:5000/nodes/h100:2026.11.1`"
        ))
    })?;
    let last = reference.rsplit('/').next().unwrap_or(reference);
    let tag = if last.contains(':') {
        let tag = parsed.tag().unwrap_or_default().to_owned();
        check_tag(&tag).map_err(bad)?;
        Some(tag)
    } else {
        None
    };
    check_repository(parsed.repository()).map_err(bad)?;
    check_registry(parsed.registry()).map_err(bad)?;
    check_registry(parsed.resolve_registry()).map_err(bad)?;
    Ok((
        Reference {
            registry: parsed.registry().to_owned(),
            api_host: parsed.resolve_registry().to_owned(),
            repository: parsed.repository().to_owned(),
            tag: None,
            digest: None,
        },
        tag,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_with_and_without_a_tag() {
        let t = Reference::for_push("127.0.0.1:5000/nodes/h100:v1", Some("x")).unwrap();
        assert_eq!(
            (t.registry(), t.repository(), t.tag()),
            ("127.0.0.1:5000", "nodes/h100", Some("v1"))
        );
        let t = Reference::for_push("127.0.0.1:5000/nodes/h100", Some("2026.11.1")).unwrap();
        assert_eq!(t.tag(), Some("2026.11.1"));
        assert_eq!(t.whole(), "127.0.0.1:5000/nodes/h100:2026.11.1");
        assert!(Reference::for_push("127.0.0.1:5000/nodes/h100", None).is_err());
        let t = Reference::for_push("docker.io/team/app:1", None).unwrap();
        assert_eq!(
            (t.registry(), t.api_host()),
            ("docker.io", "index.docker.io")
        );
    }

    #[test]
    fn malformed_references_are_refused() {
        for bad in [
            "",
            "a b",
            "reg:5000/x@sha256:abc",
            "x::y",
            "reg:5000/x:-bad",
            "reg/x/",
            "reg:5000/x:t\u{e9}",
            "reg:5000/../x:t",
        ] {
            assert!(Reference::for_push(bad, Some("t")).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_layout_tag_cannot_smuggle_a_path_query_or_fragment() {
        for tag in [
            "../../victim/manifests/prod",
            "x?y=1",
            "x#frag",
            "a/b",
            "..",
            ".hidden",
            "-x",
            "x%2F..",
            "t\u{e9}",
            "line\nbreak",
            "",
        ] {
            let e = Reference::for_push("127.0.0.1:5000/nodes/h100", Some(tag)).unwrap_err();
            assert!(e.0.contains("index.json"), "{tag}: {}", e.0);
        }
        assert!(check_tag(&"a".repeat(128)).is_ok());
        assert!(check_tag(&"a".repeat(129)).is_err());
        assert!(check_tag("v1.2_3-rc.4").is_ok());
    }

    #[test]
    fn pulls_name_a_digest_unless_a_tag_is_allowed() {
        let hex = "a".repeat(64);
        let r = Reference::for_pull(
            &format!("127.0.0.1:5000/nodes/h100@sha256:{hex}"),
            TagPolicy::DigestOnly,
        )
        .unwrap();
        assert_eq!(r.manifest_ref(), format!("sha256:{hex}"));
        assert_eq!(r.tag(), None);
        let r = Reference::for_pull(
            &format!("reg:5000/nodes/h100:v1@sha256:{hex}"),
            TagPolicy::DigestOnly,
        )
        .unwrap();
        assert_eq!(
            (r.tag(), r.manifest_ref()),
            (Some("v1"), format!("sha256:{hex}"))
        );
        assert_eq!(r.whole(), format!("reg:5000/nodes/h100:v1@sha256:{hex}"));
        let e = Reference::for_pull("reg:5000/nodes/h100:v1", TagPolicy::DigestOnly).unwrap_err();
        assert!(e.0.contains("--allow-tag"), "{}", e.0);
        let r = Reference::for_pull("reg:5000/nodes/h100:v1", TagPolicy::AllowTag).unwrap();
        assert_eq!(r.manifest_ref(), "v1");
        for bad in [
            "reg:5000/nodes/h100",
            "reg:5000/nodes/h100@sha256:abc",
            "reg:5000/nodes/h100@md5:00",
            &format!("reg:5000/nodes/h100@sha256:{}", "A".repeat(64)),
            &format!("reg:5000/../x@sha256:{hex}"),
        ] {
            assert!(
                Reference::for_pull(bad, TagPolicy::AllowTag).is_err(),
                "{bad}"
            );
        }
    }
}
