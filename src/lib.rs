//! nodeimg: pinned node blueprints for GPU Kubernetes nodes — rendered
//! configuration, a reproducible OCI layer, and a boot-time verifier, all
//! from one checked model.

pub mod accept;
pub mod apply;
pub mod atomic;
pub mod blueprint;
pub mod canonical_json;
pub mod cli;
pub mod command;
pub mod diff;
pub mod fault;
pub mod features;
pub mod golden;
pub mod input;
pub mod k8s;
pub mod line_error;
pub mod overlay;
pub mod package;
pub mod render;
pub mod rollout;
pub mod stdio;
pub mod time;
pub mod tree;
pub mod trust;
pub mod verify;
pub mod yaml_text;
