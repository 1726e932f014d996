//! Layer compression: zstd (the default) or gzip (for consumers that cannot
//! read zstd layers), each at a fixed level and with fixed framing so the
//! same tar always compresses to the same bytes.
//!
//! zstd runs in its multi-threaded mode, always with at least one worker:
//! in that mode the output does not depend on the worker count (zstd
//! splits the input into jobs whose size depends on the level only), while
//! the single-threaded mode (0 workers) produces different bytes. Changing
//! the mode, the level or the checksum flag would change every digest, so
//! they are constants. gzip's header carries no timestamp, no file name and
//! OS byte 255 ("unknown").
//!
//! The codec libraries are pinned by Cargo.lock (zstd 1.5.x bundled by
//! zstd-sys, flate2's Rust backend). A different codec version may compress
//! the same tar differently — the diff_id never changes, the blob digest
//! can — which is why the reproducibility promise is "same input and same
//! nodeimg version".

use std::io::{self, Write};

use serde::Serialize;

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

/// A compressing writer over `W`.
pub enum Compressor<W: Write> {
    Zstd(zstd::stream::write::Encoder<'static, W>),
    Gzip(flate2::write::GzEncoder<W>),
}

impl<W: Write> Compressor<W> {
    /// `workers` is clamped to at least 1 (see the module docs).
    pub fn new(kind: Compression, workers: u32, out: W) -> io::Result<Self> {
        Ok(match kind {
            Compression::Zstd => {
                let mut enc = zstd::stream::write::Encoder::new(out, ZSTD_LEVEL)?;
                enc.multithread(workers.max(1))?;
                enc.include_checksum(true)?;
                Compressor::Zstd(enc)
            }
            Compression::Gzip => Compressor::Gzip(
                flate2::GzBuilder::new()
                    .mtime(0)
                    .operating_system(255)
                    .write(out, flate2::Compression::new(GZIP_LEVEL)),
            ),
        })
    }

    /// Ends the stream and returns the inner writer.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Compressor::Zstd(e) => e.finish(),
            Compressor::Gzip(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for Compressor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Compressor::Zstd(e) => e.write(buf),
            Compressor::Gzip(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Compressor::Zstd(e) => e.flush(),
            Compressor::Gzip(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(kind: Compression, workers: u32, data: &[u8]) -> Vec<u8> {
        let mut c = Compressor::new(kind, workers, Vec::new()).unwrap();
        // Odd-sized writes, as the tar writer makes them.
        for chunk in data.chunks(7919) {
            c.write_all(chunk).unwrap();
        }
        c.finish().unwrap()
    }

    /// Data larger than one zstd job at level 3, so workers really split it.
    fn sample() -> Vec<u8> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..12 << 20)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 3 == 0 {
                    (x >> 56) as u8
                } else {
                    (i % 251) as u8
                }
            })
            .collect()
    }

    #[test]
    fn zstd_bytes_do_not_depend_on_worker_count() {
        let data = sample();
        let one = compress(Compression::Zstd, 1, &data);
        assert_eq!(one, compress(Compression::Zstd, 2, &data));
        assert_eq!(one, compress(Compression::Zstd, 4, &data));
        assert_eq!(
            one,
            compress(Compression::Zstd, 0, &data),
            "0 is clamped to 1"
        );
        assert_eq!(zstd::decode_all(one.as_slice()).unwrap(), data);
    }

    #[test]
    fn gzip_header_has_no_time_name_or_os() {
        let gz = compress(Compression::Gzip, 1, b"hello");
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
