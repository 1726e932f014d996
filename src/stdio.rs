//! `-` for standard input or output wherever a command takes a file, as Unix
//! tools do: `nodeimg validate -`, `nodeimg schema -o -`,
//! `nodeimg verify --output json=-`.
//!
//! Both types parse in clap (`value_parser`), so a command receives either a
//! path or the standard stream, never the text `-`. A leaf: the argument definitions
//! (`cli`) and the commands that read and write them both use it.

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A file to read, or standard input (`-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Stdin,
    File(PathBuf),
}

/// A file to write (atomically), or standard output (`-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

/// How standard input is named in messages and diagnostics.
pub const STDIN_NAME: &str = "<stdin>";

impl FromStr for Input {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "" => Err("the file name is empty".into()),
            "-" => Ok(Self::Stdin),
            _ => Ok(Self::File(PathBuf::from(s))),
        }
    }
}

impl FromStr for Output {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "" => Err("the file name is empty".into()),
            "-" => Ok(Self::Stdout),
            _ => Ok(Self::File(PathBuf::from(s))),
        }
    }
}

impl Input {
    /// The path, or [`STDIN_NAME`], for diagnostics.
    pub fn name(&self) -> &Path {
        match self {
            Self::Stdin => Path::new(STDIN_NAME),
            Self::File(p) => p,
        }
    }

    /// Reads at most `limit` bytes; more is an error, not a truncation.
    pub fn read(&self, limit: u64) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        match self {
            Self::Stdin => std::io::stdin()
                .lock()
                .take(limit + 1)
                .read_to_end(&mut bytes)?,
            // Bounded, and a FIFO or a device is refused without blocking.
            Self::File(p) => return crate::input::read(p, limit).map_err(std::io::Error::from),
        };
        if bytes.len() as u64 > limit {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("larger than {limit} bytes"),
            ));
        }
        Ok(bytes)
    }

    /// [`read`](Self::read) as UTF-8 text.
    pub fn read_text(&self, limit: u64) -> std::io::Result<String> {
        String::from_utf8(self.read(limit)?)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
    }
}

impl Output {
    /// Writes `bytes` to the file atomically, or to `stdout`.
    pub fn write(&self, bytes: &[u8], stdout: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Self::Stdout => stdout.write_all(bytes).and_then(|()| stdout.flush()),
            Self::File(p) => crate::atomic::write_file(p, bytes),
        }
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, Self::Stdout)
    }

    /// The path, if not standard output.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Stdout => None,
            Self::File(p) => Some(p),
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name().display())
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdout => f.write_str("<stdout>"),
            Self::File(p) => write!(f, "{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dash_is_the_standard_stream() {
        assert_eq!("-".parse::<Input>(), Ok(Input::Stdin));
        assert_eq!("-".parse::<Output>(), Ok(Output::Stdout));
        assert_eq!("./-".parse::<Input>(), Ok(Input::File("./-".into())));
        assert!("".parse::<Output>().is_err());
    }

    #[test]
    fn reading_past_the_limit_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        let input = Input::File(path);
        assert_eq!(input.read(5).unwrap(), b"12345");
        let e = input.read(4).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
    }
}
