//! The distribution's own post-apply steps, run inside the root with the
//! root's own programs (`chroot`), each logged with its command, exit
//! status and duration: what turns extracted files into a node that boots
//! with them (README, "From layer to node").
//!
//! The table is per family and in the order the steps depend on each
//! other: the trust store and unit presets need nothing; the initramfs
//! takes the `modprobe.d` and `modules-load.d` policy the layer brings;
//! the boot loader puts the blueprint's kernel arguments on every entry.
//! The last two read `/proc`, `/sys` and `/dev`, which apply binds into a
//! root that is not `/` for their run; `grub-mkconfig` also needs the root
//! on its block device — a pipeline that applies onto a folder first skips
//! it (`--skip boot-loader`) and runs it once the disk is mounted
//! (`--only-steps boot-loader`).

use std::ffi::CString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::entry::RelPath;
use super::root::Root;

/// A distribution family (the image lock's `os.distro`: Debian and Ubuntu, or the RHEL family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Debian,
    Rhel,
}

/// Step ids, as `--skip` and `--only-steps` name them.
pub const STEP_IDS: &[&str] = &["trust-store", "units", "initramfs", "boot-loader"];

/// One step of the table.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub id: &'static str,
    pub family: Family,
    /// The program, looked up in the root's own PATH.
    pub program: &'static str,
    pub args: &'static [&'static str],
    /// The package that brings the program (for the message when it is missing).
    pub package: &'static str,
    /// Needs `/proc`, `/sys` and `/dev` inside the root.
    pub mounts: bool,
    pub why: &'static str,
}

/// The paths each step reads (prefixes relative to the root): on a root
/// that already had an image, a step runs only when the apply changed one
/// of them (a sysctl change does not rebuild the initramfs).
pub fn inputs(id: &str) -> &'static [&'static str] {
    match id {
        "trust-store" => &[
            "usr/local/share/ca-certificates/",
            "etc/pki/ca-trust/source/anchors/",
        ],
        "units" => &[
            "usr/lib/systemd/system-preset/",
            "etc/systemd/system/",
            "usr/lib/systemd/system/",
        ],
        "initramfs" => &[
            "etc/modprobe.d/",
            "etc/modules-load.d/",
            "etc/initramfs-tools/",
            "etc/dracut.conf.d/",
            "boot/",
            "lib/modules/",
            "usr/lib/modules/",
        ],
        "boot-loader" => &[
            "etc/default/grub",
            "etc/systemd/system/nodeimg-kernel-args.service",
            "boot/",
            "lib/modules/",
            "usr/lib/modules/",
        ],
        _ => &[],
    }
}

#[rustfmt::skip]
pub const STEPS: &[Step] = &[
    Step { id: "trust-store", family: Family::Debian, program: "update-ca-certificates", args: &[], package: "ca-certificates", mounts: false, why: "the CAs under usr/local/share/ca-certificates join /etc/ssl/certs" },
    Step { id: "units", family: Family::Debian, program: "systemctl", args: &["preset"], package: "systemd", mounts: false, why: "the image's preset decides its units (the layer's links already enable them; a distribution preset may say disable *)" },
    Step { id: "initramfs", family: Family::Debian, program: "update-initramfs", args: &["-u", "-k", "all"], package: "initramfs-tools", mounts: true, why: "the modprobe.d blacklists and options apply to modules the initramfs loads" },
    Step { id: "boot-loader", family: Family::Debian, program: "update-grub", args: &[], package: "grub2-common", mounts: true, why: "etc/default/grub.d/50-nodeimg.cfg puts the blueprint's kernel arguments on every entry" },
    Step { id: "trust-store", family: Family::Rhel, program: "update-ca-trust", args: &["extract"], package: "ca-certificates", mounts: false, why: "the CAs under etc/pki/ca-trust/source/anchors join the extracted bundles" },
    Step { id: "units", family: Family::Rhel, program: "systemctl", args: &["preset"], package: "systemd", mounts: false, why: "the image's preset decides its units" },
    Step { id: "initramfs", family: Family::Rhel, program: "dracut", args: &["--regenerate-all", "--force"], package: "dracut", mounts: true, why: "modprobe.d and modules-load.d go into every initramfs" },
    Step { id: "boot-loader", family: Family::Rhel, program: "grubby", args: &[], package: "grubby", mounts: true, why: "BLS entries keep their own options: grubby puts the kernel arguments on every entry (the command of nodeimg-kernel-args.service)" },
];

/// What one step did.
#[derive(Debug, Clone, Serialize)]
pub struct StepLog {
    pub id: &'static str,
    /// The command as run (inside the root).
    pub command: String,
    /// `ran`, `skipped` (asked), `not-needed`, `missing` (program absent), `failed`.
    pub status: &'static str,
    pub exit: Option<i32>,
    pub millis: u128,
    /// Why it was skipped or failed, or the end of its output.
    pub detail: String,
}

impl StepLog {
    pub fn failed(&self) -> bool {
        matches!(self.status, "failed" | "missing")
    }
}

/// Which steps to run.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub skip: Vec<String>,
    /// Only these (empty: all).
    pub only: Vec<String>,
    /// The paths the apply changed; `None`: every step runs (a first
    /// apply, a recovery, steps asked by name).
    pub changed: Option<Vec<String>>,
}

impl Selection {
    fn wants(&self, id: &str) -> bool {
        !self.skip.iter().any(|s| s == id)
            && (self.only.is_empty() || self.only.iter().any(|s| s == id))
    }
}

/// Longest a step may run (dracut over many kernels takes minutes).
const STEP_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Output kept per step for the log.
const OUTPUT_TAIL: usize = 2048;

/// The command a step runs in `root`, or why it does not run.
pub fn command_of(step: &Step, root: &Root) -> Result<Vec<String>, (&'static str, String)> {
    let mut argv = vec![step.program.to_string()];
    argv.extend(step.args.iter().map(|a| a.to_string()));
    match (step.id, step.family) {
        ("units", _) => {
            let preset = RelPath::parse("usr/lib/systemd/system-preset/50-nodeimg.preset")
                .expect("constant");
            let text = read_in(root, &preset)
                .map_err(|e| ("not-needed", format!("no preset file in the image ({e})")))?;
            let units: Vec<String> = text
                .lines()
                .filter_map(|l| {
                    l.strip_prefix("enable ")
                        .or_else(|| l.strip_prefix("disable "))
                })
                .map(|u| u.trim().to_string())
                .collect();
            if units.is_empty() {
                return Err(("not-needed", "the preset names no unit".into()));
            }
            argv.extend(units);
        }
        ("boot-loader", Family::Rhel) => {
            let unit =
                RelPath::parse("etc/systemd/system/nodeimg-kernel-args.service").expect("constant");
            let text = read_in(root, &unit).map_err(|e| {
                (
                    "not-needed",
                    format!("the image sets no kernel arguments ({e})"),
                )
            })?;
            let line = text
                .lines()
                .find_map(|l| {
                    l.strip_prefix("ExecStart=")
                        .filter(|c| c.contains("grubby"))
                })
                .ok_or(("failed", format!("{unit} has no grubby command")))?;
            argv = split_exec(line).map_err(|e| ("failed", format!("{unit}: {e}")))?;
            if let Some(first) = argv.first_mut() {
                *first = first.rsplit('/').next().unwrap_or(first).to_string();
            }
        }
        _ => {}
    }
    Ok(argv)
}

/// Runs the family's steps in `root`.
pub fn run(family: Family, root: &Root, selection: &Selection) -> Vec<StepLog> {
    let mut logs = Vec::new();
    for step in STEPS.iter().filter(|s| s.family == family) {
        let start = Instant::now();
        let mut log = StepLog {
            id: step.id,
            command: String::new(),
            status: "ran",
            exit: None,
            millis: 0,
            detail: String::new(),
        };
        if !selection.wants(step.id) {
            log.status = "skipped";
            log.detail = "skipped as asked".into();
            logs.push(log);
            continue;
        }
        if let Some(changed) = &selection.changed
            && !changed
                .iter()
                .any(|p| inputs(step.id).iter().any(|i| p.starts_with(i)))
        {
            log.status = "not-needed";
            log.detail = "the apply changed none of the files it reads".into();
            logs.push(log);
            continue;
        }
        match command_of(step, root) {
            Err((status, why)) => {
                log.status = status;
                log.detail = why;
            }
            Ok(argv) => {
                log.command = argv.join(" ");
                if find_program(root, &argv[0]).is_none() {
                    log.status = "missing";
                    log.detail = format!(
                        "{} is not installed in {} (package {}); install it, or pass --skip {} and run the step where the root boots",
                        argv[0],
                        root.dir().display(),
                        step.package,
                        step.id
                    );
                } else {
                    match execute(root, &argv, step.mounts, OUTPUT_TAIL) {
                        Ok((code, tail)) => {
                            log.exit = code;
                            log.detail = tail;
                            if code != Some(0) {
                                log.status = "failed";
                            }
                        }
                        Err(e) => {
                            log.status = "failed";
                            log.detail = e;
                        }
                    }
                }
            }
        }
        log.millis = start.elapsed().as_millis();
        logs.push(log);
    }
    logs
}

fn read_in(root: &Root, path: &RelPath) -> Result<String, String> {
    let real = root.locate(path).map_err(|e| e.to_string())?;
    crate::input::read_text(&real, 1 << 20).map_err(|e| e.to_string())
}

/// The program's path inside the root, by the root's PATH order.
fn find_program(root: &Root, name: &str) -> Option<PathBuf> {
    [
        "usr/local/sbin",
        "usr/local/bin",
        "usr/sbin",
        "usr/bin",
        "sbin",
        "bin",
    ]
    .iter()
    .filter_map(|dir| RelPath::parse(&format!("{dir}/{name}")).ok())
    .filter_map(|p| root.locate(&p).ok())
    .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
}

/// Splits a systemd `ExecStart=` line: words, double quotes group.
fn split_exec(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err(format!("an unclosed quote in `{line}`"));
    }
    if any {
        words.push(cur);
    }
    Ok(words)
}

/// Runs `argv` inside the root (chroot unless the root is `/`), with
/// `/proc`, `/sys` and `/dev` bound in when asked, within the step
/// timeout; returns the exit code and the last `keep` bytes of its output.
/// The one way apply runs a program of the root (steps, package
/// installation, the static check's listings).
pub(super) fn execute(
    root: &Root,
    argv: &[String],
    mounts: bool,
    keep: usize,
) -> Result<(Option<i32>, String), String> {
    let _binds = if mounts && !root.is_host() {
        Some(Binds::new(root.dir())?)
    } else {
        None
    };
    let mut cmd = super::enter::command(&root.place_for_steps(), argv)
        .map_err(|e| format!("cannot start {}: {e}", argv[0]))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("DEBIAN_FRONTEND", "noninteractive");
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", argv[0]))?;
    // Both pipes drained on threads: a step that writes much cannot block.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = r.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.len() > keep.saturating_mul(2).max(64 << 10) {
                        buf.drain(..buf.len() - keep);
                    }
                }
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > STEP_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{} ran past {} s and was stopped",
                argv[0],
                STEP_TIMEOUT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut text = out.join().unwrap_or_default();
    text.extend(err.join().unwrap_or_default());
    let text = String::from_utf8_lossy(&text);
    let tail: String = text
        .chars()
        .rev()
        .take(keep)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    Ok((status.code(), tail.trim().to_string()))
}

/// `/proc`, `/sys` and `/dev` bound into a root for one step, unmounted
/// when dropped. A folder already a mount point (the pipeline mounted it)
/// is left as it is.
struct Binds {
    mounted: Vec<PathBuf>,
}

impl Binds {
    fn new(root: &Path) -> Result<Self, String> {
        let mut binds = Binds {
            mounted: Vec::new(),
        };
        for name in ["proc", "sys", "dev"] {
            let target = root.join(name);
            if !target.is_dir() || is_mount_point(&target) {
                continue;
            }
            let src = CString::new(format!("/{name}")).expect("no NUL");
            let dst =
                CString::new(target.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
            // SAFETY: valid C strings; a recursive bind mount.
            let rc = unsafe {
                libc::mount(
                    src.as_ptr(),
                    dst.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                )
            };
            if rc != 0 {
                return Err(format!(
                    "cannot bind /{name} into {}: {}",
                    root.display(),
                    std::io::Error::last_os_error()
                ));
            }
            binds.mounted.push(target);
        }
        Ok(binds)
    }
}

impl Drop for Binds {
    fn drop(&mut self) {
        for target in self.mounted.iter().rev() {
            if let Ok(p) = CString::new(target.as_os_str().as_encoded_bytes()) {
                // SAFETY: a path this struct mounted.
                unsafe {
                    libc::umount2(p.as_ptr(), libc::MNT_DETACH);
                }
            }
        }
    }
}

fn is_mount_point(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(p), p.parent().map(std::fs::metadata)) {
        (Ok(a), Some(Ok(b))) => a.dev() != b.dev(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_lines_split_as_systemd_quotes_them() {
        assert_eq!(
            split_exec(r#"/usr/sbin/grubby --update-kernel=ALL "--args=a=1 b""#).unwrap(),
            ["/usr/sbin/grubby", "--update-kernel=ALL", "--args=a=1 b"]
        );
        assert!(split_exec(r#"a "b"#).is_err());
    }

    #[test]
    fn every_family_has_every_step_once_in_order() {
        for family in [Family::Debian, Family::Rhel] {
            let ids: Vec<&str> = STEPS
                .iter()
                .filter(|s| s.family == family)
                .map(|s| s.id)
                .collect();
            assert_eq!(ids, STEP_IDS, "{family:?}");
        }
    }
}
