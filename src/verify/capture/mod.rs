//! `nodeimg capture`: everything the facts read from a machine, in one archive that
//! `--snapshot` replays anywhere.
//!
//! Facts are collected through a [`RecordingHost`] around the host; the recording and a
//! [`Manifest`] are packed by [`archive`] and written atomically. Capture only reads, and is
//! bounded in size ([`RecordLimits`]) and in time (each command has the collection's
//! timeout).

pub mod archive;
pub mod manifest;

pub use archive::ArchiveError;
pub use manifest::Manifest;

use crate::time::{Clock, SystemClock};
use crate::verify::facts::options::CollectOptions;
use crate::verify::facts::{Facts, collect};
use crate::verify::host::{Host, RecordLimits, Recording, RecordingHost};
use std::path::Path;

/// Largest capture file read back.
const MAX_ARCHIVE_BYTES: u64 = 1024 * 1024 * 1024;

/// One capture: the facts the capturing run saw, what it recorded, and the manifest.
pub struct Captured {
    pub facts: Facts,
    pub recording: Recording,
    pub manifest: Manifest,
}

/// Collects facts from `host`, recording every answer.
pub fn capture(
    host: &dyn Host,
    root: &str,
    options: &CollectOptions,
    limits: RecordLimits,
) -> Captured {
    let recorder = RecordingHost::new(host, limits);
    let facts = collect(&recorder, options);
    let recording = recorder.recording();
    let manifest = Manifest::new(&recording, &facts, root, limits, SystemClock.rfc3339());
    Captured {
        facts,
        recording,
        manifest,
    }
}

/// Writes a capture archive atomically.
pub fn write(path: &Path, recording: &Recording, manifest: &Manifest) -> Result<(), ArchiveError> {
    let bytes = archive::pack(recording, manifest)?;
    crate::atomic::write_file(path, &bytes).map_err(|source| ArchiveError::Io {
        what: format!("write {}", path.display()),
        source,
    })
}

/// Reads a capture archive (a regular file of at most `MAX_ARCHIVE_BYTES`).
pub fn load(path: &Path) -> Result<(Manifest, Recording), ArchiveError> {
    let bytes = crate::input::read(path, MAX_ARCHIVE_BYTES).map_err(|e| match e {
        crate::input::InputError::Io(source) => ArchiveError::Io {
            what: format!("read {}", path.display()),
            source,
        },
        other => ArchiveError::Invalid {
            what: path.display().to_string(),
            message: other.to_string(),
        },
    })?;
    archive::unpack(&bytes).map_err(|e| match e {
        ArchiveError::Invalid { what, message } if what == "capture" => ArchiveError::Invalid {
            what: path.display().to_string(),
            message,
        },
        ArchiveError::Invalid { what, message } => ArchiveError::Invalid {
            what: format!("{}: {what}", path.display()),
            message,
        },
        ArchiveError::Io { what, source } => ArchiveError::Io {
            what: format!("{}: {what}", path.display()),
            source,
        },
    })
}
