//! `nodeimg completions SHELL`: completion scripts from the clap definitions.

use clap::CommandFactory;

use super::{Env, exit};
use crate::cli::{Cli, CompletionsArgs};

pub fn run(args: &CompletionsArgs, env: &mut Env<'_>) -> u8 {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "nodeimg", &mut env.out);
    exit::OK
}
