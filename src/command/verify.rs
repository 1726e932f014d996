//! `nodeimg verify`: load the blueprint, collect the facts (live, under `--root`, or from
//! a `--snapshot`), run the selected checks, print the report on stdout and write the
//! requested files (reports, acceptance record, evidence capture) atomically.
//!
//! Exit code: 0 when nothing blocks the node (or a break-glass file overrides), 1 when a
//! critical check failed or could not be read, 2 when the blueprint, the arguments or an
//! output file are unusable. The format never changes it.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::facts::{self as source, Source};
use super::{Env, exit};
use crate::blueprint::{self, Blueprint};
use crate::cli::{ReportFormat, VerifyArgs, VerifyPhase};
use crate::verify::capture::{self, Manifest};
use crate::verify::checks::{self, Phase, Selection, select};
use crate::verify::facts::{Facts, collect};
use crate::verify::host::{Host, RecordLimits, Recording, RecordingHost};
use crate::verify::report::record::AcceptanceRecord;
use crate::verify::report::{self, BlueprintRef, Format, Outcome, Report};
use crate::verify::timestamp;

fn format(f: ReportFormat) -> Format {
    match f {
        ReportFormat::Text => Format::Text,
        ReportFormat::Json => Format::Json,
        ReportFormat::Junit => Format::Junit,
        ReportFormat::Prometheus => Format::Prometheus,
        ReportFormat::Tap => Format::Tap,
        ReportFormat::Summary => Format::Summary,
    }
}

fn phase(p: VerifyPhase) -> Phase {
    match p {
        VerifyPhase::Boot => Phase::Boot,
        VerifyPhase::Driver => Phase::Driver,
        VerifyPhase::All => Phase::All,
        VerifyPhase::Health => Phase::Health,
    }
}

/// Loads the blueprint (YAML or JSON); relative paths inside it are not needed here.
fn load(
    path: &Path,
    matrix: &blueprint::compat::Matrix,
    env: &mut Env<'_>,
) -> Result<Blueprint, u8> {
    let bytes =
        std::fs::read(path).map_err(|e| env.fail(&format!("blueprint {}: {e}", path.display())))?;
    // A lock was validated at build time (maybe with a site matrix): it is
    // loaded as trusted input, checked against the id beside it.
    let loaded = if blueprint::identity::is_lock(path) {
        let id = std::fs::read_to_string(path.with_file_name("blueprint.id")).ok();
        blueprint::identity::load_lock(&bytes, path, id.as_deref())
    } else {
        blueprint::load_bytes(&bytes, path, None, matrix).map(|l| l.blueprint)
    };
    match loaded {
        Ok(blueprint) => Ok(blueprint),
        Err(diagnostics) => {
            for d in &diagnostics {
                let _ = writeln!(env.err, "{d}");
            }
            Err(env.fail(&format!(
                "blueprint {} is not usable ({} problem(s))",
                path.display(),
                diagnostics.len()
            )))
        }
    }
}

/// The operator's reason from the break-glass file on the verified machine, if any.
fn break_glass(host: &dyn Host, path: &Path, env: &mut Env<'_>) -> Option<String> {
    let text = match host.read_text(path) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return None,
        Err(e) => {
            env.note(&format!("warning: break-glass file ignored: {e}"));
            return None;
        }
    };
    let reason = text.lines().map(str::trim).find(|l| !l.is_empty());
    match reason {
        Some(reason) => Some(reason.chars().take(500).collect()),
        None => {
            env.note(&format!(
                "warning: break-glass file {} is empty and ignored: write the reason in it",
                path.display()
            ));
            None
        }
    }
}

pub fn run(args: &VerifyArgs, env: &mut Env<'_>) -> u8 {
    let started = Instant::now();
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let matrix = match super::matrix(&args.matrix, env) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let selection = Selection {
        phase: phase(args.phase),
        patterns: args.checks.iter().map(|p| p.trim().to_owned()).collect(),
    };
    if let Some(unmatched) = selection.patterns.iter().find(|p| {
        let p = p.strip_prefix('!').unwrap_or(p);
        !checks::catalog().iter().any(|s| select::glob(p, s.id))
    }) {
        return env.fail(&format!(
            "--checks {unmatched}: no check id matches (see `nodeimg verify --help`)"
        ));
    }
    let blueprint = match load(&args.blueprint, &matrix, env) {
        Ok(bp) => bp,
        Err(code) => return code,
    };
    let Source {
        host,
        options,
        root,
    } = match source::open(&args.source, env) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let live = root.is_some();
    let reason = if live {
        break_glass(host.as_ref(), &args.break_glass, env)
    } else {
        None
    };
    let record_evidence = live && args.evidence_on_fail.is_some();
    let (facts, recording): (Facts, Option<Recording>) = if record_evidence {
        let recorder = RecordingHost::new(host.as_ref(), RecordLimits::default());
        let facts = collect(&recorder, &options);
        let recording = recorder.recording();
        (facts, Some(recording))
    } else {
        (collect(host.as_ref(), &options), None)
    };
    let results = checks::evaluate(blueprint.spec(), &facts, &matrix, &selection);
    let spec = blueprint.spec();
    let report = Report::new(
        BlueprintRef {
            name: blueprint.name().to_owned(),
            version: spec.metadata.version.clone(),
            id: blueprint.id().to_owned(),
            file: args.blueprint.display().to_string(),
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
    let mut status = match report.outcome {
        Outcome::Pass | Outcome::Overridden => exit::OK,
        Outcome::Fail => exit::NEGATIVE,
    };
    if report.outcome == Outcome::Overridden {
        env.note(&format!(
            "warning: verification failed; break-glass {} overrides it: {}",
            args.break_glass.display(),
            report.break_glass.as_deref().unwrap_or("")
        ));
    }

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
            timestamp::compact(&report.started_at)
        ));
        let written = std::fs::create_dir_all(dir)
            .map_err(|e| format!("--evidence-on-fail {}: {e}", dir.display()))
            .and_then(|()| capture::write(&path, recording, &manifest).map_err(|e| e.to_string()));
        match written {
            Ok(()) => {
                env.note(&format!("evidence kept in {}", path.display()));
                evidence = Some(path);
            }
            Err(e) => status = env.fail(&e),
        }
    }
    for (fmt, path) in &args.output {
        let text = report::render(&report, format(*fmt));
        if let Err(e) = crate::atomic::write_file(path, text.as_bytes()) {
            status = env.fail(&format!("--output {}: {e}", path.display()));
        }
    }
    if let Some(path) = &args.record {
        let record = AcceptanceRecord::new(spec, &facts, &report, evidence.as_deref());
        let written = record.render_for(path).and_then(|text| {
            crate::atomic::write_file(path, text.as_bytes()).map_err(|e| e.to_string())
        });
        if let Err(e) = written {
            status = env.fail(&format!("--record {}: {e}", path.display()));
        }
    }
    let text = report::render(&report, format(args.format));
    if let Err(e) = env.out.write_all(text.as_bytes()) {
        return env.fail(&format!("cannot write the report: {e}"));
    }
    status
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
