//! Where the image `apply` installs comes from: an OCI layout folder, or a registry
//! reference by digest pulled into a temporary layout (removed when the command ends).
//!
//! `oci:DIR` and `docker://REF` say which explicitly (skopeo's transport names); without
//! a prefix an existing folder is a layout and anything else must parse as a reference.
//! A reference naming the image by tag alone is refused unless `--allow-tag` is given:
//! a tag can be moved to another image between the plan and the node.

use std::path::{Path, PathBuf};

use super::{Env, Failure};
use crate::cli::ApplyArgs;

/// The image as a layout on this machine.
pub struct Source {
    /// What the user named (the reference, with the digest it resolved to).
    pub name: String,
    layout: PathBuf,
    /// The temporary folder a pulled image lies in, removed on drop.
    _pulled: Option<tempfile::TempDir>,
}

impl Source {
    pub fn layout(&self) -> &Path {
        &self.layout
    }

    /// `registry/repository` for an image pulled from a registry: a signature must name it.
    pub fn repository(&self) -> Option<String> {
        self._pulled
            .as_ref()
            .map(|_| crate::trust::verify::repository_of(&self.name).to_owned())
    }
}

/// Resolves IMAGE: a layout as it is, a reference pulled.
pub fn resolve(image: &str, args: &ApplyArgs, env: &mut Env<'_>) -> Result<Source, Failure> {
    if let Some(dir) = image.strip_prefix("oci:") {
        return Ok(local(dir));
    }
    let reference = match image.strip_prefix("docker://") {
        Some(r) => r,
        None if Path::new(image).exists() => return Ok(local(image)),
        None => image,
    };
    pull(image, reference, args, env)
}

fn local(dir: &str) -> Source {
    Source {
        name: dir.to_owned(),
        layout: PathBuf::from(dir),
        _pulled: None,
    }
}

#[cfg(feature = "push")]
fn pull(
    image: &str,
    reference: &str,
    args: &ApplyArgs,
    env: &mut Env<'_>,
) -> Result<Source, Failure> {
    use crate::package::registry::{Options, Reference, RegistryError, TagPolicy};
    let policy = if args.allow_tag {
        TagPolicy::AllowTag
    } else {
        TagPolicy::DigestOnly
    };
    let parsed = Reference::for_pull(reference, policy).map_err(|e| {
        Failure::unusable(format!(
            "IMAGE `{}`: no OCI layout folder there, and not an image reference: {}",
            image.escape_debug(),
            e.0
        ))
    })?;
    // Pulled next to other large temporary data (/var/tmp is on disk; /tmp may be RAM).
    let base = std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    let temp = tempfile::Builder::new()
        .prefix("nodeimg-pull-")
        .tempdir_in(&base)
        .map_err(|e| {
            Failure::negative(format!(
                "{}: cannot make a folder to pull into: {e}",
                base.display()
            ))
        })?;
    let dest = temp.path().join("image");
    let opts = Options {
        insecure: args.insecure,
        timeout: std::time::Duration::from_secs(args.pull_timeout),
        auth_files: crate::package::credentials::auth_files(),
        ca_bundle: root_ca_bundle(args),
    };
    env.detail(&format!("pulling {parsed} into {}", dest.display()));
    let report = crate::package::pull::pull(&parsed, &dest, &opts).map_err(|e| match e {
        RegistryError::Content { .. } => Failure::unusable(e),
        e if e.is_unusable_input() => Failure::unusable(e),
        e => Failure::negative(e),
    })?;
    env.note(&format!(
        "pulled {} ({} blob(s), {} signature(s) and referrer(s))",
        parsed.with_digest(&report.digest),
        report.blobs.len(),
        report.attachments.len()
    ));
    Ok(Source {
        name: parsed.with_digest(&report.digest).whole(),
        layout: dest,
        _pulled: Some(temp),
    })
}

/// The CA bundle of the root the image goes to, when it has one: the registry is trusted
/// as the node trusts it (the site's CAs the image installs included), and the node
/// image's own container, which runs this, has no trust store of its own.
#[cfg(feature = "push")]
fn root_ca_bundle(args: &ApplyArgs) -> Option<PathBuf> {
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    // Debian and Ubuntu, then the RHEL family (update-ca-certificates, update-ca-trust).
    [
        "etc/ssl/certs/ca-certificates.crt",
        "etc/pki/tls/certs/ca-bundle.crt",
    ]
    .iter()
    .map(|p| root.join(p))
    .find(|p| p.is_file())
}

#[cfg(not(feature = "push"))]
fn pull(image: &str, reference: &str, _: &ApplyArgs, _: &mut Env<'_>) -> Result<Source, Failure> {
    Err(Failure::unusable(format!(
        "IMAGE `{}`: no OCI layout folder there; as a registry reference it needs a nodeimg built with registry access (the `push` feature). Fetch it with `skopeo copy docker://{} oci:DIR` and apply DIR",
        image.escape_debug(),
        reference.escape_debug()
    )))
}
