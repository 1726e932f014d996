//! Nodes whose hardware labels contradict the blueprint: a plan for an H100 blueprint
//! must not roll onto nodes that GPU feature discovery labels `NVIDIA-H200`, nor an
//! 8-GPU image onto a 4-GPU node. The Node list given to `rollout plan` is checked
//! against the blueprint's accelerators before any wave is planned.
//!
//! The labels read are the ones the vendors' own labellers write:
//!
//! - NVIDIA's GPU feature discovery (deployed by the GPU Operator): `nvidia.com/gpu.product`
//!   is the NVML device name with characters other than `[A-Za-z0-9-_. ]` dropped and
//!   blanks as dashes, then `-MIG-<profile>` under a MIG strategy or `-SHARED` under
//!   sharing (NVIDIA/k8s-device-plugin, `internal/lm/resource.go`: `getProductName`,
//!   `sanitise`); and `nvidia.com/gpu.count`, not judged under MIG, where discovery
//!   counts MIG devices.
//! - AMD's node labeller (deployed by the AMD GPU Operator): `amd.com/gpu.product-name`,
//!   the sysfs `product_name` with blanks as `_` and no parentheses, and
//!   `amd.com/gpu.device-id`, the PCI device id without `0x`; on a node whose GPUs differ
//!   they become `amd.com/gpu.product-name.<name>` and `amd.com/gpu.device-id.<id>`,
//!   each with its count (ROCm/k8s-device-plugin, `cmd/k8s-node-labeller/main.go`).
//!
//! The product must be exactly one the blueprint's model is known by: the compatibility
//! matrix's aliases (device names as NVML and sysfs report them, which a site extends
//! with `--matrix`) as the labeller writes them, and the label values of
//! `gpu-labels.csv` beside this file (cited data: what AMD's labeller writes, device ids
//! among it; NVIDIA device names live in the matrix alone). `H100 SXM` thus accepts `NVIDIA-H100-80GB-HBM3` and not
//! `NVIDIA-H100-NVL`. A model known by no such value cannot be told apart from another,
//! so a node labelled with a product is set apart for it too, with the remedy (aliases in
//! a site matrix). A node without these labels is not judged (it may not run discovery);
//! a blueprint without accelerators contradicts a node labelled with a GPU product.

use std::sync::OnceLock;

use crate::blueprint;
use crate::blueprint::compat::Matrix;
use crate::blueprint::model::{SharingMode, Vendor};
use crate::fault::table::{self, TableError};
use crate::k8s::Node;

const TABLE: &str = include_str!("gpu-labels.csv");
const COLUMNS: [&str; 3] = ["model", "label", "value"];

/// (model, label, value) rows of `gpu-labels.csv`.
fn labels() -> &'static [(String, String, String)] {
    static T: OnceLock<Vec<(String, String, String)>> = OnceLock::new();
    T.get_or_init(|| parse(TABLE).expect("the built-in GPU label table parses (tested)"))
}

fn parse(text: &str) -> Result<Vec<(String, String, String)>, TableError> {
    let (meta, rows) = table::parse("gpu-labels.csv", text, &COLUMNS)?;
    let mut out = Vec::new();
    for r in rows {
        let label = r.field(1);
        if label == PRODUCT_LABEL {
            return Err(r.error(
                &meta,
                format!(
                    "`{label}` comes from the compatibility matrix's aliases (NVML device names): add the name there"
                ),
            ));
        }
        if ![AMD_PRODUCT_LABEL, AMD_DEVICE_LABEL].contains(&label) {
            return Err(r.error(
                &meta,
                format!("`{label}` is not a label rollout plan reads"),
            ));
        }
        out.push((
            r.field(0).to_owned(),
            label.to_owned(),
            r.field(2).to_owned(),
        ));
    }
    Ok(out)
}

/// The values `label` takes on a node of `model` (the matrix's spelling): the matrix's
/// aliases as the labeller writes them, then the table's.
fn accepted(matrix: &Matrix, vendor: Vendor, model: &str, label: &str) -> Vec<String> {
    let known = matrix.model(vendor, model);
    let spelling = known.map_or(model, |m| m.model.as_str());
    let mut out: Vec<String> = match label {
        PRODUCT_LABEL => known.map_or_else(Vec::new, |m| {
            m.aliases.iter().map(|a| gfd_product(a)).collect()
        }),
        AMD_PRODUCT_LABEL => known.map_or_else(Vec::new, |m| {
            m.aliases.iter().map(|a| amd_product(a)).collect()
        }),
        _ => Vec::new(),
    };
    for (m, l, v) in labels() {
        if m.eq_ignore_ascii_case(spelling) && l == label && !out.contains(v) {
            out.push(v.clone());
        }
    }
    out
}

pub const PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
pub const COUNT_LABEL: &str = "nvidia.com/gpu.count";
pub const AMD_PRODUCT_LABEL: &str = "amd.com/gpu.product-name";
pub const AMD_DEVICE_LABEL: &str = "amd.com/gpu.device-id";

/// One node's label against the blueprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contradiction {
    pub node: String,
    pub label: String,
    pub value: String,
    /// What the blueprint declares, in words.
    pub declared: String,
}

impl std::fmt::Display for Contradiction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}={}, the blueprint declares {}",
            self.node, self.label, self.value, self.declared
        )
    }
}

/// A device name as GPU feature discovery writes it into `nvidia.com/gpu.product`.
pub fn gfd_product(name: &str) -> String {
    let kept: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '))
        .collect();
    kept.split_whitespace().collect::<Vec<_>>().join("-")
}

/// A product name as AMD's node labeller writes it into `amd.com/gpu.product-name`.
pub fn amd_product(name: &str) -> String {
    name.trim().replace(' ', "_").replace(['(', ')'], "")
}

/// `value` is one of the GFD `products`, bare, shared or as a MIG device.
fn gfd_matches(value: &str, products: &[String]) -> bool {
    products.iter().any(|p| {
        value == p
            || value
                .strip_prefix(p.as_str())
                .is_some_and(|rest| rest == "-SHARED" || rest.starts_with("-MIG-"))
    })
}

/// What the blueprint declares, with the values it accepts.
fn declared(declared: &str, accepted: &[String]) -> String {
    if accepted.is_empty() {
        format!(
            "{declared}, for which no label value is known: add the device names its GPUs report as `aliases` with --matrix"
        )
    } else {
        format!("{declared} ({})", accepted.join(" or "))
    }
}

/// Every contradiction between `nodes`' hardware labels and `blueprint`, the blueprint's
/// model looked up in `matrix`.
pub fn contradictions(
    nodes: &[Node],
    blueprint: &blueprint::Spec,
    matrix: &Matrix,
) -> Vec<Contradiction> {
    let mut out = Vec::new();
    for node in nodes {
        let mut push = |label: &str, value: &str, declared: String| {
            out.push(Contradiction {
                node: node.name.clone(),
                label: label.to_owned(),
                value: value.to_owned(),
                declared,
            })
        };
        let product = node.labels.get(PRODUCT_LABEL);
        let count = node.labels.get(COUNT_LABEL);
        // AMD's labels, single-valued or one per kind of GPU on the node: (label, value).
        let amd = |label: &str| -> Vec<(String, String)> {
            node.labels
                .iter()
                .filter_map(|(k, v)| {
                    if k == label {
                        Some((k.clone(), v.clone()))
                    } else {
                        k.strip_prefix(label)
                            .and_then(|rest| rest.strip_prefix('.'))
                            .map(|value| (k.clone(), value.to_owned()))
                    }
                })
                .collect()
        };
        let (amd_products, amd_devices) = (amd(AMD_PRODUCT_LABEL), amd(AMD_DEVICE_LABEL));
        let Some(acc) = &blueprint.accelerators else {
            if let Some(p) = product {
                push(PRODUCT_LABEL, p, "no accelerators".into());
            }
            for (k, v) in amd_products.iter().chain(&amd_devices) {
                push(k, v, "no accelerators".into());
            }
            continue;
        };
        let model = acc.model.as_str();
        let what = format!("{} {model}", acc.vendor);
        match acc.vendor {
            Vendor::Nvidia => {
                for (k, v) in amd_products.iter().chain(&amd_devices) {
                    push(k, v, what.clone());
                }
                let products = accepted(matrix, acc.vendor, model, PRODUCT_LABEL);
                if let Some(p) = product
                    && !gfd_matches(p, &products)
                {
                    push(PRODUCT_LABEL, p, declared(&what, &products));
                }
                if acc.sharing.mode() != SharingMode::Mig
                    && let Some(c) = count
                    && c.trim() != acc.count.to_string()
                {
                    push(COUNT_LABEL, c, format!("{} GPUs", acc.count));
                }
            }
            Vendor::Amd => {
                // Discovery's labels are NVIDIA's: an NVIDIA product on an AMD blueprint's node.
                if let Some(p) = product {
                    push(PRODUCT_LABEL, p, what.clone());
                }
                for (label, found) in [
                    (AMD_PRODUCT_LABEL, &amd_products),
                    (AMD_DEVICE_LABEL, &amd_devices),
                ] {
                    let values = accepted(matrix, acc.vendor, model, label);
                    for (k, v) in found {
                        let id = |s: &str| s.trim().trim_start_matches("0x").to_ascii_lowercase();
                        let known = if label == AMD_DEVICE_LABEL {
                            values.iter().any(|a| id(a) == id(v))
                        } else {
                            values.contains(v)
                        };
                        if !known {
                            push(k, v, declared(&what, &values));
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_the_labellers_write_them() {
        assert_eq!(
            gfd_product("NVIDIA H100 80GB HBM3"),
            "NVIDIA-H100-80GB-HBM3"
        );
        assert_eq!(
            gfd_product("NVIDIA A100-SXM4-80GB"),
            "NVIDIA-A100-SXM4-80GB"
        );
        assert_eq!(gfd_product("NVIDIA RTX (TM)  6000"), "NVIDIA-RTX-TM-6000");
        assert_eq!(
            amd_product("AMD Instinct MI300X OAM"),
            "AMD_Instinct_MI300X_OAM"
        );
        let h100 = ["NVIDIA-H100-80GB-HBM3".to_owned()];
        assert!(gfd_matches("NVIDIA-H100-80GB-HBM3", &h100));
        assert!(gfd_matches("NVIDIA-H100-80GB-HBM3-SHARED", &h100));
        assert!(gfd_matches("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", &h100));
        assert!(!gfd_matches("NVIDIA-H100-80GB-HBM3e", &h100));
        assert!(!gfd_matches("NVIDIA-H100-NVL", &h100));
    }

    #[test]
    fn the_built_in_label_table_parses_and_names_known_models() {
        let matrix = Matrix::builtin();
        for (model, _, _) in parse(TABLE).unwrap() {
            assert!(
                matrix.model(Vendor::Nvidia, &model).is_some()
                    || matrix.model(Vendor::Amd, &model).is_some(),
                "{model} is not a model of the matrix"
            );
        }
        assert_eq!(
            accepted(&matrix, Vendor::Nvidia, "H100 SXM", PRODUCT_LABEL),
            ["NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-SXM5-80GB"]
        );
        // An L40S node is not refused for its own product (the matrix's alias).
        assert_eq!(
            accepted(&matrix, Vendor::Nvidia, "l40s", PRODUCT_LABEL),
            ["NVIDIA-L40S"]
        );
        assert_eq!(
            accepted(&matrix, Vendor::Amd, "MI300X", AMD_PRODUCT_LABEL),
            ["AMD_Instinct_MI300X_OAM"]
        );
        let head = "# source: s\n# version: v\n# read: r\nmodel,label,value\n";
        assert!(parse(&format!("{head}X,foo,1\n")).is_err());
        // NVIDIA device names have one home, the matrix.
        let e = parse(&format!("{head}L40S,nvidia.com/gpu.product,NVIDIA-L40S\n")).unwrap_err();
        assert!(e.to_string().contains("aliases"), "{e}");
    }
}
