//! Whether the image's configuration layer is on this machine at all: the lock
//! (`/etc/nodeimg/blueprint.lock.json`) and the rendered files checks read back (the
//! kernel parameters' `/etc/sysctl.d/90-nodeimg.conf`), which every image carries. A
//! machine where they are absent was not built from the image, or the image was not
//! applied to it: what the checks find there says nothing about the image.
//!
//! Only existence is read (through the host, so a capture keeps the answer); what the
//! files say is judged by the checks that read them.

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
        match host.read(Path::new(file)) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => missing.push((*file).to_owned()),
            Err(e) => return Fact::unknown(e.to_string()),
        }
    }
    Fact::Known(Applied { missing })
}
