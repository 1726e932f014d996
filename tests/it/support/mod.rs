//! Shared test helpers: synthetic machine trees, a host that injects read errors, and the
//! healthy verify fixture with its blueprint.
#![allow(dead_code)]

pub mod fault_host;
pub mod fixture_tree;
pub mod verify_fixture;
