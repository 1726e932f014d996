//! Talking to an OCI registry (distribution API 1.1, spoken directly over reqwest on a
//! current-thread tokio runtime; see [`client`]): the one client that `push`, `pull`
//! and the signature and referrer code share.
//!
//! Nothing a registry says is trusted: every response body is read with a bound, a
//! manifest fetched by digest is hashed and compared with that digest before it is
//! parsed, a blob is streamed to its file and refused past its descriptor's size or on
//! another digest. References are checked against the distribution grammar before any
//! request ([`reference`](mod@reference)). Plain HTTP is used only when asked for (`insecure`, meant
//! for loopback registries). Every failure says which registry and what it was doing.

mod challenge;
pub mod client;
pub mod reference;

pub use client::{BLOB_CHUNK, ERROR_BODY_LIMIT, MANIFEST_LIMIT, Registry, TOKEN_LIMIT};
pub use reference::{Reference, ReferenceError, TagPolicy, check_tag};

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use super::credentials::{self, CredentialsError};
use super::digest::Digest;
use super::layout_reader::LayoutError;

/// How to reach a registry.
#[derive(Debug, Clone)]
pub struct Options {
    /// Plain HTTP instead of HTTPS.
    pub insecure: bool,
    /// Limit for the whole operation.
    pub timeout: Duration,
    /// Auth files to consult, in order (see [`credentials::auth_files`]).
    pub auth_files: Vec<PathBuf>,
    /// The only CA certificates (a PEM bundle) that TLS trusts, instead of the system's:
    /// `apply` trusts what the root it applies to trusts, since the node image's own
    /// container has no trust store of its own.
    pub ca_bundle: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            insecure: false,
            timeout: Duration::from_secs(600),
            auth_files: credentials::auth_files(),
            ca_bundle: None,
        }
    }
}

/// What access a session asks the registry's token service for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Pull,
    PullPush,
}

impl Access {
    fn scope(self) -> &'static str {
        match self {
            Access::Pull => "pull",
            Access::PullPush => "pull,push",
        }
    }
}

#[derive(Debug, Error)]
pub enum RegistryError {
    #[error("reference `{reference}`: {message}")]
    Reference { reference: String, message: String },
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    #[error("registry {registry}: authentication failed ({message}); {hint}")]
    Auth {
        registry: String,
        message: String,
        hint: String,
    },
    #[error("registry {registry}: cannot reach it: {message}")]
    Unreachable { registry: String, message: String },
    #[error("registry {registry}: {what} failed: {message}")]
    Transfer {
        registry: String,
        what: String,
        message: String,
    },
    #[error(
        "registry {reference}: the registry reports manifest {remote}, but the pushed manifest is {local}"
    )]
    Mismatch {
        reference: String,
        local: Digest,
        remote: String,
    },
    /// The registry answered with content that is not what was asked for: another
    /// digest, a manifest of another kind, more bytes than the descriptor says.
    #[error("registry {registry}: {what}: {message}")]
    Content {
        registry: String,
        what: String,
        message: String,
    },
    #[error("registry {registry}: {what}: not found")]
    NotFound { registry: String, what: String },
    #[error("registry {registry}: no answer within {seconds} s; the operation did not complete")]
    Timeout { registry: String, seconds: u64 },
    #[error("cannot start the network runtime: {0}")]
    Runtime(std::io::Error),
    /// A local file could not be written (a pulled blob, the layout).
    #[error("{}: {message}", path.display())]
    Local { path: PathBuf, message: String },
}

impl RegistryError {
    /// True when the input (reference, layout, credentials file) is at
    /// fault rather than the registry or the network.
    pub fn is_unusable_input(&self) -> bool {
        matches!(
            self,
            RegistryError::Reference { .. }
                | RegistryError::Layout(_)
                | RegistryError::Credentials(_)
        )
    }
}

/// Runs `work` on a current-thread runtime under `opts.timeout`.
pub fn block_on<T>(
    registry: &str,
    opts: &Options,
    work: impl std::future::Future<Output = Result<T, RegistryError>>,
) -> Result<T, RegistryError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(RegistryError::Runtime)?;
    let seconds = opts.timeout.as_secs();
    runtime.block_on(async {
        tokio::time::timeout(opts.timeout, work)
            .await
            .unwrap_or(Err(RegistryError::Timeout {
                registry: registry.to_owned(),
                seconds,
            }))
    })
}

/// Most bytes of a CA bundle read (Debian's is about 200 KiB).
const CA_BUNDLE_LIMIT: u64 = 16 << 20;

/// The certificates of a PEM bundle.
fn ca_bundle(path: &std::path::Path) -> Result<Vec<reqwest::Certificate>, RegistryError> {
    let bad = |message: String| RegistryError::Local {
        path: path.to_path_buf(),
        message,
    };
    let bytes = crate::input::read(path, CA_BUNDLE_LIMIT).map_err(|e| bad(e.to_string()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&bytes)
        .map_err(|e| bad(format!("not a PEM bundle of CA certificates: {e}")))?;
    if certs.is_empty() {
        return Err(bad("holds no CA certificate".into()));
    }
    Ok(certs)
}

/// A session with the registry of `reference`: credentials looked up in
/// `opts.auth_files`, authenticated for `access`.
pub async fn connect<'a>(
    reference: &'a Reference,
    creds: Option<&'a credentials::Credentials>,
    opts: &Options,
    access: Access,
) -> Result<Registry<'a>, RegistryError> {
    let host = reference.api_host();
    let hint = match creds.map(|c| &c.source) {
        Some(p) => format!("check the entry for {host} in {}", p.display()),
        None => format!(
            "no credentials for {host} in {}",
            opts.auth_files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let roots = match &opts.ca_bundle {
        Some(path) => Some(ca_bundle(path)?),
        None => None,
    };
    let mut registry = Registry::new(reference, creds, opts.insecure, roots, hint)?;
    registry.authenticate(access).await?;
    Ok(registry)
}
