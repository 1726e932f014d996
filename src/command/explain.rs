//! `nodeimg explain`: every resolved value of a blueprint (defaults
//! applied), then the values nodeimg computes — maxPods, reservations,
//! eviction, hugepages, allocatable, the kernel command line — each with
//! the arithmetic or the rule behind it.

use serde::Serialize;
use serde_json::Value;

use super::prepared::Prepared;
use super::{Env, Exit, OrUnusable, Outcome};
use crate::blueprint::resolve::Derived;
use crate::blueprint::{Blueprint, cmdline};
use crate::cli::{ExplainArgs, Format};

#[derive(Serialize)]
struct Report {
    name: String,
    id: String,
    values: Vec<(String, Value)>,
    derived: Vec<Derived>,
}

pub fn run(args: &ExplainArgs, env: &mut Env<'_>) -> Outcome {
    let prepared = Prepared::load(&args.file, &args.matrix, None, env)?;
    let report = build(&prepared.blueprint);
    match args.format {
        Format::Json => env.json(&report)?,
        Format::Text => text(&report, env).unusable_at("cannot write the report")?,
    }
    Ok(Exit::Ok)
}

fn build(bp: &Blueprint) -> Report {
    let values: Vec<(String, Value)> = bp.identity().leaves().into_iter().collect();
    // The kubelet's values as diff compares them, then the kernel command
    // line argument by argument with where each comes from.
    let mut derived = bp.kubelet().derived();
    for a in cmdline::full(bp.spec()) {
        derived.push(Derived {
            path: "kernel command line".into(),
            value: a.to_string(),
            how: format!("from {}", a.from),
        });
    }
    Report {
        name: bp.name().to_string(),
        id: bp.id().to_string(),
        values,
        derived,
    }
}

fn text(r: &Report, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    writeln!(env.out, "{} {}", r.name, s.dim(&r.id))?;
    writeln!(env.out, "\nResolved values (defaults applied):")?;
    let width = r
        .values
        .iter()
        .map(|(p, _)| p.len())
        .max()
        .unwrap_or(0)
        .min(48);
    for (path, value) in &r.values {
        let shown = match value {
            Value::String(t) => t.clone(),
            other => other.to_string(),
        };
        writeln!(env.out, "  {path:width$}  {shown}")?;
    }
    writeln!(env.out, "\nComputed values:")?;
    let width = r
        .derived
        .iter()
        .map(|d| d.path.len())
        .max()
        .unwrap_or(0)
        .min(48);
    for d in &r.derived {
        writeln!(
            env.out,
            "  {:width$}  {:<12} {}",
            d.path,
            d.value,
            s.dim(&d.how)
        )?;
    }
    Ok(())
}
