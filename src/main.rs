//! The `nodeimg` binary: parse arguments, run the command, exit with its code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Keeps the features section in the binary (see `nodeimg::features`).
    std::hint::black_box(&nodeimg::features::FEATURES);
    let cli = nodeimg::cli::Cli::parse();
    nodeimg::command::run(cli)
}

// The crates compiled into this binary, in cargo auditable's `.dep-v0`
// section (see build.rs); `nodeimg build` reads them back from the
// verifier it packs, for the image's SBOM.
include!(concat!(env!("OUT_DIR"), "/dep_v0.rs"));
