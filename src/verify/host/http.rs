//! The one kind of network request verify makes: an HTTPS GET to the BMC's Redfish service
//! over the host interface (DMTF DSP0270), answered as a host operation so that a capture
//! keeps each body and a replay answers it (stored with the command outputs, keyed
//! `GET URL`).
//!
//! The request is bounded: one deadline for connect, TLS, headers and body, a cap on the
//! body (more is an error, not a prefix), no redirects, no proxy. Basic-auth credentials
//! come from a file the request names and are read only when it is made: they are never
//! part of the key, the recording, a message or an error.
//!
//! The GETs of one walk share an [`HttpClient`]: TLS is configured, the files are read and
//! the connection is made once, not per document.
//!
//! The client is reqwest (with rustls), which the binary carries with the `push` feature,
//! as the static verifier (scripts/build-verifier) is built. A nodeimg built without it
//! answers every request with an error saying so, and the BMC is read through IPMI.

use super::error::{HostError, HostErrorKind, HostOp};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Most bytes of a credentials file (`USER:PASSWORD` and a newline).
pub const CREDENTIALS_LIMIT: u64 = 4096;
/// Most bytes of a CA file (a PEM certificate is 1–2 KiB; a distribution's whole bundle
/// is about 200 KiB).
pub const CA_LIMIT: u64 = 1024 * 1024;

/// One GET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpGet {
    /// `https://HOST:PORT/PATH`.
    pub url: String,
    /// Where to connect when the URL names a hostname (the certificate is checked
    /// against the name, the connection goes to this address).
    pub connect_to: Option<(String, SocketAddr)>,
    /// A file holding `USER:PASSWORD` (RFC 7617's user-pass) on its first line.
    pub basic_auth_file: Option<PathBuf>,
    /// PEM CA certificates, the only ones trusted; the machine's trust store without it.
    pub ca_file: Option<PathBuf>,
    pub timeout: Duration,
    /// Most bytes of the body.
    pub limit: u64,
}

impl fmt::Display for HttpGet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GET {}", self.url)
    }
}

/// Reads a file the request names (credentials, CAs) on the host, at most `limit` bytes.
pub type ReadFile<'a> = &'a dyn Fn(&std::path::Path, u64) -> Result<Vec<u8>, HostError>;

/// The status and body of an answered GET (any status: a 401 is an answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

/// A failed GET, as a host error (`get URL: why`).
pub fn error(request: &HttpGet, kind: HostErrorKind) -> HostError {
    HostError::new(HostOp::Get, request.url.clone(), kind)
}

#[cfg(feature = "push")]
fn other(request: &HttpGet, message: impl Into<String>) -> HostError {
    error(
        request,
        HostErrorKind::Os {
            errno: None,
            message: message.into(),
        },
    )
}

/// `USER:PASSWORD` from the first line of `text`.
pub fn parse_credentials(text: &str) -> Result<(String, String), String> {
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
    match line.split_once(':') {
        Some((user, password)) if !user.is_empty() && !password.is_empty() => {
            Ok((user.to_owned(), password.to_owned()))
        }
        _ => Err("its first line is not USER:PASSWORD".to_owned()),
    }
}

/// The client the GETs of one walk share (service root, collection, Managers): built on
/// the first GET — the TLS configuration, the CA file and the credentials read then — and
/// used again while a request names the same address, credentials file, CA file and
/// timeout, so that a walk configures TLS, reads its files and starts a runtime once and,
/// where the service keeps the connection open, connects once. A request with other
/// settings builds a new one. A walk makes its own ([`HttpClient::new`]), so a CA or
/// password changed between two verifications is read again.
#[derive(Default)]
pub struct HttpClient {
    #[cfg(feature = "push")]
    built: Option<Built>,
}

impl HttpClient {
    pub fn new() -> Self {
        HttpClient::default()
    }
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the credentials.
        f.write_str("HttpClient")
    }
}

/// A built client and the request settings it was built for.
#[cfg(feature = "push")]
struct Built {
    settings: HttpGet,
    credentials: Option<(String, String)>,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

/// Whether `a` and `b` can share a client: everything but the URL and the body limit.
#[cfg(feature = "push")]
fn same_client(a: &HttpGet, b: &HttpGet) -> bool {
    a.connect_to == b.connect_to
        && a.basic_auth_file == b.basic_auth_file
        && a.ca_file == b.ca_file
        && a.timeout == b.timeout
}

/// Makes the GET on this machine through `client`, building it first when it has not
/// been built for this request's settings. `read` reads the credentials and CA files
/// (under the host's root); its errors name the file, never its content.
#[cfg(feature = "push")]
pub fn get(
    client: &mut HttpClient,
    request: &HttpGet,
    read: ReadFile<'_>,
) -> Result<HttpResponse, HostError> {
    let built = match &mut client.built {
        Some(built) if same_client(&built.settings, request) => built,
        slot => {
            // The old client (its connections, its runtime) goes before the new one is built.
            *slot = None;
            slot.insert(build(request, read)?)
        }
    };
    let work = async {
        let mut call = built.client.get(&request.url);
        if let Some((user, password)) = &built.credentials {
            call = call.basic_auth(user, Some(password));
        }
        let mut response = call.send().await.map_err(|e| failed(request, &e))?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| failed(request, &e))? {
            if (body.len() + chunk.len()) as u64 > request.limit {
                return Err(error(
                    request,
                    HostErrorKind::TooLarge {
                        limit: request.limit,
                    },
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse { status, body })
    };
    // reqwest's own timeout covers the whole exchange; this one bounds the runtime too.
    built.runtime.block_on(async {
        match tokio::time::timeout(request.timeout + Duration::from_secs(1), work).await {
            Ok(result) => result,
            Err(_) => Err(timed_out(request)),
        }
    })
}

/// A client for `request`'s settings: credentials and CAs read, TLS configured.
#[cfg(feature = "push")]
fn build(request: &HttpGet, read: ReadFile<'_>) -> Result<Built, HostError> {
    let credentials = match &request.basic_auth_file {
        None => None,
        Some(path) => {
            let bytes = read(path, CREDENTIALS_LIMIT)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                other(
                    request,
                    format!("credentials file {}: not UTF-8", path.display()),
                )
            })?;
            Some(parse_credentials(&text).map_err(|why| {
                other(
                    request,
                    format!("credentials file {}: {why}", path.display()),
                )
            })?)
        }
    };
    let mut builder = reqwest::Client::builder()
        .timeout(request.timeout)
        .connect_timeout(request.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .https_only(true)
        .user_agent(concat!("nodeimg/", env!("CARGO_PKG_VERSION")));
    if let Some(path) = &request.ca_file {
        let bytes = read(path, CA_LIMIT)?;
        let certs = reqwest::Certificate::from_pem_bundle(&bytes)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                other(
                    request,
                    format!("CA file {}: no PEM certificate in it", path.display()),
                )
            })?;
        builder = builder.tls_certs_only(certs);
    }
    if let Some((name, addr)) = &request.connect_to {
        builder = builder.resolve(name, *addr);
    }
    let client = builder
        .build()
        .map_err(|e| other(request, format!("no HTTPS client: {}", chain(&e))))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| other(request, format!("no runtime: {e}")))?;
    Ok(Built {
        settings: request.clone(),
        credentials,
        client,
        runtime,
    })
}

#[cfg(not(feature = "push"))]
pub fn get(
    _client: &mut HttpClient,
    request: &HttpGet,
    _read: ReadFile<'_>,
) -> Result<HttpResponse, HostError> {
    Err(error(
        request,
        HostErrorKind::NotRun {
            reason: "this nodeimg was built without an HTTPS client (the `push` feature, as scripts/build-verifier builds it)".to_owned(),
        },
    ))
}

#[cfg(feature = "push")]
fn timed_out(request: &HttpGet) -> HostError {
    error(
        request,
        HostErrorKind::Timeout {
            after_ms: u64::try_from(request.timeout.as_millis()).unwrap_or(u64::MAX),
        },
    )
}

#[cfg(feature = "push")]
fn failed(request: &HttpGet, e: &reqwest::Error) -> HostError {
    if e.is_timeout() {
        return timed_out(request);
    }
    other(request, chain(e))
}

/// An error and its causes on one line (reqwest's own message hides the cause).
#[cfg(feature = "push")]
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_user_and_password_from_the_first_line() {
        assert_eq!(
            parse_credentials("root:0penBmc:x\nignored\n"),
            Ok(("root".to_owned(), "0penBmc:x".to_owned()))
        );
        assert!(parse_credentials("root\n").is_err());
        assert!(parse_credentials(":pw").is_err());
        assert!(parse_credentials("").is_err());
    }
}
