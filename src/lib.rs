//! nodeimg: pinned node blueprints for GPU Kubernetes nodes.
pub mod blueprint;
pub mod verify;
