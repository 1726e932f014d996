//! Upgrades in waves and fleet baselines. nodeimg plans, renders and judges; existing
//! engines execute: system-upgrade-controller cordons, drains, applies the image and
//! uncordons ([`manifests`]); the acceptance records of each wave decide whether the next
//! may start ([`gate`]); a remediated node returns to service only on a passing record
//! ([`readmit`]); [`simulate`] runs a plan over a synthetic fleet; [`baseline`]
//! compares nodes of one SKU with their fleet median; [`operator_driver`] stages a driver
//! the NVIDIA GPU operator owns by the same waves; [`unstaged_driver`] says why the AMD GPU
//! operator's cannot be.

pub mod baseline;
pub mod faults;
pub mod fleet;
pub mod gate;
pub mod hardware;
pub mod manifests;
pub mod operator_driver;
pub mod plan;
pub mod readmit;
pub mod records;
pub mod simulate;
pub mod unstaged_driver;
