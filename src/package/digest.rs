//! SHA-256 digests as OCI writes them (`sha256:<64 hex>`), and a writer that
//! hashes and counts what passes through it.
//!
//! The layer is hashed while it is written — once over the tar stream (the
//! diff_id) and once over the compressed stream (the blob digest) — so no
//! byte is ever read back from disk to be hashed.

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// A `sha256:<hex>` content digest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Digest {
    hex: String,
}

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self::from_sha256(Sha256::new_with_prefix(bytes))
    }

    /// The digest a hasher has computed so far.
    pub fn from_sha256(hasher: Sha256) -> Self {
        Self::from_bytes(hasher.finalize().into())
    }

    /// The digest whose 32 bytes are `sum`.
    pub fn from_bytes(sum: [u8; 32]) -> Self {
        Self { hex: hex(&sum) }
    }

    /// The 64 hex digits, which name the blob under `blobs/sha256/`.
    pub fn hex(&self) -> &str {
        &self.hex
    }
}

/// `bytes` as lowercase hex digits, as digests are written.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex)
    }
}

impl FromStr for Digest {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let hex = s
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("digest `{s}` is not `sha256:<hex>`"))?;
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(format!(
                "digest `{s}` does not have 64 lowercase hexadecimal digits"
            ));
        }
        Ok(Self { hex: hex.into() })
    }
}

impl TryFrom<String> for Digest {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<Digest> for String {
    fn from(d: Digest) -> String {
        d.to_string()
    }
}

/// A blob's digest and size: what a descriptor says of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlobRef {
    pub digest: Digest,
    pub size: u64,
}

/// Passes bytes on to `inner`, hashing and counting them on the way.
pub struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    len: u64,
}

impl<W: Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            len: 0,
        }
    }

    /// The inner writer, the digest and the number of bytes written.
    pub fn finish(self) -> (W, Digest, u64) {
        (self.inner, Digest::from_sha256(self.hasher), self.len)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Passes bytes read from `inner` on, hashing and counting them on the way
/// (a blob is checked against its digest in the same pass that unpacks it).
pub struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    len: u64,
}

impl<R: io::Read> HashingReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            len: 0,
        }
    }

    /// The digest and the number of bytes read so far.
    pub fn finish(self) -> (Digest, u64) {
        (Digest::from_sha256(self.hasher), self.len)
    }
}

impl<R: io::Read> io::Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest_and_writer_agree() {
        // sha256("abc") from FIPS 180-2.
        let abc = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(Digest::of(b"abc").to_string(), abc);
        let mut w = HashingWriter::new(Vec::new());
        w.write_all(b"a").unwrap();
        w.write_all(b"bc").unwrap();
        let (inner, d, n) = w.finish();
        assert_eq!(
            (inner.as_slice(), d.to_string().as_str(), n),
            (&b"abc"[..], abc, 3)
        );
    }

    #[test]
    fn parses_only_sha256_hex() {
        assert!("sha256:abc".parse::<Digest>().is_err());
        assert!("sha512:".parse::<Digest>().is_err());
        let upper = format!("sha256:{}", "A".repeat(64));
        assert!(upper.parse::<Digest>().is_err());
        let ok = format!("sha256:{}", "a".repeat(64));
        assert_eq!(ok.parse::<Digest>().unwrap().to_string(), ok);
    }
}
