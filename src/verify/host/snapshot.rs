//! A machine replayed from a [`Recording`] (`nodeimg verify --snapshot`).
//!
//! Every answer, error included, is the one the live machine gave when the recording was
//! made. A question the recording cannot answer (the replaying nodeimg reads something the
//! capturing one did not) is an error that says so, never an empty value.

use super::Host;
use super::command::{CommandOutput, VendorCommand};
use super::error::{HostError, HostErrorKind, HostOp};
use super::http::{HttpClient, HttpGet, HttpResponse};
use super::recording::Recording;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Replays a recording.
#[derive(Debug, Clone)]
pub struct SnapshotHost {
    recording: Recording,
}

impl SnapshotHost {
    pub fn new(recording: Recording) -> Self {
        SnapshotHost { recording }
    }

    pub fn recording(&self) -> &Recording {
        &self.recording
    }
}

fn missing(op: HostOp, target: String) -> HostError {
    HostError::new(
        op,
        target,
        HostErrorKind::Os {
            errno: None,
            message: "not in the snapshot".to_owned(),
        },
    )
}

impl Host for SnapshotHost {
    fn read(&self, path: &Path) -> Result<Vec<u8>, HostError> {
        let key = path.display().to_string();
        match self.recording.reads.get(&key) {
            Some(result) => result.as_ref().map(|c| c.to_vec()).map_err(Clone::clone),
            None => Err(missing(HostOp::Read, key)),
        }
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>, HostError> {
        let key = path.display().to_string();
        match self.recording.dirs.get(&key) {
            Some(result) => result.clone(),
            None => Err(missing(HostOp::ListDir, key)),
        }
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        let key = path.display().to_string();
        match self.recording.links.get(&key) {
            Some(result) => result.clone().map(PathBuf::from),
            None => Err(missing(HostOp::ReadLink, key)),
        }
    }

    fn canonicalize(&self, path: &Path) -> Result<PathBuf, HostError> {
        let key = path.display().to_string();
        match self.recording.resolved.get(&key) {
            Some(result) => result.clone().map(PathBuf::from),
            None => Err(missing(HostOp::Resolve, key)),
        }
    }

    fn run(&self, command: &VendorCommand, _timeout: Duration) -> Result<CommandOutput, HostError> {
        let key = command.to_string();
        match self.recording.commands.get(&key) {
            Some(result) => result.as_ref().map(|o| o.to_output()).map_err(Clone::clone),
            None => Err(missing(HostOp::Run, key)),
        }
    }

    /// The recorded answer; no client is built.
    fn get(&self, _client: &mut HttpClient, request: &HttpGet) -> Result<HttpResponse, HostError> {
        let key = request.to_string();
        match self.recording.commands.get(&key) {
            Some(Ok(output)) => Ok(HttpResponse {
                status: output
                    .status
                    .and_then(|s| u16::try_from(s).ok())
                    .unwrap_or(0),
                body: output.stdout.to_vec(),
            }),
            Some(Err(e)) => Err(e.clone()),
            None => Err(missing(HostOp::Get, key)),
        }
    }

    fn read_kernel_log(&self) -> Result<String, HostError> {
        match &self.recording.kernel_log {
            Some(result) => result.clone(),
            None => Err(missing(HostOp::KernelLog, "/dev/kmsg".to_owned())),
        }
    }
}
