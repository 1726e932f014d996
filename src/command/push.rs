//! `nodeimg push LAYOUT REF`: upload an OCI image layout to a registry.
//! Exit 0 when the registry holds the manifest under REF with our digest;
//! 1 when the registry refused or could not be reached; 2 when the layout,
//! the reference or a credentials file cannot be used.

use std::time::Duration;

use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::cli::{Format, PushArgs};
use crate::package::credentials;
use crate::package::push::{self, PushOptions, PushReport};

pub fn run(args: &PushArgs, env: &mut Env<'_>) -> Outcome {
    let opts = PushOptions {
        insecure: args.insecure,
        timeout: Duration::from_secs(args.timeout),
        auth_files: credentials::auth_files(),
        ca_bundle: None,
    };
    env.detail(&format!(
        "pushing {} to {}",
        args.layout.display(),
        args.reference
    ));
    let report = push::push(&args.layout, &args.reference, &opts).map_err(|e| {
        if e.is_unusable_input() {
            Failure::unusable(e)
        } else {
            Failure::negative(e)
        }
    })?;
    match args.format {
        Format::Json => env.json(&report)?,
        Format::Text => text(&report, env).unusable_at("pushed, but cannot write the report")?,
    }
    Ok(Exit::Ok)
}

fn text(r: &PushReport, env: &mut Env<'_>) -> std::io::Result<()> {
    writeln!(env.out, "{}@{}", r.reference, r.digest)?;
    for b in &r.blobs {
        let state = if b.uploaded { "uploaded" } else { "present " };
        writeln!(env.out, "  {state} {} ({} bytes)", b.digest, b.size)?;
    }
    for a in &r.attachments {
        let what = a.artifact_type.as_deref().unwrap_or("attachment");
        match (&a.tag, a.referrers) {
            (Some(tag), _) => writeln!(env.out, "  {what} {} as :{tag}", a.digest)?,
            (None, Some(how)) => writeln!(env.out, "  referrer {what} {} ({how})", a.digest)?,
            (None, None) => writeln!(env.out, "  {what} {}", a.digest)?,
        }
    }
    let from = match &r.credentials {
        Some(p) => format!("credentials from {}", p.display()),
        None => "anonymous".into(),
    };
    writeln!(env.out, "  {from}")
}
