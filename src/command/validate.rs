//! `nodeimg validate`: check blueprints and print each one's id, or every
//! problem found, located. Exit 1 when any blueprint is invalid (or has
//! warnings under `--strict`).

use serde::Serialize;

use super::{Env, exit};
use crate::blueprint::diagnostic::{Diagnostic, Severity};
use crate::blueprint::{self, fails};
use crate::cli::{Format, ValidateArgs};

#[derive(Serialize)]
struct FileReport {
    file: String,
    valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    diagnostics: Vec<Diagnostic>,
}

#[derive(Serialize)]
struct Report {
    files: Vec<FileReport>,
    valid: usize,
    invalid: usize,
    errors: usize,
    warnings: usize,
}

pub fn run(args: &ValidateArgs, env: &mut Env<'_>) -> u8 {
    let matrix = match super::matrix(&args.matrix, env) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let mut files = Vec::new();
    for path in &args.files {
        let started = std::time::Instant::now();
        let (bp, diagnostics) = match blueprint::load_file(path, &matrix) {
            Ok(l) => (Some(l.blueprint), l.warnings),
            Err(d) => (None, d),
        };
        env.detail(&format!(
            "{}: checked in {:.2} ms",
            path.display(),
            started.elapsed().as_secs_f64() * 1e3
        ));
        let valid = bp.is_some() && !fails(&diagnostics, args.strict);
        files.push(FileReport {
            file: path.display().to_string(),
            valid,
            name: bp.as_ref().map(|b| b.name().to_string()),
            id: bp.as_ref().map(|b| b.id().to_string()),
            diagnostics,
        });
    }
    let count = |sev| {
        files
            .iter()
            .flat_map(|f| &f.diagnostics)
            .filter(|d| d.severity == sev)
            .count()
    };
    let report = Report {
        valid: files.iter().filter(|f| f.valid).count(),
        invalid: files.iter().filter(|f| !f.valid).count(),
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        files,
    };
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut *env.out, &report)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(env.out)),
        Format::Text => text(&report, env),
    };
    if let Err(e) = written {
        return env.fail(&format!("cannot write the report: {e}"));
    }
    if report.invalid > 0 {
        exit::NEGATIVE
    } else {
        exit::OK
    }
}

fn text(r: &Report, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    for f in &r.files {
        for d in &f.diagnostics {
            let line = d.to_string();
            let tag = match d.severity {
                Severity::Error => ": error[",
                Severity::Warning => ": warning[",
            };
            let painted = match d.severity {
                Severity::Error => line.replacen(tag, &format!(": {}[", s.error("error")), 1),
                Severity::Warning => line.replacen(tag, &format!(": {}[", s.warning("warning")), 1),
            };
            writeln!(env.out, "{painted}")?;
        }
        match (&f.id, f.valid) {
            (Some(id), true) => writeln!(
                env.out,
                "{}: {} {} {id}",
                f.file,
                s.ok("valid"),
                f.name.as_deref().unwrap_or("")
            )?,
            (Some(id), false) => writeln!(
                env.out,
                "{}: {} (warnings under --strict) {id}",
                f.file,
                s.error("invalid")
            )?,
            (None, _) => writeln!(env.out, "{}: {}", f.file, s.error("invalid"))?,
        }
    }
    writeln!(
        env.out,
        "{} file(s): {} valid, {} invalid; {} error(s), {} warning(s)",
        r.files.len(),
        r.valid,
        r.invalid,
        r.errors,
        r.warnings
    )
}
