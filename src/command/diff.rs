//! `nodeimg diff OLD NEW`: the blueprint change field by field, computed
//! values with the arithmetic of both sides, rendered files as unified
//! diffs, overlay entries added, removed or changed, and the fleet impact
//! of each. Warnings (content changed under the same version) go to
//! stderr. Exit 1 when anything differs.

use super::prepared::Prepared;
use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::cli::{DiffArgs, Format};
use crate::diff::{self, Report};
use crate::render;
use crate::stdio::Input;

pub fn run(args: &DiffArgs, env: &mut Env<'_>) -> Outcome {
    if args.old == Input::Stdin && args.new == Input::Stdin {
        return Err(Failure::unusable(
            "OLD and NEW are both `-`: standard input holds one blueprint",
        ));
    }
    let old = Prepared::load(&args.old, &args.matrix, Some(&args.templates), env)?;
    let new = old.another(&args.new, env)?;
    let old_rendered = render::render(&old.blueprint, &old.templates).unusable_at(&args.old)?;
    let new_rendered = render::render(&new, &old.templates).unusable_at(&args.new)?;
    let report = diff::compare(&old.blueprint, &old_rendered, &new, &new_rendered);
    for w in &report.warnings {
        env.note(&format!("warning: {w}"));
    }
    match args.format {
        Format::Json => env.json(&report)?,
        Format::Text => text(&report, args.no_files, env).unusable_at("cannot write the report")?,
    }
    Ok(if report.differs() {
        Exit::Negative
    } else {
        Exit::Ok
    })
}

fn show(v: &Option<serde_json::Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn text(r: &Report, no_files: bool, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    let tag = |i: diff::impact::Impact| {
        let t = format!("{:<6}", i.as_str());
        match i {
            diff::impact::Impact::Reboot => s.error(&t),
            diff::impact::Impact::Drain => s.warning(&t),
            diff::impact::Impact::Live => s.ok(&t),
        }
    };
    writeln!(
        env.out,
        "{} {} → {} {}",
        r.old.name, r.old.version, r.new.name, r.new.version
    )?;
    if !r.fields.is_empty() {
        writeln!(env.out, "\nBlueprint changes:")?;
        for f in &r.fields {
            writeln!(
                env.out,
                "  {} {}: {} → {}",
                tag(f.impact),
                f.path,
                show(&f.old),
                show(&f.new)
            )?;
        }
    }
    if !r.computed.is_empty() {
        writeln!(env.out, "\nComputed changes:")?;
        for c in &r.computed {
            writeln!(
                env.out,
                "  {} {}: {} → {}",
                tag(c.impact),
                c.path,
                c.old,
                c.new
            )?;
            writeln!(env.out, "           old: {}", s.dim(&c.old_how))?;
            writeln!(env.out, "           new: {}", s.dim(&c.new_how))?;
        }
    }
    if !r.files.is_empty() {
        writeln!(env.out, "\nRendered file changes:")?;
        for f in &r.files {
            writeln!(
                env.out,
                "  {} {} ({:?}: {})",
                tag(f.impact),
                f.path,
                f.status,
                f.why
            )?;
        }
    }
    if !r.overlay.is_empty() {
        writeln!(env.out, "\nOverlay changes:")?;
        for o in &r.overlay {
            writeln!(
                env.out,
                "  {} {} ({:?}: {}; {})",
                tag(o.impact),
                o.path,
                o.status,
                o.detail,
                o.why
            )?;
        }
    }
    if !no_files {
        for f in &r.files {
            writeln!(env.out)?;
            env.out.write_all(f.diff.as_bytes())?;
        }
    }
    match r.impact {
        None => writeln!(env.out, "\nNo change: identical blueprints ({}).", r.new.id),
        Some(i) => writeln!(
            env.out,
            "\nSummary: {} field(s), {} computed value(s), {} file(s), {} overlay entr{} changed; fleet impact: {} — {}",
            r.fields.len(),
            r.computed.len(),
            r.files.len(),
            r.overlay.len(),
            if r.overlay.len() == 1 { "y" } else { "ies" },
            i.as_str(),
            r.reasons.join("; ")
        ),
    }
}
