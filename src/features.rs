//! The optional capabilities this nodeimg was built with, kept in the binary in an ELF
//! section of their own (`.nodeimg_features`), so that `build` can tell what a
//! `--verifier` executable can do — can it pull an image, i.e. can the node image apply
//! itself — by reading the file, without running it (it may be built for another
//! architecture).

/// The section's name.
pub const SECTION: &str = ".nodeimg_features";

const LEN: usize = 32;

/// `name` written into `out` at `at`, then a blank; the next position.
const fn add(mut out: [u8; LEN], mut at: usize, name: &[u8]) -> ([u8; LEN], usize) {
    let mut i = 0;
    while i < name.len() {
        out[at] = name[i];
        at += 1;
        i += 1;
    }
    (out, at + 1)
}

/// `push kube ` padded with blanks: the feature names, each followed by a blank.
const fn names() -> [u8; LEN] {
    let (mut out, mut at) = ([b' '; LEN], 0);
    if cfg!(feature = "push") {
        (out, at) = add(out, at, b"push");
    }
    if cfg!(feature = "kube") {
        (out, _) = add(out, at, b"kube");
    }
    out
}

/// The features, in the section the build reads. `main` keeps it referenced, so the
/// linker's garbage collection does not drop it.
#[used]
#[unsafe(link_section = ".nodeimg_features")]
pub static FEATURES: [u8; LEN] = names();

// `LONG_VERSION`: `nodeimg --version`'s text (version, commit, features,
// target), written by build.rs.
include!(concat!(env!("OUT_DIR"), "/long_version.rs"));

/// The feature names a section's bytes list.
pub fn parse(section: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(section)
        .split_ascii_whitespace()
        .filter(|w| w.bytes().all(|b| b.is_ascii_lowercase()))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_names_the_features_of_this_build() {
        let got = parse(&FEATURES);
        assert_eq!(got.contains(&"push".to_owned()), cfg!(feature = "push"));
        assert_eq!(got.contains(&"kube".to_owned()), cfg!(feature = "kube"));
        // And read back from this very executable's section headers, as `build` reads a
        // verifier's.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let section = crate::package::elf::section(&me, SECTION)
            .unwrap()
            .expect("the section is in the binary");
        assert_eq!(parse(section), got);
        assert_eq!(
            crate::package::elf::section(&me, ".no-such-section").unwrap(),
            None
        );
        // A file cut short: an error, never a panic.
        assert!(crate::package::elf::section(&me[..me.len() / 2], SECTION).is_err());
    }
}
