//! Layer compression: zstd (the default) or gzip (for consumers that cannot
//! read zstd layers), each at a fixed level and with fixed framing so the
//! same tar always compresses to the same bytes.
//!
//! A zstd layer is a sequence of independent frames, one per 4 MiB chunk of
//! the tar stream (`frames`), each compressed single-threaded at level 3
//! with its content size and checksum, or stored raw when the chunk is
//! already compressed (`incompressible`, `raw_frame`). Chunk boundaries and
//! frames depend on the tar alone, so the blob is the same for any worker
//! count; a zstd decoder reads the frames one after another as one stream.
//! Changing the chunk size, the level, the flags or the raw-frame rule
//! would change every digest, so they are constants. gzip is one stream,
//! written on one core; its header carries no timestamp, no file name and
//! OS byte 255 ("unknown").
//!
//! The codec libraries are pinned by Cargo.lock (zstd 1.5.x bundled by
//! zstd-sys, flate2's Rust backend). A different codec version may compress
//! the same tar differently — the diff_id never changes, the blob digest
//! can — which is why the reproducibility promise is "same input and same
//! nodeimg version", and why the layer caches' keys name the zstd version.

use std::io::Write;

use serde::{Deserialize, Serialize};

/// The zstd level (`zstd -3`, the CLI's default).
pub const ZSTD_LEVEL: i32 = 3;
/// The gzip level (`gzip -6`, the CLI's default).
pub const GZIP_LEVEL: u32 = 6;

#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Compression {
    /// zstd level 3 (the default).
    #[default]
    Zstd,
    /// gzip level 6, for consumers that cannot read zstd layers.
    Gzip,
}

impl Compression {
    /// The OCI layer media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Compression::Zstd => "application/vnd.oci.image.layer.v1.tar+zstd",
            Compression::Gzip => "application/vnd.oci.image.layer.v1.tar+gzip",
        }
    }

    pub fn level(self) -> i32 {
        match self {
            Compression::Zstd => ZSTD_LEVEL,
            Compression::Gzip => GZIP_LEVEL as i32,
        }
    }
}

/// The zstd library's version number (`10507` for 1.5.7), part of every
/// layer cache key: another zstd may make other bytes of the same tar.
pub fn zstd_version() -> u32 {
    zstd::zstd_safe::version_number()
}

/// A gzip writer over `W` with the fixed header.
pub fn gzip<W: Write>(out: W) -> flate2::write::GzEncoder<W> {
    flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(out, flate2::Compression::new(GZIP_LEVEL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_header_has_no_time_name_or_os() {
        let mut c = gzip(Vec::new());
        c.write_all(b"hello").unwrap();
        let gz = c.finish().unwrap();
        // ID1 ID2 CM FLG MTIME(4) XFL OS
        assert_eq!(&gz[..4], &[0x1f, 0x8b, 8, 0]);
        assert_eq!(&gz[4..8], &[0, 0, 0, 0]);
        assert_eq!(gz[9], 255);
        let mut d = flate2::read::GzDecoder::new(gz.as_slice());
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut d, &mut out).unwrap();
        assert_eq!(out, b"hello");
    }
}
