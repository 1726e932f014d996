//! `nodeimg push LAYOUT REF`: upload an OCI image layout to a registry.
//! Exit 0 when the registry holds the manifest under REF with our digest;
//! 1 when the registry refused or could not be reached; 2 when the layout,
//! the reference or a credentials file cannot be used.

use std::time::Duration;

use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::cli::{Format, PushArgs, RegistryArgs};
use crate::package::credentials;
use crate::package::push::{self, PushOptions, PushReport};

/// How to reach the registry, from the shared flags.
pub(super) fn options(args: &RegistryArgs) -> PushOptions {
    PushOptions {
        insecure: args.insecure,
        timeout: Duration::from_secs(args.timeout),
        auth_files: credentials::auth_files(),
        ca_bundle: None,
    }
}

/// A registry failure: exit 2 when the input is at fault, 1 when the registry is.
pub(super) fn failure(e: crate::package::registry::RegistryError) -> Failure {
    if e.is_unusable_input() {
        Failure::unusable(e)
    } else {
        Failure::negative(e)
    }
}

pub fn run(args: &PushArgs, env: &mut Env<'_>) -> Outcome {
    let opts = options(&args.registry);
    env.detail(&format!(
        "pushing {} to {}",
        args.layout.display(),
        args.reference
    ));
    // An unusable key stops the push before anything is uploaded.
    let key = args
        .sign
        .as_deref()
        .map(crate::trust::SigningKey::load)
        .transpose()
        .unusable()?;
    let report = push::push(&args.layout, &args.reference, &opts).map_err(failure)?;
    let pushed =
        crate::trust::registry::reference(&format!("{}@{}", report.reference, report.digest))
            .map_err(failure)?;
    let to_merge: Vec<String> = report
        .attachments
        .iter()
        .filter(|a| a.to_merge)
        .filter_map(|a| a.tag.clone())
        .collect();
    if !to_merge.is_empty() {
        crate::trust::registry::merge_from_layout(&args.layout, &pushed, &to_merge, &opts)
            .map_err(failure)?;
    }
    let signed = match &key {
        Some(key) => {
            let provenance_file = args.layout.join(crate::package::PROVENANCE_FILE);
            let provenance = provenance_file
                .exists()
                .then(|| crate::trust::attestation::Provenance::read(&provenance_file))
                .transpose()
                .unusable()?;
            Some(
                crate::trust::registry::sign(&pushed, key, None, provenance.as_ref(), &opts)
                    .map_err(failure)?,
            )
        }
        None => None,
    };
    match args.format {
        Format::Json => env.json(&Pushed {
            push: &report,
            merged: &to_merge,
            signed: signed.as_ref(),
        })?,
        Format::Text => text(&report, &to_merge, signed.as_ref(), env)
            .unusable_at("pushed, but cannot write the report")?,
    }
    Ok(Exit::Ok)
}

/// The JSON report: the push, and what signing added.
#[derive(serde::Serialize)]
struct Pushed<'a> {
    #[serde(flatten)]
    push: &'a PushReport,
    /// Cosign tags whose registry manifest was merged with the layout's.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    merged: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    signed: Option<&'a crate::trust::sign::Signed>,
}

fn text(
    r: &PushReport,
    merged: &[String],
    signed: Option<&crate::trust::sign::Signed>,
    env: &mut Env<'_>,
) -> std::io::Result<()> {
    writeln!(env.out, "{}@{}", r.reference, r.digest)?;
    for b in &r.blobs {
        let state = if b.uploaded { "uploaded" } else { "present " };
        writeln!(env.out, "  {state} {} ({} bytes)", b.digest, b.size)?;
    }
    for a in &r.attachments {
        let what = a.artifact_type.as_deref().unwrap_or("attachment");
        match (&a.tag, a.referrers) {
            (Some(tag), _) if merged.contains(tag) => writeln!(
                env.out,
                "  {what} {} merged into the registry's :{tag}",
                a.digest
            )?,
            (Some(tag), _) => writeln!(env.out, "  {what} {} as :{tag}", a.digest)?,
            (None, Some(how)) => writeln!(env.out, "  referrer {what} {} ({how})", a.digest)?,
            (None, None) => writeln!(env.out, "  {what} {}", a.digest)?,
        }
    }
    if let Some(s) = signed {
        writeln!(env.out, "  signed by {} for {}", s.key, s.identity)?;
        writeln!(env.out, "  signature {}", s.signature.digest)?;
        if let Some(a) = &s.attestation {
            writeln!(env.out, "  provenance {}", a.digest)?;
        }
    }
    let from = match &r.credentials {
        Some(p) => format!("credentials from {}", p.display()),
        None => "anonymous".into(),
    };
    writeln!(env.out, "  {from}")
}
