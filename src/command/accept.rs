//! `nodeimg accept`: read the outputs of the acceptance workloads (files and folders),
//! judge them against the blueprint and the node's previous record, and write the
//! complete acceptance record (JSON and/or YAML) and a report.
//!
//! Exit code: 0 when every required layer ran and passed (or layer 1 was overridden by
//! break-glass and everything later passed), 1 when something failed or is incomplete,
//! 2 when the blueprint, an input, a record or an output file is unusable.

use std::path::Path;

use super::{Env, Exit, Failure, OrUnusable, Outcome, prepared};
use crate::accept::{complete, input, judge, regression, report};
use crate::cli::{AcceptArgs, AcceptCommand, Format};
use crate::stdio::Input;
use crate::time::{Clock, SystemClock};
use crate::verify::report::record::{AcceptanceRecord, BlueprintIdentity, RecordResult};

fn load_record(input: &Input, what: &str) -> Result<AcceptanceRecord, Failure> {
    let text = input
        .read_text(input::MAX_FILE_BYTES)
        .unusable_at(format_args!("{what} {input}"))?;
    AcceptanceRecord::parse(&text, input.name()).unusable_at(format_args!("{what} {input}"))
}

/// The node being accepted: named, or the layer-1 record's host, or the only Node given.
fn node_name(
    args: &AcceptArgs,
    layer1: Option<&AcceptanceRecord>,
    inputs: &[input::Input],
) -> Option<String> {
    if let Some(name) = &args.node_name {
        return Some(name.clone());
    }
    if let Some(host) = layer1.and_then(|r| r.hostname.known()) {
        return Some(host.clone());
    }
    let names: Vec<&str> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            input::Output::Nodes(n) => Some(n.iter().map(|n| n.name.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    match names.as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

/// Refuses records and outputs that belong to another node or blueprint.
fn same_node(
    name: Option<&str>,
    identity: &BlueprintIdentity,
    layer1: Option<&AcceptanceRecord>,
    previous: Option<&AcceptanceRecord>,
    inputs: &[input::Input],
    env: &mut Env<'_>,
) -> Result<(), Failure> {
    let host = |r: &AcceptanceRecord| r.hostname.known().cloned().unwrap_or_else(|| "?".into());
    if let Some(r) = layer1
        && r.blueprint.id != identity.id
    {
        return Err(Failure::unusable(format!(
            "--node-record was verified against blueprint {} ({}), not {} ({}): the node runs another image",
            r.blueprint.name, r.blueprint.id, identity.name, identity.id
        )));
    }
    let Some(name) = name else {
        return Ok(());
    };
    if let Some(r) = layer1.filter(|r| r.hostname.known().is_some_and(|h| h != name)) {
        return Err(Failure::unusable(format!(
            "--node-record is of node {}, not of {name}",
            host(r)
        )));
    }
    if let Some(r) = previous.filter(|r| r.hostname.known().is_some_and(|h| h != name)) {
        return Err(Failure::unusable(format!(
            "--previous is the record of node {}, not of {name}",
            host(r)
        )));
    }
    let foreign = judge::foreign(inputs, name);
    if !foreign.is_empty() {
        for f in &foreign {
            env.note(f);
        }
        return Err(Failure::unusable(format!(
            "{} output(s) of another node than {name}",
            foreign.len()
        )));
    }
    Ok(())
}

pub fn run(args: &AcceptArgs, env: &mut Env<'_>) -> Outcome {
    if let Some(AcceptCommand::Compare(c)) = &args.command {
        return super::rollout::compare(c, env);
    }
    let Some(blueprint_input) = &args.blueprint else {
        return Err(Failure::unusable("--blueprint is required"));
    };
    let to_stdout = args.record.iter().filter(|r| r.is_stdout()).count();
    if to_stdout > 1 {
        return Err(Failure::unusable(
            "only one --record can be standard output (-)",
        ));
    }
    let matrix = prepared::matrix(&args.matrix, env)?;
    let blueprint = prepared::judged_against(blueprint_input, &matrix)?;
    let spec = blueprint.spec();
    let settings = spec.acceptance.clone().unwrap_or_default();
    let identity = BlueprintIdentity {
        name: blueprint.name().to_owned(),
        version: spec.metadata.version.to_string(),
        id: blueprint.id().to_owned(),
        file: blueprint_input.to_string(),
    };
    let layer1 = args
        .node_record
        .as_ref()
        .map(|i| load_record(i, "--node-record"))
        .transpose()?;
    let previous = args
        .previous
        .as_ref()
        .map(|i| load_record(i, "--previous"))
        .transpose()?;
    let inputs = input::load_all(&args.inputs).unusable()?;
    env.detail(&format!("{} output file(s) read", inputs.len()));
    let name = node_name(args, layer1.as_ref(), &inputs);
    same_node(
        name.as_deref(),
        &identity,
        layer1.as_ref(),
        previous.as_ref(),
        &inputs,
        env,
    )?;

    let now = SystemClock.rfc3339();
    let policy = judge::Policy::new(spec, &settings);
    let judgement = judge::judge(&inputs, &policy, spec, name.as_deref());
    let base =
        layer1.unwrap_or_else(|| complete::without_layer1(identity.clone(), name.as_deref(), &now));
    let regression = match &previous {
        Some(p) => {
            let driver = base.gpu.driver.known().map(String::as_str);
            let software = regression::software_change(p, driver, &identity.id);
            regression::compare(
                &judgement.figures,
                &p.figures,
                policy.tolerance_percent,
                software.as_deref(),
                &p.created_at,
            )
        }
        None => Vec::new(),
    };
    let record = complete::complete(base, judgement, regression, args.evidence.clone(), &now);
    let verdict = match record.result {
        RecordResult::Pass | RecordResult::Overridden => Exit::Ok,
        RecordResult::Fail | RecordResult::Incomplete => Exit::Negative,
    };
    // Every record is written even when one fails, so that none goes missing.
    let mut problems = Vec::new();
    for output in &args.record {
        match record.write_to(output, env.out) {
            Ok(()) if !output.is_stdout() => env.note(&format!("record written to {output}")),
            Ok(()) => {}
            Err(e) => problems.push(format!("--record {output}: {e}")),
        }
    }
    if to_stdout == 0 {
        let text = match args.format {
            Format::Text => report::render(&record, env.verbose > 0),
            Format::Json => record.render_for(Path::new("record.json")).unusable()?,
        };
        env.out
            .write_all(text.as_bytes())
            .unusable_at("cannot write the report")?;
    }
    Failure::unless_written(verdict, problems)
}
