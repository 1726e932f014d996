//! Packages a folder as the overlay of an otherwise empty image with
//! `nodeimg::package::build` and prints the wall time and the report as
//! one JSON object. Used by `scripts/bench-package`; run in release:
//! `cargo run --release --example bench_package -- OVERLAY OUT [zstd|gzip] [WORKERS]`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use nodeimg::package::{self, BuildOptions, ImageMeta, Overlay};
use nodeimg::tree::Tree;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(overlay), Some(out)) = (args.first(), args.get(1)) else {
        eprintln!("usage: bench_package OVERLAY OUT [zstd|gzip] [WORKERS]");
        return ExitCode::from(2);
    };
    let mut opts = match BuildOptions::from_env() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(c) = args.get(2) {
        match c.parse() {
            Ok(c) => opts.compression = c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(w) = args.get(3) {
        match w.parse() {
            Ok(w) => opts.zstd_workers = w,
            Err(e) => {
                eprintln!("error: workers `{w}`: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let meta = ImageMeta {
        name: "bench".into(),
        version: "0".into(),
        blueprint_id: format!("sha256:{}", "0".repeat(64)),
        tag: "bench".parse().expect("a valid tag literal"),
        architecture: "amd64".into(),
        os: "linux".into(),
    };
    let started = Instant::now();
    let report = package::build(
        &Tree::new(),
        Some(&Overlay::new(PathBuf::from(overlay))),
        &meta,
        &opts,
        &PathBuf::from(out),
    );
    let seconds = started.elapsed().as_secs_f64();
    match report {
        Ok(r) => {
            let v = serde_json::json!({ "seconds": seconds, "workers": opts.zstd_workers, "report": r });
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
