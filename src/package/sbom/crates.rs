//! The Rust crates compiled into a verifier binary, read from the section
//! cargo auditable defines: `.dep-v0`, zlib-compressed JSON in the format of
//! the `auditable-serde` crate. nodeimg embeds its own (see build.rs), so the
//! SBOM of an image names the crates of the verifier it really carries,
//! whichever machine built that verifier.
//!
//! A binary without the section is not an error: the SBOM then names the
//! verifier without crates and `build` says so. A section that is there but
//! cannot be read (not zlib, larger than [`MAX_JSON_BYTES`] inflated, not the
//! format, several roots, a cycle) is refused: an SBOM that silently listed
//! no crates for a binary claiming some would be wrong.

use std::io::Read;

use auditable_serde::VersionInfo;

use crate::package::elf;

/// The section cargo auditable writes.
pub const SECTION: &str = crate::package::verifier::CRATE_LIST_SECTION;
/// Largest inflated crate list read (cargo auditable's own readers default
/// to 8 MiB; nodeimg's is about 30 KiB).
pub const MAX_JSON_BYTES: u64 = 8 << 20;

/// The crates in `binary`, or `None` when it carries no crate list.
pub fn read(binary: &[u8]) -> Result<Option<VersionInfo>, String> {
    from_section(elf::section(binary, SECTION)?)
}

/// The crates in a binary's [`SECTION`] as stored, or `None` when it has
/// none.
pub fn from_section(section: Option<&[u8]>) -> Result<Option<VersionInfo>, String> {
    let Some(section) = section else {
        return Ok(None);
    };
    if section.is_empty() {
        return Ok(None);
    }
    let mut json = Vec::new();
    flate2::read::ZlibDecoder::new(section)
        .take(MAX_JSON_BYTES + 1)
        .read_to_end(&mut json)
        .map_err(|e| format!("its {SECTION} section is not zlib data: {e}"))?;
    if json.len() as u64 > MAX_JSON_BYTES {
        return Err(format!(
            "its {SECTION} section inflates to more than {MAX_JSON_BYTES} bytes"
        ));
    }
    let info: VersionInfo = serde_json::from_slice(&json)
        .map_err(|e| format!("its {SECTION} section is not a crate list: {e}"))?;
    if !info.packages.iter().any(|p| p.root) {
        return Err(format!("its {SECTION} section names no root crate"));
    }
    if let Some((i, d)) = info.packages.iter().enumerate().find_map(|(i, p)| {
        p.dependencies
            .iter()
            .find(|&&d| d >= info.packages.len())
            .map(|d| (i, *d))
    }) {
        return Err(format!(
            "its {SECTION} section gives crate {i} a dependency {d} that is not in the list"
        ));
    }
    Ok(Some(info))
}

/// The root crate (the binary's own package).
pub fn root(info: &VersionInfo) -> Option<&auditable_serde::Package> {
    info.packages.iter().find(|p| p.root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_without_the_section_has_no_list() {
        let stand_in = crate::package::verifier::stand_in_elf();
        assert_eq!(read(&stand_in).unwrap(), None);
    }

    #[test]
    fn a_corrupt_list_is_an_error_not_an_empty_one() {
        for bad in [
            &b"not zlib"[..],
            &zlib(b"{\"packages\":[]}"),
            &zlib(b"[1,2"),
        ] {
            let err = read(&with_section(bad)).unwrap_err();
            assert!(err.contains(".dep-v0"), "{err}");
        }
        let cyclic = br#"{"packages":[{"name":"a","version":"1.0.0","source":"local","root":true,"dependencies":[1]},{"name":"b","version":"1.0.0","source":"crates.io","dependencies":[0]}]}"#;
        assert!(read(&with_section(&zlib(cyclic))).is_err());
        let dangling = br#"{"packages":[{"name":"a","version":"1.0.0","source":"local","root":true,"dependencies":[7]}]}"#;
        assert!(read(&with_section(&zlib(dangling))).is_err());
        // A zip bomb stops at the bound.
        let bomb = zlib(&vec![b' '; (MAX_JSON_BYTES + 10) as usize]);
        assert!(
            read(&with_section(&bomb))
                .unwrap_err()
                .contains("more than")
        );
        let ok = br#"{"packages":[{"name":"a","version":"1.0.0","source":"local","root":true,"dependencies":[1]},{"name":"b","version":"2.0.1","source":"crates.io","kind":"build"}],"format":1}"#;
        let info = read(&with_section(&zlib(ok))).unwrap().unwrap();
        assert_eq!(info.packages.len(), 2);
    }

    fn zlib(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(bytes).unwrap();
        z.finish().unwrap()
    }

    /// A 64-bit little-endian ELF header with a section table of three
    /// entries: null, the name table, and `.dep-v0` holding `data`.
    pub(crate) fn with_section(data: &[u8]) -> Vec<u8> {
        let names = b"\0.shstrtab\0.dep-v0\0";
        let names_off = 64u64;
        let data_off = names_off + names.len() as u64;
        let sh_off = (data_off + data.len() as u64 + 7) & !7;
        let mut b = vec![0u8; (sh_off + 3 * 64) as usize];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[6] = 1;
        b[16..18].copy_from_slice(&3u16.to_le_bytes());
        b[18..20].copy_from_slice(&62u16.to_le_bytes());
        b[40..48].copy_from_slice(&sh_off.to_le_bytes());
        // No program headers, of the standard size.
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[58..60].copy_from_slice(&64u16.to_le_bytes());
        b[60..62].copy_from_slice(&3u16.to_le_bytes());
        b[62..64].copy_from_slice(&1u16.to_le_bytes());
        b[names_off as usize..][..names.len()].copy_from_slice(names);
        b[data_off as usize..][..data.len()].copy_from_slice(data);
        let mut sh = |i: u64, name: u32, kind: u32, off: u64, size: u64| {
            let at = (sh_off + i * 64) as usize;
            b[at..at + 4].copy_from_slice(&name.to_le_bytes());
            b[at + 4..at + 8].copy_from_slice(&kind.to_le_bytes());
            b[at + 24..at + 32].copy_from_slice(&off.to_le_bytes());
            b[at + 32..at + 40].copy_from_slice(&size.to_le_bytes());
        };
        sh(1, 1, 3, names_off, names.len() as u64);
        sh(2, 11, 1, data_off, data.len() as u64);
        b
    }
}
