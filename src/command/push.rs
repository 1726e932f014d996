//! `nodeimg push LAYOUT REF`: upload an OCI image layout to a registry.
//! Exit 0 when the registry holds the manifest under REF with our digest;
//! 1 when the registry refused or could not be reached; 2 when the layout,
//! the reference or a credentials file cannot be used.

use std::time::Duration;

use super::{Env, exit};
use crate::cli::{Format, PushArgs};
use crate::package::credentials;
use crate::package::push::{self, PushOptions, PushReport};

pub fn run(args: &PushArgs, env: &mut Env<'_>) -> u8 {
    let opts = PushOptions {
        insecure: args.insecure,
        timeout: Duration::from_secs(args.timeout.max(1)),
        auth_files: credentials::auth_files(),
    };
    if env.verbose > 0 {
        env.note(&format!(
            "pushing {} to {}",
            args.layout.display(),
            args.reference
        ));
    }
    let report = match push::push(&args.layout, &args.reference, &opts) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(env.err, "{}: {e}", env.style.error("error"));
            return if e.is_unusable_input() {
                exit::UNUSABLE
            } else {
                exit::NEGATIVE
            };
        }
    };
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut *env.out, &report)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(env.out)),
        Format::Text => text(&report, env),
    };
    match written {
        Ok(()) => exit::OK,
        Err(e) => env.fail(&format!("pushed, but cannot write the report: {e}")),
    }
}

fn text(r: &PushReport, env: &mut Env<'_>) -> std::io::Result<()> {
    writeln!(env.out, "{}@{}", r.reference, r.digest)?;
    for b in &r.blobs {
        let state = if b.uploaded { "uploaded" } else { "present " };
        writeln!(env.out, "  {state} {} ({} bytes)", b.digest, b.size)?;
    }
    let from = match &r.credentials {
        Some(p) => format!("credentials from {}", p.display()),
        None => "anonymous".into(),
    };
    writeln!(env.out, "  {from}")
}
