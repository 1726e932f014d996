//! Registry credentials from the standard auth files, the ones podman,
//! skopeo, buildah and docker write (`podman login`, `docker login`):
//!
//! 1. `$REGISTRY_AUTH_FILE`
//! 2. `${XDG_RUNTIME_DIR}/containers/auth.json`
//! 3. `~/.docker/config.json`
//!
//! The first file that has an entry for the registry wins. Entries are the
//! `auths` map's base64 `user:password` strings; a key may be a host
//! (`registry.example:5000`), a URL (`https://index.docker.io/v1/`) or a
//! host with a repository path (`quay.io/team`), the most specific match
//! counting. Credential helpers (`credsStore`, `credHelpers`) are not run.
//! A file that exists but cannot be read or parsed is an error, never
//! silently skipped, and the error never quotes the file's content: a
//! malformed entry says where it is (line, column, the `auths` key), not
//! what it holds, since what it holds is a password. Files are read with a
//! bound and must be regular files.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

/// A username and password, and the file they came from.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
    pub source: PathBuf,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("source", &self.source)
            .finish()
    }
}

#[derive(Debug, Error)]
#[error("credentials file {}: {message}", path.display())]
pub struct CredentialsError {
    pub path: PathBuf,
    pub message: String,
}

/// Largest auth file read; real ones are a few KiB.
const MAX_AUTH_FILE_BYTES: u64 = 1024 * 1024;

#[derive(Deserialize)]
struct AuthFile {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
}

#[derive(Deserialize)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
}

/// The auth files to consult, in order, from the environment.
pub fn auth_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(p) = std::env::var_os("REGISTRY_AUTH_FILE").filter(|p| !p.is_empty()) {
        files.push(PathBuf::from(p));
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        files.push(Path::new(&d).join("containers").join("auth.json"));
    }
    if let Some(h) = std::env::var_os("HOME").filter(|p| !p.is_empty()) {
        files.push(Path::new(&h).join(".docker").join("config.json"));
    }
    files
}

/// Credentials for `registry` (`host[:port]`) and `repository`, from the
/// first of `files` that has an entry; `None` when none has.
pub fn lookup(
    registry: &str,
    repository: &str,
    files: &[PathBuf],
) -> Result<Option<Credentials>, CredentialsError> {
    for path in files {
        let bytes = match crate::input::read(path, MAX_AUTH_FILE_BYTES) {
            Ok(b) => b,
            Err(e) if e.is_not_found() => continue,
            Err(e) => {
                return Err(CredentialsError {
                    path: path.clone(),
                    message: e.to_string(),
                });
            }
        };
        let err = |message: String| CredentialsError {
            path: path.clone(),
            message,
        };
        let file = parse(&bytes).map_err(err)?;
        let best = file
            .auths
            .iter()
            .filter_map(|(key, entry)| {
                specificity(key, registry, repository).map(|s| (s, key, entry))
            })
            .max_by_key(|(s, _, _)| *s);
        let Some((_, key, entry)) = best else {
            continue;
        };
        let Some(encoded) = entry.auth.as_deref().filter(|a| !a.is_empty()) else {
            continue;
        };
        let decoded = decode_base64(encoded.trim())
            .ok_or_else(|| err(format!("`auths.{key}.auth` is not valid base64")))?;
        let text = String::from_utf8(decoded)
            .map_err(|_| err(format!("`auths.{key}.auth` is not UTF-8 text")))?;
        let (username, password) = text
            .split_once(':')
            .ok_or_else(|| err(format!("`auths.{key}.auth` is not `user:password`")))?;
        return Ok(Some(Credentials {
            username: username.to_string(),
            password: password.to_string(),
            source: path.clone(),
        }));
    }
    Ok(None)
}

/// Parses an auth file. serde_json's own messages quote the offending value
/// (`invalid type: string "dXNlcjpwYXNz..."`), which here is a credential, so
/// errors are rebuilt from the location and the path alone.
fn parse(bytes: &[u8]) -> Result<AuthFile, String> {
    let describe = |path: String, e: &serde_json::Error| {
        let at = format!("line {} column {}", e.line(), e.column());
        let what = if path.is_empty() || path == "." {
            "the document".to_owned()
        } else {
            format!("`{path}`")
        };
        match e.classify() {
            serde_json::error::Category::Data => format!(
                "{what} at {at} has the wrong type; expected {{\"auths\": {{\"HOST\": {{\"auth\": \"BASE64\"}}}}}}"
            ),
            serde_json::error::Category::Eof => format!("not valid JSON: it ends early ({at})"),
            serde_json::error::Category::Syntax | serde_json::error::Category::Io => {
                format!("not valid JSON at {at}")
            }
        }
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let file: AuthFile = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| describe(e.path().to_string(), e.inner()))?;
    de.end().map_err(|e| describe(String::new(), &e))?;
    Ok(file)
}

/// Docker Hub's many names.
fn canonical_host(host: &str) -> &str {
    match host {
        "docker.io" | "index.docker.io" | "registry-1.docker.io" => "docker.io",
        h => h,
    }
}

/// How well an `auths` key matches: `None` if not at all, otherwise the
/// length of its repository path (longer is more specific).
fn specificity(key: &str, registry: &str, repository: &str) -> Option<usize> {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let (host, path) = match key.split_once('/') {
        Some((h, p)) => (h, p.trim_end_matches('/')),
        None => (key, ""),
    };
    if canonical_host(host) != canonical_host(registry) {
        return None;
    }
    // Docker's legacy key `https://index.docker.io/v1/` names the whole host.
    if path.is_empty() || path == "v1" || path == "v2" {
        return Some(0);
    }
    let under = repository == path
        || repository
            .strip_prefix(path)
            .is_some_and(|rest| rest.starts_with('/'));
    under.then_some(path.len())
}

/// Standard base64 (RFC 4648), padding optional.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    ENGINE.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_values() {
        // RFC 4648 section 10 test vectors.
        for (enc, dec) in [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
            ("Zm9vYmFy", "foobar"),
        ] {
            assert_eq!(decode_base64(enc).unwrap(), dec.as_bytes(), "{enc}");
        }
        assert_eq!(decode_base64("Zm9vYg").unwrap(), b"foob");
        for bad in ["Z", "Zm9v!", "Zg===", "Zm9vY"] {
            assert!(decode_base64(bad).is_none(), "{bad}");
        }
    }

    fn write(dir: &Path, name: &str, json: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, json).unwrap();
        p
    }

    #[test]
    fn first_file_with_an_entry_wins_and_most_specific_key_counts() {
        let dir = tempfile::tempdir().unwrap();
        // alice:one / bob:two / carol:three
        let a = write(
            dir.path(),
            "a.json",
            r#"{"auths":{"other.example":{"auth":"YWxpY2U6b25l"}}}"#,
        );
        let b = write(
            dir.path(),
            "b.json",
            r#"{"auths":{"https://reg.example:5000/v1/":{"auth":"Ym9iOnR3bw=="},
                        "reg.example:5000/team":{"auth":"Y2Fyb2w6dGhyZWU="}},
                "credsStore":"desktop"}"#,
        );
        let missing = dir.path().join("missing.json");
        let files = [missing, a.clone(), b.clone()];
        let c = lookup("reg.example:5000", "team/app", &files)
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.username.as_str(), c.password.as_str()),
            ("carol", "three")
        );
        assert_eq!(c.source, b);
        let c = lookup("reg.example:5000", "teamx/app", &files)
            .unwrap()
            .unwrap();
        assert_eq!((c.username.as_str(), c.password.as_str()), ("bob", "two"));
        assert!(lookup("nobody.example", "x", &files).unwrap().is_none());
        assert!(
            !format!("{c:?}").contains("\"two\""),
            "password is redacted"
        );
    }

    #[test]
    fn malformed_entries_never_print_what_they_hold() {
        let dir = tempfile::tempdir().unwrap();
        // user:S3cr3tPassw0rd
        let secret = "dXNlcjpTM2NyM3RQYXNzdzByZA==";
        for (name, json) in [
            (
                "entry.json",
                format!(r#"{{"auths":{{"other.example.com":"{secret}"}}}}"#),
            ),
            ("auths.json", format!(r#"{{"auths":"{secret}"}}"#)),
            (
                "number.json",
                format!(r#"{{"auths":{{"r":{{"auth":{{"x":"{secret}"}}}}}}}}"#),
            ),
            ("trailing.json", format!(r#"{{"auths":{{}}}} "{secret}""#)),
            (
                "syntax.json",
                format!(r#"{{"auths":{{"r":{{"auth":"{secret}" "#),
            ),
        ] {
            let path = write(dir.path(), name, &json);
            let err = lookup("r", "x", &[path]).unwrap_err().to_string();
            assert!(err.contains(name), "{err}");
            assert!(
                !err.contains(secret) && !err.contains("dXNl"),
                "{name}: {err}"
            );
        }
        let path = write(
            dir.path(),
            "where.json",
            &format!("{{\"auths\": {{\n  \"other.example.com\": \"{secret}\"}}}}"),
        );
        let err = lookup("r", "x", &[path]).unwrap_err().to_string();
        assert!(
            err.contains("`auths.other.example.com`") && err.contains("line 2"),
            "{err}"
        );
    }

    #[test]
    fn broken_files_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let bad = write(dir.path(), "bad.json", "{not json");
        let err = lookup("r", "x", &[bad]).unwrap_err().to_string();
        assert!(err.contains("bad.json") && err.contains("JSON"), "{err}");
        let nocolon = write(dir.path(), "nc.json", r#"{"auths":{"r":{"auth":"Zm9v"}}}"#);
        let err = lookup("r", "x", &[nocolon]).unwrap_err().to_string();
        assert!(err.contains("user:password"), "{err}");
    }
}
