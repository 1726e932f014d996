//! `nodeimg validate`: check blueprints and print each one's id, or every
//! problem found, located. Exit 1 when any blueprint is invalid (or has
//! warnings under `--strict`); 2 when a file cannot be read at all (missing,
//! a folder, too large): that is unusable input, not an invalid blueprint.
//!
//! A valid blueprint is also rendered and its overlay walked the way
//! `build` would, so what `build` would refuse (a FIFO in the overlay, a
//! file both rendered and in the overlay) fails `validate` too.

use serde::Serialize;

use super::{Env, Exit, Failure, OrUnusable, Outcome, prepared};
use crate::blueprint::diagnostic::{Diagnostic, Severity};
use crate::blueprint::fails;
use crate::cli::{Format, ValidateArgs};
use crate::stdio::Input;

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

pub fn run(args: &ValidateArgs, env: &mut Env<'_>) -> Outcome {
    if args.files.iter().filter(|f| **f == Input::Stdin).count() > 1 {
        return Err(Failure::unusable(
            "`-` is named twice: standard input holds one blueprint",
        ));
    }
    let matrix = prepared::matrix(&args.matrix, env)?;
    let mut files = Vec::new();
    let mut unreadable = false;
    for path in &args.files {
        let started = std::time::Instant::now();
        let (bp, diagnostics) = match prepared::load(path, &matrix) {
            Ok(l) => {
                let mut d = l.warnings;
                d.extend(build_problems(&l.blueprint));
                let ok = !d.iter().any(|d| d.severity == Severity::Error);
                (ok.then_some(l.blueprint), d)
            }
            Err(d) => {
                unreadable |= prepared::unreadable(&d);
                (None, d)
            }
        };
        env.detail(&format!(
            "{path}: checked in {:.2} ms",
            started.elapsed().as_secs_f64() * 1e3
        ));
        let valid = bp.is_some() && !fails(&diagnostics, args.strict);
        files.push(FileReport {
            file: path.to_string(),
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
    match args.format {
        Format::Json => env.json(&report)?,
        Format::Text => text(&report, env).unusable_at("cannot write the report")?,
    }
    Ok(if unreadable {
        Exit::Unusable
    } else if report.invalid > 0 {
        Exit::Negative
    } else {
        Exit::Ok
    })
}

/// What `build` would refuse in a blueprint that validates: rendering, the
/// overlay's contents, and paths both rendered and in the overlay.
fn build_problems(bp: &crate::blueprint::Blueprint) -> Vec<Diagnostic> {
    let problem = |code: &str, path: &str, message: String| Diagnostic {
        severity: Severity::Error,
        code: code.into(),
        file: bp.file().to_path_buf(),
        path: crate::blueprint::yaml_path::YamlPath::parse(path),
        line: None,
        column: None,
        message,
        hint: None,
    };
    let rendered = match crate::render::render(bp, &crate::render::Templates::embedded()) {
        Ok(r) => r,
        Err(e) => return vec![problem("render", "", e.to_string())],
    };
    let Some(overlay) = crate::overlay::Overlay::from_blueprint(bp) else {
        return Vec::new();
    };
    let entries = match overlay.listing() {
        Ok(e) => e,
        Err(e) => return vec![problem("overlay", "files.overlay", e.to_string())],
    };
    // The verifier's content does not matter here, only the path it takes.
    let verifier = crate::package::verifier::Verifier::golden_stand_in();
    match crate::package::plan::plan(
        &rendered.layer,
        &verifier,
        Some((&entries[..], overlay.modes())),
        None,
    ) {
        Ok(_) => Vec::new(),
        Err(e) => vec![problem("overlay", "files.overlay", e.to_string())],
    }
}

fn text(r: &Report, env: &mut Env<'_>) -> std::io::Result<()> {
    let s = env.style;
    for f in &r.files {
        for d in &f.diagnostics {
            writeln!(env.out, "{}", s.diagnostic(d))?;
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
