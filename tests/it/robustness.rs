//! The loader never panics: every example blueprint is cut short at many
//! points, has bytes flipped and lines dropped, and each mangled text must
//! come back as a value or as diagnostics. (The cargo-fuzz target in fuzz/
//! explores far more; this keeps a deterministic floor in every test run.)

use std::path::Path;

use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::load_bytes;

fn mangled(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    // Truncations.
    for cut in (0..text.len()).step_by(37) {
        out.push(text[..cut].to_vec());
    }
    // Byte substitutions with YAML-significant characters.
    let specials = b":-[]{}&*!|>'\"%@`#,\t\n\0\xff";
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..400 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut t = text.to_vec();
        let at = (state as usize) % t.len().max(1);
        t[at] = specials[i % specials.len()];
        out.push(t);
    }
    // Line deletions and duplications.
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    for i in 0..lines.len() {
        let mut dropped = Vec::new();
        let mut doubled = Vec::new();
        for (j, l) in lines.iter().enumerate() {
            if j != i {
                dropped.extend_from_slice(l);
                dropped.push(b'\n');
            }
            doubled.extend_from_slice(l);
            doubled.push(b'\n');
            if j == i {
                doubled.extend_from_slice(l);
                doubled.push(b'\n');
            }
        }
        out.push(dropped);
        out.push(doubled);
    }
    out
}

#[test]
fn mangled_examples_never_panic() {
    let matrix = Matrix::builtin();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let mut tried = 0;
    let mut rejected = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let text = std::fs::read(&path).unwrap();
        for m in mangled(&text) {
            tried += 1;
            if let Err(diags) = load_bytes(&m, &path, Some(&dir), &matrix) {
                assert!(!diags.is_empty(), "a rejection always says why");
                rejected += 1;
            }
        }
    }
    assert!(tried > 1000, "{tried}");
    assert!(
        rejected > tried / 4,
        "most mangled inputs are rejected ({rejected}/{tried})"
    );
}
