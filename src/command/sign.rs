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

#[cfg(feature = "push")]
fn registry(reference: &str, key: &SigningKey, args: &SignArgs) -> Result<Signed, super::Failure> {
    use crate::trust::registry;
    let r = registry::reference(reference).map_err(super::push::failure)?;
    let opts = super::push::options(&args.registry);
    registry::sign(&r, key, args.identity.as_deref(), None, &opts).map_err(super::push::failure)
}

#[cfg(not(feature = "push"))]
fn registry(
    reference: &str,
    _key: &SigningKey,
    _args: &SignArgs,
) -> Result<Signed, super::Failure> {
    Err(super::Failure::unusable(format!(
        "{reference}: this nodeimg was built without registry support (the `push` feature); sign a layout, then push it"
    )))
}
