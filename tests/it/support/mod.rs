//! Shared test helpers: the `nodeimg` binary with a clean environment, synthetic machine
//! trees, a host that injects read errors, and the healthy verify fixture with its
//! blueprint.
#![allow(dead_code)]

// The binary exists only for the test binary (examples include this module too).
pub mod accept_fixture;
#[cfg(test)]
mod cli;
pub mod fault_host;
pub mod fixture_tree;
pub mod verify_fixture;

#[cfg(test)]
pub use cli::*;

/// The crate root (where `blueprints/`, `golden/` and `tests/fixtures/` are).
pub fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
