//! `nodeimg capture`: collect the facts through a recording host and write everything it
//! read into one archive, atomically, with a manifest of what could not be read or kept.

use std::path::PathBuf;
use std::time::Duration;

use super::{Env, exit};
use crate::cli::CaptureArgs;
use crate::verify::CollectOptions;
use crate::verify::capture;
use crate::verify::host::{LiveHost, RecordLimits};

pub fn run(args: &CaptureArgs, env: &mut Env<'_>) -> u8 {
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    if !root.is_dir() {
        return env.fail(&format!("--root {}: not a folder", root.display()));
    }
    if args.max_item_bytes > args.max_bytes {
        return env.fail("--max-item-bytes must not exceed --max-bytes");
    }
    let options = CollectOptions {
        command_timeout: Duration::from_secs(args.timeout),
        ..CollectOptions::default()
    };
    let limits = RecordLimits {
        max_item_bytes: args.max_item_bytes,
        max_total_bytes: args.max_bytes,
    };
    let host = LiveHost::new(root.clone());
    let captured = capture::capture(&host, &root.display().to_string(), &options, limits);
    if let Err(e) = capture::write(&args.output, &captured.recording, &captured.manifest) {
        return env.fail(&e.to_string());
    }
    let manifest = &captured.manifest;
    env.note(&format!(
        "wrote {}: {} bytes of content from {}, {} not captured, {} unreadable",
        args.output.display(),
        manifest.content_bytes,
        manifest.hostname,
        manifest.not_captured.len(),
        manifest.unreadable.len()
    ));
    exit::OK
}
