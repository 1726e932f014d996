//! `nodeimg golden check|update BLUEPRINT… [--dir DIR]`: a blueprint repository's review
//! surface (see [`crate::golden`]). `update` writes DIR/NAME/ for each blueprint;
//! `check` exits 1 naming each file that differs, with the first lines of its unified
//! diff, 0 when every folder is as rendered, 2 when a blueprint or a folder cannot be used.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::prepared::Prepared;
use super::{Env, Exit, OrUnusable, Outcome};
use crate::cli::{Format, GoldenArgs, GoldenCommand, GoldenTarget};
use crate::golden::{Difference, Golden};

#[derive(Serialize)]
struct Checked {
    name: String,
    dir: PathBuf,
    differences: Vec<Difference>,
}

#[derive(Serialize)]
struct Report {
    blueprints: Vec<Checked>,
    differs: bool,
}

pub fn run(args: &GoldenArgs, env: &mut Env<'_>) -> Outcome {
    match &args.command {
        GoldenCommand::Check(t) => check(t, env),
        GoldenCommand::Update(t) => update(t, env),
    }
}

/// Each blueprint with its golden content and folder; two blueprints of one name are
/// refused (they would share a folder).
fn prepare(
    t: &GoldenTarget,
    env: &mut Env<'_>,
) -> Result<Vec<(Golden, PathBuf, Vec<PathBuf>)>, super::Failure> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::new();
    for file in &t.files {
        let prepared = Prepared::load(file, &t.matrix, Some(&t.templates), env)?;
        let golden = Golden::of(&prepared.blueprint, &prepared.templates).unusable_at(file)?;
        if let Some(other) = seen.insert(golden.name().to_string(), file.to_string()) {
            return Err(super::Failure::unusable(format!(
                "{file} and {other} are both named {}: they would share {}",
                golden.name(),
                t.dir.join(golden.name()).display()
            )));
        }
        let dir = t.dir.join(golden.name());
        let inputs = prepared.inputs(&t.templates, &t.matrix);
        out.push((golden, dir, inputs));
    }
    Ok(out)
}

fn update(t: &GoldenTarget, env: &mut Env<'_>) -> Outcome {
    for (golden, dir, inputs) in prepare(t, env)? {
        golden.write(&dir, &inputs).unusable()?;
        writeln!(env.out, "{}: wrote {}", golden.name(), dir.display())
            .unusable_at("cannot write the report")?;
    }
    Ok(Exit::Ok)
}

fn check(t: &GoldenTarget, env: &mut Env<'_>) -> Outcome {
    let mut report = Report {
        blueprints: Vec::new(),
        differs: false,
    };
    for (golden, dir, _) in prepare(t, env)? {
        let differences = golden.check(&dir).unusable()?;
        report.differs |= !differences.is_empty();
        report.blueprints.push(Checked {
            name: golden.name().to_string(),
            dir,
            differences,
        });
    }
    match t.format {
        Format::Json => env.json(&report)?,
        Format::Text => text(&report, t.diff_lines, env).unusable_at("cannot write the report")?,
    }
    Ok(if report.differs {
        Exit::Negative
    } else {
        Exit::Ok
    })
}

fn text(r: &Report, limit: usize, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    let mut same = 0;
    for b in &r.blueprints {
        if b.differences.is_empty() {
            same += 1;
            writeln!(
                env.out,
                "{}: {} {}",
                b.name,
                s.ok("as rendered"),
                b.dir.display()
            )?;
            continue;
        }
        writeln!(
            env.out,
            "{}: {} in {} ({} file(s); `nodeimg golden update` rewrites it)",
            b.name,
            s.error("differs"),
            b.dir.display(),
            b.differences.len()
        )?;
        for d in &b.differences {
            writeln!(env.out, "  {}: {}", b.dir.join(&d.path).display(), d.what)?;
            let lines: Vec<&str> = d.diff.lines().collect();
            let shown = if limit == 0 {
                lines.len()
            } else {
                limit.min(lines.len())
            };
            for l in &lines[..shown] {
                writeln!(env.out, "    {l}")?;
            }
            if shown < lines.len() {
                writeln!(
                    env.out,
                    "    … {} more line(s) (--diff-lines 0 shows all)",
                    lines.len() - shown
                )?;
            }
        }
    }
    writeln!(
        env.out,
        "{} blueprint(s): {} as rendered, {} differ",
        r.blueprints.len(),
        same,
        r.blueprints.len() - same
    )
}
