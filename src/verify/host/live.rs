//! The live machine, seen under a root prefix (`/` in production, a fixture tree or a
//! mounted image otherwise).
//!
//! Reads go through [`RootedResolver`](super::path) unless the root is `/`, where the
//! kernel's own resolution already cannot leave the root. Every read is bounded
//! ([`FILE_LIMIT`], or the smaller limit of the GET's credentials and CA files: at most
//! one byte past the limit is read) and refuses what is not a regular file without blocking on it (see
//! [`crate::input`]): a FIFO at `/proc/cmdline` or a sparse terabyte file in an inspected
//! tree costs nothing.
//!
//! Reading is all a host does with an inspected tree: programs are never run from it.
//! Vendor commands run only from the fixed paths of the machine nodeimg runs on, and only
//! when that machine is the one being read (root `/`), or from a path the caller named
//! for that program ([`LiveHost::with_program`], `--tool NAME=PATH`). Under any other
//! root a command is answered [`HostErrorKind::NotRun`] with how to supply what it would
//! have said. With an operator-owned NVIDIA driver ([`LiveHost::with_operator_driver`]),
//! nvidia-smi is the one in the operator's driver container root
//! ([`NVIDIA_OPERATOR_DRIVER_ROOT`]), run there through `chroot` as the operator's own
//! validator does; still only on the live machine. A command that runs past its timeout is killed together with everything it
//! started (it runs in its own process group), so a hung vendor tool can never hang the
//! boot.

use super::Host;
use super::command::{CommandOutput, Program, VendorCommand};
use super::error::{HostError, HostErrorKind, HostOp};
use super::http::{HttpClient, HttpGet, HttpResponse};
use super::path::{RootedResolver, machine_components};
use crate::input;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Most bytes read from one file. Real sysfs and procfs files are a few KiB (the largest,
/// `/proc/cpuinfo` of a 512-thread machine, under 1 MiB).
pub const FILE_LIMIT: u64 = 16 * 1024 * 1024;
/// Most bytes of one command's stdout or stderr; more is an error, not a prefix.
/// `nvidia-smi -q -x` of an 8-GPU node is a few hundred KiB.
pub const OUTPUT_LIMIT: u64 = 16 * 1024 * 1024;
/// Largest kernel log read; a larger one is an error, not a prefix (the kernel's ring buffer
/// is at most 32 MiB with CONFIG_LOG_BUF_SHIFT=25).
pub const KERNEL_LOG_LIMIT: u64 = 64 * 1024 * 1024;

/// Where the NVIDIA GPU Operator's driver container puts its root on the host (the
/// operator's driver install dir, `/run/nvidia/driver` by default). The driver's
/// nvidia-smi and libraries live there, not on the host: the operator's validator checks
/// the driver with `chroot /run/nvidia/driver nvidia-smi` (gpu-operator,
/// `validator/main.go`).
pub const NVIDIA_OPERATOR_DRIVER_ROOT: &str = "/run/nvidia/driver";

/// `chroot` on the live machine, tried in order.
const CHROOT: &[&str] = &["/usr/sbin/chroot", "/usr/bin/chroot"];

/// How a command starts on this machine: the program, then arguments that come before the
/// command's own (`chroot ROOT PROGRAM` for a program in another root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: PathBuf,
    pub prefix: Vec<String>,
}

impl Invocation {
    fn plain(program: impl Into<PathBuf>) -> Self {
        Invocation {
            program: program.into(),
            prefix: Vec::new(),
        }
    }
}

/// Where `program` runs from on the live machine, given which paths are files on it
/// (`is_file`, the machine's file system or a test's stand-in). With an operator-owned
/// NVIDIA driver, nvidia-smi is the driver container's, in its root; without one there
/// (the operator has not installed it yet), or for any other program, the first of the
/// program's fixed paths.
pub fn locate(
    program: Program,
    operator_driver: bool,
    is_file: impl Fn(&Path) -> bool,
) -> Option<Invocation> {
    if program == Program::NvidiaSmi && operator_driver {
        let root = Path::new(NVIDIA_OPERATOR_DRIVER_ROOT);
        let inside = program
            .candidates()
            .iter()
            .find(|c| is_file(&root.join(c.trim_start_matches('/'))));
        let chroot = CHROOT.iter().find(|c| is_file(Path::new(c)));
        if let (Some(inside), Some(chroot)) = (inside, chroot) {
            return Some(Invocation {
                program: PathBuf::from(chroot),
                prefix: vec![NVIDIA_OPERATOR_DRIVER_ROOT.to_owned(), (*inside).to_owned()],
            });
        }
    }
    program
        .candidates()
        .iter()
        .find(|c| is_file(Path::new(c)))
        .map(Invocation::plain)
}

/// The paths [`locate`] tries, for a message.
fn looked_for(program: Program, operator_driver: bool) -> String {
    let mut paths: Vec<String> = Vec::new();
    if program == Program::NvidiaSmi && operator_driver {
        paths.extend(
            program
                .candidates()
                .iter()
                .map(|c| format!("{NVIDIA_OPERATOR_DRIVER_ROOT}{c}")),
        );
    }
    paths.extend(program.candidates().iter().map(|c| c.to_string()));
    paths.join(", ")
}

/// The live machine under `root`.
#[derive(Debug)]
pub struct LiveHost {
    root: PathBuf,
    /// `None` when the root is `/`.
    resolver: Option<RootedResolver>,
    /// Programs named by the caller, run from these paths on this machine.
    programs: BTreeMap<Program, PathBuf>,
    /// The GPU operator owns the NVIDIA driver: nvidia-smi is in its driver root.
    operator_driver: bool,
}

impl Default for LiveHost {
    fn default() -> Self {
        LiveHost::new("/")
    }
}

impl LiveHost {
    /// A host whose `/` is `root` on this machine. A root that resolves to `/` is the live
    /// machine itself.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let is_slash = |p: &Path| p == Path::new("/");
        let live = is_slash(&root) || fs::canonicalize(&root).is_ok_and(|p| is_slash(&p));
        let resolver = (!live).then(|| RootedResolver::new(root.clone()));
        LiveHost {
            root,
            resolver,
            programs: BTreeMap::new(),
            operator_driver: false,
        }
    }

    /// Runs `program` from `path` on this machine (never resolved under the root),
    /// instead of its fixed paths. This is how a caller vouches for a program: nothing
    /// else ever runs under a root other than `/`.
    pub fn with_program(mut self, program: Program, path: impl Into<PathBuf>) -> Self {
        self.programs.insert(program, path.into());
        self
    }

    /// The GPU operator owns the NVIDIA driver (the blueprint's `driver.authority:
    /// operator`): on the live machine nvidia-smi is run in the operator's driver root
    /// ([`NVIDIA_OPERATOR_DRIVER_ROOT`]) when it is there. Changes nothing under another
    /// root, where no program runs.
    pub fn with_operator_driver(mut self) -> Self {
        self.operator_driver = true;
        self
    }

    /// Whether nvidia-smi is looked for in the operator's driver root first
    /// ([`LiveHost::with_operator_driver`]).
    pub fn looks_in_operator_driver_root(&self) -> bool {
        self.operator_driver
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when this host reads the machine nodeimg runs on (root `/`).
    pub fn is_live(&self) -> bool {
        self.resolver.is_none()
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

    /// How to run `command`: the program named for it, or on the live machine the one
    /// [`locate`] finds.
    pub fn invocation(&self, command: &VendorCommand) -> Result<Invocation, HostError> {
        let program = command.program();
        let fail = |kind| HostError::new(HostOp::Run, command.to_string(), kind);
        if let Some(path) = self.programs.get(&program) {
            return match fs::metadata(path) {
                Ok(meta) if meta.is_file() => Ok(Invocation::plain(path)),
                Ok(meta) => Err(fail(HostErrorKind::NotRegular {
                    file_kind: input::kind_of(meta.file_type()).to_owned(),
                })),
                Err(e) => Err(HostError::io(
                    HostOp::Run,
                    format!("{command} (--tool {program}={})", path.display()),
                    &e,
                )),
            };
        }
        if !self.is_live() {
            return Err(fail(HostErrorKind::NotRun {
                reason: not_run_reason(program, &self.root),
            }));
        }
        locate(program, self.operator_driver, |path| {
            fs::metadata(path).is_ok_and(|meta| meta.is_file())
        })
        .ok_or_else(|| {
            HostError::new(
                HostOp::Run,
                format!(
                    "{command} (looked for {})",
                    looked_for(program, self.operator_driver)
                ),
                HostErrorKind::NotFound,
            )
        })
    }

    /// A file's content, refused when it holds more than `limit` bytes: at most
    /// `limit + 1` are ever read, so a file far larger than its use allows (a credentials
    /// file that is a disk image named by mistake) costs no more than the limit.
    fn read_at_most(&self, path: &Path, limit: u64) -> Result<Vec<u8>, HostError> {
        let local = self.local(HostOp::Read, path, false)?;
        let fail =
            |e: &input::InputError| HostError::input(HostOp::Read, path.display().to_string(), e);
        // Under a root the final component was not a link when resolved; refuse one that
        // appeared since.
        let nofollow = if self.resolver.is_some() {
            libc::O_NOFOLLOW
        } else {
            0
        };
        let file = match input::open(&local, nofollow) {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                let resolved = self.local(HostOp::Read, path, true)?;
                input::open(&resolved, nofollow).map_err(|e| fail(&e))?
            }
            other => other.map_err(|e| fail(&e))?,
        };
        input::read_open(file, limit).map_err(|e| fail(&e))
    }
}

/// Why a program is not run under an inspected root, and how to supply its answer.
fn not_run_reason(program: Program, root: &Path) -> String {
    let saved = match program {
        Program::NvidiaSmi => "give its saved output with --nvidia-smi-xml FILE, ",
        _ => "",
    };
    format!(
        "not run: {} is read, and programs in it are never executed; {saved}run \
         `nodeimg capture` on the node itself and verify with --snapshot, or name a \
         program you trust with --tool {program}=PATH",
        root.display()
    )
}

impl Host for LiveHost {
    fn read(&self, path: &Path) -> Result<Vec<u8>, HostError> {
        self.read_at_most(path, FILE_LIMIT)
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
        let invocation = self.invocation(command)?;
        run_with_timeout(&invocation, command, timeout)
    }

    /// The GET goes out from this machine whatever the root; its credentials and CA files
    /// are read under the root, bounded, and never recorded.
    fn get(&self, client: &mut HttpClient, request: &HttpGet) -> Result<HttpResponse, HostError> {
        super::http::get(client, request, &|path, limit| {
            self.read_at_most(path, limit).map_err(|e| {
                super::http::error(
                    request,
                    HostErrorKind::Os {
                        errno: None,
                        message: e.to_string(),
                    },
                )
            })
        })
    }

    fn read_kernel_log(&self) -> Result<String, HostError> {
        let path = Path::new("/dev/kmsg");
        let local = self.local(HostOp::KernelLog, path, true)?;
        let fail = |e: &io::Error| HostError::io(HostOp::KernelLog, "/dev/kmsg", e);
        let not_regular = |file_type: fs::FileType| {
            HostError::new(
                HostOp::KernelLog,
                "/dev/kmsg",
                HostErrorKind::NotRegular {
                    file_kind: input::kind_of(file_type).to_owned(),
                },
            )
        };
        // An inspected tree's device node is not opened at all: opening it would open a
        // device of this machine (some act on open).
        if !self.is_live()
            && let Ok(meta) = fs::symlink_metadata(&local)
            && !meta.is_file()
        {
            return Err(not_regular(meta.file_type()));
        }
        let mut file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(local)
            .map_err(|e| fail(&e))?;
        // The live machine's log is the kmsg device; an inspected tree's is a saved file
        // (a device node in a tree would read this machine's devices).
        let meta = file.metadata().map_err(|e| fail(&e))?;
        let file_type = meta.file_type();
        if !(file_type.is_file() || self.is_live()) {
            return Err(not_regular(file_type));
        }
        // A log past the limit is refused, not cut: the records cut off would be the
        // newest, the ones a check most needs.
        let too_large = || {
            HostError::new(
                HostOp::KernelLog,
                "/dev/kmsg",
                HostErrorKind::TooLarge {
                    limit: KERNEL_LOG_LIMIT,
                },
            )
        };
        if file_type.is_file() && meta.len() > KERNEL_LOG_LIMIT {
            return Err(too_large());
        }
        // /dev/kmsg returns one record per read and EAGAIN at the end; a regular file (a
        // fixture or a saved log) returns chunks and then 0.
        // A saved file is read in one allocation of its size; the device grows as it goes.
        let mut log = Vec::with_capacity(if file_type.is_file() {
            usize::try_from(meta.len()).unwrap_or(0).saturating_add(1)
        } else {
            0
        });
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    log.extend_from_slice(&buf[..n]);
                    if log.len() as u64 > KERNEL_LOG_LIMIT {
                        return Err(too_large());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // The record was overwritten while we read: the next read gets the next one.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(fail(&e)),
            }
        }
        // Valid UTF-8 (the usual case) is kept as it is, not copied.
        Ok(String::from_utf8(log)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}

/// Spawns `program` in its own process group, collects its output, and kills the whole
/// group when `timeout` passes.
fn run_with_timeout(
    invocation: &Invocation,
    command: &VendorCommand,
    timeout: Duration,
) -> Result<CommandOutput, HostError> {
    let started = Instant::now();
    let fail = |e: &io::Error| HostError::io(HostOp::Run, command.to_string(), e);
    let mut child = Command::new(&invocation.program)
        .args(&invocation.prefix)
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
    // The output ends when the program exits: wait for that without polling (a poll that
    // backs off would add up to its last pause to every command), then reap it.
    // `None`: the deadline passed first, or a child it left behind still holds the pipe.
    let stdout = collect(stdout, deadline.saturating_duration_since(Instant::now()));
    let stderr = collect(stderr, deadline.saturating_duration_since(Instant::now()));
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
    let (stdout, stderr) = (stdout.unwrap_or_default(), stderr.unwrap_or_default());
    if stdout.len().max(stderr.len()) as u64 > OUTPUT_LIMIT {
        return Err(HostError::new(
            HostOp::Run,
            command.to_string(),
            HostErrorKind::TooLarge {
                limit: OUTPUT_LIMIT,
            },
        ));
    }
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
        // A read error ends the output early; what was read is kept. One byte past the
        // limit tells the caller the output was too large; the pipe is closed there, so
        // a program that prints forever gets EPIPE instead of blocking.
        let _ = pipe.take(OUTPUT_LIMIT + 1).read_to_end(&mut bytes);
        let _ = sender.send(bytes);
    });
    receiver
}

/// A pipe's bytes once it is closed, waiting at most `wait`; `None` when it was not
/// closed in time (no pipe: no bytes).
fn collect(receiver: Option<mpsc::Receiver<Vec<u8>>>, wait: Duration) -> Option<Vec<u8>> {
    match receiver {
        None => Some(Vec::new()),
        Some(r) => r.recv_timeout(wait).ok(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for the live machine's file system: these paths are files on it.
    fn machine(files: &'static [&'static str]) -> impl Fn(&Path) -> bool {
        move |path| files.iter().any(|f| Path::new(f) == path)
    }

    const OPERATOR_NODE: &[&str] = &[
        "/usr/sbin/chroot",
        "/run/nvidia/driver/usr/bin/nvidia-smi",
        "/run/nvidia/driver/usr/bin/nvidia-persistenced",
    ];

    #[test]
    fn an_operator_owned_driver_runs_nvidia_smi_in_the_driver_root() {
        assert_eq!(
            locate(Program::NvidiaSmi, true, machine(OPERATOR_NODE)),
            Some(Invocation {
                program: PathBuf::from("/usr/sbin/chroot"),
                prefix: vec!["/run/nvidia/driver".into(), "/usr/bin/nvidia-smi".into()],
            })
        );
        // The driver container's own copy wins over one on the host.
        assert_eq!(
            locate(
                Program::NvidiaSmi,
                true,
                machine(&[
                    "/usr/bin/chroot",
                    "/usr/bin/nvidia-smi",
                    "/run/nvidia/driver/usr/local/bin/nvidia-smi",
                ])
            ),
            Some(Invocation {
                program: PathBuf::from("/usr/bin/chroot"),
                prefix: vec![
                    "/run/nvidia/driver".into(),
                    "/usr/local/bin/nvidia-smi".into()
                ],
            })
        );
    }

    #[test]
    fn without_the_operator_s_driver_the_host_s_fixed_paths_are_used() {
        // A preinstalled driver: the driver root is never looked at.
        assert_eq!(
            locate(Program::NvidiaSmi, false, machine(OPERATOR_NODE)),
            None
        );
        // The operator has not installed the driver yet: the host's own, if any.
        let host = machine(&["/usr/sbin/chroot", "/usr/bin/nvidia-smi"]);
        assert_eq!(
            locate(Program::NvidiaSmi, true, host),
            Some(Invocation::plain("/usr/bin/nvidia-smi"))
        );
        assert_eq!(
            locate(Program::NvidiaSmi, true, machine(&["/usr/sbin/chroot"])),
            None
        );
        // No chroot: nothing runs in the driver root.
        assert_eq!(
            locate(
                Program::NvidiaSmi,
                true,
                machine(&["/run/nvidia/driver/usr/bin/nvidia-smi"])
            ),
            None
        );
        // Only nvidia-smi moves.
        assert_eq!(
            locate(
                Program::RocmSmi,
                true,
                machine(&[
                    "/usr/sbin/chroot",
                    "/run/nvidia/driver/opt/rocm/bin/rocm-smi"
                ])
            ),
            None
        );
        assert!(
            looked_for(Program::NvidiaSmi, true).starts_with(
                "/run/nvidia/driver/usr/bin/nvidia-smi, /run/nvidia/driver/usr/local/bin/nvidia-smi, /usr/bin/nvidia-smi"
            )
        );
    }

    #[test]
    fn a_read_is_refused_past_its_own_limit_and_a_device_is_not_read() {
        let root = tempfile::tempdir().unwrap();
        // Sparse: 1 GiB claimed, nothing stored; the read stops at 4 KiB + 1.
        fs::File::create(root.path().join("credentials"))
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        fs::write(root.path().join("small"), "root:pw\n").unwrap();
        let host = LiveHost::new(root.path());
        let err = host
            .read_at_most(Path::new("/credentials"), 4096)
            .unwrap_err();
        assert_eq!(err.kind, HostErrorKind::TooLarge { limit: 4096 });
        assert_eq!(
            host.read_at_most(Path::new("/small"), 8).unwrap(),
            b"root:pw\n"
        );
        assert_eq!(
            host.read_at_most(Path::new("/small"), 7).unwrap_err().kind,
            HostErrorKind::TooLarge { limit: 7 }
        );
        // An endless device named by mistake is refused before any read.
        let err = LiveHost::new("/")
            .read_at_most(Path::new("/dev/zero"), 4096)
            .unwrap_err();
        assert!(
            matches!(err.kind, HostErrorKind::NotRegular { .. }),
            "{err:?}"
        );
    }

    /// Read means read: under an inspected root nothing runs, not even from the driver root.
    #[test]
    fn an_inspected_root_never_runs_the_driver_root_s_nvidia_smi() {
        let root = tempfile::tempdir().unwrap();
        let smi = root.path().join("run/nvidia/driver/usr/bin/nvidia-smi");
        fs::create_dir_all(smi.parent().unwrap()).unwrap();
        fs::write(&smi, "#!/bin/sh\necho ran\n").unwrap();
        let host = LiveHost::new(root.path()).with_operator_driver();
        let err = host
            .invocation(&VendorCommand::NvidiaSmiQueryXml)
            .unwrap_err();
        assert!(matches!(err.kind, HostErrorKind::NotRun { .. }), "{err:?}");
    }
}
