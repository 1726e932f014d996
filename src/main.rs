//! The `nodeimg` binary: parse arguments, run the command, exit with its code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Keeps the features section in the binary (see `nodeimg::features`).
    std::hint::black_box(&nodeimg::features::FEATURES);
    let cli = nodeimg::cli::Cli::parse();
    nodeimg::command::run(cli)
}
