//! `nodeimg verify-image TARGET`: check an image's signature, provenance and SBOM against
//! trusted keys. Exit 0 a trusted key signed this digest; 1 it is missing, by another key,
//! over another digest, for another repository or malformed; 2 unusable input.

use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::cli::{Format, VerifyImageArgs};
use crate::stdio::Input;
use crate::trust::target::ImageTarget;
use crate::trust::{Dir, Expect, Layout, Report, TrustPolicy, verify_image};

pub fn run(args: &VerifyImageArgs, env: &mut Env<'_>) -> Outcome {
    let policy = policy(args, env)?;
    env.detail(&format!(
        "trusted keys from {}: {}",
        policy.source,
        policy
            .ids()
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let expect = Expect {
        repository: args.identity.clone(),
    };
    let report = match ImageTarget::parse(&args.target).unusable()? {
        ImageTarget::Layout(dir) => {
            let files = Dir(dir.clone());
            let layout = Layout::open(&files).unusable()?;
            let mut report = verify_image(&layout, &policy.public_keys(), &expect).unusable()?;
            crate::trust::verify::check_sbom_documents(&dir, &mut report);
            report
        }
        ImageTarget::Registry(reference) => registry(&reference, &policy, &expect, args)?,
    };
    match args.format {
        Format::Json => env.json(&report)?,
        Format::Text => text(&report, &policy, env).unusable_at("cannot write the report")?,
    }
    Ok(if report.verified() {
        Exit::Ok
    } else {
        Exit::Negative
    })
}

/// The keys: `--key` files, else a `--trust-policy` file, else the blueprint's.
fn policy(args: &VerifyImageArgs, env: &mut Env<'_>) -> Result<TrustPolicy, Failure> {
    let given = [
        !args.keys.is_empty(),
        args.trust_policy.is_some(),
        args.blueprint.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(Failure::unusable(
            "name the trusted keys one way: --key PUB (repeatable), --trust-policy FILE or --blueprint FILE",
        ));
    }
    if !args.keys.is_empty() {
        return TrustPolicy::from_key_files(&args.keys).unusable();
    }
    if let Some(path) = &args.trust_policy {
        return TrustPolicy::from_file(path).unusable();
    }
    let path = args.blueprint.clone().unwrap_or_default();
    let matrix = super::prepared::matrix(&args.matrix, env)?;
    let bp = super::prepared::valid(&Input::File(path.clone()), &matrix, env)?;
    TrustPolicy::from_blueprint(&bp).unusable()?.ok_or_else(|| {
        Failure::unusable(format!(
            "{}: the blueprint has no security.imageTrust; give the keys with --key",
            path.display()
        ))
    })
}

fn text(r: &Report, policy: &TrustPolicy, env: &mut Env<'_>) -> std::io::Result<()> {
    let style = env.style;
    writeln!(env.out, "image       {} ({})", r.image, r.source)?;
    for k in &r.keys {
        let name = policy.name_of(k).unwrap_or("?");
        writeln!(env.out, "key         {k} ({name})")?;
    }
    let mark = |ok: bool, word: &str| {
        if ok {
            style.ok(word)
        } else {
            style.error(word)
        }
    };
    writeln!(
        env.out,
        "signature   {}: {}",
        mark(r.verified(), r.signature.word()),
        r.signature.explain()
    )?;
    writeln!(
        env.out,
        "provenance  {}: {}",
        r.provenance.word(),
        r.provenance.explain()
    )?;
    writeln!(
        env.out,
        "sbom        {}: {}",
        r.sbom.word(),
        r.sbom.explain()
    )
}

#[cfg(feature = "push")]
fn registry(
    reference: &str,
    policy: &TrustPolicy,
    expect: &Expect,
    args: &VerifyImageArgs,
) -> Result<Report, Failure> {
    use crate::trust::registry;
    let r = registry::reference(reference).map_err(super::push::failure)?;
    let opts = super::push::options(&args.registry);
    // A registry that cannot be asked leaves the image unjudged: unusable, not verified.
    registry::verify(&r, &policy.public_keys(), expect, &opts).unusable()
}

#[cfg(not(feature = "push"))]
fn registry(
    reference: &str,
    _policy: &TrustPolicy,
    _expect: &Expect,
    _args: &VerifyImageArgs,
) -> Result<Report, Failure> {
    Err(Failure::unusable(format!(
        "{reference}: this nodeimg was built without registry support (the `push` feature); verify a layout"
    )))
}
