//! Feeds arbitrary bytes to the blueprint loader: it must return a value or
//! diagnostics, never panic, hang or exhaust memory.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use nodeimg::blueprint::{compat::Matrix, load_bytes};

fuzz_target!(|data: &[u8]| {
    static MATRIX: OnceLock<Matrix> = OnceLock::new();
    let matrix = MATRIX.get_or_init(Matrix::builtin);
    let _ = load_bytes(data, Path::new("fuzz.yaml"), None, matrix);
});
