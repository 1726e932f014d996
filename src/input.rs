//! Reading one input file with a byte bound, without ever blocking on something that is
//! not a file.
//!
//! Every file nodeimg reads as input (a blueprint, a matrix, a template, saved vendor-tool
//! output, an OCI layout's JSON, an auth file, a sysfs or procfs attribute under `--root`)
//! goes through [`open`] and [`read_open`]: the file is opened with `O_NONBLOCK` (so a FIFO
//! with no writer does not hang the open), checked with `fstat` to be a regular file (a
//! FIFO, a device or a socket is refused by name), and read to at most `limit + 1` bytes.
//! The size `fstat` reports is not trusted: procfs and sysfs files report 0 (or 4096)
//! whatever they hold, and a sparse file can claim terabytes it does not hold, so the
//! bound is on the read itself. A file over the limit is an error, never a silent prefix.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why an input file could not be read.
#[derive(Debug)]
pub enum InputError {
    /// Opening or reading failed.
    Io(io::Error),
    /// It is a FIFO, a device, a socket or a directory, not a regular file.
    NotRegular { kind: &'static str },
    /// It holds more than the limit allows.
    TooLarge { limit: u64 },
    /// It is not UTF-8 text (only from [`read_text`]).
    NotUtf8 { offset: usize },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io(e) => write!(f, "{e}"),
            InputError::NotRegular { kind } => {
                write!(f, "is {kind}, not a regular file; refusing to read it")
            }
            InputError::TooLarge { limit } => {
                write!(f, "is larger than {}; refusing to read it", bytes(*limit))
            }
            InputError::NotUtf8 { offset } => {
                write!(f, "is not UTF-8 text (invalid byte at offset {offset})")
            }
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for InputError {
    fn from(e: io::Error) -> Self {
        InputError::Io(e)
    }
}

impl From<InputError> for io::Error {
    /// The same error as an `io::Error` (for callers whose error type holds one); its
    /// message is the same.
    fn from(e: InputError) -> Self {
        match e {
            InputError::Io(e) => e,
            InputError::NotUtf8 { .. } => io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
            InputError::TooLarge { .. } => {
                io::Error::new(io::ErrorKind::FileTooLarge, e.to_string())
            }
            InputError::NotRegular { .. } => {
                io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
            }
        }
    }
}

impl InputError {
    /// The OS error number, when the cause was an OS error.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            InputError::Io(e) => e.raw_os_error(),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// `4 MiB`, `1 GiB`, or a byte count when not a whole number of KiB.
pub fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    format!("{n} bytes")
}

/// What kind of file a non-regular file is, for messages.
pub fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading without blocking and checks that it is a regular file.
/// `extra_flags` are OR-ed into the open flags (e.g. `O_NOFOLLOW`).
pub fn open(path: &Path, extra_flags: i32) -> Result<File, InputError> {
    // Refuse what is plainly not a file before opening it (opening some devices has
    // effects of its own); the check after the open catches a swap in between. With
    // O_NOFOLLOW a link is not followed here either: its target may mean another file
    // (under an inspected root), and the open refuses it with ELOOP.
    let meta = if extra_flags & libc::O_NOFOLLOW != 0 {
        std::fs::symlink_metadata(path)
    } else {
        std::fs::metadata(path)
    };
    if let Ok(meta) = meta
        && !meta.is_file()
        && !meta.file_type().is_symlink()
    {
        return Err(InputError::NotRegular {
            kind: kind_of(meta.file_type()),
        });
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | extra_flags)
        .open(path)?;
    let file_type = file.metadata()?.file_type();
    if !file_type.is_file() {
        return Err(InputError::NotRegular {
            kind: kind_of(file_type),
        });
    }
    Ok(file)
}

/// Reads an opened file to its end, refusing more than `limit` bytes.
pub fn read_open(file: File, limit: u64) -> Result<Vec<u8>, InputError> {
    // The reported size is a hint for the allocation only (procfs says 0).
    let hint = file.metadata().map(|m| m.len()).unwrap_or(0).min(limit);
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0).min(1 << 20));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { limit });
    }
    Ok(bytes)
}

/// The bytes of the regular file at `path`, at most `limit` of them.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    read_open(open(path, 0)?, limit)
}

/// The UTF-8 text of the regular file at `path`, at most `limit` bytes of it.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read(path, limit)?).map_err(|e| InputError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn reads_a_file_within_the_limit_and_refuses_one_over_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read(&p, 5).unwrap(), b"12345");
        let e = read(&p, 4).unwrap_err();
        assert!(matches!(e, InputError::TooLarge { limit: 4 }), "{e}");
        assert!(e.to_string().contains("larger than 4 bytes"), "{e}");
    }

    #[test]
    fn a_sparse_file_costs_only_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sparse");
        let f = File::create(&p).unwrap();
        f.set_len(1 << 40).unwrap();
        let e = read(&p, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
    }

    #[test]
    fn fifos_devices_and_folders_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo reads a valid NUL-terminated path and touches no other memory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        let e = read(&fifo, 100).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let e = read(Path::new("/dev/zero"), 100).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let e = read(dir.path(), 100).unwrap_err();
        assert!(
            e.to_string().contains("directory") || e.raw_os_error() == Some(libc::EISDIR),
            "{e}"
        );
    }

    #[test]
    fn with_nofollow_a_link_is_a_link_whatever_it_points_at() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("l");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = open(&link, libc::O_NOFOLLOW).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{e}");
        // Followed, it is the device it points at.
        assert!(matches!(open(&link, 0), Err(InputError::NotRegular { .. })));
    }

    #[test]
    fn procfs_files_are_read_although_they_report_size_zero() {
        let text = read_text(Path::new("/proc/self/status"), 1 << 20).unwrap();
        assert!(text.contains("VmRSS") || text.contains("Name:"), "{text}");
    }

    #[test]
    fn text_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"ab\xffc").unwrap();
        assert!(matches!(
            read_text(&p, 10).unwrap_err(),
            InputError::NotUtf8 { offset: 2 }
        ));
    }

    #[test]
    fn byte_counts_read_well() {
        assert_eq!(bytes(4 << 20), "4 MiB");
        assert_eq!(bytes(1 << 30), "1 GiB");
        assert_eq!(bytes(1000), "1000 bytes");
    }
}
