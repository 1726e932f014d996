//! The live machine, seen under a root prefix (`/` in production, a fixture tree in tests).
//!
//! Reads go through [`RootedResolver`](super::path) unless the root is `/`, where the
//! kernel's own resolution already cannot leave the root. Commands are looked up under the
//! root too, so a fixture tree carries its own tools and never mixes with the machine
//! running the tests. A command that runs past its timeout is killed together with
//! everything it started (it runs in its own process group), so a hung vendor tool can
//! never hang the boot.

use super::Host;
use super::command::{CommandOutput, VendorCommand};
use super::error::{HostError, HostErrorKind, HostOp};
use super::path::{RootedResolver, machine_components};
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Most bytes kept from one command's stdout or stderr, or from the kernel log.
const OUTPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// The live machine under `root`.
#[derive(Debug)]
pub struct LiveHost {
    root: PathBuf,
    /// `None` when the root is `/`.
    resolver: Option<RootedResolver>,
}

impl Default for LiveHost {
    fn default() -> Self {
        LiveHost::new("/")
    }
}

impl LiveHost {
    /// A host whose `/` is `root` on this machine.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let resolver = if root == Path::new("/") {
            None
        } else {
            Some(RootedResolver::new(root.clone()))
        };
        LiveHost { root, resolver }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The local path for a machine path; `follow_last` resolves a final link too.
    fn local(&self, op: HostOp, path: &Path, follow_last: bool) -> Result<PathBuf, HostError> {
        let fail = |kind| HostError::new(op, path.display().to_string(), kind);
        match &self.resolver {
            None => {
                machine_components(path).map_err(fail)?;
                Ok(path.to_path_buf())
            }
            Some(resolver) => {
                let machine = resolver.resolve(path, follow_last).map_err(fail)?;
                Ok(resolver.local(&machine))
            }
        }
    }

    fn find_program(&self, command: &VendorCommand) -> Result<PathBuf, HostError> {
        for candidate in command.program_candidates() {
            let local = self.local(HostOp::Run, Path::new(candidate), true)?;
            if fs::metadata(&local).is_ok_and(|meta| meta.is_file()) {
                return Ok(local);
            }
        }
        Err(HostError::new(
            HostOp::Run,
            format!(
                "{} (looked for {})",
                command,
                command.program_candidates().join(", ")
            ),
            HostErrorKind::NotFound,
        ))
    }
}

impl Host for LiveHost {
    fn read(&self, path: &Path) -> Result<Vec<u8>, HostError> {
        let local = self.local(HostOp::Read, path, false)?;
        let target = || path.display().to_string();
        let mut options = fs::OpenOptions::new();
        options.read(true);
        if self.resolver.is_some() {
            // The final component was not a link when resolved; refuse one that appeared since.
            options.custom_flags(libc::O_NOFOLLOW);
        }
        let open = |local: &Path| options.open(local);
        let mut file = match open(&local) {
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
                let resolved = self.local(HostOp::Read, path, true)?;
                open(&resolved).map_err(|e| HostError::io(HostOp::Read, target(), &e))?
            }
            other => other.map_err(|e| HostError::io(HostOp::Read, target(), &e))?,
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| HostError::io(HostOp::Read, target(), &e))?;
        Ok(bytes)
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>, HostError> {
        let local = self.local(HostOp::ListDir, path, true)?;
        let fail = |e: io::Error| HostError::io(HostOp::ListDir, path.display().to_string(), &e);
        let mut names = Vec::new();
        for entry in fs::read_dir(&local).map_err(fail)? {
            let entry = entry.map_err(fail)?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        let local = self.local(HostOp::ReadLink, path, false)?;
        fs::read_link(&local)
            .map_err(|e| HostError::io(HostOp::ReadLink, path.display().to_string(), &e))
    }

    fn canonicalize(&self, path: &Path) -> Result<PathBuf, HostError> {
        let target = || path.display().to_string();
        match &self.resolver {
            None => {
                machine_components(path)
                    .map_err(|kind| HostError::new(HostOp::Resolve, target(), kind))?;
                fs::canonicalize(path).map_err(|e| HostError::io(HostOp::Resolve, target(), &e))
            }
            Some(resolver) => {
                let machine = resolver
                    .resolve(path, true)
                    .map_err(|kind| HostError::new(HostOp::Resolve, target(), kind))?;
                fs::symlink_metadata(resolver.local(&machine))
                    .map_err(|e| HostError::io(HostOp::Resolve, target(), &e))?;
                Ok(machine)
            }
        }
    }

    fn run(&self, command: &VendorCommand, timeout: Duration) -> Result<CommandOutput, HostError> {
        let program = self.find_program(command)?;
        run_with_timeout(&program, command, timeout)
    }

    fn read_kernel_log(&self) -> Result<String, HostError> {
        let path = Path::new("/dev/kmsg");
        let local = self.local(HostOp::KernelLog, path, true)?;
        let fail = |e: &io::Error| HostError::io(HostOp::KernelLog, "/dev/kmsg", e);
        let mut file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(local)
            .map_err(|e| fail(&e))?;
        // /dev/kmsg returns one record per read and EAGAIN at the end; a regular file (a
        // fixture or a saved log) returns chunks and then 0.
        let mut log = Vec::new();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    log.extend_from_slice(&buf[..n]);
                    if log.len() as u64 > OUTPUT_LIMIT {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // The record was overwritten while we read: the next read gets the next one.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(&e)),
            }
        }
        Ok(String::from_utf8_lossy(&log).into_owned())
    }
}

/// Spawns `program` in its own process group, collects its output, and kills the whole
/// group when `timeout` passes.
fn run_with_timeout(
    program: &Path,
    command: &VendorCommand,
    timeout: Duration,
) -> Result<CommandOutput, HostError> {
    let started = Instant::now();
    let fail = |e: &io::Error| HostError::io(HostOp::Run, command.to_string(), e);
    let mut child = Command::new(program)
        .args(command.args())
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| fail(&e))?;

    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let deadline = started + timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                kill_group(&mut child);
                return Err(HostError::timeout(command.to_string(), timeout));
            }
            Ok(None) => {
                thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(25));
            }
            Err(e) => {
                kill_group(&mut child);
                return Err(fail(&e));
            }
        }
    };
    // The leader exited; a child it left behind may still hold the pipes: wait for the
    // output no longer than the deadline (and at least a moment).
    let rest = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    let stdout = collect(stdout, rest);
    let stderr = collect(stderr, rest);
    Ok(CommandOutput {
        status: status.code(),
        stdout,
        stderr,
        elapsed: started.elapsed(),
    })
}

/// Reads a pipe to its end on a thread; the receiver gets the bytes.
fn drain(pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        // A read error ends the output early; what was read is kept.
        let _ = pipe.take(OUTPUT_LIMIT).read_to_end(&mut bytes);
        let _ = sender.send(bytes);
    });
    receiver
}

fn collect(receiver: Option<mpsc::Receiver<Vec<u8>>>, wait: Duration) -> Vec<u8> {
    receiver
        .and_then(|r| r.recv_timeout(wait).ok())
        .unwrap_or_default()
}

fn kill_group(child: &mut Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads
        // (created by process_group(0) at spawn); it touches no memory.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}
