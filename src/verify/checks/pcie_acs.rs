//! PCIe ACS on the switch ports above the GPUs and NICs, judged against how the blueprint
//! uses them (`pcie.acs.p2p-redirect`).
//!
//! On bare metal, GPU↔GPU peer traffic and GPUDirect RDMA (NIC↔GPU) cross a PCIe switch
//! directly only when its downstream ports do not redirect peer requests and completions
//! to the root complex: with ACS P2P Request or Completion Redirect (or P2P Egress Control)
//! on, NCCL's P2P and GPUDirect paths slow down or hang while every link reports full width.
//! NVIDIA's NCCL troubleshooting guide ("PCI Access Control Services (ACS)",
//! <https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#pci-access-control-services-acs>)
//! says to disable ACS on the PCI switches (the BIOS's IO virtualization / VT-d setting,
//! or per Broadcom PLX port with `setpci`, again after each reboot); the GPUDirect Storage
//! best-practices guide says the same for the GPU↔NIC/NVMe path
//! (<https://docs.nvidia.com/gpudirect-storage/best-practices-guide/software-settings.html>).
//!
//! With `accelerators.vfioPassthrough` the GPUs go to VMs, and ACS is what isolates them:
//! the kernel puts devices below a port into separate IOMMU groups only when Request and
//! Completion Redirect are on (`pci_acs_enabled` in drivers/pci/pci.c; a control the port
//! does not implement counts as hard-wired on). So the intent flips: redirect on.
//!
//! Only switch downstream ports are judged (the port type is read from the PCI Express
//! capability). Root ports are read (they are in the capture) but not judged: peer
//! traffic between root ports goes through the root complex either way, and the kernel
//! turns their ACS on whenever the IOMMU is on. A switch upstream port routes nothing
//! between peers below it, and ACS does not apply there.

use super::catalog::pcie::ACS;
use super::{Inputs, Observation, Results};
use crate::blueprint;
use crate::verify::fact::Fact;
use crate::verify::facts::pcie_acs::{
    Acs, AcsPort, COMPLETION_REDIRECT, EGRESS_CONTROL, PortType, REQUEST_REDIRECT, bit_names,
};

/// The blueprint asks for peer traffic on a switch: several GPUs, RDMA NICs, or VFIO.
pub fn applies(blueprint: &blueprint::Spec) -> bool {
    blueprint.accelerators.as_ref().is_some_and(|a| {
        a.vfio_passthrough || a.count > 1 || blueprint.network.nics.iter().any(|g| g.rdma)
    })
}

pub fn evaluate(input: &Inputs, out: &mut Results) {
    if !applies(input.blueprint) {
        return;
    }
    let vfio = input
        .blueprint
        .accelerators
        .as_ref()
        .is_some_and(|a| a.vfio_passthrough);
    let expected = if vfio {
        "ReqRedir+ CmpltRedir+ on every switch port (VFIO passthrough isolates the GPUs)"
    } else {
        "ReqRedir- CmpltRedir- EgressCtrl- on every switch port (bare-metal P2P and GPUDirect)"
    };
    let ports = match &input.facts.pcie_acs {
        Fact::Unknown { reason } => {
            out.record(
                &ACS,
                None,
                expected,
                Observation::unknown(reason.clone()),
                vec!["/sys/bus/pci/devices/*/config".to_owned()],
            );
            return;
        }
        Fact::Known(ports) => ports,
    };
    // Root ports and switch upstream ports are not judged; a port whose type is unknown is.
    let judged = |port: &&AcsPort| match &port.config {
        Fact::Known(config) => config.port_type == Some(PortType::SwitchDownstream),
        Fact::Unknown { .. } => true,
    };
    let switch_ports: Vec<&AcsPort> = ports.iter().filter(judged).collect();
    if switch_ports.is_empty() {
        out.record(
            &ACS,
            None,
            expected,
            Observation::value(
                "no PCIe switch downstream port between the root ports and the GPUs and NICs",
                true,
            ),
            vec!["/sys/bus/pci/devices".to_owned()],
        );
        return;
    }
    for port in switch_ports {
        let below = port
            .below
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let observation = match &port.config {
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
            Fact::Known(config) => judge(port, config.acs.as_ref(), vfio, &below),
        };
        out.record(
            &ACS,
            Some(port.address.to_string()),
            expected,
            observation,
            vec![format!("/sys/bus/pci/devices/{}/config", port.address)],
        );
    }
}

fn judge(port: &AcsPort, acs: Option<&Acs>, vfio: bool, below: &str) -> Observation {
    let Some(acs) = acs else {
        return Observation::value(
            format!("no ACS capability (above {below})"),
            // Nothing redirects peer traffic; nothing isolates the devices below either.
            !vfio,
        );
    };
    let shown = format!("ACSCtl {} (above {below})", acs.control_text());
    if vfio {
        // A control the port lacks is hard-wired on (the kernel's reading).
        let wanted = (REQUEST_REDIRECT | COMPLETION_REDIRECT) & acs.capability;
        let missing = wanted & !acs.control;
        if missing == 0 {
            return Observation::value(shown, true);
        }
        let value = acs.control | missing;
        return Observation::value(
            format!(
                "{shown}; turn on {}: the IOMMU/ACS setting in the BIOS, or `setpci -s {} ECAP_ACS+0x6.w={value:04x}`",
                bit_names(missing).join(" "),
                port.address
            ),
            false,
        );
    }
    let on = acs.control & (REQUEST_REDIRECT | COMPLETION_REDIRECT | EGRESS_CONTROL);
    if on == 0 {
        return Observation::value(shown, true);
    }
    let value = acs.control & !on;
    Observation::value(
        format!(
            "{shown}; turn off {}: the BIOS's ACS / IO virtualization setting for the switch, or `setpci -s {} ECAP_ACS+0x6.w={value:04x}` at every boot",
            bit_names(on).join(" "),
            port.address
        ),
        false,
    )
}
