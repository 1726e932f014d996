//! One file per subcommand. Each takes its parsed arguments and an
//! [`Env`] (where to write, how to style) and returns an exit code; the
//! binary only maps that code to the process exit status.

mod build;
mod capture;
mod completions;
mod diff;
mod explain;
mod facts;
mod man;
mod push;
mod render;
mod schema;
mod style;
mod validate;
mod verify;

use std::io::Write;
use std::process::ExitCode;

pub use style::Style;

use crate::blueprint::compat::Matrix;
use crate::cli::{Cli, Command, MatrixArg};

/// Exit codes shared by every command.
pub mod exit {
    pub const OK: u8 = 0;
    /// A negative verdict: invalid blueprint, failed check, difference found.
    pub const NEGATIVE: u8 = 1;
    /// The input or the arguments cannot be used.
    pub const UNUSABLE: u8 = 2;
}

/// Where a command writes: the report to `out`, notes and errors to `err`.
pub struct Env<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub style: Style,
    pub quiet: bool,
    pub verbose: u8,
}

impl Env<'_> {
    /// A note on stderr, unless `--quiet`.
    pub fn note(&mut self, text: &str) {
        if !self.quiet {
            let _ = writeln!(self.err, "{text}");
        }
    }

    /// Detail on stderr, only with `-v`.
    pub fn detail(&mut self, text: &str) {
        if self.verbose > 0 {
            let _ = writeln!(self.err, "{text}");
        }
    }

    /// A fatal problem on stderr (always shown).
    pub fn fail(&mut self, text: &str) -> u8 {
        let _ = writeln!(self.err, "{}: {text}", self.style.error("error"));
        exit::UNUSABLE
    }
}

/// Runs a parsed command line against the real stdout/stderr.
pub fn run(cli: Cli) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let style = Style::detect(cli.global.color, &stdout);
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    let mut env = Env {
        out: &mut out,
        err: &mut err,
        style,
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
    };
    let code = dispatch(cli.command, &mut env);
    let _ = env.out.flush();
    ExitCode::from(code)
}

pub fn dispatch(command: Command, env: &mut Env<'_>) -> u8 {
    match command {
        Command::Validate(a) => validate::run(&a, env),
        Command::Explain(a) => explain::run(&a, env),
        Command::Render(a) => render::run(&a, env),
        Command::Build(a) => build::run(&a, env),
        Command::Diff(a) => diff::run(&a, env),
        Command::Schema(a) => schema::run(&a, env),
        Command::Completions(a) => completions::run(&a, env),
        Command::Man(a) => man::run(&a, env),
        Command::Facts(a) => facts::run(&a, env),
        Command::Capture(a) => capture::run(&a, env),
        Command::Verify(a) => verify::run(&a, env),
        Command::Push(a) => push::run(&a, env),
    }
}

/// Loads a blueprint that a command needs valid: diagnostics go to stderr
/// and the command ends with exit code 2.
fn load_valid(
    path: &std::path::Path,
    matrix: &Matrix,
    env: &mut Env<'_>,
) -> Result<crate::blueprint::Blueprint, u8> {
    match crate::blueprint::load_file(path, matrix) {
        Ok(l) => {
            for w in &l.warnings {
                env.note(&w.to_string());
            }
            Ok(l.blueprint)
        }
        Err(diags) => {
            for d in &diags {
                let _ = writeln!(env.err, "{d}");
            }
            Err(exit::UNUSABLE)
        }
    }
}

/// The built-in templates, or those with overrides from `--templates`.
fn templates(
    arg: &crate::cli::TemplatesArg,
    env: &mut Env<'_>,
) -> Result<crate::render::Templates, u8> {
    match &arg.templates {
        None => Ok(crate::render::Templates::embedded()),
        Some(dir) => {
            crate::render::Templates::with_overrides(dir).map_err(|e| env.fail(&e.to_string()))
        }
    }
}

/// The built-in matrix, extended by `--matrix` when given.
fn matrix(arg: &MatrixArg, env: &mut Env<'_>) -> Result<Matrix, u8> {
    let mut m = Matrix::builtin();
    if let Some(path) = &arg.matrix {
        m.extend_from_file(path)
            .map_err(|e| env.fail(&e.to_string()))?;
    }
    env.detail(&format!(
        "compatibility matrix: {} CUDA rows, {} ROCm rows, {} GPU models, {} rules{}",
        m.cuda_minimum_driver.len(),
        m.rocm.len(),
        m.models.len(),
        m.rules.len(),
        arg.matrix
            .as_ref()
            .map(|p| format!(" (with {})", p.display()))
            .unwrap_or_default()
    ));
    Ok(m)
}
