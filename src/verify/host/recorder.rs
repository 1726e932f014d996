//! A host that answers from another host and writes every answer down.
//!
//! `nodeimg capture` and `nodeimg verify --evidence-on-fail` collect facts through a
//! [`RecordingHost`] around the live host; the [`Recording`] it keeps is what they archive.
//! Capture is bounded: content over the per-item limit, or past the total limit, is not
//! kept and is answered as an error *to the caller too*, so the facts of the capturing run
//! are exactly the facts a replay of the archive gives.

use super::Host;
use super::command::{CommandOutput, VendorCommand};
use super::error::{HostError, HostErrorKind, HostOp};
use super::http::{HttpClient, HttpGet, HttpResponse};
use super::recording::{Content, NotCaptured, RecordedOutput, Recording};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Size limits of one recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLimits {
    /// Most bytes kept from one file, command output or the kernel log.
    pub max_item_bytes: u64,
    /// Most bytes kept in all.
    pub max_total_bytes: u64,
}

impl Default for RecordLimits {
    fn default() -> Self {
        RecordLimits {
            max_item_bytes: 16 * 1024 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
        }
    }
}

/// Wraps a host and records every answer.
pub struct RecordingHost<H> {
    inner: H,
    limits: RecordLimits,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    recording: Recording,
    total: u64,
}

impl<H: Host> RecordingHost<H> {
    pub fn new(inner: H, limits: RecordLimits) -> Self {
        RecordingHost {
            inner,
            limits,
            state: Mutex::new(State::default()),
        }
    }

    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// What was recorded so far.
    pub fn recording(&self) -> Recording {
        match self.state.lock() {
            Ok(state) => state.recording.clone(),
            Err(poisoned) => poisoned.into_inner().recording.clone(),
        }
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        match self.state.lock() {
            Ok(mut state) => f(&mut state),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// Accepts `bytes` more content, or says why not (recording it as not captured).
    fn admit(&self, op: HostOp, target: &str, bytes: u64) -> Result<(), HostError> {
        let limits = self.limits;
        self.with_state(|state| {
            let reason = if bytes > limits.max_item_bytes {
                Some(format!(
                    "not captured: {bytes} bytes is over the per-item limit of {} bytes",
                    limits.max_item_bytes
                ))
            } else if state.total.saturating_add(bytes) > limits.max_total_bytes {
                Some(format!(
                    "not captured: the capture already holds {} bytes of its {}-byte limit",
                    state.total, limits.max_total_bytes
                ))
            } else {
                None
            };
            match reason {
                None => {
                    state.total += bytes;
                    Ok(())
                }
                Some(reason) => {
                    state.recording.not_captured.push(NotCaptured {
                        target: target.to_owned(),
                        bytes,
                        reason: reason.clone(),
                    });
                    Err(HostError::new(
                        op,
                        target,
                        HostErrorKind::Os {
                            errno: None,
                            message: reason,
                        },
                    ))
                }
            }
        })
    }
}

fn key(path: &Path) -> String {
    path.display().to_string()
}

impl<H: Host> Host for RecordingHost<H> {
    fn read(&self, path: &Path) -> Result<Vec<u8>, HostError> {
        let target = key(path);
        let result = self.inner.read(path).and_then(|bytes| {
            self.admit(HostOp::Read, &target, bytes.len() as u64)
                .map(|()| bytes)
        });
        let stored = result
            .as_ref()
            .map(|bytes| Content::from(bytes.as_slice()))
            .map_err(Clone::clone);
        self.with_state(|s| s.recording.reads.insert(target, stored));
        result
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>, HostError> {
        let result = self.inner.list_dir(path);
        self.with_state(|s| s.recording.dirs.insert(key(path), result.clone()));
        result
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, HostError> {
        let result = self.inner.read_link(path);
        let stored = result.as_ref().map(|p| key(p)).map_err(Clone::clone);
        self.with_state(|s| s.recording.links.insert(key(path), stored));
        result
    }

    fn canonicalize(&self, path: &Path) -> Result<PathBuf, HostError> {
        let result = self.inner.canonicalize(path);
        let stored = result.as_ref().map(|p| key(p)).map_err(Clone::clone);
        self.with_state(|s| s.recording.resolved.insert(key(path), stored));
        result
    }

    fn run(&self, command: &VendorCommand, timeout: Duration) -> Result<CommandOutput, HostError> {
        let target = command.to_string();
        let result = self.inner.run(command, timeout).and_then(|output| {
            let bytes = (output.stdout.len() + output.stderr.len()) as u64;
            self.admit(HostOp::Run, &target, bytes).map(|()| output)
        });
        let stored = result
            .as_ref()
            .map(RecordedOutput::from)
            .map_err(Clone::clone);
        self.with_state(|s| s.recording.commands.insert(target, stored));
        result
    }

    /// Kept with the command outputs under `GET URL`: the HTTP status as the exit
    /// status, the body as stdout. The request's credentials are not part of either.
    fn get(&self, client: &mut HttpClient, request: &HttpGet) -> Result<HttpResponse, HostError> {
        let target = request.to_string();
        let started = std::time::Instant::now();
        let result = self.inner.get(client, request).and_then(|response| {
            self.admit(HostOp::Get, &target, response.body.len() as u64)
                .map(|()| response)
        });
        let stored = result
            .as_ref()
            .map(|response| RecordedOutput {
                status: Some(i32::from(response.status)),
                stdout: Content::from(response.body.as_slice()),
                stderr: Content::from(&[][..]),
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            })
            .map_err(Clone::clone);
        self.with_state(|s| s.recording.commands.insert(target, stored));
        result
    }

    fn read_kernel_log(&self) -> Result<String, HostError> {
        let result = self.inner.read_kernel_log().and_then(|text| {
            self.admit(HostOp::KernelLog, "/dev/kmsg", text.len() as u64)
                .map(|()| text)
        });
        self.with_state(|s| s.recording.kernel_log = Some(result.clone()));
        result
    }
}
