//! `nodeimg rollout plan|gate|readmit|simulate` and `nodeimg accept compare`: read the inputs,
//! call [`crate::rollout`], print the result (text or JSON) and write the manifests.
//!
//! Exit codes: plan 0; gate 0 proceed, 1 halt; readmit 0 every node accepted again, 1 not;
//! simulate 0 completed, 1 halted; compare 0
//! no outlier, 1 outliers; 2 unusable input or arguments.
//!
//! One file although long: five thin subcommands over one set of inputs (fleet, images,
//! blueprints) that they read the same way.

use std::path::PathBuf;

use super::prepared::{self, Prepared};
use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::atomic::{Kind, StagedDir};
use crate::blueprint::model::acceptance::pinned;
use crate::blueprint::model::rollout::{Budget, Rollout};
use crate::cli::{
    AcceptCompareArgs, Format, RolloutArgs, RolloutCommand, RolloutGateArgs, RolloutPlanArgs,
    RolloutReadmitArgs, RolloutSimulateArgs, SimImpact,
};
use crate::diff::impact::Impact;
use crate::rollout::plan::{self, Plan, Settings, Side};
use crate::rollout::{baseline, fleet::Fleet, gate, manifests, readmit, records, simulate};
use crate::stdio::Input;

/// Largest Node list or plan read.
const MAX_INPUT: u64 = 256 * 1024 * 1024;

pub fn run(args: &RolloutArgs, env: &mut Env<'_>) -> Outcome {
    match &args.command {
        RolloutCommand::Plan(a) => plan_cmd(a, env),
        RolloutCommand::Gate(a) => gate_cmd(a, env),
        RolloutCommand::Readmit(a) => readmit_cmd(a, env),
        RolloutCommand::Simulate(a) => simulate_cmd(a, env),
    }
}

fn settings(r: &Rollout) -> Settings {
    Settings {
        canaries_per_sku: r.canaries_per_sku as usize,
        budget: r.wave_budget.clone(),
        max_wave_size: r.max_wave_size.map(|m| m as usize),
    }
}

fn plan_cmd(args: &RolloutPlanArgs, env: &mut Env<'_>) -> Outcome {
    let stdin = [&args.old, &args.new, &args.nodes]
        .iter()
        .filter(|i| ***i == Input::Stdin)
        .count();
    if stdin > 1 {
        return Err(Failure::unusable(
            "only one of OLD, NEW and --nodes can be `-` (standard input)",
        ));
    }
    for (flag, image) in [
        ("--old-image", &args.old_image),
        ("--new-image", &args.new_image),
    ] {
        pinned(image).unusable_at(flag)?;
    }
    let old = Prepared::load(&args.old, &args.matrix, Some(&args.templates), env)?;
    let new = old.another(&args.new, env)?;
    let old_r = crate::render::render(&old.blueprint, &old.templates).unusable_at(&args.old)?;
    let new_r = crate::render::render(&new, &old.templates).unusable_at(&args.new)?;
    let report = crate::diff::compare(&old.blueprint, &old_r, &new, &new_r);
    if report.impact.is_some() && args.old_image == args.new_image {
        return Err(Failure::unusable(
            "--old-image and --new-image are the same image, but the blueprints differ",
        ));
    }
    let text = args
        .nodes
        .read_text(MAX_INPUT)
        .unusable_at(format_args!("--nodes {}", args.nodes))?;
    let mut nodes =
        crate::k8s::node::parse(&text).unusable_at(format_args!("--nodes {}", args.nodes))?;
    // The nodes the selector leaves out, by its label: an operator-owned driver bump
    // reaches them too.
    let mut left_out: std::collections::BTreeMap<String, usize> = Default::default();
    if let Some(sel) = &args.selector {
        let (k, v) = sel
            .split_once('=')
            .ok_or_else(|| Failure::unusable(format!("--selector `{sel}`: write KEY=VALUE")))?;
        for n in nodes
            .iter()
            .filter(|n| n.labels.get(k).map(String::as_str) != Some(v))
        {
            let class = match n.labels.get(k) {
                Some(other) => format!("{k}={other}"),
                None => format!("{k} unset"),
            };
            *left_out.entry(class).or_default() += 1;
        }
        nodes.retain(|n| n.labels.get(k).map(String::as_str) == Some(v));
    }
    // Nodes of another hardware class are refused before any wave is planned: an image
    // built for one GPU model must not reach another.
    let wrong = crate::rollout::hardware::contradictions(&nodes, new.spec(), &old.matrix);
    if !wrong.is_empty() {
        let mut messages: Vec<String> = wrong
            .iter()
            .map(|c| format!("--nodes {}: {c}", args.nodes))
            .collect();
        messages.push(format!(
            "{} node(s) are not of this blueprint's hardware; the plan is refused. Narrow the list with --selector (e.g. {}=…) or fix the blueprint's accelerators",
            wrong.iter().map(|c| c.node.as_str()).collect::<std::collections::BTreeSet<_>>().len(),
            crate::rollout::hardware::PRODUCT_LABEL
        ));
        return Err(Failure {
            exit: Exit::Unusable,
            diagnostics: Vec::new(),
            messages,
        });
    }
    if nodes.is_empty() {
        return Err(Failure::unusable(format!(
            "--nodes {}: no node{}",
            args.nodes,
            if args.selector.is_some() {
                " matches --selector"
            } else {
                ""
            }
        )));
    }
    let rollout = new.spec().rollout.clone().unwrap_or_default();
    let keys: Vec<String> = rollout
        .failure_domains
        .iter()
        .map(|k| k.as_str().to_owned())
        .collect();
    let skus: Vec<String> = rollout
        .sku_labels
        .iter()
        .map(|k| k.as_str().to_owned())
        .collect();
    let fleet = Fleet::from_nodes(&nodes, &keys, &skus)
        .unusable_at(format_args!("--nodes {}", args.nodes))?;
    let side = |bp: &crate::blueprint::Blueprint, image: &str| Side {
        blueprint: bp.name().to_owned(),
        version: bp.spec().metadata.version.to_string(),
        id: bp.id().to_owned(),
        image: image.to_owned(),
    };
    let tolerance = new
        .spec()
        .acceptance
        .as_ref()
        .map_or(5.0, |a| a.regression_tolerance_percent);
    let image_check = check_images(args, &old.blueprint, &new, env)?;
    let mut plan = plan::plan(
        &fleet,
        &settings(&rollout),
        side(&old.blueprint, &args.old_image),
        side(&new, &args.new_image),
        report.impact,
        report.reasons.clone(),
        tolerance,
    );
    plan.image_check = image_check;
    plan.operator_driver = crate::rollout::operator_driver::bump(old.blueprint.spec(), new.spec())
        .map(|(from, to)| {
            let waves = plan.waves.iter().map(|w| w.nodes.as_slice());
            let mut d = crate::rollout::operator_driver::stage(waves, &from, &to);
            d.unheld = left_out.clone();
            d
        });
    plan.unstaged_driver = crate::rollout::unstaged_driver::of(old.blueprint.spec(), new.spec());
    if let Some(dir) = &args.output {
        let applier = match rollout.engine.applier.as_deref() {
            Some(image) => manifests::Applier::Site(image),
            None => manifests::Applier::Image,
        };
        let mut inputs = old.inputs(&args.templates, &args.matrix);
        inputs.extend(crate::render::inputs(&new));
        if let Input::File(p) = &args.nodes {
            inputs.push(p.clone());
        }
        write_output(dir, &inputs, &plan, &rollout, applier)?;
        env.note(&format!(
            "{} wave file(s), rollback.yaml and plan.json written to {}",
            plan.waves.len(),
            dir.display()
        ));
    }
    match args.format {
        Format::Json => env.json(&plan)?,
        Format::Text => plan_text(&plan, env).unusable_at("cannot write the report")?,
    }
    Ok(Exit::Ok)
}

/// Checks the new and old images against the trust policy (`--trust-policy`, else each
/// blueprint's `security.imageTrust`) in the registry: an image no trusted key signed
/// refuses the plan (exit 1). `--skip-image-verification` skips it, loudly.
fn check_images(
    args: &RolloutPlanArgs,
    old: &crate::blueprint::Blueprint,
    new: &crate::blueprint::Blueprint,
    env: &mut Env<'_>,
) -> Result<plan::ImageCheck, Failure> {
    use crate::trust::TrustPolicy;
    let site = match &args.trust_policy {
        Some(p) => Some(TrustPolicy::from_file(p).unusable()?),
        None => None,
    };
    let new_policy = match &site {
        Some(p) => Some(p.clone()),
        None => TrustPolicy::from_blueprint(new).unusable()?,
    };
    let Some(new_policy) = new_policy else {
        return Ok(plan::ImageCheck::NoPolicy);
    };
    let old_policy = match &site {
        Some(p) => p.clone(),
        None => TrustPolicy::from_blueprint(old)
            .unusable()?
            .unwrap_or_else(|| new_policy.clone()),
    };
    if args.skip_image_verification {
        env.note(&format!(
            "{}: the images' signatures were NOT checked (--skip-image-verification); the policy of {} is left to the nodes",
            env.err_style.warning("warning"),
            new_policy.source
        ));
        return Ok(plan::ImageCheck::Skipped {
            policy: new_policy.source,
        });
    }
    let new_key = verified(&args.new_image, "--new-image", &new_policy, args)?;
    let old_key = verified(
        &args.old_image,
        "--old-image (the rollback)",
        &old_policy,
        args,
    )?;
    Ok(plan::ImageCheck::Verified {
        policy: new_policy.source,
        new_key,
        old_key,
    })
}

/// The key that signed `image` in its registry, or why the plan is refused.
#[cfg(feature = "push")]
fn verified(
    image: &str,
    flag: &str,
    policy: &crate::trust::TrustPolicy,
    args: &RolloutPlanArgs,
) -> Result<String, Failure> {
    use crate::trust::registry;
    let r = registry::reference(image).map_err(super::push::failure)?;
    let opts = super::push::options(&args.registry);
    let report =
        registry::verify(&r, &policy.public_keys(), &Default::default(), &opts).map_err(|e| {
            Failure::negative(format!("{flag} {image}: cannot check its signature: {e}"))
        })?;
    if let Some(key) = report.signer() {
        return Ok(key.to_string());
    }
    let why = format!("{flag} {image}: {}", report.signature.explain());
    if !policy.require {
        // `require: false`: reported, not refused.
        return Ok(format!("none ({})", report.signature.word()));
    }
    Err(Failure::negative(format!(
        "{why}; no Plan is made for an image the trust policy ({}) does not vouch for (--skip-image-verification makes them anyway)",
        policy.source
    )))
}

#[cfg(not(feature = "push"))]
fn verified(
    image: &str,
    flag: &str,
    _policy: &crate::trust::TrustPolicy,
    _args: &RolloutPlanArgs,
) -> Result<String, Failure> {
    Err(Failure::unusable(format!(
        "{flag} {image}: this nodeimg was built without registry support, so the signature cannot be checked; pass --skip-image-verification"
    )))
}

fn write_output(
    dir: &std::path::Path,
    inputs: &[PathBuf],
    plan: &Plan,
    rollout: &Rollout,
    applier: manifests::Applier<'_>,
) -> Result<(), Failure> {
    let staged = StagedDir::new(dir, Kind::Render, inputs).unusable()?;
    let mut files = manifests::render(plan, &rollout.engine, applier).unusable()?;
    if let Some(d) = &plan.operator_driver {
        files.extend(crate::rollout::operator_driver::scripts(d, plan.nodes()));
    }
    let json = serde_json::to_string_pretty(plan).unusable()? + "\n";
    files.push(("plan.json".to_owned(), json));
    for (name, text) in files {
        let path = staged.path().join(&name);
        crate::atomic::write_file(&path, text.as_bytes())
            .unusable_at(format_args!("{}", path.display()))?;
    }
    staged.commit().unusable()
}

fn plan_text(p: &Plan, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    let o = &mut *env.out;
    let Some(impact) = p.impact else {
        return writeln!(
            o,
            "No change: {} {} and {} {} render the same; nothing to roll out.",
            p.from.blueprint, p.from.version, p.to.blueprint, p.to.version
        );
    };
    writeln!(
        o,
        "Rollout {} {} → {} {}: {} ({})",
        p.from.blueprint,
        p.from.version,
        p.to.blueprint,
        p.to.version,
        match impact {
            Impact::Reboot => s.error("reboot"),
            Impact::Drain => s.warning("drain"),
            Impact::Live => s.ok("live"),
        },
        p.reasons.join("; ")
    )?;
    writeln!(o, "  new image  {}", p.to.image)?;
    match &p.image_check {
        plan::ImageCheck::NoPolicy => {}
        plan::ImageCheck::Verified {
            new_key, old_key, ..
        } => writeln!(o, "  signed     new by {new_key}, rollback by {old_key}")?,
        plan::ImageCheck::Skipped { policy } => writeln!(
            o,
            "  {}    the images' signatures were NOT checked (--skip-image-verification; policy {policy})",
            s.error("UNCHECKED")
        )?,
    }
    writeln!(
        o,
        "  rollback   {} (keep it in the registry)",
        p.rollback.image
    )?;
    writeln!(o, "  each node  {}", p.steps.describe())?;
    if let Some(d) = &p.operator_driver {
        writeln!(
            o,
            "  driver     {} → {}, rolled by the GPU operator and staged by these waves: before \
             `helm upgrade` with the new operator values, driver-hold.sh labels every node {}=true; \
             after each wave's image, wave-NNN-driver.sh releases its nodes; wait for {} on them, \
             then acceptance (the gate asks each record for driver {})",
            d.from,
            d.to,
            crate::rollout::operator_driver::SKIP_LABEL,
            d.done,
            d.to
        )?;
        writeln!(o, "  {}    {}", s.warning("WARNING"), d.warning(p.nodes()))?;
    }
    if let Some(d) = &p.unstaged_driver {
        writeln!(
            o,
            "  driver     {} → {}, rolled by the GPU operator, NOT staged by these waves",
            d.from, d.to
        )?;
        writeln!(o, "  {}    {}", s.warning("WARNING"), d.warning)?;
    }
    let skus: Vec<String> = p.skus.iter().map(|(k, n)| format!("{k} ({n})")).collect();
    writeln!(
        o,
        "  nodes      {} in {} SKU(s): {}",
        p.nodes(),
        p.skus.len(),
        skus.join(", ")
    )?;
    let mut per_key: Vec<String> = Vec::new();
    for key in &p.failure_domains {
        let n = p.domains.iter().filter(|d| &d.key == key).count();
        per_key.push(format!("{key} ({n})"));
    }
    writeln!(
        o,
        "  domains    {}; at most {} per domain per wave",
        per_key.join(", "),
        p.budget
    )?;
    writeln!(o)?;
    for w in &p.waves {
        let kind = if w.canary { " canary" } else { "" };
        let skus: Vec<String> = w.skus.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        writeln!(
            o,
            "Wave {:>3}{kind}: {} node(s) [{}]",
            w.index,
            w.nodes.len(),
            skus.join(", ")
        )?;
        const SHOW: usize = 12;
        let shown: Vec<&str> = w.nodes.iter().take(SHOW).map(String::as_str).collect();
        let more = w.nodes.len().saturating_sub(SHOW);
        writeln!(
            o,
            "    {}{}",
            shown.join(" "),
            if more > 0 {
                format!(" … and {more} more")
            } else {
                String::new()
            }
        )?;
    }
    writeln!(o)?;
    writeln!(
        o,
        "Gate after each wave: nodeimg rollout gate --plan plan.json --wave N RECORDS… — every node \
         accepted on the new blueprint and no figure worse than its previous record by more than {} %.",
        p.tolerance_percent
    )?;
    writeln!(o, "On halt: {}", p.rollback.how)
}

fn gate_cmd(args: &RolloutGateArgs, env: &mut Env<'_>) -> Outcome {
    let text = args
        .plan
        .read_text(MAX_INPUT)
        .unusable_at(format_args!("--plan {}", args.plan))?;
    let plan: Plan = serde_json::from_str(&text)
        .map_err(|e| format!("line {}: {e}", e.line()))
        .unusable_at(format_args!("--plan {}", args.plan))?;
    let (current, previous) = node_records(&args.records, &args.previous, env)?;
    let g = gate::judge(&plan, args.wave, &current, previous.as_ref()).unusable()?;
    match args.format {
        Format::Json => env.json(&g)?,
        Format::Text => gate_text(&g, env).unusable_at("cannot write the report")?,
    }
    Ok(match g.decision {
        gate::Decision::Proceed => Exit::Ok,
        gate::Decision::Halt => Exit::Negative,
    })
}

/// Acceptance records by node name.
type Records = std::collections::BTreeMap<String, records::Read>;
/// This wave's records and, when given, the nodes' previous ones.
type ByNode = (Records, Option<Records>);

/// The records of this wave by node (a record that names no host is noted and left
/// out) and, when given, the nodes' previous records.
fn node_records(
    records: &[PathBuf],
    previous: &[PathBuf],
    env: &mut Env<'_>,
) -> Result<ByNode, Failure> {
    let (current, nameless) = records::by_node(records::load(records).unusable()?);
    for p in nameless {
        env.note(&format!(
            "{}: the record names no host; not counted",
            p.display()
        ));
    }
    let previous = if previous.is_empty() {
        None
    } else {
        Some(records::by_node(records::load(previous).unusable()?).0)
    };
    Ok((current, previous))
}

fn gate_text(g: &gate::Gate, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    let o = &mut *env.out;
    let accepted = g.nodes.iter().filter(|n| n.accepted).count();
    writeln!(
        o,
        "Wave {}{}: {}/{} node(s) accepted — {}",
        g.wave,
        if g.canary { " (canary)" } else { "" },
        accepted,
        g.nodes.len(),
        match g.decision {
            gate::Decision::Proceed => s.ok("PROCEED"),
            gate::Decision::Halt => s.error("HALT"),
        }
    )?;
    for n in g.nodes.iter().filter(|n| !n.accepted) {
        writeln!(o, "  {}: {}", n.node, n.reasons.join("; "))?;
    }
    writeln!(o, "  baseline: {}", g.baseline)?;
    writeln!(o, "Next: {}", g.next)
}

fn readmit_cmd(args: &RolloutReadmitArgs, env: &mut Env<'_>) -> Outcome {
    let matrix = prepared::matrix(&args.matrix, env)?;
    let bp = prepared::valid(&args.blueprint, &matrix, env)?;
    let (current, previous) = node_records(&args.records, &args.previous, env)?;
    let version = bp.spec().metadata.version.to_string();
    let target = gate::Target {
        id: bp.id(),
        version: &version,
        tolerance_percent: bp
            .spec()
            .acceptance
            .as_ref()
            .map_or(5.0, |a| a.regression_tolerance_percent),
        driver: None,
    };
    let name = format!("{} {version} ({})", bp.name(), bp.id());
    let r = readmit::judge(&target, &name, &args.nodes, &current, previous.as_ref());
    if r.nodes.is_empty() {
        return Err(Failure::unusable(
            "no node to judge: the records name no host and no --node was given",
        ));
    }
    match args.format {
        Format::Json => env.json(&r)?,
        Format::Text => readmit_text(&r, env).unusable_at("cannot write the report")?,
    }
    Ok(if r.nodes.iter().all(|n| n.accepted) {
        Exit::Ok
    } else {
        Exit::Negative
    })
}

fn readmit_text(r: &readmit::Readmit, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    let o = &mut *env.out;
    let accepted = r.nodes.iter().filter(|n| n.accepted).count();
    writeln!(
        o,
        "# {}/{} node(s) accepted again on {}",
        accepted,
        r.nodes.len(),
        r.blueprint
    )?;
    for n in r.nodes.iter().filter(|n| !n.accepted) {
        writeln!(
            o,
            "# {} {}: {}",
            s.error("STAYS OUT"),
            n.node,
            n.reasons.join("; ")
        )?;
    }
    for c in &r.commands {
        writeln!(o, "{c}")?;
    }
    Ok(())
}

fn simulate_cmd(args: &RolloutSimulateArgs, env: &mut Env<'_>) -> Outcome {
    let rollout = match &args.blueprint {
        Some(file) => {
            let matrix = prepared::matrix(&crate::cli::MatrixArg { matrix: None }, env)?;
            let bp = prepared::valid(file, &matrix, env)?;
            bp.spec().rollout.clone().unwrap_or_default()
        }
        None => Rollout::default(),
    };
    let mut settings = settings(&rollout);
    if let Some(b) = &args.budget {
        settings.budget = budget_arg("--budget", b)?;
        if settings.budget == Budget::Nodes(0) {
            return Err(Failure::unusable("--budget 0 never upgrades anything"));
        }
    }
    if let Some(c) = args.canaries {
        settings.canaries_per_sku = c as usize;
    }
    let mut durations = simulate::Durations::default();
    for (phase, min, max) in &args.duration {
        let span = simulate::Span {
            min: *min,
            max: *max,
        };
        match phase.as_str() {
            "drain" => durations.drain = span,
            "apply" => durations.apply = span,
            "reboot" => durations.reboot = span,
            "accept" => durations.accept = span,
            "gate" => durations.gate = span,
            "rollback" => durations.rollback = span,
            "detect" => durations.detect = span,
            "daemon-restart" => durations.daemon_restart = span,
            _ => durations.repair = span,
        }
    }
    let r = &rollout.remediation;
    let max_unhealthy = match &args.max_unhealthy {
        Some(m) => budget_arg("--max-unhealthy", m)?,
        None => r.max_unhealthy.clone(),
    };
    if max_unhealthy == Budget::Nodes(0) {
        return Err(Failure::unusable(
            "a maxUnhealthy of 0 never lets NodeHealthCheck remediate a node",
        ));
    }
    let mut faults = simulate_faults(r, max_unhealthy.of(args.nodes as usize));
    for (class, rate) in &args.fault {
        let class = class.parse().map_err(Failure::unusable)?;
        faults.rates.insert(class, *rate);
    }
    let input = simulate::Input {
        shape: simulate::Shape {
            nodes: args.nodes as usize,
            zones: args.zones as usize,
            nodes_per_rack: args.rack_size as usize,
            skus: args.skus as usize,
        },
        settings,
        impact: match args.impact {
            SimImpact::Live => Impact::Live,
            SimImpact::Drain => Impact::Drain,
            SimImpact::Reboot => Impact::Reboot,
        },
        durations,
        failures: simulate::Failures {
            apply: args.apply_failure,
            accept: args.accept_failure,
            canary: args.canary_fails,
        },
        faults,
        trace: false,
        seed: args.seed,
    };
    let r = simulate::run(&input);
    match args.format {
        Format::Json => env.json(&r)?,
        Format::Text => sim_text(&r, env).unusable_at("cannot write the report")?,
    }
    Ok(if r.halted.is_some() {
        Exit::Negative
    } else {
        Exit::Ok
    })
}

/// A count or a share (`25%`) given on the command line.
fn budget_arg(flag: &str, b: &str) -> Result<Budget, Failure> {
    serde_json::from_value::<Budget>(match b.parse::<u32>() {
        Ok(n) => serde_json::Value::from(n),
        Err(_) => serde_json::Value::from(b),
    })
    .map_err(|e| Failure::unusable(format!("{flag} {b}: {e}")))
}

/// The fault model with the blueprint's remediation windows, its recovery ladder and
/// `max_unhealthy` nodes.
fn simulate_faults(
    r: &crate::blueprint::model::rollout::Remediation,
    max_unhealthy: usize,
) -> crate::rollout::faults::Faults {
    let ladder = r.ladder();
    crate::rollout::faults::Faults {
        max_unhealthy,
        restart_window: r.daemon_restart_window.as_secs() as f64,
        reboot_timeout: r.reboot_timeout.as_secs() as f64,
        max_reboots: ladder.reboots,
        ladder_window: ladder.window_s as f64,
        ..Default::default()
    }
}

/// `3d 4h 05m`.
fn span(seconds: f64) -> String {
    let m = (seconds / 60.0).round() as u64;
    let (d, h, m) = (m / 1440, m / 60 % 24, m % 60);
    if d > 0 {
        format!("{d}d {h}h {m:02}m")
    } else {
        format!("{h}h {m:02}m")
    }
}

fn sim_text(r: &simulate::Report, env: &mut Env<'_>) -> std::io::Result<()> {
    let o = &mut *env.out;
    writeln!(
        o,
        "Simulated {} node(s) in {} zone(s), racks of {}, {} SKU(s); impact {}; seed {}",
        r.shape.nodes, r.shape.zones, r.shape.nodes_per_rack, r.shape.skus, r.impact, r.seed
    )?;
    writeln!(
        o,
        "  waves      {} planned ({} canary), {} completed",
        r.waves, r.canary_waves, r.waves_completed
    )?;
    writeln!(o, "  total time {}", span(r.total_seconds))?;
    writeln!(
        o,
        "  nodes      {} on the accepted new image, {} on the previous image ({} returned){}",
        r.accepted_new,
        r.old,
        r.rolled_back,
        if r.off_to_repair > 0 {
            format!(", {} off to repair", r.off_to_repair)
        } else {
            String::new()
        }
    )?;
    writeln!(
        o,
        "  peak       {} node(s) taken by the rollout at once ({} with faulty nodes)",
        r.peak_unavailable, r.peak_unavailable_with_faults
    )?;
    let mut keys: Vec<&str> = r.domains.iter().map(|d| d.key.as_str()).collect();
    keys.dedup();
    for key in keys {
        let ds: Vec<&simulate::Peak> = r.domains.iter().filter(|d| d.key == key).collect();
        let worst = ds
            .iter()
            .max_by_key(|d| (d.peak * 1000).checked_div(d.budget).unwrap_or(0))
            .expect("a key has domains");
        writeln!(
            o,
            "  {key}: {} domain(s); highest peak {} of budget {} ({}={})",
            ds.len(),
            worst.peak,
            worst.budget,
            key,
            worst.value
        )?;
    }
    match &r.halted {
        None if r.old == 0 && r.off_to_repair == 0 => {
            writeln!(o, "Completed: every node accepted on the new image.")?
        }
        None => {
            let mut left = Vec::new();
            if r.old > 0 {
                left.push(format!(
                    "{} left on the previous image (out of service for faults when their wave came{})",
                    r.old,
                    if r.remediation.held_back > 0 {
                        "; see the nodes never remediated below"
                    } else {
                        ""
                    }
                ));
            }
            if r.off_to_repair > 0 {
                left.push(format!("{} off to repair for good", r.off_to_repair));
            }
            writeln!(
                o,
                "Completed: {} of {} node(s) accepted on the new image; {}.",
                r.accepted_new,
                r.shape.nodes,
                left.join("; ")
            )?
        }
        Some(h) => writeln!(
            o,
            "Halted at wave {}{} after {}: {} failed ({}); they were returned to the previous image.",
            h.wave,
            if h.canary { " (canary)" } else { "" },
            span(h.at_seconds),
            h.failed.len(),
            h.failed
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )?,
    }
    let m = &r.remediation;
    if !m.classes.is_empty() {
        writeln!(
            o,
            "Remediation (maxUnhealthy {} per NodeHealthCheck): {} node(s) out for faults at most at once, {:.0} node-hours lost, settled after {}",
            m.max_unhealthy,
            m.peak_out_of_service,
            m.node_hours_lost,
            span(m.settled_seconds)
        )?;
        for c in &m.classes {
            let class = c.class.map_or("", |c| c.as_str());
            let mut what = Vec::new();
            for (n, label) in [
                (c.pod_restarts, "Pod restarted, node kept in service"),
                (c.daemon_restarts, "cleared by a daemon restart"),
                (c.reboots, "reboots (the ladder's)"),
                (c.to_repair, "queued for repair"),
                (c.repairs, "repairs"),
                (c.back_in_service, "back in service after acceptance"),
                (c.off_to_repair, "off to repair for good"),
            ] {
                if n > 0 {
                    what.push(format!("{n} {label}"));
                }
            }
            writeln!(o, "  {class}: {} fault(s): {}", c.faults, what.join(", "))?;
        }
        if m.waited > 0 {
            writeln!(
                o,
                "  {} remediation(s) held back by maxUnhealthy, the longest for {}",
                m.waited,
                span(m.longest_wait_seconds)
            )?;
        }
        if m.held_back > 0 {
            writeln!(
                o,
                "  {} node(s) never remediated: more than maxUnhealthy were unhealthy at once, so NodeHealthCheck held back every remediation; a person must act",
                m.held_back
            )?;
        }
        if m.waited_by_wave + m.left_out_by_wave > 0 {
            writeln!(
                o,
                "  waves waited for {} node(s) in automatic recovery and left {} in repair to their repair",
                m.waited_by_wave, m.left_out_by_wave
            )?;
        }
    }
    if !r.over_budget.is_empty() {
        writeln!(o, "OVER BUDGET: {}", r.over_budget.join("; "))?;
    }
    Ok(())
}

/// `nodeimg accept compare`.
pub(super) fn compare(args: &AcceptCompareArgs, env: &mut Env<'_>) -> Outcome {
    let (nodes, nameless) = records::by_node(records::load(&args.records).unusable()?);
    for p in nameless {
        env.note(&format!(
            "{}: the record names no host; not counted",
            p.display()
        ));
    }
    if nodes.is_empty() {
        return Err(Failure::unusable("no acceptance record given"));
    }
    let c = baseline::compare(&nodes, args.tolerance);
    match args.format {
        Format::Json => env.json(&c)?,
        Format::Text => compare_text(&c, env).unusable_at("cannot write the report")?,
    }
    Ok(if c.outliers.is_empty() {
        Exit::Ok
    } else {
        Exit::Negative
    })
}

fn compare_text(c: &baseline::Comparison, env: &mut Env<'_>) -> std::io::Result<()> {
    let o = &mut *env.out;
    for sku in &c.skus {
        match &sku.skipped {
            Some(why) => writeln!(o, "{}: not compared — {why}", sku.sku)?,
            None => writeln!(
                o,
                "{}: {} node(s), {} figure(s) compared",
                sku.sku,
                sku.nodes.len(),
                sku.figures.len()
            )?,
        }
    }
    if c.outliers.is_empty() {
        return writeln!(
            o,
            "No outlier: every node within {} % of its SKU's median.",
            c.tolerance_percent
        );
    }
    writeln!(
        o,
        "\n{} outlier(s) beyond {} % of the SKU median:",
        c.outliers.len(),
        c.tolerance_percent
    )?;
    for x in &c.outliers {
        writeln!(
            o,
            "  {}  {}: {} {} (median {} {}, {:.1} % worse)  [{}]",
            x.node, x.figure, x.value, x.unit, x.median, x.unit, x.worse_percent, x.record
        )?;
    }
    Ok(())
}
