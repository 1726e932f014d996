//! Shared test helpers: synthetic machine trees and a host that injects read errors.
#![allow(dead_code)]

pub mod fault_host;
pub mod fixture_tree;
