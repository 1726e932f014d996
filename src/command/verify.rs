//! `nodeimg verify`: load the blueprint, collect the facts (live, under `--root`, or from
//! a `--snapshot`), run the selected checks, print the report on stdout and write the
//! requested files (reports, acceptance record, evidence capture) atomically.
//!
//! Exit code: 0 when nothing blocks the node (or a break-glass file overrides), 1 when a
//! critical check failed or could not be read, 2 when the blueprint, the arguments or an
//! output file are unusable. The format never changes it.

use crate::blueprint::Spec;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::source::{self, Source};
use super::{Env, Exit, Failure, OrUnusable, Outcome, prepared};
use crate::blueprint::model::{DriverAuthority, Vendor};
use crate::cli::DEFAULT_LOCK;
use crate::cli::VerifyArgs;
use crate::stdio::{Input, Output};
use crate::time::{self, Clock, SystemClock};
use crate::verify::capture::{self, Manifest};
use crate::verify::checks::{self, Selection, gpu_events, select};
use crate::verify::facts::{Facts, collect};
use crate::verify::history::{self, History, Memory};
use crate::verify::host::{Host, RecordLimits, Recording, RecordingHost};
use crate::verify::report::record::AcceptanceRecord;
use crate::verify::report::{self, BlueprintRef, Outcome as Verdict, Report};
use crate::verify::settle;

/// The operator's break-glass on the verified machine, if one applies:
/// `<reason> (until <expiry>)`. One without a reason or an expiry, or an
/// expired one, does not apply, and a warning says why.
fn break_glass(host: &dyn Host, path: &Path, now: u64, env: &mut Env<'_>) -> Option<String> {
    let text = match host.read_text(path) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return None,
        Err(e) => {
            env.note(&format!("warning: break-glass file ignored: {e}"));
            return None;
        }
    };
    match crate::verify::break_glass::parse(&text, now) {
        Ok(b) => Some(b.to_string()),
        Err(why) => {
            env.note(&format!(
                "warning: break-glass file {} does not apply: {why}",
                path.display()
            ));
            None
        }
    }
}

/// Runs verify up to `--attempts` times, `--retry-delay` apart, while it
/// fails (exit 1); each attempt is a whole run (facts, checks, record,
/// evidence, reports). Unusable input (exit 2) is not retried. One process
/// holds the unit's start job for every attempt, so kubelet, ordered after
/// the unit, starts as soon as an attempt passes and never after the last
/// one failed.
pub fn run(args: &VerifyArgs, env: &mut Env<'_>) -> Outcome {
    if args.list_checks {
        let text = match args.format {
            report::Format::Text => report::catalog::text(),
            report::Format::Json => report::catalog::json(),
            other => {
                return Err(Failure::unusable(format!(
                    "--list-checks prints text or json, not {}",
                    other.name()
                )));
            }
        };
        env.out
            .write_all(text.as_bytes())
            .unusable_at("cannot write the check list")?;
        return Ok(Exit::Ok);
    }
    if let Some(id) = &args.explain {
        let text = report::catalog::explain(id).ok_or_else(|| {
            Failure::unusable(format!(
                "--explain {id}: no such check (see `nodeimg verify --list-checks`)"
            ))
        })?;
        env.out
            .write_all(text.as_bytes())
            .unusable_at("cannot write the runbook")?;
        return Ok(Exit::Ok);
    }
    if args.phase == checks::Phase::Cluster {
        return super::cluster::run(args, env);
    }
    let attempts = args.attempts.max(1);
    let mut attempt = 1;
    loop {
        let outcome = run_once(args, env);
        if !matches!(outcome, Ok(Exit::Negative)) || attempt >= attempts {
            if matches!(outcome, Ok(Exit::Negative)) && attempts > 1 {
                env.note(&format!("verification failed {attempts} times; giving up"));
            }
            return outcome;
        }
        env.note(&format!(
            "attempt {attempt} of {attempts} failed; the next in {} s",
            args.retry_delay
        ));
        std::thread::sleep(std::time::Duration::from_secs(args.retry_delay));
        attempt += 1;
    }
}

fn run_once(args: &VerifyArgs, env: &mut Env<'_>) -> Outcome {
    let started = Instant::now();
    let started_unix = SystemClock.unix_seconds();
    let to_stdout = args.output.iter().filter(|(_, o)| o.is_stdout()).count()
        + usize::from(args.record.as_ref().is_some_and(|r| r.is_stdout()));
    if to_stdout > 1 {
        return Err(Failure::unusable(
            "only one of --output FORMAT=- and --record - can use standard output",
        ));
    }
    for output in args
        .output
        .iter()
        .map(|(_, output)| output)
        .chain(args.record.as_ref())
    {
        writable(output)?;
    }
    if let Some(dir) = &args.evidence_on_fail
        && dir.exists()
        && !dir.is_dir()
    {
        return Err(Failure::unusable(format!(
            "--evidence-on-fail {}: not a folder",
            dir.display()
        )));
    }
    let matrix = prepared::matrix(&args.matrix, env)?;
    let selection = Selection {
        phase: args.phase,
        patterns: args.checks.iter().map(|p| p.trim().to_owned()).collect(),
    };
    if let Some(unmatched) = selection.patterns.iter().find(|p| {
        let p = p.strip_prefix('!').unwrap_or(p);
        !checks::catalog().iter().any(|s| select::glob(p, s.id))
    }) {
        return Err(Failure::unusable(format!(
            "--checks {unmatched}: no check id matches (see `nodeimg verify --list-checks`)"
        )));
    }
    let blueprint = prepared::judged_against(&blueprint_input(args), &matrix)?;
    let Source {
        host,
        mut options,
        root,
    } = source::open(&args.source, env, operator_nvidia_driver(blueprint.spec()))?;
    // Besides the baselines, read back the parameters the blueprint itself sets.
    for key in blueprint.spec().security.sysctls.keys() {
        if !options.sysctls.contains(key) {
            options.sysctls.push(key.clone());
        }
    }
    // The BMC's Redfish credentials, where the blueprint names them.
    options.redfish = blueprint
        .spec()
        .firmware
        .as_ref()
        .and_then(|f| f.bmc.as_ref())
        .and_then(|b| b.redfish.clone());
    let live = root.is_some();
    let record_evidence = live && args.evidence_on_fail.is_some();
    // The health phase on a live machine remembers its runs (verify::history): the
    // kernel log from where this rule stopped, repeats, counters, the recovery ladder.
    let limits = blueprint
        .spec()
        .rollout
        .as_ref()
        .map(|r| r.remediation.ladder())
        .unwrap_or_default();
    let consumer = history::consumer(selection.phase.as_str(), &selection.patterns, &args.actions);
    let mut remembered = match (&root, selection.phase) {
        (Some(root), checks::Phase::Health) => {
            let path = root.join(history::FILE.trim_start_matches('/'));
            let mut h = load_history(&path, env);
            let boot_id = host
                .read_text(Path::new("/proc/sys/kernel/random/boot_id"))
                .ok()
                .map(|t| t.trim().to_owned());
            h.begin(boot_id.as_deref(), started_unix, &limits);
            options.kernel_log_since = h.cursor(&consumer);
            Some((path, h))
        }
        _ => None,
    };
    // Only what the selected checks read, unless the record or an evidence capture wants
    // every fact.
    if args.record.is_none() && !record_evidence {
        checks::Needs::of(blueprint.spec(), &selection).apply(&mut options);
    }
    let reason = if live {
        break_glass(host.as_ref(), &args.break_glass, started_unix, env)
    } else {
        None
    };
    // With --settle, states still settling after boot (fabric training,
    // links, ports) are waited for; see verify::settle.
    let (((facts, recording), results), runs) = settle::run(
        std::time::Duration::from_secs(if live { args.settle } else { 0 }),
        || {
            let (facts, recording): (Facts, Option<Recording>) = if record_evidence {
                let recorder = RecordingHost::new(host.as_ref(), RecordLimits::default());
                let facts = collect(&recorder, &options);
                let recording = recorder.recording();
                (facts, Some(recording))
            } else {
                (collect(host.as_ref(), &options), None)
            };
            // The matrix entries the blueprint was validated with (for a
            // lock, the image's own).
            let memory = remembered.as_ref().map(|(_, h)| Memory {
                history: h,
                now: started_unix,
                limits,
            });
            let results = checks::evaluate_remembering(
                blueprint.spec(),
                &facts,
                blueprint.identity().matrix(),
                &selection,
                memory,
            );
            ((facts, recording), results)
        },
        std::thread::sleep,
    );
    if runs > 1 {
        env.note(&format!(
            "waited for settling states: {runs} runs in {} s",
            started.elapsed().as_secs()
        ));
    }
    if results.is_empty() && !selection.patterns.is_empty() {
        // `--checks '!*'`, or `gpu.*` on a CPU blueprint: a report of 0/0 would read as a
        // pass without having looked at anything.
        return Err(Failure::unusable(format!(
            "--checks {}: selects no check this blueprint runs in phase {} \
             (see `nodeimg verify --list-checks`)",
            selection.patterns.join(","),
            selection.phase.as_str()
        )));
    }
    // `--actions`: this run judges the failures of those actions only (a rung of the
    // recovery ladder); what asks for another action is another rule's.
    let mut results = results;
    if !args.actions.is_empty() {
        results.retain(|r| r.verdict == checks::Verdict::Pass || args.actions.contains(&r.action));
    }
    if let Some((path, history)) = &mut remembered {
        gpu_events::remember(
            history,
            &consumer,
            &facts,
            &results,
            &blueprint.identity().matrix().fault_overrides(),
            started_unix,
        );
        let written = std::fs::create_dir_all(crate::atomic::parent_dir(path))
            .and_then(|()| crate::atomic::write_file(path, history.to_text().as_bytes()));
        if let Err(e) = written {
            // The next run judges this boot's log again; nothing is lost but the repeats.
            env.note(&format!(
                "warning: cannot keep the health history in {}: {e}",
                path.display()
            ));
        }
    }
    let spec = blueprint.spec();
    let mut report = Report::new(
        BlueprintRef {
            name: blueprint.name().to_owned(),
            version: spec.metadata.version.to_string(),
            id: blueprint.id().to_owned(),
            file: args.blueprint.to_string(),
        },
        facts
            .hostname
            .known()
            .cloned()
            .unwrap_or_else(|| "unknown".to_owned()),
        selection.phase.as_str(),
        selection.patterns.clone(),
        started_unix,
        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        reason,
        results,
    );
    // The node's last passing record, kept beside --record: a failing run names what
    // changed since.
    let last_good = args
        .record
        .as_ref()
        .and_then(Output::path)
        .map(crate::verify::last_good::beside);
    if let Some(path) = &last_good
        && report.outcome != Verdict::Pass
    {
        match AcceptanceRecord::read_file(path) {
            Ok(Some(previous)) => {
                let now = AcceptanceRecord::new(spec, &facts, &report, None);
                report.since_last_good =
                    Some(crate::verify::last_good::compare(path, &previous, &now));
            }
            Ok(None) => {}
            Err(e) => env.note(&format!("warning: the last good record is not used: {e}")),
        }
    }
    let verdict = match report.outcome {
        Verdict::Pass | Verdict::Overridden => Exit::Ok,
        Verdict::Fail => Exit::Negative,
    };
    if report.outcome == Verdict::Overridden {
        env.note(&format!(
            "warning: verification failed; break-glass {} overrides it: {}",
            args.break_glass.display(),
            report::text::safe(report.break_glass.as_deref().unwrap_or(""))
        ));
    }

    // Every output is attempted even when one fails; any failure makes the
    // run exit 2 whatever the verdict (the node's record must not go missing
    // unnoticed).
    let mut problems = Vec::new();
    let mut evidence: Option<PathBuf> = None;
    if let (Some(dir), Some(recording), true) =
        (&args.evidence_on_fail, &recording, report.blocked())
    {
        let root_text = root
            .as_ref()
            .map_or_else(|| "/".to_owned(), |r| r.display().to_string());
        let manifest = Manifest::new(
            recording,
            &facts,
            &root_text,
            RecordLimits::default(),
            report.started_at.clone(),
        );
        let path = dir.join(format!(
            "nodeimg-evidence-{}-{}.tar.zst",
            sanitize(&report.hostname),
            time::compact(&report.started_at)
        ));
        let written = std::fs::create_dir_all(dir)
            .map_err(|e| format!("--evidence-on-fail {}: {e}", dir.display()))
            .and_then(|()| capture::write(&path, recording, &manifest).map_err(|e| e.to_string()));
        match written {
            Ok(()) => {
                env.note(&format!("evidence kept in {}", path.display()));
                evidence = Some(path);
            }
            Err(e) => problems.push(e),
        }
    }
    for (fmt, output) in &args.output {
        let text = report::render(&report, *fmt);
        if let Err(e) = output.write(text.as_bytes(), env.out) {
            problems.push(format!("--output {output}: {e}"));
        }
    }
    if let Some(output) = &args.record {
        let record = AcceptanceRecord::new(spec, &facts, &report, evidence.as_deref());
        if let Err(e) = record.write_to(output, env.out) {
            problems.push(format!("--record {output}: {e}"));
        } else if let (Some(path), Verdict::Pass) = (&last_good, report.outcome)
            && let Err(e) = record.write_to(&Output::File(path.clone()), env.out)
        {
            problems.push(format!("--record {output}: the last good copy: {e}"));
        }
    }
    if to_stdout == 0 {
        let text = report::render(&report, args.format);
        env.out
            .write_all(text.as_bytes())
            .unusable_at("cannot write the report")?;
    }
    if report.outcome == Verdict::Fail && selection.phase == checks::Phase::Boot {
        let record = args.record.as_ref().map(ToString::to_string);
        let text = crate::verify::break_glass::instructions(
            &args.break_glass,
            started_unix,
            evidence.as_deref(),
            record.as_deref(),
        );
        env.note(text.trim_end());
    }
    Failure::unless_written(verdict, problems)
}

/// The health history at `path`; a missing one is empty, and an unreadable or foreign one
/// is set aside with a warning (this boot's log is judged again from its start).
fn load_history(path: &Path, env: &mut Env<'_>) -> History {
    match std::fs::read_to_string(path) {
        Ok(text) => History::parse(&text).unwrap_or_else(|e| {
            env.note(&format!("warning: health history not used: {e}"));
            History::default()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => History::default(),
        Err(e) => {
            env.note(&format!(
                "warning: health history {} not read: {e}",
                path.display()
            ));
            History::default()
        }
    }
}

/// The blueprint to load: `--blueprint`, except that the default lock is the inspected
/// machine's, so with `--root DIR` it is read under `DIR`.
/// The blueprint leaves the NVIDIA driver to the GPU operator: its nvidia-smi is in the
/// operator's driver root, not on the host.
fn operator_nvidia_driver(spec: &Spec) -> bool {
    spec.accelerators.as_ref().is_some_and(|a| {
        a.vendor == Vendor::Nvidia && a.driver.authority == DriverAuthority::Operator
    })
}

fn blueprint_input(args: &VerifyArgs) -> Input {
    match (&args.source.root, &args.blueprint) {
        (Some(root), Input::File(path)) if path == Path::new(DEFAULT_LOCK) => {
            Input::File(root.join(DEFAULT_LOCK.trim_start_matches('/')))
        }
        _ => args.blueprint.clone(),
    }
}

/// Whether an output can be written, checked before the checks run so a typo in a path
/// does not cost a whole run: its folder exists and takes a new file (the atomic write's
/// temporary file is made there), and the path is not a folder.
fn writable(output: &Output) -> Result<(), Failure> {
    let Some(path) = output.path() else {
        return Ok(());
    };
    let folder = crate::atomic::parent_dir(path);
    if path.is_dir() {
        return Err(Failure::unusable(format!("{output}: is a folder")));
    }
    tempfile::Builder::new()
        .prefix(".nodeimg-probe-")
        .tempfile_in(folder)
        .map(drop)
        .map_err(|e| {
            Failure::unusable(format!(
                "{output}: cannot write in {}: {e}",
                folder.display()
            ))
        })
}

/// A host name safe in a file name.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
