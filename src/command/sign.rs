//! `nodeimg sign TARGET --key KEY`: sign an image in an OCI layout (the attachments go into
//! its index.json) or in a registry (`REF@sha256:…`). Exit 0 signed; 1 the registry refused
//! or could not be reached; 2 the key, the layout or the reference cannot be used.

use super::{Env, Exit, OrUnusable, Outcome};
use crate::cli::{Format, SignArgs};
use crate::trust::SigningKey;
use crate::trust::sign::{Signed, sign_layout};
use crate::trust::target::ImageTarget;

pub fn run(args: &SignArgs, env: &mut Env<'_>) -> Outcome {
    let key = SigningKey::load(&args.key).unusable()?;
    env.detail(&format!("signing key {}", key.public().id()));
    let signed = match ImageTarget::parse(&args.target).unusable()? {
        ImageTarget::Layout(dir) => sign_layout(&dir, &key, args.identity.as_deref()).unusable()?,
        ImageTarget::Registry(reference) => registry(&reference, &key, args)?,
    };
    match args.format {
        Format::Json => env.json(&signed)?,
        Format::Text => text(&signed, env).unusable_at("signed, but cannot write the report")?,
    }
    Ok(Exit::Ok)
}

fn text(s: &Signed, env: &mut Env<'_>) -> std::io::Result<()> {
    let state = if s.added { "signed" } else { "already signed" };
    writeln!(env.out, "{state} {} in {}", s.image, s.target)?;
    writeln!(env.out, "  key         {}", s.key)?;
    writeln!(env.out, "  identity    {}", s.identity)?;
    writeln!(env.out, "  signature   {}", s.signature.digest)?;
    match &s.attestation {
        Some(a) => writeln!(env.out, "  provenance  {}", a.digest),
        None => writeln!(
            env.out,
            "  provenance  none (no provenance.json about this image)"
        ),
    }
}

fn registry(
    reference: &crate::trust::target::DigestRef,
    _key: &SigningKey,
    _args: &SignArgs,
) -> Result<Signed, super::Failure> {
    Err(super::Failure::unusable(format!(
        "{reference}: signing in a registry is not available yet; sign the layout, then push it"
    )))
}
