//! `nodeimg facts`: collect the facts verify uses and print them as JSON. Also opens the
//! fact source (`--root`, `--snapshot`, `--nvidia-smi-xml`) for `verify`.

use std::path::PathBuf;
use std::time::Duration;

use super::{Env, exit};
use crate::cli::{FactsArgs, SourceArgs};
use crate::verify::capture;
use crate::verify::host::{Host, LiveHost, SnapshotHost};
use crate::verify::{CollectOptions, ToolOutput, collect};

/// Where facts come from, ready to collect.
pub(super) struct Source {
    pub host: Box<dyn Host>,
    pub options: CollectOptions,
    /// `Some(root)` for a live machine, `None` for a replayed capture.
    pub root: Option<PathBuf>,
}

/// Opens `--root` / `--snapshot` and reads `--nvidia-smi-xml`; exit code 2 when unusable.
pub(super) fn open(args: &SourceArgs, env: &mut Env<'_>) -> Result<Source, u8> {
    let mut options = CollectOptions {
        command_timeout: Duration::from_secs(args.timeout),
        ..CollectOptions::default()
    };
    if let Some(path) = &args.nvidia_smi_xml {
        let xml = std::fs::read_to_string(path)
            .map_err(|e| env.fail(&format!("--nvidia-smi-xml {}: {e}", path.display())))?;
        options.nvidia_smi = ToolOutput::Provided(xml);
    }
    if let Some(path) = &args.snapshot {
        let (manifest, recording) =
            capture::load(path).map_err(|e| env.fail(&format!("--snapshot: {e}")))?;
        env.note(&format!(
            "replaying capture of {} made {} by nodeimg {}",
            manifest.hostname, manifest.created_at, manifest.nodeimg_version
        ));
        return Ok(Source {
            host: Box::new(SnapshotHost::new(recording)),
            options,
            root: None,
        });
    }
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    if !root.is_dir() {
        return Err(env.fail(&format!("--root {}: not a folder", root.display())));
    }
    Ok(Source {
        host: Box::new(LiveHost::new(root.clone())),
        options,
        root: Some(root),
    })
}

pub fn run(args: &FactsArgs, env: &mut Env<'_>) -> u8 {
    let source = match open(&args.source, env) {
        Ok(source) => source,
        Err(code) => return code,
    };
    let facts = collect(source.host.as_ref(), &source.options);
    match serde_json::to_string_pretty(&facts) {
        Ok(json) => {
            let _ = writeln!(env.out, "{json}");
            exit::OK
        }
        Err(e) => env.fail(&format!("cannot render the facts: {e}")),
    }
}
