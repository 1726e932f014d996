//! `network`: the NIC settings the image owns — each NIC group's MTU and its
//! link administratively up — as udev rules (`etc/udev/rules.d/
//! 81-nodeimg-nics.rules`), so verify's `nic.mtu` and `nic.link.state`
//! check what the image set, on every distro family and whatever the site
//! uses for addresses (netplan, NetworkManager, ifupdown, cloud-init):
//! nodeimg renders no addresses or routes.
//!
//! A rule matches interfaces the way verify assigns them to groups
//! (`verify::checks::network`): link type, the kernel driver when the group
//! names one, and the PCI device id when nodeimg knows the model. An
//! interface fits the first group it matches; udev applies every matching
//! rule in order, so the rules are written last group first.

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::compat::Matrix;
use crate::blueprint::model::*;

#[derive(Debug, Clone, Serialize)]
pub struct NicRule {
    /// `network.nics[i]` and what the group is.
    pub what: String,
    /// `ATTR{type}`: 1 Ethernet, 32 Infiniband (IPoIB).
    pub link_type: u32,
    pub driver: Option<String>,
    /// PCI device ids (`ATTRS{device}`), one rule each; empty when the
    /// model is unknown.
    pub device_ids: Vec<String>,
    /// The netdev MTU: the group's MTU, less the 4-byte IPoIB header on
    /// InfiniBand (4092 for IB MTU 4096).
    pub mtu: u32,
}

/// The groups nodeimg can tell apart (a driver or a model `matrix` has PCI
/// ids for); the others are left to the site's network configuration.
pub(super) fn of(s: &Spec, matrix: &Matrix) -> Vec<NicRule> {
    let mut rules: Vec<NicRule> = s
        .network
        .nics
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let ids = matrix.nic_device_ids(&n.model).unwrap_or(&[]);
            if n.driver.is_none() && ids.is_empty() {
                return None;
            }
            let (link_type, mtu) = match n.link_layer {
                LinkLayer::Ethernet => (1, n.mtu),
                LinkLayer::Infiniband => (32, n.mtu.saturating_sub(4)),
            };
            Some(NicRule {
                what: format!(
                    "network.nics[{i}]: {} × {}, {} Gb/s {}",
                    n.count,
                    n.model,
                    n.speed_gbps,
                    match n.role {
                        NicRole::Compute => "compute",
                        NicRole::Storage => "storage",
                        NicRole::Frontend => "frontend",
                        NicRole::Management => "management",
                    }
                ),
                link_type,
                driver: n.driver.as_ref().map(ToString::to_string),
                device_ids: ids.iter().map(|d| format!("0x{d:04x}")).collect(),
                mtu,
            })
        })
        .collect();
    rules.reverse();
    rules
}
