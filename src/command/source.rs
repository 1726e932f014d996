//! Where `facts` and `verify` read a machine from: the live machine (under
//! `--root`) or a replayed capture (`--snapshot`), plus a saved
//! `--nvidia-smi-xml`. Shared by both commands, so it lives beside them
//! rather than in either.

use crate::verify::report::text::safe;
use std::path::PathBuf;
use std::time::Duration;

use super::{Env, Failure, OrUnusable};
use crate::cli::SourceArgs;
use crate::stdio::Input;
use crate::verify::capture;
use crate::verify::host::{Host, LiveHost, OUTPUT_LIMIT, Program, SnapshotHost};
use crate::verify::{CollectOptions, ToolOutput};

/// Largest `--nvidia-smi-xml` read (a real 8-GPU report is under 1 MiB): the same bound
/// as on the output of nvidia-smi itself.
const MAX_TOOL_OUTPUT_BYTES: u64 = OUTPUT_LIMIT;

/// Largest capture read from standard input (as for a capture file).
const MAX_SNAPSHOT_BYTES: u64 = 1024 * 1024 * 1024;

/// Where facts come from, ready to collect.
pub struct Source {
    pub host: Box<dyn Host>,
    pub options: CollectOptions,
    /// `Some(root)` for a live machine, `None` for a replayed capture.
    pub root: Option<PathBuf>,
}

/// Opens `--root` / `--snapshot` and reads `--nvidia-smi-xml`. `operator_driver`: the
/// blueprint leaves the NVIDIA driver to the GPU operator, so on the live machine
/// nvidia-smi is the one in the operator's driver root ([`LiveHost::with_operator_driver`]).
pub fn open(
    args: &SourceArgs,
    env: &mut Env<'_>,
    operator_driver: bool,
) -> Result<Source, Failure> {
    let mut options = CollectOptions {
        command_timeout: Duration::from_secs(args.timeout),
        ..CollectOptions::default()
    };
    if let Some(input) = &args.nvidia_smi_xml {
        let xml = input
            .read_text(MAX_TOOL_OUTPUT_BYTES)
            .unusable_at(format_args!("--nvidia-smi-xml {input}"))?;
        options.nvidia_smi = ToolOutput::Provided(xml);
    }
    if let Some(path) = &args.snapshot {
        let (manifest, recording) = match path {
            Input::File(path) => capture::load(path).unusable_at("--snapshot")?,
            Input::Stdin => {
                let bytes = path
                    .read(MAX_SNAPSHOT_BYTES)
                    .unusable_at(format_args!("--snapshot {path}"))?;
                capture::archive::unpack(&bytes).unusable_at(format_args!("--snapshot {path}"))?
            }
        };
        env.note(&format!(
            "replaying capture of {} made {} by nodeimg {}",
            safe(&manifest.hostname),
            safe(&manifest.created_at),
            safe(&manifest.nodeimg_version)
        ));
        return Ok(Source {
            host: Box::new(SnapshotHost::new(recording)),
            options,
            root: None,
        });
    }
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    if !root.is_dir() {
        return Err(Failure::unusable(format!(
            "--root {}: not a folder",
            root.display()
        )));
    }
    let mut host = live_host(&root, &args.tool)?;
    if operator_driver {
        host = host.with_operator_driver();
    }
    Ok(Source {
        host: Box::new(host),
        options,
        root: Some(root),
    })
}

/// The live host for `facts` and `capture`, which read a machine without a blueprint: they
/// look for nvidia-smi where verify does when the GPU operator owns the driver (on the live
/// machine, its driver root `/run/nvidia/driver` first), then at the host's own paths. The
/// driver root holds nvidia-smi only while the operator's driver container runs, and then
/// that container's driver is the loaded one: the host's nvidia-smi, if any, would not
/// match it. Under another root nothing runs either way.
pub fn blueprintless(host: LiveHost) -> LiveHost {
    host.with_operator_driver()
}

/// The live host under `root`. Programs run only from the fixed paths of this machine
/// when `root` is `/`, or from the paths named with `--tool` (each must be a file here);
/// never from the tree under another root.
pub fn live_host(
    root: &std::path::Path,
    tools: &[(Program, PathBuf)],
) -> Result<LiveHost, Failure> {
    let mut host = LiveHost::new(root);
    for (program, path) in tools {
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return Err(Failure::unusable(format!(
                "--tool {program}={}: not a file on this machine",
                path.display()
            )));
        }
        host = host.with_program(*program, path);
    }
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::host::VendorCommand;

    #[test]
    fn facts_and_capture_look_in_the_operator_driver_root_on_the_live_machine_only() {
        let live = blueprintless(LiveHost::new("/"));
        assert!(live.looks_in_operator_driver_root());
        // Under another root nothing runs, the driver root's nvidia-smi included.
        let dir = tempfile::tempdir().unwrap();
        let under = blueprintless(LiveHost::new(dir.path()));
        let err = under
            .invocation(&VendorCommand::NvidiaSmiQueryXml)
            .expect_err("ran a program under an inspected root");
        assert!(err.to_string().contains("never executed"), "{err}");
    }
}
