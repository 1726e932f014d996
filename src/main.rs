//! The `nodeimg` binary: parse arguments, run the command, exit with its code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = nodeimg::cli::Cli::parse();
    nodeimg::command::run(cli)
}
