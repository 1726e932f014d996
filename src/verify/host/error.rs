//! Why a read from the host failed: the operation, the path or command, and the cause.
//!
//! Causes are classified (not found, invalid argument, permission, timeout, ...) because
//! they mean different things to a check: `EINVAL` on a NIC's `speed` means the link is
//! down, `ENOENT` on a PCI link file means the device is not PCIe (or a VM hides it), and a
//! timeout means a hung vendor tool.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;
use std::time::Duration;

/// The host operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostOp {
    Read,
    ListDir,
    ReadLink,
    Resolve,
    Run,
    KernelLog,
    /// An HTTPS GET ([`super::http`]).
    Get,
}

impl fmt::Display for HostOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostOp::Read => "read",
            HostOp::ListDir => "list",
            HostOp::ReadLink => "readlink",
            HostOp::Resolve => "resolve",
            HostOp::Run => "run",
            HostOp::KernelLog => "read kernel log",
            HostOp::Get => "get",
        })
    }
}

/// The cause of a failed host operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum HostErrorKind {
    /// ENOENT (or ENOTDIR): the file, directory or command is not there.
    NotFound,
    /// EINVAL: the kernel refused the read (a down NIC's `speed`, a PCI link file).
    InvalidArgument,
    /// EACCES / EPERM.
    PermissionDenied,
    /// EOPNOTSUPP and friends: the driver does not implement this attribute.
    NotSupported,
    /// The path names `..`, is relative, or a link points outside the root prefix.
    OutsideRoot,
    /// Too many levels of symbolic links.
    LinkLoop,
    /// The command ran past its deadline and was killed.
    Timeout { after_ms: u64 },
    /// A FIFO, a device, a socket or a directory where a file was expected; not opened
    /// for reading, so it cannot block.
    NotRegular { file_kind: String },
    /// The file or output is larger than the host reads; nothing of it is used.
    TooLarge { limit: u64 },
    /// The program was deliberately not run (an inspected tree's programs never are).
    NotRun { reason: String },
    /// Any other OS error, with its errno when there is one.
    Os { errno: Option<i32>, message: String },
}

impl fmt::Display for HostErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostErrorKind::NotFound => f.write_str("not found (ENOENT)"),
            HostErrorKind::InvalidArgument => f.write_str("invalid argument (EINVAL)"),
            HostErrorKind::PermissionDenied => f.write_str("permission denied"),
            HostErrorKind::NotSupported => f.write_str("not supported (EOPNOTSUPP)"),
            HostErrorKind::OutsideRoot => f.write_str("path escapes the host root"),
            HostErrorKind::LinkLoop => f.write_str("too many levels of symbolic links"),
            HostErrorKind::Timeout { after_ms } => {
                write!(f, "timed out after {after_ms} ms and was killed")
            }
            HostErrorKind::NotRegular { file_kind } => {
                write!(f, "{file_kind}, not a regular file; not read")
            }
            HostErrorKind::TooLarge { limit } => {
                write!(f, "larger than {}; not read", crate::input::bytes(*limit))
            }
            HostErrorKind::NotRun { reason } => f.write_str(reason),
            HostErrorKind::Os {
                errno: Some(errno),
                message,
            } => write!(f, "{message} (errno {errno})"),
            HostErrorKind::Os {
                errno: None,
                message,
            } => f.write_str(message),
        }
    }
}

impl HostErrorKind {
    /// Classifies an I/O error by errno first (stable), then by std's kind.
    pub fn from_io(err: &io::Error) -> Self {
        if let Some(errno) = err.raw_os_error() {
            match errno {
                libc::ENOENT | libc::ENOTDIR | libc::ENODEV | libc::ENXIO => {
                    return HostErrorKind::NotFound;
                }
                libc::EINVAL => return HostErrorKind::InvalidArgument,
                libc::EACCES | libc::EPERM => return HostErrorKind::PermissionDenied,
                libc::EOPNOTSUPP | libc::ENOTTY => return HostErrorKind::NotSupported,
                libc::ELOOP => return HostErrorKind::LinkLoop,
                _ => {}
            }
        }
        match err.kind() {
            io::ErrorKind::NotFound => HostErrorKind::NotFound,
            io::ErrorKind::PermissionDenied => HostErrorKind::PermissionDenied,
            io::ErrorKind::InvalidInput => HostErrorKind::InvalidArgument,
            io::ErrorKind::Unsupported => HostErrorKind::NotSupported,
            _ => HostErrorKind::Os {
                errno: err.raw_os_error(),
                message: err.to_string(),
            },
        }
    }
}

/// A failed host operation: what was attempted, on what, and why it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostError {
    pub op: HostOp,
    /// The path on the verified machine, or the command line.
    pub target: String,
    pub kind: HostErrorKind,
}

impl HostError {
    pub fn new(op: HostOp, target: impl Into<String>, kind: HostErrorKind) -> Self {
        HostError {
            op,
            target: target.into(),
            kind,
        }
    }

    pub fn io(op: HostOp, target: impl Into<String>, err: &io::Error) -> Self {
        HostError::new(op, target, HostErrorKind::from_io(err))
    }

    /// A failed bounded read of an input file.
    pub fn input(op: HostOp, target: impl Into<String>, err: &crate::input::InputError) -> Self {
        use crate::input::InputError;
        let kind = match err {
            InputError::Io(e) => HostErrorKind::from_io(e),
            InputError::NotRegular { kind } => HostErrorKind::NotRegular {
                file_kind: (*kind).to_owned(),
            },
            InputError::TooLarge { limit } => HostErrorKind::TooLarge { limit: *limit },
            InputError::NotUtf8 { .. } => HostErrorKind::Os {
                errno: None,
                message: err.to_string(),
            },
        };
        HostError::new(op, target, kind)
    }

    pub fn timeout(target: impl Into<String>, after: Duration) -> Self {
        let after_ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
        HostError::new(HostOp::Run, target, HostErrorKind::Timeout { after_ms })
    }

    pub fn is_not_found(&self) -> bool {
        self.kind == HostErrorKind::NotFound
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.op, self.target, self.kind)
    }
}

impl std::error::Error for HostError {}
