//! Whether the image's configuration layer is on this machine at all: the lock
//! (`/etc/nodeimg/blueprint.lock.json`) and the rendered files checks read back (the
//! kernel parameters' `/etc/sysctl.d/90-nodeimg.conf`), which every image carries. A
//! machine where they are absent was not built from the image, or the image was not
//! applied to it: what the checks find there says nothing about the image.
//!
//! Only existence is asked (the host resolves the path, and a capture keeps that answer,
//! not the files' content); what the files say is judged by the checks that read them.

use std::path::Path;

use serde::Serialize;

use crate::verify::fact::Fact;
use crate::verify::host::Host;

/// The files every image writes, which verify reads back.
pub const FILES: &[&str] = &[
    "/etc/nodeimg/blueprint.lock.json",
    "/etc/sysctl.d/90-nodeimg.conf",
];

/// The image's files this machine lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Of [`FILES`], those that do not exist.
    pub missing: Vec<String>,
}

impl Applied {
    pub fn complete(&self) -> bool {
        self.missing.is_empty()
    }
}

/// Which of [`FILES`] exist; unknown when one cannot be told (a permission error, a
/// capture that did not read it).
pub fn collect(host: &dyn Host) -> Fact<Applied> {
    let mut missing = Vec::new();
    for file in FILES {
        match host.canonicalize(Path::new(file)) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => missing.push((*file).to_owned()),
            Err(e) => return Fact::unknown(e.to_string()),
        }
    }
    Fact::Known(Applied { missing })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::host::{LiveHost, RecordLimits, RecordingHost, SnapshotHost};

    #[test]
    fn only_whether_the_files_exist_is_read_and_captured() {
        let root = tempfile::tempdir().unwrap();
        let lock = root.path().join("etc/nodeimg/blueprint.lock.json");
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        std::fs::write(&lock, r#"{"lock": "content no check of this fact needs"}"#).unwrap();
        let recorder = RecordingHost::new(LiveHost::new(root.path()), RecordLimits::default());
        let want = Fact::Known(Applied {
            missing: vec!["/etc/sysctl.d/90-nodeimg.conf".to_owned()],
        });
        assert_eq!(collect(&recorder), want);
        // The capture holds that the files exist or not, not what they say.
        let recording = recorder.recording();
        assert!(
            recording.reads.is_empty(),
            "{:?}",
            recording.reads.keys().collect::<Vec<_>>()
        );
        assert_eq!(collect(&SnapshotHost::new(recording)), want);
    }
}
