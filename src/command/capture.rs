//! `nodeimg capture`: collect the facts through a recording host and write everything it
//! read into one archive, atomically, with a manifest of what could not be read or kept.

use std::path::PathBuf;
use std::time::Duration;

use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::cli::CaptureArgs;
use crate::verify::CollectOptions;
use crate::verify::capture;
use crate::verify::host::RecordLimits;

pub fn run(args: &CaptureArgs, env: &mut Env<'_>) -> Outcome {
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    if !root.is_dir() {
        return Err(Failure::unusable(format!(
            "--root {}: not a folder",
            root.display()
        )));
    }
    if args.max_item_bytes > args.max_bytes {
        return Err(Failure::unusable(
            "--max-item-bytes must not exceed --max-bytes",
        ));
    }
    let options = CollectOptions {
        command_timeout: Duration::from_secs(args.timeout),
        ..CollectOptions::default()
    };
    let limits = RecordLimits {
        max_item_bytes: args.max_item_bytes,
        max_total_bytes: args.max_bytes,
    };
    let host = super::source::blueprintless(super::source::live_host(&root, &args.tool)?);
    let captured = capture::capture(&host, &root.display().to_string(), &options, limits);
    match args.output.path() {
        Some(path) => capture::write(path, &captured.recording, &captured.manifest).unusable()?,
        None => {
            let bytes =
                capture::archive::pack(&captured.recording, &captured.manifest).unusable()?;
            args.output
                .write(&bytes, env.out)
                .unusable_at("cannot write the capture")?;
        }
    }
    let manifest = &captured.manifest;
    env.note(&format!(
        "wrote {}: {} bytes of content from {}, {} not captured, {} unreadable",
        args.output,
        manifest.content_bytes,
        manifest.hostname,
        manifest.not_captured.len(),
        manifest.unreadable.len()
    ));
    Ok(Exit::Ok)
}
