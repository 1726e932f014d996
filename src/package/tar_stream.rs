//! Writes the plan as a POSIX (pax) tar stream with nothing in it that
//! depends on the machine, the user or the clock.
//!
//! Every header is ustar: mtime = SOURCE_DATE_EPOCH, uid/gid 0, empty
//! user/group names, no atime/ctime, the plan's mode. A path or link target
//! too long for the ustar fields is carried by a pax extended header (`x`)
//! named `PaxHeaders/<name>` — never the GNU long-name extension and never
//! a name with a process id in it. Directories end in `/`. The archive
//! ends with two zero blocks.

use std::fs::File;
use std::io::{self, Read, Write};

use tar::{EntryType, Header};

use super::error::PackageError;
use super::plan::{Content, EntryKind, PlanEntry, Sha256Sum};
use super::progress::{Progress, Silent};
use super::sha256_pair::Sha256;
use super::source_date::SourceDate;

const BLOCK: usize = 512;
/// The buffer of [`Buffered`].
const COPY_BUF: usize = 1 << 20;
/// The most read from a file at once: small enough to be hashed (the file,
/// the stream, or both) while it is still in the processor's cache.
const READ: usize = 256 << 10;

/// Where the tar stream goes: bytes put, and room to read file contents
/// into directly, so that a file's bytes are copied once, from the page
/// cache into the buffer that is hashed and compressed.
pub trait TarOut {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Free room at the end of the stream's current buffer (never empty).
    fn room(&mut self) -> io::Result<&mut [u8]>;
    /// The first `n` bytes of the last [`room`](Self::room) now hold data:
    /// content of a file, also hashed into `file` when one is given (in the
    /// same pass as the stream's own hash, where the out keeps one).
    fn filled(&mut self, n: usize, file: Option<&mut Sha256>) -> io::Result<()>;
}

/// A [`TarOut`] over any writer, through a buffer of its own.
pub struct Buffered<W: Write> {
    inner: W,
    buf: Box<[u8]>,
    used: usize,
}

impl<W: Write> Buffered<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            buf: vec![0u8; COPY_BUF].into_boxed_slice(),
            used: 0,
        }
    }

    fn drain(&mut self) -> io::Result<()> {
        self.inner.write_all(&self.buf[..self.used])?;
        self.used = 0;
        Ok(())
    }

    /// Writes what is buffered and returns the writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.drain()?;
        Ok(self.inner)
    }
}

impl<W: Write> TarOut for Buffered<W> {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.used + bytes.len() > self.buf.len() {
            self.drain()?;
        }
        if bytes.len() >= self.buf.len() {
            return self.inner.write_all(bytes);
        }
        self.buf[self.used..self.used + bytes.len()].copy_from_slice(bytes);
        self.used += bytes.len();
        Ok(())
    }

    fn room(&mut self) -> io::Result<&mut [u8]> {
        if self.used == self.buf.len() {
            self.drain()?;
        }
        Ok(&mut self.buf[self.used..])
    }

    fn filled(&mut self, n: usize, file: Option<&mut Sha256>) -> io::Result<()> {
        let end = (self.used + n).min(self.buf.len());
        if let Some(f) = file {
            f.update(&self.buf[self.used..end]);
        }
        self.used = end;
        Ok(())
    }
}

/// Writes all entries then the end-of-archive marker, reporting each
/// entry and each read of file content to `progress`.
pub fn write_tar(
    entries: &[PlanEntry],
    mtime: SourceDate,
    out: &mut dyn TarOut,
    progress: &mut dyn Progress,
) -> Result<(), PackageError> {
    write_all(entries, mtime, out, progress, None)
}

/// [`write_tar`], hashing each file read from disk in the same pass, from
/// the bytes that go into the stream: returns the SHA-256 of every entry
/// that is such a file, in entry order (`None` for the others).
pub fn write_tar_summing(
    entries: &[PlanEntry],
    mtime: SourceDate,
    out: &mut dyn TarOut,
    progress: &mut dyn Progress,
) -> Result<Vec<Option<Sha256Sum>>, PackageError> {
    let mut sums = vec![None; entries.len()];
    write_all(entries, mtime, out, progress, Some(&mut sums))?;
    Ok(sums)
}

fn write_all(
    entries: &[PlanEntry],
    mtime: SourceDate,
    out: &mut dyn TarOut,
    progress: &mut dyn Progress,
    mut sums: Option<&mut [Option<Sha256Sum>]>,
) -> Result<(), PackageError> {
    for (i, e) in entries.iter().enumerate() {
        let files = match sums.as_deref_mut() {
            Some(s) => Files::Hash(&mut s[i]),
            None => Files::Copy,
        };
        write_entry(e, mtime, out, progress, files)?;
        if matches!(e.kind, EntryKind::File(_)) {
            progress.advance(0, 1);
        }
    }
    out.put(&[0u8; 2 * BLOCK])
        .map_err(|e| out_err(e, "end of archive"))
}

/// The size of the tar stream [`write_tar`] writes for `entries`, worked
/// out without reading any file.
pub fn tar_size(entries: &[PlanEntry], mtime: SourceDate) -> u64 {
    let mut count = Count {
        bytes: 0,
        scratch: [0; BLOCK],
    };
    let mut content = 0;
    for e in entries {
        // Counting cannot fail: `Count` takes every byte.
        let _ = write_entry(e, mtime, &mut count, &mut Silent, Files::Skip);
        if let EntryKind::File(c) = &e.kind {
            content += c.size();
        }
    }
    count.bytes + content + 2 * BLOCK as u64
}

/// What [`write_entry`] does with a file's content.
enum Files<'a> {
    /// Puts it into the stream.
    Copy,
    /// Puts it into the stream, and its SHA-256 into the slot when it is
    /// read from disk.
    Hash(&'a mut Option<Sha256Sum>),
    /// Leaves it out (the stream is only counted).
    Skip,
}

/// A [`TarOut`] that counts what is put.
struct Count {
    bytes: u64,
    scratch: [u8; BLOCK],
}

impl TarOut for Count {
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    fn room(&mut self) -> io::Result<&mut [u8]> {
        Ok(&mut self.scratch)
    }

    fn filled(&mut self, n: usize, file: Option<&mut Sha256>) -> io::Result<()> {
        if let Some(f) = file {
            f.update(&self.scratch[..n.min(BLOCK)]);
        }
        self.bytes += n as u64;
        Ok(())
    }
}

fn out_err(source: io::Error, what: &str) -> PackageError {
    PackageError::Io {
        path: format!("<layer stream: {what}>").into(),
        source,
    }
}

fn write_entry(
    e: &PlanEntry,
    mtime: SourceDate,
    out: &mut dyn TarOut,
    progress: &mut dyn Progress,
    files: Files<'_>,
) -> Result<(), PackageError> {
    let (name, entry_type, size, link) = match &e.kind {
        EntryKind::Dir => (format!("{}/", e.path), EntryType::Directory, 0, None),
        EntryKind::File(c) => (e.path.clone(), EntryType::Regular, c.size(), None),
        EntryKind::Symlink(t) => (e.path.clone(), EntryType::Symlink, 0, Some(t.as_str())),
    };
    let mut pax: Vec<(&str, &[u8])> = Vec::new();
    let mut header = base_header(mtime);
    header.set_entry_type(entry_type);
    header.set_mode(e.mode);
    header.set_size(size);
    let ustar = header
        .as_ustar_mut()
        .ok_or_else(|| out_err(io::Error::other("not a ustar header"), &e.path))?;
    if !set_ustar_name(ustar, name.as_bytes()) {
        pax.push(("path", name.as_bytes()));
        let short = truncate(name.as_bytes(), 100);
        ustar.name[..short.len()].copy_from_slice(short);
    }
    if let Some(target) = link {
        let t = target.as_bytes();
        if t.len() <= ustar.linkname.len() {
            ustar.linkname[..t.len()].copy_from_slice(t);
        } else {
            pax.push(("linkpath", t));
            ustar.linkname.copy_from_slice(truncate(t, 100));
        }
    }
    header.set_cksum();
    if !pax.is_empty() {
        write_pax(&name, &pax, mtime, out)?;
    }
    out.put(header.as_bytes())
        .map_err(|err| out_err(err, &e.path))?;
    if let EntryKind::File(content) = &e.kind {
        match (content, files) {
            (_, Files::Skip) => {}
            (Content::Memory { bytes, .. }, _) => {
                out.put(bytes).map_err(|err| out_err(err, &e.path))?;
                progress.advance(bytes.len() as u64, 0);
            }
            (Content::Disk { path, size, .. }, Files::Copy) => {
                copy_exact(path, *size, out, progress, false)?;
            }
            (Content::Disk { path, size, .. }, Files::Hash(sum)) => {
                *sum = copy_exact(path, *size, out, progress, true)?;
            }
        }
        pad(size, out).map_err(|err| out_err(err, &e.path))?;
    }
    Ok(())
}

fn base_header(mtime: SourceDate) -> Header {
    let mut h = Header::new_ustar();
    h.set_mtime(mtime.seconds());
    h.set_uid(0);
    h.set_gid(0);
    h
}

/// Fits `name` into ustar's name (100) or prefix (155) + `/` + name fields.
fn set_ustar_name(ustar: &mut tar::UstarHeader, name: &[u8]) -> bool {
    if name.len() <= ustar.name.len() {
        ustar.name[..name.len()].copy_from_slice(name);
        return true;
    }
    // Split at a `/` so that the prefix fits 155 and the rest fits 100;
    // a trailing `/` (directories) stays with the name part.
    let body = name.strip_suffix(b"/").unwrap_or(name);
    for (i, &b) in body.iter().enumerate().rev() {
        if b != b'/' {
            continue;
        }
        let (prefix, rest) = (&name[..i], &name[i + 1..]);
        if rest.len() > ustar.name.len() {
            return false;
        }
        if prefix.len() <= ustar.prefix.len() {
            ustar.prefix[..prefix.len()].copy_from_slice(prefix);
            ustar.name[..rest.len()].copy_from_slice(rest);
            return true;
        }
    }
    false
}

fn truncate(b: &[u8], n: usize) -> &[u8] {
    &b[..b.len().min(n)]
}

/// One pax extended header entry holding `records` for the next entry.
fn write_pax(
    name: &str,
    records: &[(&str, &[u8])],
    mtime: SourceDate,
    out: &mut dyn TarOut,
) -> Result<(), PackageError> {
    let mut data = Vec::new();
    for (key, value) in records {
        // "<len> <key>=<value>\n", where <len> counts its own digits.
        let rest = key.len() + value.len() + 3;
        let mut len = rest + 1;
        while len != rest + len.to_string().len() {
            len = rest + len.to_string().len();
        }
        data.extend_from_slice(format!("{len} {key}=").as_bytes());
        data.extend_from_slice(value);
        data.push(b'\n');
    }
    let mut h = base_header(mtime);
    h.set_entry_type(EntryType::XHeader);
    h.set_mode(0o644);
    h.set_size(data.len() as u64);
    let base = name.trim_end_matches('/');
    let base = base.rsplit('/').next().unwrap_or(base);
    let pax_name = format!("PaxHeaders/{base}");
    // Cut at a character boundary so the name stays valid UTF-8.
    let mut cut = pax_name.len().min(100);
    while !pax_name.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(u) = h.as_ustar_mut() {
        u.name[..cut].copy_from_slice(&pax_name.as_bytes()[..cut]);
    }
    h.set_cksum();
    let err = |e| out_err(e, name);
    out.put(h.as_bytes()).map_err(err)?;
    out.put(&data).map_err(err)?;
    pad(data.len() as u64, out).map_err(err)
}

fn pad(len: u64, out: &mut dyn TarOut) -> io::Result<()> {
    let rem = (len % BLOCK as u64) as usize;
    if rem != 0 {
        out.put(&[0u8; BLOCK][..BLOCK - rem])?;
    }
    Ok(())
}

/// Streams exactly `size` bytes of `path`, read straight into the
/// stream's buffer; a file that changed size since it was listed is an
/// error, never a silently short or long entry. With `hash`, returns the
/// SHA-256 of the bytes streamed, each piece hashed (with the stream's own
/// hash, where the out keeps one) right after it is read, while it is
/// still in the processor's cache.
fn copy_exact(
    path: &std::path::Path,
    size: u64,
    out: &mut dyn TarOut,
    progress: &mut dyn Progress,
    hash: bool,
) -> Result<Option<Sha256Sum>, PackageError> {
    let mut f = open_regular(path)?;
    let mut hasher = hash.then(Sha256::new);
    let mut left = size;
    while left > 0 {
        let room = out
            .room()
            .map_err(|e| out_err(e, &path.display().to_string()))?;
        let want = room
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX))
            .min(READ);
        let n = read_some(&mut f, &mut room[..want]).map_err(PackageError::io(path))?;
        if n == 0 {
            return Err(PackageError::Overlay {
                path: path.to_path_buf(),
                message: "the file shrank while it was being packaged".into(),
            });
        }
        out.filled(n, hasher.as_mut())
            .map_err(|e| out_err(e, &path.display().to_string()))?;
        progress.advance(n as u64, 0);
        left -= n as u64;
    }
    let mut probe = [0u8; 1];
    if read_some(&mut f, &mut probe).map_err(PackageError::io(path))? != 0 {
        return Err(PackageError::Overlay {
            path: path.to_path_buf(),
            message: "the file grew while it was being packaged".into(),
        });
    }
    Ok(hasher.map(Sha256::finalize))
}

/// Opens the overlay file `path`, which must still be the regular file the
/// listing saw: not replaced by a link (not followed) or by a FIFO or a
/// device (opened without blocking, then refused).
fn open_regular(path: &std::path::Path) -> Result<File, PackageError> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(PackageError::io(path))?;
    if !f.metadata().map_err(PackageError::io(path))?.is_file() {
        return Err(PackageError::Overlay {
            path: path.to_path_buf(),
            message: "is no longer a regular file".into(),
        });
    }
    Ok(f)
}

/// One `read`, retried when a signal interrupted it.
fn read_some(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match f.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::progress::Silent;

    fn entry(path: &str, mode: u32, kind: EntryKind) -> PlanEntry {
        PlanEntry {
            path: path.into(),
            mode,
            kind,
        }
    }

    #[test]
    fn headers_are_clean_and_long_names_use_pax() {
        let long_dir = "d".repeat(120);
        let long_file = format!("{long_dir}/{}", "f".repeat(110));
        let long_target = "t/".repeat(60);
        let entries = vec![
            entry("etc", 0o755, EntryKind::Dir),
            entry(
                "etc/a",
                0o600,
                EntryKind::File(Content::memory(b"hello".to_vec())),
            ),
            entry("etc/l", 0o777, EntryKind::Symlink(long_target.clone())),
            entry(&long_dir, 0o755, EntryKind::Dir),
            entry(
                &long_file,
                0o644,
                EntryKind::File(Content::memory(vec![7; 600])),
            ),
        ];
        let mut out = Buffered::new(Vec::new());
        write_tar(
            &entries,
            SourceDate::new(1234).unwrap(),
            &mut out,
            &mut Silent,
        )
        .unwrap();
        let bytes = out.into_inner().unwrap();
        assert_eq!(bytes.len() % BLOCK, 0);
        assert!(bytes.ends_with(&[0u8; 1024]));

        let mut ar = tar::Archive::new(bytes.as_slice());
        let mut seen = Vec::new();
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let h = e.header().clone();
            assert!(h.as_ustar().is_some(), "ustar magic");
            assert_eq!(h.mtime().unwrap(), 1234);
            assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
            assert_eq!(h.username_bytes(), Some(&b""[..]));
            assert_eq!(h.groupname_bytes(), Some(&b""[..]));
            let path = e.path().unwrap().to_string_lossy().into_owned();
            let link = e
                .link_name()
                .unwrap()
                .map(|l| l.to_string_lossy().into_owned());
            let mut body = Vec::new();
            e.read_to_end(&mut body).unwrap();
            seen.push((path, h.mode().unwrap(), link, body.len()));
        }
        assert_eq!(
            seen,
            [
                ("etc/".into(), 0o755, None, 0),
                ("etc/a".into(), 0o600, None, 5),
                ("etc/l".into(), 0o777, Some(long_target.clone()), 0),
                (format!("{long_dir}/"), 0o755, None, 0),
                (long_file.clone(), 0o644, None, 600),
            ]
        );
        // The pax header is named without any process id.
        assert!(bytes.windows(11).any(|w| w == b"PaxHeaders/"));
    }

    #[test]
    fn ustar_prefix_split_and_pax_record_length() {
        let mut h = Header::new_ustar();
        let name = format!("{}/{}", "p".repeat(150), "n".repeat(90));
        assert!(set_ustar_name(h.as_ustar_mut().unwrap(), name.as_bytes()));
        assert_eq!(h.path().unwrap().to_string_lossy(), name);
        let pax = |records: &[(&str, &[u8])]| {
            let mut out = Buffered::new(Vec::new());
            write_pax("x", records, SourceDate::default(), &mut out).unwrap();
            out.into_inner().unwrap()
        };
        // The length counts its own digits: "8 a=bcd\n" is 8 bytes.
        assert_eq!(&pax(&[("a", b"bcd")])[512..520], b"8 a=bcd\n");
        let v = vec![b'v'; 94];
        assert_eq!(&pax(&[("k", &v)])[512..518], b"101 k=");
    }

    #[test]
    fn files_are_hashed_from_the_bytes_packed_and_the_size_is_known_ahead() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..3 * READ + 77).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(dir.path().join("big"), &big).unwrap();
        std::fs::write(dir.path().join("empty"), b"").unwrap();
        let disk = |name: &str, size: usize| {
            EntryKind::File(Content::Disk {
                path: dir.path().join(name),
                size: size as u64,
                stamp: Default::default(),
                sha256: None,
            })
        };
        let long = format!("{}/{}", "d".repeat(120), "f".repeat(110));
        let entries = vec![
            entry("opt", 0o755, EntryKind::Dir),
            entry(&long, 0o644, disk("big", big.len())),
            entry("opt/empty", 0o600, disk("empty", 0)),
            entry(
                "opt/mem",
                0o644,
                EntryKind::File(Content::memory(b"m".to_vec())),
            ),
            entry("opt/l", 0o777, EntryKind::Symlink("t/".repeat(60))),
        ];
        let date = SourceDate::new(7).unwrap();
        let mut plain = Buffered::new(Vec::new());
        write_tar(&entries, date, &mut plain, &mut Silent).unwrap();
        let plain = plain.into_inner().unwrap();
        let mut summed = Buffered::new(Vec::new());
        let sums = write_tar_summing(&entries, date, &mut summed, &mut Silent).unwrap();
        assert_eq!(summed.into_inner().unwrap(), plain, "the same stream");
        let sha = |b: &[u8]| -> Sha256Sum { <sha2::Sha256 as sha2::Digest>::digest(b).into() };
        assert_eq!(
            sums,
            [None, Some(sha(&big)), Some(sha(b"")), None, None],
            "files read from disk are hashed, the rest are not"
        );
        assert_eq!(tar_size(&entries, date), plain.len() as u64);
    }

    #[test]
    fn a_file_replaced_by_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = entry(
            "f",
            0o644,
            EntryKind::File(Content::Disk {
                path: p.clone(),
                size: 3,
                stamp: Default::default(),
                sha256: None,
            }),
        );
        let mut out = Buffered::new(Vec::new());
        let err =
            write_tar_summing(&[e], SourceDate::default(), &mut out, &mut Silent).unwrap_err();
        let err = err.to_string();
        assert!(
            err.contains("no longer a regular file") && err.contains("/f"),
            "{err}"
        );
    }

    #[test]
    fn a_file_that_changed_size_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"abc").unwrap();
        for size in [2, 4] {
            let e = entry(
                "f",
                0o644,
                EntryKind::File(Content::Disk {
                    path: p.clone(),
                    size,
                    stamp: Default::default(),
                    sha256: None,
                }),
            );
            let mut out = Buffered::new(Vec::new());
            let err = write_tar(&[e], SourceDate::default(), &mut out, &mut Silent).unwrap_err();
            assert!(
                err.to_string().contains("while it was being packaged"),
                "{err}"
            );
        }
    }
}
