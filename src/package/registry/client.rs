//! The requests of one registry session, spoken to the registry directly (OCI distribution
//! spec, <https://github.com/opencontainers/distribution-spec/blob/main/spec.md>), so that
//! every response body is read with a bound: a registry, or anything on the plain-HTTP
//! path, that answers with an endless body costs at most [`ERROR_BODY_LIMIT`] (an
//! explanation nobody needs in full), [`TOKEN_LIMIT`] (a token) or [`MANIFEST_LIMIT`] (a
//! manifest), never memory without end. (oci-client reads every body whole, errors included.)
//!
//! Blobs are streamed from and to their files, so memory does not grow with the layer
//! size; a blob read is refused past the size its descriptor gives and on another digest.
//! Credentials go only to the registry's own origin and to the token realm it names
//! (which must be HTTPS unless `--insecure`); reqwest drops them on a redirect to another
//! host. A connection that drops is reported as what it is, whatever step it happens in.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use reqwest::header::{self, HeaderValue};
use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};

use super::challenge::{self, Challenge};
use super::reference::Reference;
use super::{Access, RegistryError};
use crate::package::credentials::Credentials;
use crate::package::digest::Digest;

/// Most bytes of an error response read (the explanation in it is a line or two).
pub const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// Most bytes of a token response (a JWT is a few KiB).
pub const TOKEN_LIMIT: usize = 1024 * 1024;
/// Most bytes of a manifest read back; registries need accept no more than 4 MiB.
pub const MANIFEST_LIMIT: usize = 4 * 1024 * 1024;
/// Size of the pieces a blob is streamed in.
pub const BLOB_CHUNK: usize = 1024 * 1024;

/// A registry session for one repository.
pub struct Registry<'a> {
    http: reqwest::Client,
    target: &'a Reference,
    base: Url,
    creds: Option<&'a Credentials>,
    insecure: bool,
    /// The `Authorization` value for requests to the registry's own origin.
    authorization: Option<HeaderValue>,
    /// Appended to authentication failures: where the credentials came from.
    hint: String,
}

/// Standard base64 (RFC 4648) of `bytes`, with padding.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn basic(creds: &Credentials) -> Option<HeaderValue> {
    let raw = format!("{}:{}", creds.username, creds.password);
    let mut value = HeaderValue::from_str(&format!("Basic {}", base64(raw.as_bytes()))).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// The error chain of a failed request, `a: b: c`, without repeats.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = c.source();
    }
    s
}

/// Text from a peer, made safe to print on one line: control characters escaped,
/// at most 300 characters.
fn printable(text: &str) -> String {
    let mut out: String = text
        .trim()
        .chars()
        .take(300)
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if text.trim().chars().count() > 300 {
        out.push('…');
    }
    out
}

/// What an error response says: the distribution spec's `{"errors": [...]}` envelope
/// when it is one, else the start of the text.
fn explain(status: StatusCode, body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Envelope {
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        code: String,
        #[serde(default)]
        message: String,
    }
    let detail = match serde_json::from_slice::<Envelope>(body) {
        Ok(env) if !env.errors.is_empty() => env
            .errors
            .iter()
            .map(|e| printable(&format!("{}: {}", e.code, e.message)))
            .collect::<Vec<_>>()
            .join("; "),
        _ => printable(&String::from_utf8_lossy(body)),
    };
    if detail.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {detail}")
    }
}

/// Reads a body to its end, refusing more than `limit` bytes.
async fn read_body(response: &mut Response, limit: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        format!(
            "the connection failed while reading the answer: {}",
            chain(&e)
        )
    })? {
        if body.len() + chunk.len() > limit {
            return Err(format!(
                "the registry answered with more than {} bytes; refusing to read more",
                crate::input::bytes(limit as u64)
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads at most `limit` bytes of a body and drops the rest (and the connection).
async fn read_some(response: &mut Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    body
}

/// A blob file as a request body, read in [`BLOB_CHUNK`]-sized pieces as it is sent.
fn file_body(path: &Path) -> std::io::Result<reqwest::Body> {
    let mut file = std::fs::File::open(path)?;
    let pieces = std::iter::from_fn(move || {
        let mut buf = vec![0u8; BLOB_CHUNK];
        loop {
            match file.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => {
                    buf.truncate(n);
                    return Some(Ok(buf));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    });
    Ok(reqwest::Body::wrap_stream(futures_util::stream::iter(
        pieces,
    )))
}

impl<'a> Registry<'a> {
    /// A session; `roots`, when given, are the only CA certificates TLS trusts.
    pub fn new(
        target: &'a Reference,
        creds: Option<&'a Credentials>,
        insecure: bool,
        roots: Option<Vec<reqwest::Certificate>>,
        hint: String,
    ) -> Result<Self, RegistryError> {
        let scheme = if insecure { "http" } else { "https" };
        let base = Url::parse(&format!("{scheme}://{}/", target.api_host())).map_err(|e| {
            RegistryError::Reference {
                reference: target.whole(),
                message: format!("registry host: {e}"),
            }
        })?;
        let builder = || {
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .read_timeout(Duration::from_secs(60))
                .user_agent(concat!("nodeimg/", env!("CARGO_PKG_VERSION")))
        };
        let built = match roots {
            Some(roots) => builder().tls_certs_only(roots).build(),
            None => builder().build().or_else(|e| {
                // No trust store on this machine (the node image's own container): plain
                // HTTP needs none, and anything on TLS then fails saying so.
                if insecure {
                    builder().tls_certs_only(Vec::new()).build()
                } else {
                    Err(e)
                }
            }),
        };
        let http = built.map_err(|e| {
            RegistryError::Runtime(std::io::Error::other(format!(
                "{} (no CA certificates to trust: give a root whose trust store has them)",
                chain(&e)
            )))
        })?;
        Ok(Registry {
            http,
            target,
            base,
            creds,
            insecure,
            authorization: None,
            hint,
        })
    }

    fn registry(&self) -> String {
        self.target.api_host().to_owned()
    }

    /// `/v2/<repository>/<rest...>` on the registry, built segment by segment.
    fn url(&self, rest: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.clear().push("v2");
            segments.extend(self.target.repository().split('/'));
            segments.extend(rest);
        }
        url
    }

    fn same_origin(&self, url: &Url) -> bool {
        url.origin() == self.base.origin()
    }

    /// A request, with the session's credentials when it goes to the registry itself.
    fn request(&self, method: Method, url: Url) -> RequestBuilder {
        let send_auth = self.same_origin(&url);
        let builder = self.http.request(method, url);
        match (&self.authorization, send_auth) {
            (Some(value), true) => builder.header(header::AUTHORIZATION, value.clone()),
            _ => builder,
        }
    }

    async fn send(&self, what: &str, builder: RequestBuilder) -> Result<Response, RegistryError> {
        builder.send().await.map_err(|e| {
            let message = chain(&e);
            if e.is_connect() {
                RegistryError::Unreachable {
                    registry: self.registry(),
                    message: super::connect_error::describe(&e, &self.registry(), self.insecure),
                }
            } else {
                RegistryError::Transfer {
                    registry: self.registry(),
                    what: what.to_owned(),
                    message: if e.is_timeout() {
                        format!("no answer in time: {message}")
                    } else {
                        format!("the connection failed before the registry answered: {message}")
                    },
                }
            }
        })
    }

    /// The response when its status is one of `ok`; otherwise an authentication failure
    /// (401, 403) or a transfer failure, with the registry's explanation.
    async fn expect(
        &self,
        what: &str,
        mut response: Response,
        ok: impl Fn(StatusCode) -> bool,
    ) -> Result<Response, RegistryError> {
        let status = response.status();
        if ok(status) {
            return Ok(response);
        }
        let body = read_some(&mut response, ERROR_BODY_LIMIT).await;
        let message = explain(status, &body);
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            Err(RegistryError::Auth {
                registry: self.registry(),
                message: format!("{what}: {message}"),
                hint: self.hint.clone(),
            })
        } else {
            Err(RegistryError::Transfer {
                registry: self.registry(),
                what: what.to_owned(),
                message,
            })
        }
    }

    fn transfer(&self, what: &str, message: String) -> RegistryError {
        RegistryError::Transfer {
            registry: self.registry(),
            what: what.to_owned(),
            message,
        }
    }

    /// Asks `/v2/` what authentication the registry wants and gets it: none, Basic with
    /// the credentials, or a Bearer token from the realm the challenge names.
    pub async fn authenticate(&mut self, access: Access) -> Result<(), RegistryError> {
        let what = "contacting the registry (GET /v2/)";
        let mut url = self.base.clone();
        url.set_path("/v2/");
        let mut response = self.send(what, self.http.get(url)).await?;
        let status = response.status();
        if status.is_success() {
            read_some(&mut response, ERROR_BODY_LIMIT).await;
            return Ok(());
        }
        if status != StatusCode::UNAUTHORIZED {
            return Err(self
                .expect(what, response, |_| false)
                .await
                .err()
                .unwrap_or_else(|| self.transfer(what, format!("HTTP {status}"))));
        }
        let challenges: Vec<String> = response
            .headers()
            .get_all(header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect();
        read_some(&mut response, ERROR_BODY_LIMIT).await;
        let challenge = challenges.iter().find_map(|c| challenge::parse(c));
        let auth_failed = |message: String| RegistryError::Auth {
            registry: self.registry(),
            message,
            hint: self.hint.clone(),
        };
        match challenge {
            Some(Challenge::Basic) => {
                let creds = self
                    .creds
                    .ok_or_else(|| auth_failed("the registry asks for credentials".into()))?;
                self.authorization = basic(creds);
                Ok(())
            }
            Some(Challenge::Bearer { realm, service }) => self.token(&realm, service, access).await,
            None => Err(auth_failed(format!(
                "the registry asks for an authentication scheme this client does not speak ({})",
                printable(&challenges.join(", "))
            ))),
        }
    }

    /// The token flow: GET the realm with the scope, Basic-authenticated when there are
    /// credentials; the answer is `{"token": ...}` or `{"access_token": ...}`.
    async fn token(
        &mut self,
        realm: &str,
        service: Option<String>,
        access: Access,
    ) -> Result<(), RegistryError> {
        #[derive(serde::Deserialize)]
        struct Token {
            token: Option<String>,
            access_token: Option<String>,
        }
        let what = "requesting a token from the registry's auth service";
        let mut url = Url::parse(realm).map_err(|e| {
            self.transfer(
                what,
                format!(
                    "the registry names an unusable token realm `{}`: {e}",
                    printable(realm)
                ),
            )
        })?;
        if !(url.scheme() == "https" || (self.insecure && url.scheme() == "http")) {
            return Err(self.transfer(
                what,
                format!(
                    "the registry names the token realm `{}`; credentials go only to an https:// realm (or http:// with --insecure)",
                    printable(realm)
                ),
            ));
        }
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = &service {
                query.append_pair("service", service);
            }
            query.append_pair(
                "scope",
                &format!("repository:{}:{}", self.target.repository(), access.scope()),
            );
        }
        let mut builder = self.http.get(url);
        if let Some(value) = self.creds.and_then(basic) {
            builder = builder.header(header::AUTHORIZATION, value);
        }
        let response = self.send(what, builder).await?;
        let mut response = self.expect(what, response, |s| s.is_success()).await?;
        let body = read_body(&mut response, TOKEN_LIMIT)
            .await
            .map_err(|m| self.transfer(what, m))?;
        let token: Token = serde_json::from_slice(&body)
            .map_err(|e| self.transfer(what, format!("the answer is not a token document: {e}")))?;
        let token = token
            .token
            .or(token.access_token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| self.transfer(what, "the answer holds no token".into()))?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| self.transfer(what, "the token is not a valid header value".into()))?;
        value.set_sensitive(true);
        self.authorization = Some(value);
        Ok(())
    }

    /// Whether the registry already has the blob.
    pub async fn blob_exists(&self, digest: &Digest) -> Result<bool, RegistryError> {
        let what = format!("checking for blob {digest}");
        let url = self.url(&["blobs", &digest.to_string()]);
        let response = self.send(&what, self.request(Method::HEAD, url)).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(false);
        }
        self.expect(&what, response, |s| s.is_success()).await?;
        Ok(true)
    }

    /// Uploads one blob from `path`: POST to open an upload, then one PUT with the bytes.
    pub async fn upload_blob(
        &self,
        digest: &Digest,
        size: u64,
        path: &Path,
    ) -> Result<(), RegistryError> {
        let what = format!("upload of blob {digest} ({size} bytes)");
        let url = self.url(&["blobs", "uploads", ""]);
        let response = self.send(&what, self.request(Method::POST, url)).await?;
        let mut response = self
            .expect(&what, response, |s| s == StatusCode::ACCEPTED)
            .await?;
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| self.transfer(&what, "the registry gave no upload Location".into()))?;
        read_some(&mut response, ERROR_BODY_LIMIT).await;
        let mut url = self.base.join(&location).map_err(|e| {
            self.transfer(
                &what,
                format!("unusable upload Location `{}`: {e}", printable(&location)),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(self.transfer(
                &what,
                format!("unusable upload Location `{}`", printable(&location)),
            ));
        }
        url.query_pairs_mut()
            .append_pair("digest", &digest.to_string());
        let body = file_body(path)
            .map_err(|e| self.transfer(&what, format!("{}: {e}", path.display())))?;
        let request = self
            .request(Method::PUT, url)
            .header(header::CONTENT_TYPE, "application/octet-stream")
            .header(header::CONTENT_LENGTH, size)
            .body(body);
        let response = self.send(&what, request).await?;
        let mut response = self.expect(&what, response, |s| s.is_success()).await?;
        read_some(&mut response, ERROR_BODY_LIMIT).await;
        Ok(())
    }

    /// Puts a manifest under `reference` (a tag, or its own digest).
    pub async fn put_manifest(
        &self,
        reference: &str,
        media_type: &str,
        bytes: Vec<u8>,
    ) -> Result<(), RegistryError> {
        let what = format!("upload of manifest {reference}");
        let url = self.url(&["manifests", reference]);
        let request = self
            .request(Method::PUT, url)
            .header(header::CONTENT_TYPE, media_type)
            .body(bytes);
        let response = self.send(&what, request).await?;
        let mut response = self.expect(&what, response, |s| s.is_success()).await?;
        read_some(&mut response, ERROR_BODY_LIMIT).await;
        Ok(())
    }

    /// The digest the registry now serves for `tag`: its `Docker-Content-Digest`, or
    /// the digest of the manifest it returns (read with a bound).
    pub async fn manifest_digest(
        &self,
        tag: &str,
        media_type: &str,
    ) -> Result<String, RegistryError> {
        let what = "reading back the manifest digest";
        let url = self.url(&["manifests", tag]);
        let head = self
            .request(Method::HEAD, url.clone())
            .header(header::ACCEPT, media_type);
        let response = self.send(what, head).await?;
        let response = self.expect(what, response, |s| s.is_success()).await?;
        let from_header = |r: &Response| {
            r.headers()
                .get("docker-content-digest")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        if let Some(digest) = from_header(&response) {
            return Ok(digest);
        }
        let get = self
            .request(Method::GET, url)
            .header(header::ACCEPT, media_type);
        let response = self.send(what, get).await?;
        let mut response = self.expect(what, response, |s| s.is_success()).await?;
        let body = read_body(&mut response, MANIFEST_LIMIT)
            .await
            .map_err(|m| self.transfer(what, m))?;
        Ok(Digest::of(&body).to_string())
    }

    /// The manifest `reference` names (a tag or a digest), as the registry's media type
    /// and exact bytes, read with [`MANIFEST_LIMIT`]; `None` when the registry has none
    /// (404). A manifest asked for by digest is hashed and must have that digest.
    pub async fn get_manifest(
        &self,
        reference: &str,
        accept: &[&str],
    ) -> Result<Option<(String, Vec<u8>)>, RegistryError> {
        let what = format!("reading manifest {reference}");
        let url = self.url(&["manifests", reference]);
        let mut request = self.request(Method::GET, url);
        for media_type in accept {
            request = request.header(header::ACCEPT, *media_type);
        }
        let response = self.send(&what, request).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let mut response = self.expect(&what, response, |s| s.is_success()).await?;
        let media_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_owned())
            .unwrap_or_default();
        let body = read_body(&mut response, MANIFEST_LIMIT)
            .await
            .map_err(|m| self.transfer(&what, m))?;
        if let Ok(wanted) = reference.parse::<Digest>() {
            let got = Digest::of(&body);
            if got != wanted {
                return Err(self.content(
                    &what,
                    format!("the registry sent a manifest whose digest is {got}"),
                ));
            }
        }
        Ok(Some((media_type, body)))
    }

    /// Streams blob `digest` into `path` (created new, never over an existing file),
    /// refusing more than `size` bytes, fewer, or another digest. On any failure the
    /// partial file is removed.
    pub async fn get_blob(
        &self,
        digest: &Digest,
        size: u64,
        path: &Path,
    ) -> Result<(), RegistryError> {
        let what = format!("download of blob {digest} ({size} bytes)");
        let result = self.get_blob_into(&what, digest, size, path).await;
        if result.is_err() {
            let _ = std::fs::remove_file(path);
        }
        result
    }

    async fn get_blob_into(
        &self,
        what: &str,
        digest: &Digest,
        size: u64,
        path: &Path,
    ) -> Result<(), RegistryError> {
        use sha2::Digest as _;
        use std::io::Write;
        let url = self.url(&["blobs", &digest.to_string()]);
        let response = self.send(what, self.request(Method::GET, url)).await?;
        let mut response = self.expect(what, response, |s| s.is_success()).await?;
        if let Some(len) = response.content_length()
            && len > size
        {
            return Err(self.content(
                what,
                format!("the registry announces {len} bytes, the descriptor says {size}"),
            ));
        }
        let local = |e: std::io::Error| RegistryError::Local {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(local)?;
        let mut hasher = sha2::Sha256::new();
        let mut received: u64 = 0;
        loop {
            let chunk = response.chunk().await.map_err(|e| {
                self.transfer(what, format!("the connection failed: {}", chain(&e)))
            })?;
            let Some(chunk) = chunk else { break };
            received += chunk.len() as u64;
            if received > size {
                return Err(self.content(
                    what,
                    format!("the registry sent more than the {size} bytes the descriptor gives"),
                ));
            }
            hasher.update(&chunk);
            file.write_all(&chunk).map_err(local)?;
        }
        if received != size {
            return Err(self.content(
                what,
                format!("the registry sent {received} bytes, the descriptor gives {size}"),
            ));
        }
        let got = Digest::from_sha256(hasher);
        if &got != digest {
            return Err(self.content(what, format!("the bytes received have digest {got}")));
        }
        file.sync_all().map_err(local)?;
        Ok(())
    }

    /// The referrers of manifest `digest` by the referrers API (`GET
    /// /v2/<name>/referrers/<digest>`, an image index), read with [`MANIFEST_LIMIT`];
    /// `None` when the registry does not serve the API (404), so the caller falls back to
    /// the `sha256-<hex>` tag.
    pub async fn referrers(&self, digest: &Digest) -> Result<Option<Vec<u8>>, RegistryError> {
        let what = format!("listing the referrers of {digest}");
        let url = self.url(&["referrers", &digest.to_string()]);
        let request = self
            .request(Method::GET, url)
            .header(header::ACCEPT, "application/vnd.oci.image.index.v1+json");
        let response = self.send(&what, request).await?;
        if response.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let mut response = self.expect(&what, response, |s| s.is_success()).await?;
        let is_index = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/vnd.oci.image.index.v1+json"));
        let body = read_body(&mut response, MANIFEST_LIMIT)
            .await
            .map_err(|m| self.transfer(&what, m))?;
        // A registry that routes unknown paths to something else answers 200 with other
        // content: only an image index is the API's answer.
        Ok(is_index.then_some(body))
    }

    /// An error for content the registry served that is not what was asked for.
    pub fn content_error(&self, what: &str, message: String) -> RegistryError {
        self.content(what, message)
    }

    fn content(&self, what: &str, message: String) -> RegistryError {
        RegistryError::Content {
            registry: self.registry(),
            what: what.to_owned(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc, "{raw}");
        }
    }

    #[test]
    fn explanations_are_one_safe_line() {
        let e = explain(
            StatusCode::BAD_REQUEST,
            br#"{"errors":[{"code":"TAG_INVALID","message":"bad\ntag\u001b[2J"}]}"#,
        );
        assert_eq!(e, "HTTP 400 Bad Request: TAG_INVALID: bad\\ntag\\u{1b}[2J");
        let e = explain(StatusCode::BAD_GATEWAY, &b"x".repeat(1000));
        assert!(e.ends_with('…') && e.len() < 400, "{e}");
        assert_eq!(explain(StatusCode::NOT_FOUND, b""), "HTTP 404 Not Found");
    }
}
