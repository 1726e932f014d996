//! What can go wrong while building an image, each case carrying the path,
//! digest or value it is about, so that a message alone says what to fix.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::overlay::OverlayError;
use crate::tree::TreeError;

#[derive(Debug, Error)]
pub enum PackageError {
    /// An overlay entry that cannot go into a layer (device, socket, FIFO,
    /// escaping symlink, unusable name, …).
    #[error("overlay entry {}: {message}", path.display())]
    Overlay { path: PathBuf, message: String },

    /// Two sources (render, the verifier, the overlay) produce one path.
    #[error(
        "`/{path}` is produced both by {first} and by {second}{}; remove it from one of them",
        overlay.as_ref().map(|p| format!(" ({})", p.display())).unwrap_or_default()
    )]
    Conflict {
        path: String,
        first: &'static str,
        second: &'static str,
        /// The overlay's file, when the overlay is one of the two.
        overlay: Option<PathBuf>,
    },

    /// The verifier binary cannot go into the image.
    #[error("verifier {}: {message}", path.display())]
    Verifier { path: PathBuf, message: String },

    /// A rendered-tree path the layer cannot hold.
    #[error("rendered tree: {0}")]
    Tree(#[from] TreeError),

    /// A value of the image metadata or options that cannot be used.
    #[error("{what}: {message}")]
    Invalid { what: String, message: String },

    /// Reading an input or writing the output failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The output path exists and is not something a build may replace.
    #[error("output {}: {message}", path.display())]
    Output { path: PathBuf, message: String },

    /// An OCI structure could not be built (a bug if it ever shows).
    #[error("OCI {what}: {message}")]
    Spec { what: &'static str, message: String },
}

/// The overlay scan's refusals keep their wording (and their variant) as build errors.
impl From<OverlayError> for PackageError {
    fn from(e: OverlayError) -> Self {
        match e {
            OverlayError::Refused { path, message } => PackageError::Overlay { path, message },
            OverlayError::Io { path, source } => PackageError::Io { path, source },
        }
    }
}

impl PackageError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PackageError + '_ {
        move |source| PackageError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn spec(what: &'static str) -> impl FnOnce(oci_spec::OciSpecError) -> PackageError {
        move |e| PackageError::Spec {
            what,
            message: e.to_string(),
        }
    }
}
