//! The verifier the image carries: the `nodeimg` executable that the
//! rendered units run as `/usr/local/bin/nodeimg`, checked to run on the
//! blueprint's distribution before it goes into a layer.
//!
//! A binary linked against a newer glibc than the node has fails at boot
//! with "version `GLIBC_2.xx' not found" — and the verify unit, hence
//! kubelet, never starts. `build` therefore reads the binary's needed
//! symbol versions (see `elf`) and compares the newest with the glibc the
//! blueprint's release ships ([`distro_glibc`]). A statically linked binary
//! (no program interpreter) needs no glibc and runs anywhere.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use sha1::Sha1;
use sha2::{Digest as _, Sha256};

use crate::blueprint::model::Distro;
use crate::blueprint::value::Version;

use super::elf::{self, GlibcVersion};
use super::error::PackageError;
use crate::overlay::Stamp;

/// Where the units find the verifier on the node.
pub const NODE_PATH: &str = "usr/local/bin/nodeimg";

/// The section the verifier's crate list is in: the one cargo auditable
/// defines (`.dep-v0`; read by `sbom::crates`).
pub const CRATE_LIST_SECTION: &str = ".dep-v0";

/// A verifier binary: checked once, its bytes read again only when its
/// layer is packed or its digests are not remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verifier {
    source: PathBuf,
    body: Body,
    /// Its digests, computed once when first asked for.
    sums: OnceLock<Sums>,
    /// The file's identity on disk while it was read (`None`: it changed
    /// meanwhile, or the bytes did not come from a file).
    stamp: Option<Stamp>,
    glibc: Option<GlibcVersion>,
    /// Linked statically: it runs with no userland beside it, as the node image's own
    /// applier container does.
    static_linked: bool,
    /// The optional features it was built with (`push`: registry access), from its
    /// `.nodeimg_features` section; `None` when it has none (not a nodeimg build, or an
    /// older one).
    features: Option<Vec<String>>,
    /// Its [`CRATE_LIST_SECTION`], as stored (compressed), if it has one.
    crate_list: Option<Arc<[u8]>>,
}

/// Where a verifier's bytes are, as [`Verifier::bytes`] tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bytes<'a> {
    Held(&'a Arc<[u8]>),
    File {
        path: &'a Path,
        size: u64,
        stamp: Stamp,
    },
}

/// Where a verifier's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    /// Held in memory: a stand-in, or a file that changed while it was
    /// checked or too recently for its stamp to stand for its content (see
    /// `overlay::RACY_MARGIN`).
    Memory(Arc<[u8]>),
    /// The file at `source`, which holds the checked bytes as long as its
    /// stamp does: read when its layer is packed (and then held to that
    /// stamp) or its digests are computed. A build whose layers come from a
    /// cache reads no more of it than the pages the check looked at.
    /// `resolved`: `source` with its links followed, where the layer reads
    /// it (the packer opens files without following links).
    File {
        size: u64,
        stamp: Stamp,
        resolved: PathBuf,
    },
}

/// Reads the file at `path` and its identity, which counts only when it
/// was the same before and after the read. The bytes go straight into the
/// shared buffer the layer and the SBOM read them from (a `Vec` made into
/// an `Arc<[u8]>` would be copied once more: tens of MB).
fn read_stamped(path: &Path) -> std::io::Result<(Arc<[u8]>, Option<Stamp>)> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let before = f.metadata()?;
    let len = usize::try_from(before.len()).map_err(std::io::Error::other)?;
    // An iterator of known length is collected in place, without a `Vec`.
    let mut bytes: Arc<[u8]> = std::iter::repeat_n(0u8, len).collect();
    let buf = Arc::get_mut(&mut bytes).ok_or_else(|| std::io::Error::other("shared buffer"))?;
    match f.read_exact(buf) {
        // It shrank meanwhile: whatever it holds now, unstamped.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Ok((std::fs::read(path)?.into(), None));
        }
        r => r?,
    }
    // A file that grew meanwhile is not what was stamped: read it whole.
    let mut more = [0u8; 1];
    if f.read(&mut more)? != 0 {
        let mut all = bytes.to_vec();
        all.push(more[0]);
        f.read_to_end(&mut all)?;
        return Ok((all.into(), None));
    }
    let after = f.metadata()?;
    let held = Stamp::of(&before) == Stamp::of(&after) && after.len() == len as u64;
    Ok((bytes, held.then(|| Stamp::of(&after))))
}

/// Maps the file at `path` when its stamp is settled (older than the racy
/// margin) and holds over the mapping's life; `None` otherwise, and the
/// caller reads it into memory instead.
fn map_settled(path: &Path) -> std::io::Result<Option<(memmap2::Mmap, Stamp)>> {
    let f = std::fs::File::open(path)?;
    let before = f.metadata()?;
    let stamp = Stamp::of(&before);
    let settled = crate::overlay::settled_before(std::time::SystemTime::now());
    if !before.is_file() || before.len() == 0 || !stamp.settled(settled) {
        return Ok(None);
    }
    // SAFETY: the mapping is read-only and private, and lives only while
    // the binary is checked (`from_file`); nodeimg never writes the file.
    // Another program truncating it during those milliseconds would fault
    // the read, a risk every reader of mapped files (git's packs, ripgrep)
    // accepts; a change of any kind shows in the stamp compared below and
    // again when the layer is packed.
    let map = unsafe { memmap2::Mmap::map(&f)? };
    Ok(Some((map, stamp)))
}

/// The file's stamp now, if it is still `stamp` with `size` bytes.
fn unchanged(path: &Path, size: u64, stamp: &Stamp) -> std::io::Result<bool> {
    let now = std::fs::metadata(path)?;
    Ok(now.len() == size && Stamp::of(&now) == *stamp)
}

/// The verifier's SHA-256 (its layer's cache keys, the SBOM) and SHA-1
/// (SPDX requires one per file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sums {
    pub sha256: [u8; 32],
    pub sha1: [u8; 20],
}

impl Sums {
    /// Both digests of the `size` bytes `read` yields, a block at a time,
    /// SHA-1 beside SHA-256 on its own core: a large file is never held
    /// whole.
    fn of_stream(mut read: impl std::io::Read, size: u64) -> std::io::Result<Self> {
        const BLOCK: usize = 4 << 20;
        let mut sha256 = Sha256::new();
        let mut sha1 = Sha1::new();
        let (mut a, mut b) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
        let mut left = size;
        let mut fill = |buf: &mut Vec<u8>, left: &mut u64| -> std::io::Result<usize> {
            let want = usize::try_from((*left).min(BLOCK as u64)).unwrap_or(BLOCK);
            read.read_exact(&mut buf[..want])?;
            *left -= want as u64;
            Ok(want)
        };
        let mut n = fill(&mut a, &mut left)?;
        while n > 0 {
            // Hash this block on two cores while the next one is read.
            let block = &a[..n];
            let sha1 = &mut sha1;
            let next = std::thread::scope(|s| {
                s.spawn(move || sha1.update(block));
                sha256.update(block);
                if left > 0 {
                    fill(&mut b, &mut left)
                } else {
                    Ok(0)
                }
            })?;
            std::mem::swap(&mut a, &mut b);
            n = next;
        }
        let mut probe = [0u8; 1];
        if read.read(&mut probe)? != 0 {
            return Err(std::io::Error::other("it grew while it was read"));
        }
        Ok(Self {
            sha256: sha256.finalize().into(),
            sha1: sha1.finalize().into(),
        })
    }

    /// Both digests of `bytes`; for a large binary each on its own core.
    pub fn of(bytes: &[u8]) -> Self {
        let sha1 = || -> [u8; 20] { Sha1::digest(bytes).into() };
        if bytes.len() < 1 << 20 {
            return Self {
                sha256: Sha256::digest(bytes).into(),
                sha1: sha1(),
            };
        }
        std::thread::scope(|s| {
            let other = s.spawn(sha1);
            let sha256 = Sha256::digest(bytes).into();
            Self {
                sha256,
                sha1: other.join().unwrap_or_else(|_| sha1()),
            }
        })
    }
}

/// The distribution a verifier must run on.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    pub distro: Distro,
    pub version: &'a Version,
    /// OCI architecture of the image (`amd64`, `arm64`).
    pub architecture: &'a str,
}

impl Verifier {
    /// Reads `path` and checks that it runs on `target`: an ELF executable
    /// for the image's architecture that needs no newer glibc than the
    /// distribution ships.
    pub fn from_file(path: &Path, target: &Target<'_>) -> Result<Self, PackageError> {
        let mapped = map_settled(path).map_err(PackageError::io(path))?;
        if let Some((map, stamp)) = &mapped {
            let size = map.len() as u64;
            let checked = Self::check(path, map, target)?;
            if unchanged(path, size, stamp).map_err(PackageError::io(path))? {
                let resolved = std::fs::canonicalize(path).map_err(PackageError::io(path))?;
                return Ok(Self {
                    body: Body::File {
                        size,
                        stamp: *stamp,
                        resolved,
                    },
                    stamp: Some(*stamp),
                    ..checked
                });
            }
        }
        drop(mapped);
        let (bytes, stamp) = read_stamped(path).map_err(PackageError::io(path))?;
        Ok(Self {
            body: Body::Memory(Arc::clone(&bytes)),
            stamp,
            ..Self::check(path, &bytes, target)?
        })
    }

    /// Checks `bytes`, the content of `path`, for `target`: what it needs
    /// to run, and what it says of itself (features, crate list). The
    /// result's body and stamp are the caller's to set.
    fn check(path: &Path, bytes: &[u8], target: &Target<'_>) -> Result<Self, PackageError> {
        let refuse = |message: String| PackageError::Verifier {
            path: path.to_path_buf(),
            message,
        };
        let info = elf::inspect(bytes)
            .map_err(|e| refuse(format!("{e}; expected a nodeimg executable")))?;
        if info.machine.oci_arch() != Some(target.architecture) {
            return Err(refuse(format!(
                "built for {}, but the image is for {}; give a verifier built for {} with --verifier",
                info.machine, target.architecture, target.architecture
            )));
        }
        let glibc = match (&info.interpreter, info.glibc) {
            (None, _) => None,
            (Some(_), None) => None,
            (Some(_), Some((needed, name))) => {
                let Some((ships, source)) = distro_glibc(target.distro, target.version) else {
                    return Err(refuse(format!(
                        "needs glibc {needed} ({name}), and nodeimg does not know which glibc {} {} ships; \
                         give a statically linked verifier with --verifier \
                         (cargo build --release --no-default-features --target x86_64-unknown-linux-musl)",
                        target.distro.as_str(),
                        target.version
                    )));
                };
                if needed > ships {
                    return Err(refuse(format!(
                        "needs glibc {needed} (symbol version {name}), but {} {} ships glibc {ships} ({source}); \
                         it would not start on the node. Give a verifier built on {} {} or older, or a \
                         statically linked one, with --verifier PATH \
                         (e.g. cargo build --release --no-default-features --target x86_64-unknown-linux-musl)",
                        target.distro.as_str(),
                        target.version,
                        target.distro.as_str(),
                        target.version
                    )));
                }
                Some(needed)
            }
        };
        let features = elf::section(bytes, crate::features::SECTION)
            .ok()
            .flatten()
            .map(crate::features::parse);
        let crate_list = elf::section(bytes, CRATE_LIST_SECTION)
            .map_err(|e| refuse(format!("{e}; expected a nodeimg executable")))?
            .map(Arc::from);
        Ok(Self {
            source: path.to_path_buf(),
            static_linked: info.interpreter.is_none(),
            features,
            crate_list,
            body: Body::Memory(Arc::from(&[][..])),
            sums: OnceLock::new(),
            stamp: None,
            glibc,
        })
    }

    /// A verifier taken as it is, without any check: for tests, and for the
    /// golden digests, which are built with a fixed stand-in so that they
    /// do not change whenever nodeimg's own code does.
    pub fn unchecked(source: impl Into<PathBuf>, bytes: Vec<u8>) -> Self {
        let bytes: Arc<[u8]> = bytes.into();
        let crate_list = elf::section(&bytes, CRATE_LIST_SECTION)
            .ok()
            .flatten()
            .map(Arc::from);
        Self {
            source: source.into(),
            body: Body::Memory(bytes),
            sums: OnceLock::new(),
            stamp: None,
            glibc: None,
            static_linked: false,
            features: None,
            crate_list,
        }
    }

    /// The fixed stand-in the golden image digests are built with: see
    /// [`stand_in_elf`].
    pub fn golden_stand_in() -> Self {
        Self {
            source: "<golden stand-in verifier>".into(),
            body: Body::Memory(stand_in_elf().into()),
            sums: OnceLock::new(),
            stamp: None,
            glibc: None,
            static_linked: true,
            features: None,
            crate_list: None,
        }
    }

    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        match &self.body {
            Body::Memory(bytes) => bytes.len() as u64,
            Body::File { size, .. } => *size,
        }
    }

    /// Where its bytes are: held in memory, or in the file, to be read
    /// under its stamp.
    pub fn bytes(&self) -> Bytes<'_> {
        match &self.body {
            Body::Memory(bytes) => Bytes::Held(bytes),
            Body::File {
                size,
                stamp,
                resolved,
            } => Bytes::File {
                path: resolved,
                size: *size,
                stamp: *stamp,
            },
        }
    }

    /// Whether the file still holds the bytes that were checked; an error
    /// naming the file when it changed (a layer packed from it would carry
    /// an unchecked binary).
    pub fn still_unchanged(&self) -> Result<(), PackageError> {
        let Body::File { size, stamp, .. } = &self.body else {
            return Ok(());
        };
        if unchanged(&self.source, *size, stamp).map_err(PackageError::io(&self.source))? {
            return Ok(());
        }
        Err(PackageError::Verifier {
            path: self.source.clone(),
            message: "it changed while the image was built; build again".into(),
        })
    }

    /// Its [`CRATE_LIST_SECTION`] as stored, if it has one.
    pub fn crate_list(&self) -> Option<&[u8]> {
        self.crate_list.as_deref()
    }

    /// Its SHA-256 and SHA-1, computed on first use (reading the file again
    /// when its bytes stay on disk, and holding it to its stamp).
    pub fn sums(&self) -> Result<&Sums, PackageError> {
        if let Some(s) = self.sums.get() {
            return Ok(s);
        }
        let sums = match &self.body {
            Body::Memory(bytes) => Sums::of(bytes),
            Body::File { size, .. } => {
                let f =
                    std::fs::File::open(&self.source).map_err(PackageError::io(&self.source))?;
                let sums = Sums::of_stream(f, *size).map_err(PackageError::io(&self.source))?;
                self.still_unchanged()?;
                sums
            }
        };
        Ok(self.sums.get_or_init(|| sums))
    }

    /// Takes digests known from elsewhere (a memory keyed by the file's
    /// identity) instead of computing them; false when they were computed
    /// or taken already.
    pub fn set_sums(&self, sums: Sums) -> bool {
        self.sums.set(sums).is_ok()
    }

    /// The file's identity on disk when it was read, if it held still.
    pub fn stamp(&self) -> Option<&Stamp> {
        self.stamp.as_ref()
    }

    /// The newest glibc the binary needs; `None` for a static binary.
    pub fn glibc(&self) -> Option<GlibcVersion> {
        self.glibc
    }

    /// Whether the image can run as its own applier (`rollout plan`'s default): the
    /// verifier is static (the image holds no userland to load it) and can pull from a
    /// registry; otherwise why not.
    pub fn self_applier(&self) -> Result<(), String> {
        let pulls = self
            .features
            .as_ref()
            .is_some_and(|f| f.iter().any(|n| n == "push"));
        match (self.static_linked, pulls) {
            (true, true) => Ok(()),
            (false, _) => Err(
                "its nodeimg is dynamically linked, and the image holds no loader or libc to run it \
                 as a container"
                    .into(),
            ),
            (true, false) => Err(
                "its nodeimg is built without registry access (the `push` feature), so it cannot \
                 pull the image it is to apply"
                    .into(),
            ),
        }
    }
}

/// A 132-byte static x86-64 executable made by nodeimg that only exits
/// with status 2 ("unusable"). golden/*/image.txt is built with it in place
/// of the real verifier, so the golden digests change when the rendered
/// configuration or the overlay does, not whenever nodeimg's own code does;
/// `nodeimg build --verifier FILE` with these bytes reproduces them.
pub fn stand_in_elf() -> Vec<u8> {
    const BASE: u64 = 0x40_0000;
    // mov edi, 2; mov eax, 60 (exit); syscall
    const CODE: [u8; 12] = [0xbf, 2, 0, 0, 0, 0xb8, 60, 0, 0, 0, 0x0f, 0x05];
    let total = 64 + 56 + CODE.len() as u64;
    let mut b = Vec::with_capacity(total as usize);
    b.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    b.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    b.extend_from_slice(&62u16.to_le_bytes()); // x86-64
    b.extend_from_slice(&1u32.to_le_bytes()); // EV_CURRENT
    b.extend_from_slice(&(BASE + 64 + 56).to_le_bytes()); // entry
    b.extend_from_slice(&64u64.to_le_bytes()); // program headers
    b.extend_from_slice(&0u64.to_le_bytes()); // no section headers
    b.extend_from_slice(&0u32.to_le_bytes()); // flags
    for v in [64u16, 56, 1, 64, 0, 0] {
        // ehsize, phentsize, phnum, shentsize, shnum, shstrndx
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    b.extend_from_slice(&5u32.to_le_bytes()); // R + X
    for v in [0, BASE, BASE, total, total, 0x1000] {
        // offset, vaddr, paddr, filesz, memsz, align
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&CODE);
    b
}

/// The glibc a distribution release ships, and where that is stated.
/// Minor releases do not change glibc's version on these distributions
/// (RHEL backports fixes into the same version for a major release).
pub fn distro_glibc(distro: Distro, version: &Version) -> Option<(GlibcVersion, &'static str)> {
    let (major, minor) = (version.major(), version.minor());
    let v = GlibcVersion::new;
    Some(match distro {
        // packages.ubuntu.com/<codename>/libc6
        Distro::Ubuntu => match (major, minor) {
            (20, 4) => (
                v(2, 31),
                "Ubuntu 20.04 libc6 2.31 (packages.ubuntu.com/focal/libc6)",
            ),
            (22, 4) => (
                v(2, 35),
                "Ubuntu 22.04 libc6 2.35 (packages.ubuntu.com/jammy/libc6)",
            ),
            (24, 4) => (
                v(2, 39),
                "Ubuntu 24.04 libc6 2.39 (packages.ubuntu.com/noble/libc6)",
            ),
            _ => return None,
        },
        // packages.debian.org/<codename>/libc6
        Distro::Debian => match major {
            11 => (
                v(2, 31),
                "Debian 11 libc6 2.31 (packages.debian.org/bullseye/libc6)",
            ),
            12 => (
                v(2, 36),
                "Debian 12 libc6 2.36 (packages.debian.org/bookworm/libc6)",
            ),
            13 => (
                v(2, 41),
                "Debian 13 libc6 2.41 (packages.debian.org/trixie/libc6)",
            ),
            _ => return None,
        },
        // Red Hat's release notes for each major release; Rocky and Alma
        // rebuild the same sources.
        Distro::Rhel | Distro::Rocky | Distro::Almalinux => match major {
            8 => (v(2, 28), "RHEL 8 glibc 2.28 (RHEL 8.0 release notes)"),
            9 => (v(2, 34), "RHEL 9 glibc 2.34 (RHEL 9.0 release notes)"),
            10 => (v(2, 39), "RHEL 10 glibc 2.39 (RHEL 10.0 release notes)"),
            _ => return None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::elf::tests::tiny_elf;

    fn target(distro: Distro, version: &str) -> (Distro, Version) {
        (distro, version.parse().unwrap())
    }

    fn check(bytes: &[u8], distro: Distro, version: &str) -> Result<Verifier, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nodeimg");
        std::fs::write(&path, bytes).unwrap();
        let (d, v) = target(distro, version);
        Verifier::from_file(
            &path,
            &Target {
                distro: d,
                version: &v,
                architecture: "amd64",
            },
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_binary_newer_than_the_distro_glibc_is_refused_with_what_to_do() {
        let elf = tiny_elf(62, &["GLIBC_2.2.5", "GLIBC_2.35"]);
        assert_eq!(
            check(&elf, Distro::Ubuntu, "22.04").unwrap().glibc(),
            Some(GlibcVersion::new(2, 35))
        );
        assert!(check(&elf, Distro::Debian, "12").is_ok());
        let err = check(&elf, Distro::Rhel, "9.4").unwrap_err();
        assert!(
            err.contains("needs glibc 2.35 (symbol version GLIBC_2.35)"),
            "{err}"
        );
        assert!(err.contains("rhel 9.4 ships glibc 2.34"), "{err}");
        assert!(err.contains("--verifier PATH"), "{err}");
        assert!(err.contains("nodeimg"), "{err}");
        let err = check(&elf, Distro::Ubuntu, "23.10").unwrap_err();
        assert!(
            err.contains("does not know which glibc ubuntu 23.10"),
            "{err}"
        );
    }

    #[test]
    fn architecture_and_format_are_checked() {
        let arm = tiny_elf(183, &["GLIBC_2.17"]);
        let err = check(&arm, Distro::Debian, "12").unwrap_err();
        assert!(
            err.contains("built for AArch64, but the image is for amd64"),
            "{err}"
        );
        let err = check(b"#!/bin/sh\n", Distro::Debian, "12").unwrap_err();
        assert!(err.contains("not an ELF file"), "{err}");
    }

    #[test]
    fn the_stand_in_is_a_static_executable_that_exits_2() {
        let bytes = stand_in_elf();
        assert_eq!(bytes.len(), 132);
        let v = check(&bytes, Distro::Rhel, "8.10").unwrap();
        assert_eq!(v.glibc(), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stand-in");
        std::fs::write(&path, &bytes).unwrap();
        std::fs::set_permissions(
            &path,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
        )
        .unwrap();
        let status = std::process::Command::new(&path).status().unwrap();
        assert_eq!(status.code(), Some(2));
    }

    #[test]
    fn a_settled_file_stays_on_disk_and_is_held_to_what_was_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nodeimg");
        let bytes = stand_in_elf();
        std::fs::write(&path, &bytes).unwrap();
        let (d, v) = target(Distro::Debian, "12");
        let target = Target {
            distro: d,
            version: &v,
            architecture: "amd64",
        };
        // Written just now: its stamp cannot stand for its content yet, so
        // the checked bytes are held.
        let fresh = Verifier::from_file(&path, &target).unwrap();
        assert!(matches!(fresh.bytes(), Bytes::Held(b) if b[..] == bytes[..]));

        std::thread::sleep(crate::overlay::RACY_MARGIN + std::time::Duration::from_millis(200));
        let settled = Verifier::from_file(&path, &target).unwrap();
        assert!(
            matches!(settled.bytes(), Bytes::File { size: 132, .. }),
            "{:?}",
            settled.bytes()
        );
        assert_eq!(settled.size(), 132);
        // Given through a link (`--verifier /usr/local/bin/nodeimg`), the layer reads
        // the file the link names: the packer follows no links.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let linked = Verifier::from_file(&link, &target).unwrap();
        let resolved = std::fs::canonicalize(&path).unwrap();
        assert!(
            matches!(linked.bytes(), Bytes::File { path: p, .. } if p == resolved),
            "{:?}",
            linked.bytes()
        );
        assert_eq!(settled.sums().unwrap(), fresh.sums().unwrap());
        assert_eq!(settled.sums().unwrap(), &Sums::of(&bytes));
        settled.still_unchanged().unwrap();

        // Any write after the check: refused, for the layer and the digests.
        let other = Verifier::from_file(&path, &target).unwrap();
        let mut changed = bytes.clone();
        changed[121] = 3; // `mov edi, 3`: exits 3
        std::fs::write(&path, &changed).unwrap();
        let err = settled.still_unchanged().unwrap_err().to_string();
        assert!(err.contains("changed while the image was built"), "{err}");
        let err = other.sums().unwrap_err().to_string();
        assert!(err.contains("changed while the image was built"), "{err}");
    }

    #[test]
    fn streamed_digests_are_the_digests_of_the_bytes() {
        // Block edges: empty, one short block, exactly one, one and a bit.
        for len in [0usize, 1000, 4 << 20, (4 << 20) + 7, (9 << 20) + 1] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let streamed = Sums::of_stream(&bytes[..], len as u64).unwrap();
            assert_eq!(streamed, Sums::of(&bytes), "{len} bytes");
        }
        // A stream longer or shorter than announced is an error, not a digest.
        assert!(Sums::of_stream(&[0u8; 10][..], 9).is_err());
        assert!(Sums::of_stream(&[0u8; 10][..], 11).is_err());
    }

    #[test]
    fn the_table_covers_every_example_release() {
        for (d, v, want) in [
            (Distro::Rhel, "9.4", (2, 34)),
            (Distro::Rocky, "9", (2, 34)),
            (Distro::Ubuntu, "22.04", (2, 35)),
            (Distro::Debian, "12", (2, 36)),
        ] {
            let (d, v) = target(d, v);
            assert_eq!(
                distro_glibc(d, &v).unwrap().0,
                GlibcVersion::new(want.0, want.1)
            );
        }
    }
}
