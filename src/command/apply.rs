//! `nodeimg apply`: an image onto a root or in place, rollback, recovery,
//! and the boot-assessment hooks the rendered units run. The work is
//! `crate::apply`'s; this file maps arguments to options and the report to
//! text or JSON and the exit status.

use std::path::PathBuf;

use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::apply::{self, Error, Options, Report};
use crate::cli::{ApplyArgs, Format};

pub fn run(args: &ApplyArgs, env: &mut Env<'_>) -> Outcome {
    let options = Options {
        root: args.root.clone().unwrap_or_else(|| PathBuf::from("/")),
        in_place: args.in_place,
        steps: apply::steps::Selection {
            skip: args.skip.clone(),
            only: args.only_steps.clone(),
            changed: None,
        },
        install_packages: args.install_packages,
        no_reboot: args.no_reboot,
        print_actions: args.print_actions,
        check_packages: !args.no_package_check,
        check_root: !args.no_root_check,
        trust: trust_policy(args)?,
    };
    let failed = |e: Error| match e {
        Error::Unusable(m) => Failure::unusable(m),
        Error::Failed(m) => Failure::negative(m),
    };
    if args.boot_trial {
        let (verdict, report) = apply::boot_trial(&options).map_err(failed)?;
        env.note(&format!(
            "boot trial: {}",
            serde_json::to_string(&verdict).unwrap_or_default()
        ));
        return match report {
            Some(r) => show(&r, args.format, env),
            None => Ok(Exit::Ok),
        };
    }
    if args.boot_failed {
        return match apply::boot_failed(&options).map_err(failed)? {
            None => {
                env.note("no image on trial: nothing to do");
                Ok(Exit::Ok)
            }
            Some(a) => {
                env.note(&format!(
                    "image on trial failed verify this boot: {} ({})",
                    a.command, a.detail
                ));
                Ok(if a.ok { Exit::Ok } else { Exit::Negative })
            }
        };
    }
    if args.bless {
        match apply::bless(&options).map_err(failed)? {
            Some(t) => env.note(&format!(
                "boot good: image {} kept after {} boot(s)",
                t.image, t.boots
            )),
            None => env.note("no image on trial: nothing to bless"),
        }
        return Ok(Exit::Ok);
    }
    let report = if args.rollback {
        apply::rollback(&options)
    } else if args.recover {
        apply::recover(&options)
    } else {
        let image = args
            .layout
            .as_deref()
            .expect("clap requires one of the group");
        let source = super::image_source::resolve(image, args, env)?;
        apply::apply(source.layout(), &source.name, source.repository(), &options)
    }
    .map_err(failed)?;
    show(&report, args.format, env)
}

/// The trust policy given on the command line: `--trust-policy FILE`, or `--key PUB`
/// (repeatable, required).
fn trust_policy(args: &ApplyArgs) -> Result<Option<crate::trust::TrustPolicy>, Failure> {
    use crate::trust::TrustPolicy;
    match (&args.trust_policy, args.key.is_empty()) {
        (Some(file), _) => TrustPolicy::from_file(file)
            .map(Some)
            .map_err(Failure::unusable),
        (None, false) => TrustPolicy::from_key_files(&args.key)
            .map(Some)
            .map_err(Failure::unusable),
        (None, true) => Ok(None),
    }
}

fn show(report: &Report, format: Format, env: &mut Env<'_>) -> Outcome {
    match format {
        Format::Json => env.json(report)?,
        Format::Text => text(report, env).unusable_at("cannot write the report")?,
    }
    Ok(if report.passed() {
        Exit::Ok
    } else {
        Exit::Negative
    })
}

fn text(r: &Report, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    let o = &r.outcome;
    if let Some(op) = o.recovered {
        writeln!(env.out, "completed an interrupted {op:?} first")?;
    }
    let image = r.image.as_deref().unwrap_or("(no image)");
    if o.unchanged {
        writeln!(
            env.out,
            "{} {image} is already applied to {}: nothing changed",
            s.ok("ok"),
            r.root.display()
        )?;
    } else {
        writeln!(
            env.out,
            "{} {image} → {} ({}): {} path(s) put, {} removed, {} saved for rollback",
            r.op,
            r.root.display(),
            r.mode,
            o.put.len(),
            o.removed.len(),
            o.saved
        )?;
    }
    if let Some(j) = &r.signature {
        let by = j.signed_by.as_deref().unwrap_or("no trusted key");
        let tag = if j.signature == "verified" {
            s.ok("signature verified")
        } else {
            s.error(&format!("signature {}", j.signature))
        };
        writeln!(env.out, "  {tag}: {by} ({})", j.policy)?;
        if j.signature != "verified" {
            writeln!(env.out, "       {}", s.dim(&j.detail))?;
        }
    } else if r.op == "apply" {
        writeln!(
            env.out,
            "  {}",
            s.dim("signature not checked: no --key or --trust-policy, and this root's lock names no security.imageTrust")
        )?;
    }
    for k in &o.kept {
        writeln!(env.out, "  kept {k}: it holds files nodeimg did not write")?;
    }
    let quiet_steps = o.unchanged
        && r.steps
            .iter()
            .all(|s| s.status == "not-needed" || s.status == "skipped");
    for step in r.steps.iter().filter(|_| !quiet_steps) {
        let tag = match step.status {
            "ran" => s.ok("ran    "),
            "failed" | "missing" => s.error(&format!("{:<7}", step.status)),
            other => s.dim(&format!("{other:<7}")),
        };
        let exit = step.exit.map(|c| format!(" exit {c}")).unwrap_or_default();
        writeln!(
            env.out,
            "  step {:<11} {tag} {}{exit} {} ms",
            step.id, step.command, step.millis
        )?;
        if step.status != "ran" || step.failed() {
            writeln!(env.out, "       {}", s.dim(&step.detail))?;
        }
    }
    if let Some(log) = &r.installed {
        writeln!(
            env.out,
            "  packages: {} ({}) {}",
            log.command, log.status, log.detail
        )?;
    }
    for pin in r.packages.iter().flatten() {
        if pin.ok {
            env.detail(&format!(
                "  pin ok: {} ({})",
                pin.packages.join(" "),
                pin.why
            ));
        } else {
            writeln!(env.out, "  {} {}: {}", s.error("pin"), pin.why, pin.detail)?;
        }
    }
    for c in &r.root_checks {
        match c.status {
            "pass" => env.detail(&format!("  check ok: {} ({})", c.id, c.detail)),
            "fail" => writeln!(
                env.out,
                "  {} {} ({}): {}",
                s.error("check"),
                c.id,
                c.field,
                c.detail
            )?,
            _ => writeln!(env.out, "  check {} not judged: {}", c.id, s.dim(&c.detail))?,
        }
    }
    if let Some(i) = r.impact {
        writeln!(
            env.out,
            "  impact: {} — {}",
            i.as_str(),
            r.reasons.join("; ")
        )?;
    }
    for a in &r.actions {
        let tag = if a.ok { s.ok("ok") } else { s.error("failed") };
        writeln!(env.out, "  {tag} {} ({})", a.command, a.because.join(", "))?;
        if !a.ok || !a.detail.is_empty() {
            writeln!(env.out, "       {}", s.dim(&a.detail))?;
        }
    }
    if let Some(t) = &r.trial {
        writeln!(
            env.out,
            "  on trial: {} boot(s) to pass verify, else back to the image before",
            t.attempts
        )?;
    }
    if r.reboot {
        writeln!(
            env.out,
            "  reboot: {}",
            if r.actions.iter().any(|a| a.command.ends_with("reboot")) {
                "asked"
            } else {
                "left to the caller (--no-reboot)"
            }
        )?;
    }
    Ok(())
}
