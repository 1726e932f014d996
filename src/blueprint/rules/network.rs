//! Network rules: a NIC group nodeimg cannot identify (no driver, a model
//! it has no PCI ids for) gets no MTU or link rule from the image, and
//! verify cannot tell its interfaces from any other of that link type.

use super::p;
use crate::blueprint::compat::Matrix;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

pub fn check(bp: &RawBlueprint, matrix: &Matrix, out: &mut Collector<'_>) {
    for (i, n) in bp.network.nics.iter().enumerate() {
        if n.driver.is_none() && matrix.nic_device_ids(&n.model).is_none() {
            out.warning(
                "nic-unidentified",
                &p("network.nics").index(i).key("model"),
                format!(
                    "the compatibility matrix has no PCI ids for `{}` and no driver is named: the image sets no MTU or link state for this group, and verify matches its interfaces by link layer alone",
                    n.model
                ),
            )
            .hint = Some("name the kernel driver (network.nics[].driver), e.g. mlx5_core, or add the model's PCI ids to a --matrix file (nics)".into());
        }
    }
}
