//! `nodeimg explain`: every resolved value of a blueprint (defaults
//! applied), then the values nodeimg computes — maxPods, reservations,
//! eviction, hugepages, allocatable, the kernel command line — each with
//! the arithmetic or the rule behind it; and the site's overrides of the vendor fault
//! catalogs that verify will apply on the node.

use serde::Serialize;
use serde_json::Value;

use super::prepared::Prepared;
use super::{Env, Exit, OrUnusable, Outcome};
use crate::blueprint::resolve::Derived;
use crate::blueprint::{Blueprint, cmdline};
use crate::cli::{ExplainArgs, Format};
use crate::fault::overrides::Override;

#[derive(Serialize)]
struct Report {
    name: String,
    id: String,
    values: Vec<(String, Value)>,
    derived: Vec<Derived>,
    /// The matrix's `faults` for this blueprint's GPU vendor (carried in the image).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fault_overrides: Vec<Override>,
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
        fault_overrides: bp.identity().matrix().faults.clone(),
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
    if !r.fault_overrides.is_empty() {
        writeln!(
            env.out,
            "\nFault catalog overrides (the matrix's `faults`):"
        )?;
        for o in &r.fault_overrides {
            let class = o.class.map(|c| format!(", {c}")).unwrap_or_default();
            let severity = o.severity.map(|v| format!(", {v}")).unwrap_or_default();
            writeln!(
                env.out,
                "  {:20}  {}{class}{severity}  {}",
                o.key(),
                o.action,
                s.dim(&o.source)
            )?;
        }
    }
    Ok(())
}
