//! Just enough of ELF to say where an executable can run: its machine, its
//! program interpreter, and the newest glibc symbol version it needs.
//!
//! The reading follows what the dynamic loader does, not what the section
//! table says (a stripped binary may have none): program headers →
//! `PT_INTERP` and `PT_DYNAMIC` → `DT_VERNEED`/`DT_VERNEEDNUM`/`DT_STRTAB`,
//! whose addresses are mapped to file offsets through the `PT_LOAD`
//! segments; then every `Vernaux` entry's name (`GLIBC_2.34`, …). Only
//! 64-bit little-endian files are accepted (x86-64 and AArch64 nodes). Every
//! offset is bounds-checked: a truncated or hostile file is an error, never
//! a panic.

use std::fmt;

/// The CPU an ELF file is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machine {
    X86_64,
    Aarch64,
    Other(u16),
}

impl Machine {
    /// The OCI (GOARCH) architecture name, when there is one we build for.
    pub fn oci_arch(self) -> Option<&'static str> {
        match self {
            Machine::X86_64 => Some("amd64"),
            Machine::Aarch64 => Some("arm64"),
            Machine::Other(_) => None,
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Machine::X86_64 => f.write_str("x86-64"),
            Machine::Aarch64 => f.write_str("AArch64"),
            Machine::Other(m) => write!(f, "ELF machine {m}"),
        }
    }
}

/// A glibc symbol version, `GLIBC_<major>.<minor>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GlibcVersion {
    pub major: u16,
    pub minor: u16,
}

impl GlibcVersion {
    pub const fn new(major: u16, minor: u16) -> Self {
        Self { major, minor }
    }

    /// The glibc release a version-needed name implies: `GLIBC_2.34` → 2.34;
    /// `GLIBC_ABI_DT_RELR` (packed relocations) → 2.36, the first glibc
    /// that provides it. Other names (`GLIBC_PRIVATE`) imply nothing.
    pub fn from_needed(name: &str) -> Option<Self> {
        if name == "GLIBC_ABI_DT_RELR" {
            return Some(Self::new(2, 36));
        }
        let rest = name.strip_prefix("GLIBC_")?;
        let (major, minor) = rest.split_once('.').unwrap_or((rest, "0"));
        // `GLIBC_2.2.5` → 2.2.
        let minor = minor.split('.').next().unwrap_or("0");
        Some(Self::new(major.parse().ok()?, minor.parse().ok()?))
    }
}

impl fmt::Display for GlibcVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// What the loader needs to run a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    pub machine: Machine,
    /// `PT_INTERP`, e.g. `/lib64/ld-linux-x86-64.so.2`; `None` for a static
    /// executable.
    pub interpreter: Option<String>,
    /// The newest glibc version any needed symbol asks for, and that
    /// version's name as written; `None` when no glibc version is needed.
    pub glibc: Option<(GlibcVersion, String)>,
}

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
const DT_VERNEED: u64 = 0x6fff_fffe;
const DT_VERNEEDNUM: u64 = 0x6fff_ffff;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
/// More entries than any real file has; bounds loops on hostile input.
const MAX_ENTRIES: usize = 1 << 16;

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn slice(&self, offset: u64, len: u64) -> Result<&'a [u8], String> {
        let start = usize::try_from(offset).map_err(|_| "offset out of range".to_string())?;
        let len = usize::try_from(len).map_err(|_| "length out of range".to_string())?;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| format!("truncated: needs bytes {start}..{start}+{len}"))?;
        Ok(&self.bytes[start..end])
    }

    fn u16(&self, offset: u64) -> Result<u16, String> {
        let b = self.slice(offset, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&self, offset: u64) -> Result<u32, String> {
        let b = self.slice(offset, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&self, offset: u64) -> Result<u64, String> {
        let b = self.slice(offset, 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A NUL-terminated string starting at `offset`, at most `limit` bytes.
    fn cstr(&self, offset: u64, limit: u64) -> Result<String, String> {
        let start = usize::try_from(offset).map_err(|_| "offset out of range".to_string())?;
        let end = usize::try_from(offset.saturating_add(limit))
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let bytes = self
            .bytes
            .get(start..end)
            .ok_or_else(|| "string offset past the end of the file".to_string())?;
        let len = bytes
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| "unterminated string".to_string())?;
        String::from_utf8(bytes[..len].to_vec()).map_err(|_| "string is not UTF-8".to_string())
    }
}

struct Segment {
    kind: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
}

/// Reads machine, interpreter and needed glibc version from an ELF file.
pub fn inspect(bytes: &[u8]) -> Result<ElfInfo, String> {
    let r = Reader { bytes };
    if r.slice(0, 4).ok() != Some(b"\x7fELF".as_slice()) {
        return Err("not an ELF file".into());
    }
    let ident = r.slice(0, 16)?;
    if ident[4] != 2 {
        return Err("a 32-bit ELF file; nodes run 64-bit executables".into());
    }
    if ident[5] != 1 {
        return Err("a big-endian ELF file; x86-64 and AArch64 nodes are little-endian".into());
    }
    let kind = r.u16(16)?;
    if kind != ET_EXEC && kind != ET_DYN {
        return Err(format!(
            "ELF type {kind} is not an executable (a relocatable object or core file?)"
        ));
    }
    let machine = match r.u16(18)? {
        62 => Machine::X86_64,
        183 => Machine::Aarch64,
        m => Machine::Other(m),
    };
    let phoff = r.u64(32)?;
    let phentsize = u64::from(r.u16(54)?);
    let phnum = usize::from(r.u16(56)?);
    if phentsize < 56 {
        return Err(format!("program header size {phentsize} is too small"));
    }
    let mut segments = Vec::with_capacity(phnum);
    for i in 0..phnum as u64 {
        let at = phoff
            .checked_add(i * phentsize)
            .ok_or("program header offset overflows")?;
        segments.push(Segment {
            kind: r.u32(at)?,
            offset: r.u64(at + 8)?,
            vaddr: r.u64(at + 16)?,
            filesz: r.u64(at + 32)?,
        });
    }
    let interpreter = match segments.iter().find(|s| s.kind == PT_INTERP) {
        Some(s) => Some(r.cstr(s.offset, s.filesz)?),
        None => None,
    };
    let glibc = match segments.iter().find(|s| s.kind == PT_DYNAMIC) {
        Some(dynamic) => needed_glibc(&r, dynamic, &segments)?,
        None => None,
    };
    Ok(ElfInfo {
        machine,
        interpreter,
        glibc,
    })
}

/// The bytes of the section named `name` (from the section headers, which `strip` keeps;
/// a file without them, or without that section, gives `None`). Bounds-checked like
/// everything here.
pub fn section<'a>(bytes: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, String> {
    let r = Reader { bytes };
    inspect(bytes)?;
    let shoff = r.u64(40)?;
    let shentsize = u64::from(r.u16(58)?);
    let shnum = u64::from(r.u16(60)?);
    let shstrndx = u64::from(r.u16(62)?);
    if shoff == 0 || shnum == 0 {
        return Ok(None);
    }
    if shentsize < 64 {
        return Err(format!("section header size {shentsize} is too small"));
    }
    let header = |i: u64| -> Result<(u32, u64, u64), String> {
        let at = shoff
            .checked_add(
                i.checked_mul(shentsize)
                    .ok_or("section header offset overflows")?,
            )
            .ok_or("section header offset overflows")?;
        // Elf64_Shdr: sh_name u32, sh_type u32, sh_flags u64, sh_addr u64, sh_offset u64,
        // sh_size u64, …
        Ok((r.u32(at)?, r.u64(at + 24)?, r.u64(at + 32)?))
    };
    let (_, names_at, names_len) = header(shstrndx)?;
    for i in 0..shnum.min(MAX_ENTRIES as u64) {
        let (name_off, offset, size) = header(i)?;
        if u64::from(name_off) >= names_len {
            continue;
        }
        let found = r.cstr(
            names_at + u64::from(name_off),
            names_len - u64::from(name_off),
        )?;
        if found == name {
            r.slice(offset, size)?;
            // In range (checked just above), so the conversions hold.
            let start = offset as usize;
            return Ok(Some(&bytes[start..start + size as usize]));
        }
    }
    Ok(None)
}

/// File offset of a virtual address, through the `PT_LOAD` that maps it.
fn file_offset(segments: &[Segment], vaddr: u64) -> Result<u64, String> {
    segments
        .iter()
        .filter(|s| s.kind == PT_LOAD)
        .find(|s| vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz)
        .map(|s| s.offset + (vaddr - s.vaddr))
        .ok_or_else(|| format!("address {vaddr:#x} is not in any loaded segment"))
}

fn needed_glibc(
    r: &Reader<'_>,
    dynamic: &Segment,
    segments: &[Segment],
) -> Result<Option<(GlibcVersion, String)>, String> {
    let (mut strtab, mut strsz, mut verneed, mut verneednum) = (None, None, None, 0u64);
    let entries = (dynamic.filesz / 16).min(MAX_ENTRIES as u64);
    for i in 0..entries {
        let at = dynamic.offset + i * 16;
        let (tag, value) = (r.u64(at)?, r.u64(at + 8)?);
        match tag {
            DT_NULL => break,
            DT_STRTAB => strtab = Some(value),
            DT_STRSZ => strsz = Some(value),
            DT_VERNEED => verneed = Some(value),
            DT_VERNEEDNUM => verneednum = value,
            _ => {}
        }
    }
    let (Some(verneed), Some(strtab)) = (verneed, strtab) else {
        return Ok(None);
    };
    let strtab = file_offset(segments, strtab)?;
    let strsz = strsz.ok_or("DT_STRTAB without DT_STRSZ")?;
    let name = |off: u32| {
        let off = u64::from(off);
        if off >= strsz {
            return Err(format!("string offset {off} past the string table"));
        }
        r.cstr(strtab + off, strsz - off)
    };
    let mut newest: Option<(GlibcVersion, String)> = None;
    let mut at = file_offset(segments, verneed)?;
    for _ in 0..verneednum.min(MAX_ENTRIES as u64) {
        // Elf64_Verneed: vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32.
        let count = r.u16(at + 2)?;
        let mut aux = at + u64::from(r.u32(at + 8)?);
        for _ in 0..count {
            // Elf64_Vernaux: vna_hash u32, vna_flags u16, vna_other u16, vna_name u32, vna_next u32.
            let needed = name(r.u32(aux + 8)?)?;
            if let Some(v) = GlibcVersion::from_needed(&needed)
                && newest.as_ref().is_none_or(|(n, _)| v > *n)
            {
                newest = Some((v, needed));
            }
            let next = r.u32(aux + 12)?;
            if next == 0 {
                break;
            }
            aux += u64::from(next);
        }
        let next = r.u32(at + 12)?;
        if next == 0 {
            break;
        }
        at += u64::from(next);
    }
    Ok(newest)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal dynamic x86-64 executable: one PT_LOAD covering the file,
    /// PT_INTERP, PT_DYNAMIC, a string table and one Verneed for libc.so.6
    /// with the given version names. Made by this project for tests.
    pub(crate) fn tiny_elf(machine: u16, versions: &[&str]) -> Vec<u8> {
        let mut strtab = b"\0libc.so.6\0".to_vec();
        let mut names = Vec::new();
        for v in versions {
            names.push(strtab.len() as u32);
            strtab.extend_from_slice(v.as_bytes());
            strtab.push(0);
        }
        let interp = b"/lib64/ld-linux-x86-64.so.2\0";
        let phoff = 64u64;
        let phnum = 3u64;
        let interp_off = phoff + phnum * 56;
        let str_off = interp_off + interp.len() as u64;
        let vn_off = (str_off + strtab.len() as u64 + 7) & !7;
        let vn_len = 16 + 16 * versions.len() as u64;
        let dyn_off = (vn_off + vn_len + 7) & !7;
        let dyn_entries: Vec<(u64, u64)> = vec![
            (DT_STRTAB, str_off),
            (DT_STRSZ, strtab.len() as u64),
            (DT_VERNEED, vn_off),
            (DT_VERNEEDNUM, 1),
            (DT_NULL, 0),
        ];
        let total = dyn_off + 16 * dyn_entries.len() as u64;
        let mut b = vec![0u8; total as usize];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[6] = 1;
        b[16..18].copy_from_slice(&ET_DYN.to_le_bytes());
        b[18..20].copy_from_slice(&machine.to_le_bytes());
        b[32..40].copy_from_slice(&phoff.to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&(phnum as u16).to_le_bytes());
        let mut ph = |i: u64, kind: u32, off: u64, size: u64| {
            let at = (phoff + i * 56) as usize;
            b[at..at + 4].copy_from_slice(&kind.to_le_bytes());
            b[at + 8..at + 16].copy_from_slice(&off.to_le_bytes());
            b[at + 16..at + 24].copy_from_slice(&off.to_le_bytes());
            b[at + 32..at + 40].copy_from_slice(&size.to_le_bytes());
        };
        ph(0, PT_LOAD, 0, total);
        ph(1, PT_INTERP, interp_off, interp.len() as u64);
        ph(2, PT_DYNAMIC, dyn_off, 16 * dyn_entries.len() as u64);
        b[interp_off as usize..][..interp.len()].copy_from_slice(interp);
        b[str_off as usize..][..strtab.len()].copy_from_slice(&strtab);
        let vn = vn_off as usize;
        b[vn..vn + 2].copy_from_slice(&1u16.to_le_bytes());
        b[vn + 2..vn + 4].copy_from_slice(&(versions.len() as u16).to_le_bytes());
        b[vn + 4..vn + 8].copy_from_slice(&1u32.to_le_bytes());
        b[vn + 8..vn + 12].copy_from_slice(&16u32.to_le_bytes());
        for (i, name) in names.iter().enumerate() {
            let a = vn + 16 + 16 * i;
            b[a + 8..a + 12].copy_from_slice(&name.to_le_bytes());
            let next: u32 = if i + 1 < names.len() { 16 } else { 0 };
            b[a + 12..a + 16].copy_from_slice(&next.to_le_bytes());
        }
        for (i, (tag, value)) in dyn_entries.iter().enumerate() {
            let a = dyn_off as usize + 16 * i;
            b[a..a + 8].copy_from_slice(&tag.to_le_bytes());
            b[a + 8..a + 16].copy_from_slice(&value.to_le_bytes());
        }
        b
    }

    #[test]
    fn finds_a_named_section_as_readelf_does() {
        // This test binary itself: the section table as readelf reads it.
        let exe = std::env::current_exe().unwrap();
        let bytes = std::fs::read(&exe).unwrap();
        let text = section(&bytes, ".text").unwrap().expect(".text");
        assert!(!text.is_empty());
        assert_eq!(section(&bytes, ".no-such-section").unwrap(), None);
        // A file without a section table has no sections; garbage is an error.
        assert_eq!(section(&tiny_elf(62, &[]), ".dep-v0").unwrap(), None);
        assert!(section(b"MZ", ".dep-v0").is_err());
        // A section table pointing past the end is an error, not a panic.
        let mut broken = tiny_elf(62, &[]);
        broken[40..48].copy_from_slice(&(1u64 << 40).to_le_bytes());
        broken[60..62].copy_from_slice(&3u16.to_le_bytes());
        broken[58..60].copy_from_slice(&64u16.to_le_bytes());
        assert!(section(&broken, ".dep-v0").is_err());
    }

    #[test]
    fn reads_the_newest_glibc_version_needed() {
        let elf = tiny_elf(
            62,
            &["GLIBC_2.2.5", "GLIBC_2.34", "GLIBC_2.17", "GLIBC_PRIVATE"],
        );
        let info = inspect(&elf).unwrap();
        assert_eq!(info.machine, Machine::X86_64);
        assert_eq!(
            info.interpreter.as_deref(),
            Some("/lib64/ld-linux-x86-64.so.2")
        );
        assert_eq!(
            info.glibc,
            Some((GlibcVersion::new(2, 34), "GLIBC_2.34".to_string()))
        );
        let relr = inspect(&tiny_elf(183, &["GLIBC_2.17", "GLIBC_ABI_DT_RELR"])).unwrap();
        assert_eq!(relr.machine, Machine::Aarch64);
        assert_eq!(relr.glibc.unwrap().0, GlibcVersion::new(2, 36));
    }

    #[test]
    fn agrees_with_readelf_on_real_binaries() {
        // System programs: compare with the version names found in the
        // file by a plain search of its NUL-separated strings.
        for path in ["/bin/sh", "/bin/true"] {
            let bytes = std::fs::read(path).unwrap();
            let info = inspect(&bytes).unwrap();
            let mut newest = None;
            for w in bytes.split(|&b| b == 0) {
                if let Ok(s) = std::str::from_utf8(w)
                    && let Some(v) = s.strip_prefix("GLIBC_").and(GlibcVersion::from_needed(s))
                {
                    newest = newest.max(Some(v));
                }
            }
            assert_eq!(info.glibc.map(|g| g.0), newest, "{path}");
            assert!(info.interpreter.is_some());
        }
    }

    #[test]
    fn refuses_what_is_not_a_64_bit_little_endian_executable() {
        assert!(inspect(b"#!/bin/sh\n").unwrap_err().contains("not an ELF"));
        let mut e = tiny_elf(62, &["GLIBC_2.34"]);
        e[4] = 1;
        assert!(inspect(&e).unwrap_err().contains("32-bit"));
        let mut e = tiny_elf(62, &["GLIBC_2.34"]);
        e[16] = 1;
        assert!(inspect(&e).unwrap_err().contains("not an executable"));
        // Every truncation is an error or a result, never a panic.
        let e = tiny_elf(62, &["GLIBC_2.34"]);
        for n in 0..e.len() {
            let _ = inspect(&e[..n]);
        }
        // Corrupted bytes anywhere: no panic, no endless loop.
        for i in 0..e.len() {
            let mut c = e.clone();
            c[i] ^= 0xff;
            let _ = inspect(&c);
        }
    }
}
