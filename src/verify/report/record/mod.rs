//! The node acceptance record: what this node is (hardware SKU and serial, firmware, OS,
//! kernel, runtime, driver, GPUs, NICs, links), what the blueprint declares around it
//! (operator, device plugin or DRA), and what each acceptance layer found — layer 1 from
//! `nodeimg verify` at boot, layers 2–5 (Kubernetes inventory, device in a container,
//! interconnect, framework) from `nodeimg accept` after the node joined — with the
//! figures a later record is compared with, and where the evidence is.
//!
//! The record is the contract between `verify` and `accept`: `verify` writes layer 1 and
//! marks the rest not run; `accept` reads that record back, fills layers 2–5 and writes
//! the complete one. Every machine value is a fact: known, or `{"unknown": "<reason>"}`;
//! every section of a layer is its content or `{"not_run": "<reason>"}`. Nothing is left
//! empty. JSON or YAML by the file's extension, written atomically; the JSON Schema is
//! [`schema`] (`nodeimg schema --record`).
//!
//! The schema's types are `node.rs` (the record's top and layer 1) and `layers.rs`
//! (layers 2–5), with the wire form of a fact and of a section in `wire.rs`; `assemble.rs`
//! builds a record from what verify read and judged, and `file.rs` writes and reads it.

mod assemble;
mod file;
mod layers;
mod node;
mod wire;

pub use layers::*;
pub use node::*;
pub use wire::Run;

/// `schema` of the record.
pub const SCHEMA: &str = "nodeimg.dev/acceptance-record/v1";

/// Why a layer's section is empty in a record `verify` wrote.
pub const LATER: &str = "not run yet: `nodeimg accept` fills layers 2-5 after the node joined";

/// The record's JSON Schema (`nodeimg schema --record`).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(AcceptanceRecord)).expect("schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_every_section() {
        let schema = schema();
        let text = schema.to_string();
        for section in [
            "layers",
            "kubernetes",
            "device_container",
            "dcgm",
            "baseline",
            "training",
            "inference",
            "figures",
            "findings",
            "not_run",
            "unknown",
        ] {
            assert!(text.contains(&format!("\"{section}\"")), "{section}");
        }
    }
}
