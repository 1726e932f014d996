//! The committed broken-blueprint fixtures are exactly what
//! `scripts/gen-invalid-fixtures.py` writes: a case edited by hand (or a script
//! change never run) would otherwise make the fixtures and their generator
//! disagree silently. The script runs from a copy, so the checkout is not touched.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::support::root;

/// Every file under `dir`, by path relative to it.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn committed_invalid_fixtures_are_the_generators_output() {
    let scratch = tempfile::tempdir().unwrap();
    // The script writes beside itself: <its folder>/../tests/fixtures/.
    std::fs::create_dir_all(scratch.path().join("scripts")).unwrap();
    std::fs::create_dir_all(scratch.path().join("tests/fixtures/valid")).unwrap();
    let script = scratch.path().join("scripts/gen-invalid-fixtures.py");
    std::fs::copy(root().join("scripts/gen-invalid-fixtures.py"), &script).unwrap();
    let out = Command::new("python3")
        .arg(&script)
        .output()
        .expect("python3 runs the fixture generator (install python3)");
    assert!(
        out.status.success(),
        "the generator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for sub in ["tests/fixtures/invalid", "tests/fixtures/valid"] {
        let generated = tree(&scratch.path().join(sub));
        let committed = tree(&root().join(sub));
        assert!(!generated.is_empty(), "{sub}: the generator wrote nothing");
        let differ: Vec<&String> = generated
            .keys()
            .chain(committed.keys())
            .filter(|k| generated.get(*k) != committed.get(*k))
            .collect();
        assert!(
            differ.is_empty(),
            "{sub}: committed files differ from scripts/gen-invalid-fixtures.py's output \
             (run it and commit the result): {differ:?}"
        );
    }
}
