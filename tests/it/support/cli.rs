//! The `nodeimg` binary as every CLI test runs it: from the crate root, with an
//! environment that holds only what the test gives it.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::root;

/// The path of the `nodeimg` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_nodeimg");

/// Empties `c`'s environment except `PATH` and `TMPDIR`, so a CI runner's
/// `NO_COLOR`, `SOURCE_DATE_EPOCH`, `REGISTRY_AUTH_FILE`, `HOME`, `XDG_RUNTIME_DIR`,
/// `TZ` … cannot change a result. For wrappers (`sh -c`, `script`) that run the binary.
pub fn clean(c: &mut Command) -> &mut Command {
    c.env_clear();
    for keep in ["PATH", "TMPDIR"] {
        if let Some(v) = std::env::var_os(keep) {
            c.env(keep, v);
        }
    }
    c
}

/// `nodeimg`, run from the crate root with a [`clean`] environment and no standard
/// input. Tests that need a variable, a folder or input set it on the returned command.
pub fn cmd() -> Command {
    let mut c = Command::new(BIN);
    clean(&mut c).current_dir(root()).stdin(Stdio::null());
    c
}

/// Runs `nodeimg ARGS` (see [`cmd`]).
pub fn nodeimg<S: AsRef<OsStr>>(args: &[S]) -> Output {
    cmd().args(args).output().expect("run nodeimg")
}

/// Runs `nodeimg ARGS` with `input` on standard input.
pub fn nodeimg_stdin<S: AsRef<OsStr>>(args: &[S], input: &[u8]) -> Output {
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

/// What `o` printed on standard output, as JSON; a panic that shows both streams when it
/// is not JSON.
pub fn stdout_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)))
}

/// The JSON report of a run that must succeed: exit 0 (its standard error shown when it
/// did not), then [`stdout_json`].
pub fn success_json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    stdout_json(o)
}

/// `nodeimg build --format json BLUEPRINT -o OUT --verifier VERIFIER EXTRA...`, which
/// must succeed; its JSON report (digests, layers, `reused`).
pub fn build_json(
    blueprint: &Path,
    out: &Path,
    verifier: &Path,
    extra: &[&str],
) -> serde_json::Value {
    let o = cmd()
        .args(["build", "--format", "json"])
        .arg(blueprint)
        .arg("-o")
        .arg(out)
        .arg("--verifier")
        .arg(verifier)
        .args(extra)
        .output()
        .expect("run nodeimg");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}"))
}
