//! `nodeimg completions SHELL`: completion scripts from the clap definitions.

use clap::CommandFactory;

use super::{Env, Exit, Outcome};
use crate::cli::{Cli, CompletionsArgs};

pub fn run(args: &CompletionsArgs, env: &mut Env<'_>) -> Outcome {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "nodeimg", &mut env.out);
    Ok(Exit::Ok)
}
