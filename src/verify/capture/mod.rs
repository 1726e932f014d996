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
use std::io::Read;
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

/// Reads a capture archive.
pub fn load(path: &Path) -> Result<(Manifest, Recording), ArchiveError> {
    let what = || format!("read {}", path.display());
    let file = std::fs::File::open(path).map_err(|source| ArchiveError::Io {
        what: what(),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_ARCHIVE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ArchiveError::Io {
            what: what(),
            source,
        })?;
    if bytes.len() as u64 > MAX_ARCHIVE_BYTES {
        return Err(ArchiveError::Invalid {
            what: what(),
            message: format!("larger than {MAX_ARCHIVE_BYTES} bytes"),
        });
    }
    archive::unpack(&bytes).map_err(|e| match e {
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
