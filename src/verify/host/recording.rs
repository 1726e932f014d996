//! Everything a host answered during one collection: file contents, listings, links,
//! resolved paths, command outputs and the kernel log, each with its error when it failed.
//!
//! A [`Recording`] is what `nodeimg capture` archives and what a
//! [`SnapshotHost`](super::SnapshotHost) replays. Keys are machine paths (or the command
//! line), so a replay answers exactly what the live machine answered, errors included.
//! Content is shared ([`Content`]), so an archive whose journal names one member many
//! times holds that member once.

use super::command::CommandOutput;
use super::error::HostError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// File content or command output, shared between the answers that name it.
pub type Content = Arc<[u8]>;

/// A command's outcome as stored: exit status, output and how long it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedOutput {
    pub status: Option<i32>,
    #[serde(skip)]
    pub stdout: Content,
    #[serde(skip)]
    pub stderr: Content,
    pub elapsed_ms: u64,
}

impl From<&CommandOutput> for RecordedOutput {
    fn from(output: &CommandOutput) -> Self {
        RecordedOutput {
            status: output.status,
            stdout: Content::from(output.stdout.as_slice()),
            stderr: Content::from(output.stderr.as_slice()),
            elapsed_ms: u64::try_from(output.elapsed.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl RecordedOutput {
    pub fn to_output(&self) -> CommandOutput {
        CommandOutput {
            status: self.status,
            stdout: self.stdout.to_vec(),
            stderr: self.stderr.to_vec(),
            elapsed: Duration::from_millis(self.elapsed_ms),
        }
    }
}

/// Something the recording host read but did not keep, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotCaptured {
    pub target: String,
    pub bytes: u64,
    pub reason: String,
}

/// One collection's host answers, keyed by machine path or command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recording {
    pub reads: BTreeMap<String, Result<Content, HostError>>,
    pub dirs: BTreeMap<String, Result<Vec<String>, HostError>>,
    pub links: BTreeMap<String, Result<String, HostError>>,
    pub resolved: BTreeMap<String, Result<String, HostError>>,
    pub commands: BTreeMap<String, Result<RecordedOutput, HostError>>,
    pub kernel_log: Option<Result<String, HostError>>,
    /// Reads and outputs dropped by the size limits.
    pub not_captured: Vec<NotCaptured>,
}

impl Recording {
    /// Bytes of content held (files, command output, kernel log).
    pub fn content_bytes(&self) -> u64 {
        let reads: usize = self
            .reads
            .values()
            .filter_map(|r| r.as_ref().ok())
            .map(|c| c.len())
            .sum();
        let commands: usize = self
            .commands
            .values()
            .filter_map(|r| r.as_ref().ok())
            .map(|o| o.stdout.len() + o.stderr.len())
            .sum();
        let log = match &self.kernel_log {
            Some(Ok(text)) => text.len(),
            _ => 0,
        };
        (reads + commands + log) as u64
    }

    /// Every failed operation, in a stable order (for the capture manifest).
    pub fn errors(&self) -> Vec<&HostError> {
        let mut out: Vec<&HostError> = Vec::new();
        out.extend(self.reads.values().filter_map(|r| r.as_ref().err()));
        out.extend(self.dirs.values().filter_map(|r| r.as_ref().err()));
        out.extend(self.links.values().filter_map(|r| r.as_ref().err()));
        out.extend(self.resolved.values().filter_map(|r| r.as_ref().err()));
        out.extend(self.commands.values().filter_map(|r| r.as_ref().err()));
        if let Some(Err(err)) = &self.kernel_log {
            out.push(err);
        }
        out
    }
}
