//! The one way in to the machine being verified.
//!
//! Every fact is read through the [`Host`] trait: read a file, list a directory, read a
//! link, resolve a path, run one of a fixed set of vendor commands with a timeout, and read
//! the kernel log, and make the one HTTPS GET verify knows ([`http`]). Nothing else in `verify` touches the filesystem or spawns a process, so
//! the same fact code runs against the live machine ([`LiveHost`], optionally under a root
//! prefix pointing at a fixture tree), through a [`RecordingHost`] that writes every answer
//! down (`nodeimg capture`), and against a replayed capture ([`SnapshotHost`]).
//!
//! Paths passed to a host are absolute paths *on the verified machine* (`/sys/class/net`),
//! never paths on the machine running nodeimg.

mod command;
mod error;
pub mod http;
mod live;
mod path;
mod recorder;
mod recording;
mod snapshot;

pub use command::{CommandOutput, ModuleName, MountPoint, Program, UnitName, VendorCommand};
pub use error::{HostError, HostErrorKind, HostOp};
pub use live::{
    FILE_LIMIT, Invocation, KERNEL_LOG_LIMIT, LiveHost, NVIDIA_OPERATOR_DRIVER_ROOT, OUTPUT_LIMIT,
    locate,
};
pub use recorder::{RecordLimits, RecordingHost};
pub use recording::{Content, NotCaptured, RecordedOutput, Recording};
pub use snapshot::SnapshotHost;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Read-only access to a machine: files, directories, links, vendor commands, kernel log.
///
/// Every method returns a [`HostError`] that records the operation, the path or command,
/// and why it failed (ENOENT, EINVAL, permission, timeout, ...), so a fact that cannot be
/// read carries a precise reason.
///
/// Hosts are `Sync`: facts are collected on several threads at once, so that vendor
/// commands run while sysfs is read.
pub trait Host: Sync {
    /// The whole content of a file.
    fn read(&self, path: &Path) -> Result<Vec<u8>, HostError>;

    /// The names in a directory, sorted (byte order), without `.` and `..`.
    fn list_dir(&self, path: &Path) -> Result<Vec<String>, HostError>;

    /// The target of a symbolic link, as stored in the link.
    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError>;

    /// The path with every symbolic link resolved (the real `/sys/devices/...` path of a
    /// `/sys/bus/pci/devices/...` entry). Fails with `NotFound` when the path does not exist.
    fn canonicalize(&self, path: &Path) -> Result<PathBuf, HostError>;

    /// Runs one vendor command, killing it when it runs past `timeout`. A non-zero exit
    /// is not an error here: the status is in the output (`systemctl is-active` exits 3
    /// for an inactive unit and still prints its state).
    fn run(&self, command: &VendorCommand, timeout: Duration) -> Result<CommandOutput, HostError>;

    /// What the kernel log holds now (`/dev/kmsg`, read without blocking).
    fn read_kernel_log(&self) -> Result<String, HostError>;

    /// Makes one bounded HTTPS GET ([`http::HttpGet`]) through `client`, which the GETs of
    /// one walk share ([`http::HttpClient`]); any HTTP status is an answer.
    fn get(
        &self,
        client: &mut http::HttpClient,
        request: &http::HttpGet,
    ) -> Result<http::HttpResponse, HostError>;

    /// A file's content as text, with invalid UTF-8 replaced.
    fn read_text(&self, path: &Path) -> Result<String, HostError> {
        self.read(path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl<H: Host + ?Sized> Host for &H {
    fn read(&self, path: &Path) -> Result<Vec<u8>, HostError> {
        (**self).read(path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<String>, HostError> {
        (**self).list_dir(path)
    }
    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        (**self).read_link(path)
    }
    fn canonicalize(&self, path: &Path) -> Result<PathBuf, HostError> {
        (**self).canonicalize(path)
    }
    fn run(&self, command: &VendorCommand, timeout: Duration) -> Result<CommandOutput, HostError> {
        (**self).run(command, timeout)
    }
    fn read_kernel_log(&self) -> Result<String, HostError> {
        (**self).read_kernel_log()
    }
    fn get(
        &self,
        client: &mut http::HttpClient,
        request: &http::HttpGet,
    ) -> Result<http::HttpResponse, HostError> {
        (**self).get(client, request)
    }
}
