//! The fuzz target's inputs replayed on every `cargo test`, so the loader's
//! "diagnostics, never a panic" promise is checked without a nightly toolchain:
//! the committed seeds (`fuzz/seeds/load_blueprint`), whatever a local
//! `cargo fuzz` run left in `fuzz/corpus/load_blueprint`, the broken fixtures and
//! the examples. The call is the fuzz target's own (`fuzz/fuzz_targets/load_blueprint.rs`).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use nodeimg::blueprint::{compat::Matrix, load_bytes};

use crate::support::root;

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn the_loader_answers_every_fuzz_input_without_panicking() {
    let seeds = files_in(&root().join("fuzz/seeds/load_blueprint"));
    assert!(seeds.len() >= 10, "the committed fuzz seeds are missing");
    let inputs: Vec<PathBuf> = seeds
        .into_iter()
        .chain(files_in(&root().join("fuzz/corpus/load_blueprint")))
        .chain(files_in(&root().join("tests/fixtures/invalid")))
        .chain(files_in(&root().join("blueprints")))
        .collect();
    let matrix = Matrix::builtin();
    let mut panicked = Vec::new();
    for input in &inputs {
        let data = std::fs::read(input).unwrap();
        // As the fuzz target calls it.
        let run = catch_unwind(AssertUnwindSafe(|| {
            let _ = load_bytes(&data, Path::new("fuzz.yaml"), None, &matrix);
        }));
        if run.is_err() {
            panicked.push(input.display().to_string());
        }
    }
    assert!(panicked.is_empty(), "the loader panicked on: {panicked:#?}");
}

#[test]
fn the_seeds_are_refused_with_diagnostics() {
    // Each seed is hostile or broken: the loader must say why, not accept it.
    let matrix = Matrix::builtin();
    for seed in files_in(&root().join("fuzz/seeds/load_blueprint")) {
        let data = std::fs::read(&seed).unwrap();
        match load_bytes(&data, Path::new("fuzz.yaml"), None, &matrix) {
            Ok(_) => panic!("{}: accepted", seed.display()),
            Err(d) => assert!(
                !d.is_empty(),
                "{}: refused without a diagnostic",
                seed.display()
            ),
        }
    }
}
