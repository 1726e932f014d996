//! One file per subcommand. Each is `fn run(args, env) -> Result<Exit, Failure>`:
//! the verdict is the `Ok` value, anything that stops the command is a
//! [`Failure`] raised with `?`, and [`run`] prints failures in one place and
//! maps the verdict to the process exit status.

mod accept;
mod apply;
mod build;
mod capture;
mod closed_pipe;
mod cluster;
mod completions;
mod diff;
mod explain;
mod facts;
mod git_revision;
mod golden;
mod image_source;
mod init;
mod man;
mod prepared;
#[cfg(feature = "push")]
mod push;
mod render;
mod rollout;
mod schema;
mod sign;
mod source;
mod style;
mod validate;
mod verify;
mod verify_image;

use std::fmt;
use std::io::Write;
use std::process::ExitCode;

pub use style::Style;

use crate::blueprint::diagnostic::Diagnostic;
use crate::cli::{Cli, Command};

/// The three outcomes every command maps to (see the README's exit codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done; valid; every check passed; no difference.
    Ok,
    /// 1: a negative verdict: invalid blueprint, failed check, difference found.
    Negative,
    /// 2: the input or the arguments cannot be used.
    Unusable,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(match exit {
            Exit::Ok => 0,
            Exit::Negative => 1,
            Exit::Unusable => 2,
        })
    }
}

/// Why a command stopped (or, for verify, what went wrong beside its
/// verdict): located blueprint diagnostics and/or messages, printed once by
/// [`run`], and the exit status they lead to.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    /// Printed first, one per line, as the loader reports them.
    pub diagnostics: Vec<Diagnostic>,
    /// Printed after, each as `error: …`.
    pub messages: Vec<String>,
}

impl Failure {
    /// Unusable input or arguments (exit 2).
    pub fn unusable(message: impl fmt::Display) -> Self {
        Self {
            exit: Exit::Unusable,
            diagnostics: Vec::new(),
            messages: vec![message.to_string()],
        }
    }

    /// A negative verdict that ends the command early (exit 1).
    pub fn negative(message: impl fmt::Display) -> Self {
        Self {
            exit: Exit::Negative,
            ..Self::unusable(message)
        }
    }

    /// `verdict`, unless some output could not be written: then unusable (exit 2), with
    /// every problem. Commands attempt every output first, so that one failing does not
    /// keep the others from being written.
    pub fn unless_written(verdict: Exit, problems: Vec<String>) -> Result<Exit, Failure> {
        if problems.is_empty() {
            Ok(verdict)
        } else {
            Err(Self {
                exit: Exit::Unusable,
                diagnostics: Vec::new(),
                messages: problems,
            })
        }
    }

    /// A blueprint that did not load (exit 2).
    pub fn invalid(diagnostics: Vec<Diagnostic>) -> Self {
        Self {
            exit: Exit::Unusable,
            diagnostics,
            messages: Vec::new(),
        }
    }
}

/// `?` with a message: `result.unusable()?` or `result.unusable_at(path)?`.
pub trait OrUnusable<T> {
    /// The error as it is, as an unusable-input failure.
    fn unusable(self) -> Result<T, Failure>;
    /// `what: error`, as an unusable-input failure.
    fn unusable_at(self, what: impl fmt::Display) -> Result<T, Failure>;
}

impl<T, E: fmt::Display> OrUnusable<T> for Result<T, E> {
    fn unusable(self) -> Result<T, Failure> {
        self.map_err(Failure::unusable)
    }

    fn unusable_at(self, what: impl fmt::Display) -> Result<T, Failure> {
        self.map_err(|e| Failure::unusable(format!("{what}: {e}")))
    }
}

/// What every command returns.
pub type Outcome = Result<Exit, Failure>;

/// Where a command writes: the report to `out`, notes and errors to `err`.
pub struct Env<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    /// Styling of `out`.
    pub style: Style,
    /// Styling of `err` (a terminal or not on its own).
    pub err_style: Style,
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

    /// A blueprint diagnostic on stderr.
    pub fn diagnostic(&mut self, d: &Diagnostic) {
        let _ = writeln!(self.err, "{}", self.err_style.diagnostic(d));
    }

    /// Prints a failure (always shown, even under `--quiet`) and returns its exit.
    pub fn report(&mut self, failure: &Failure) -> Exit {
        for d in &failure.diagnostics {
            self.diagnostic(d);
        }
        for m in &failure.messages {
            let _ = writeln!(self.err, "{}: {m}", self.err_style.error("error"));
        }
        failure.exit
    }

    /// Writes a JSON report (pretty, one trailing newline) on stdout.
    pub fn json(&mut self, value: &impl serde::Serialize) -> Result<(), Failure> {
        serde_json::to_writer_pretty(&mut *self.out, value)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(self.out))
            .unusable_at("cannot write the report")
    }
}

/// Runs a parsed command line against the real stdout/stderr.
pub fn run(cli: Cli) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let style = Style::detect(cli.global.color, &stdout);
    let err_style = Style::detect(cli.global.color, &stderr);
    let mut out = closed_pipe::ClosedPipeIsDone::new(stdout.lock());
    let mut err = stderr.lock();
    let mut env = Env {
        out: &mut out,
        err: &mut err,
        style,
        err_style,
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
    };
    let exit = dispatch(cli.command, &mut env);
    let _ = env.out.flush();
    exit.into()
}

/// Runs one command and prints its failure, if any.
pub fn dispatch(command: Command, env: &mut Env<'_>) -> Exit {
    let outcome = match command {
        Command::Init(a) => init::run(&a, env),
        Command::Validate(a) => validate::run(&a, env),
        Command::Explain(a) => explain::run(&a, env),
        Command::Render(a) => render::run(&a, env),
        Command::Build(a) => build::run(&a, env),
        Command::Diff(a) => diff::run(&a, env),
        Command::Golden(a) => golden::run(&a, env),
        Command::Schema(a) => schema::run(&a, env),
        Command::Completions(a) => completions::run(&a, env),
        Command::Man(a) => man::run(&a, env),
        Command::Facts(a) => facts::run(&a, env),
        Command::Capture(a) => capture::run(&a, env),
        Command::Verify(a) => verify::run(&a, env),
        Command::Apply(a) => apply::run(&a, env),
        #[cfg(feature = "push")]
        Command::Push(a) => push::run(&a, env),
        Command::Sign(a) => sign::run(&a, env),
        Command::VerifyImage(a) => verify_image::run(&a, env),
        Command::Accept(a) => accept::run(&a, env),
        Command::Rollout(a) => rollout::run(&a, env),
    };
    outcome.unwrap_or_else(|failure| env.report(&failure))
}
