//! One file per subcommand. Each takes its parsed arguments and an
//! [`Env`] (where to write, how to style) and returns an exit code; the
//! binary only maps that code to the process exit status.

mod completions;
mod explain;
mod man;
mod push;
mod schema;
mod style;
mod validate;

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
        Command::Schema(a) => schema::run(&a, env),
        Command::Completions(a) => completions::run(&a, env),
        Command::Man(a) => man::run(&a, env),
        Command::Push(a) => push::run(&a, env),
    }
}

/// The built-in matrix, extended by `--matrix` when given.
fn matrix(arg: &MatrixArg, env: &mut Env<'_>) -> Result<Matrix, u8> {
    let mut m = Matrix::builtin();
    if let Some(path) = &arg.matrix {
        m.extend_from_file(path)
            .map_err(|e| env.fail(&e.to_string()))?;
    }
    Ok(m)
}
