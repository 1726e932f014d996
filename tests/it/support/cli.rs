//! The `nodeimg` binary as every CLI test runs it.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The crate root (where `blueprints/` and `tests/fixtures/` are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `nodeimg` binary, run from the crate root with an empty environment except
/// `PATH` and `TMPDIR`: a CI runner's `NO_COLOR`, `SOURCE_DATE_EPOCH`,
/// `REGISTRY_AUTH_FILE`, `HOME`, `TZ` … cannot change a result. Tests that need a
/// variable set it on the returned command.
pub fn cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nodeimg"));
    c.env_clear().current_dir(root()).stdin(Stdio::null());
    for keep in ["PATH", "TMPDIR"] {
        if let Some(v) = std::env::var_os(keep) {
            c.env(keep, v);
        }
    }
    c
}

/// Runs `nodeimg ARGS` (see [`cmd`]).
pub fn nodeimg<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    cmd().args(args).output().expect("run nodeimg")
}

/// Runs `nodeimg ARGS` with `input` on standard input.
pub fn nodeimg_stdin<I, S>(args: I, input: &[u8]) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    use std::io::Write;
    let mut child = cmd()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run nodeimg");
    // A command may exit before reading all of it; that is its answer, not a test error.
    let _ = child.stdin.take().expect("piped").write_all(input);
    child.wait_with_output().expect("wait for nodeimg")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
