//! The integration tests, as one binary: one link after every edit instead of one per file.
//!
//! Default tests need nothing beyond this repository. The opt-in suites are
//! `#[ignore]`d with the reason they need something from outside (the corpus in
//! `../shared/corpus`, real consumer programs); `cargo test -- --ignored` runs them,
//! and then a missing folder or program fails the test instead of skipping it.

mod support;

mod accept_cli;
mod accept_corpus;
mod accept_rails;
mod accept_storage;
mod acceptance_manifests;
mod apply;
mod blueprint_values;
mod blueprints;
mod boot;
// ~10 min a boot without KVM: only with `--features boot-vm` (see Cargo.toml).
#[cfg(feature = "boot-vm")]
mod boot_vm;
mod build_cache;
mod build_cli;
mod cdi_unit;
mod checked_spec;
mod cli;
mod cluster_cli;
mod cluster_labels;
mod command;
mod container_devices;
mod default_isolation;
mod derived;
mod diff;
mod facts_capture;
mod facts_corpus;
mod facts_fixtures;
mod facts_host;
mod facts_live;
mod first_hour;
mod fixture_generator;
mod fuzz_replay;
mod golden;
mod gpu_faults;
mod gpu_isolation;
mod gpu_sharing;
mod health_rules;
mod hostile_input;
mod hostile_property;
#[cfg(feature = "push")]
mod hostile_registry;
mod identity;
mod import_cycles;
mod import_floors;
mod injection;
mod invalid_blueprints;
mod kubelet_drop_in;
mod node_rules;
mod operator_driver;
mod output_safety;
mod package_layout;
#[cfg(feature = "push")]
mod package_push;
mod package_real_tools;
mod package_repro;
mod partitions;
mod properties;
mod readme_node;
mod readme_usage;
mod real_consumers;
#[cfg(feature = "push")]
mod redfish;
#[cfg(feature = "push")]
mod registry_pull;
mod render_cluster;
mod render_corpus;
mod render_escaping;
mod render_host;
mod render_kubelet;
mod robustness;
mod rollout;
mod rollout_properties;
mod sbom;
mod sbom_validators;
mod shm_policy;
mod site_matrix;
mod startup;
mod trust_cli;
#[cfg(feature = "push")]
mod trust_interop;
mod trust_node;
mod trust_properties;
mod user_layer_cache;
mod valid_renders;
mod verify_checks;
mod verify_cli;
mod verify_golden;
mod whole_gpus;
mod wire_names;
mod yaml_readers;
