//! The blueprint's RDMA rails against what the node shows: each port `ibstat` lists
//! matched to the NIC group that declares it ([`assign`]), and each GPU's nearest rail
//! NIC in `nvidia-smi topo -m` ([`nearest`]).
//!
//! Ports are matched to groups by link layer and, where `ibstat`'s `CA type` names a
//! physical function nodeimg knows ([`MODELS`]), by model; virtual functions and unknown
//! types match any model. Healthy ports (Active, LinkUp, at the declared rate) are taken
//! first, so that a group is short only by ports that really are down, slow, of another
//! link layer or absent; ports no group declares are listed, not judged.

use super::ibstat::{Ibstat, Port};
use super::input::{Input, Output};
use super::judge::context::{Ctx, F, at, fmt};
use super::topo::{Link, Topology};
use crate::blueprint::Spec;
use crate::blueprint::model::{LinkLayer, Nic, NicRole};
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::path::Path;

/// `ibstat`'s `CA type` (the PCI device id in decimal) of NVIDIA/Mellanox physical
/// functions, and the model it is. Source: the PCI ID repository, vendor 15b3
/// (pci-ids.ucw.cz/read/PC/15b3): 0x1017 ConnectX-5, 0x1019 ConnectX-5 Ex, 0x101b
/// ConnectX-6, 0x101d ConnectX-6 Dx, 0x101f ConnectX-6 Lx, 0x1021 ConnectX-7, 0x1023
/// ConnectX-8, 0xa2d6 BlueField-2, 0xa2dc BlueField-3. Virtual functions (0x1018, 0x101a,
/// 0x101c, 0x101e) are absent: they say nothing of the model.
pub const MODELS: &[(&str, &str)] = &[
    ("MT4119", "ConnectX-5"),
    ("MT4121", "ConnectX-5 Ex"),
    ("MT4123", "ConnectX-6"),
    ("MT4125", "ConnectX-6 Dx"),
    ("MT4127", "ConnectX-6 Lx"),
    ("MT4129", "ConnectX-7"),
    ("MT4131", "ConnectX-8"),
    ("MT41686", "BlueField-2"),
    ("MT41692", "BlueField-3"),
];

fn normal(model: &str) -> String {
    model
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The model of a CA type, when it is a physical function nodeimg knows.
pub fn model_of(ca_type: &str) -> Option<&'static str> {
    MODELS.iter().find(|(t, _)| *t == ca_type).map(|(_, m)| *m)
}

/// Whether a port may belong to a group by model.
fn model_fits(port: &Port, group: &Nic) -> bool {
    let declared = normal(group.model.as_str());
    let known = MODELS.iter().any(|(_, m)| normal(m) == declared);
    match port.ca_type.as_deref().and_then(model_of) {
        Some(model) if known => normal(model) == declared,
        _ => true,
    }
}

fn layer_fits(port: &Port, group: &Nic) -> bool {
    port.infiniband() == (group.link_layer == LinkLayer::Infiniband)
}

/// Active, LinkUp, at the declared rate, of the declared link layer.
fn healthy(port: &Port, group: &Nic) -> bool {
    port.up()
        && layer_fits(port, group)
        && (port.rate_gbps - f64::from(group.speed_gbps)).abs() < 0.5
}

/// The RDMA NIC groups of the blueprint, each with its index in `network.nics`.
pub fn declared(blueprint: &Spec) -> Vec<(usize, &Nic)> {
    blueprint
        .network
        .nics
        .iter()
        .enumerate()
        .filter(|(_, n)| n.rdma)
        .collect()
}

/// A group and the ports matched to it.
#[derive(Debug)]
pub struct GroupPorts<'a> {
    pub index: usize,
    pub group: &'a Nic,
    pub ports: Vec<&'a Port>,
}

impl GroupPorts<'_> {
    /// `network.nics[0] (compute ConnectX-7, 8× 400 Gb/s infiniband)`.
    pub fn describe(&self) -> String {
        let g = self.group;
        format!(
            "network.nics[{}] ({} {}, {}× {} Gb/s {})",
            self.index,
            g.role,
            g.model.as_str(),
            g.count,
            g.speed_gbps,
            layer(g.link_layer)
        )
    }

    /// What a port of this group must show.
    pub fn expected(&self) -> String {
        format!(
            "Active, LinkUp, {} Gb/s, {}",
            self.group.speed_gbps,
            layer(self.group.link_layer)
        )
    }

    pub fn missing(&self) -> usize {
        (self.group.count as usize).saturating_sub(self.ports.len())
    }

    pub fn healthy(&self, port: &Port) -> bool {
        healthy(port, self.group)
    }
}

pub fn layer(l: LinkLayer) -> &'static str {
    match l {
        LinkLayer::Infiniband => "InfiniBand",
        LinkLayer::Ethernet => "Ethernet",
    }
}

/// Matches ports to groups; returns the groups and the ports no group declares.
pub fn assign<'a>(
    groups: &[(usize, &'a Nic)],
    ports: &'a [Port],
) -> (Vec<GroupPorts<'a>>, Vec<&'a Port>) {
    let mut taken = vec![false; ports.len()];
    let mut out: Vec<GroupPorts<'a>> = groups
        .iter()
        .map(|(index, group)| GroupPorts {
            index: *index,
            group,
            ports: Vec::new(),
        })
        .collect();
    // Healthy ports first, then ports of the group's link layer that are down or slow,
    // then ports of the model that show another link layer.
    let passes: [fn(&Port, &Nic) -> bool; 3] = [
        |p, g| healthy(p, g) && model_fits(p, g),
        |p, g| layer_fits(p, g) && model_fits(p, g),
        model_fits,
    ];
    for fits in passes {
        for g in out.iter_mut() {
            for (i, port) in ports.iter().enumerate() {
                if g.ports.len() >= g.group.count as usize {
                    break;
                }
                if !taken[i] && fits(port, g.group) {
                    taken[i] = true;
                    g.ports.push(port);
                }
            }
        }
    }
    let rest = ports
        .iter()
        .zip(taken)
        .filter(|(_, t)| !t)
        .map(|(p, _)| p)
        .collect();
    (out, rest)
}

/// A GPU and its nearest NIC among `rails` (RDMA device names; all NICs when empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Nearest {
    pub gpu: String,
    pub gpu_numa: Option<u32>,
    /// The NIC column (`NIC0`) and its RDMA device (`mlx5_0`), when the matrix has one.
    pub nic: Option<(String, Option<String>)>,
    pub link: Option<Link>,
    pub line: usize,
}

/// Each GPU's nearest NIC; with `rails` given, only those RDMA devices count.
pub fn nearest(topo: &Topology, rails: &[String]) -> Vec<Nearest> {
    topo.gpus()
        .map(|(row, gpu)| {
            let best = topo
                .nics()
                .filter(|(_, nic)| {
                    rails.is_empty()
                        || nic
                            .rdma
                            .as_ref()
                            .is_some_and(|r| rails.iter().any(|x| x == r))
                })
                .map(|(col, nic)| (topo.links[row][col], nic))
                .min_by_key(|(link, _)| *link);
            Nearest {
                gpu: gpu.name.clone(),
                gpu_numa: gpu.numa,
                nic: best.map(|(_, n)| (n.name.clone(), n.rdma.clone())),
                link: best.map(|(l, _)| l),
                line: gpu.line,
            }
        })
        .collect()
}

const PORT: F = F {
    id: Cow::Borrowed("ports.port"),
    layer: Layer::Interconnect,
    summary: "an RDMA port of a declared NIC group is Active, LinkUp, at the declared rate and link layer (ibstat)",
    fault: FaultClass::Link,
    action: Action::RebootNode,
};

const COUNT: F = F {
    id: Cow::Borrowed("ports.count"),
    layer: Layer::Interconnect,
    summary: "ibstat lists every port a NIC group declares",
    fault: FaultClass::Device,
    action: Action::Service,
};

const PANIC: F = F {
    id: Cow::Borrowed("ports.ibstat"),
    layer: Layer::Interconnect,
    summary: "ibstat listed every device (no `ibpanic`)",
    fault: FaultClass::Device,
    action: Action::Service,
};

fn shown(p: &Port) -> String {
    format!(
        "{}, {}, {} Gb/s, {}",
        p.state.as_str(),
        p.physical_state,
        fmt(p.rate_gbps),
        p.link_layer
    )
}

/// Judges the `ibstat`/`ibstatus` outputs against the blueprint's RDMA NIC groups.
/// Returns the record section and the RDMA devices of the compute rails.
pub(super) fn judge_ports(
    ctx: &mut Ctx<'_>,
    inputs: &[Input],
    blueprint: &Spec,
) -> (Run<Vec<record::RailPort>>, Vec<String>) {
    let runs: Vec<(&Path, &Ibstat)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Ibstat(r) => Some((i.path.as_path(), r)),
            _ => None,
        })
        .collect();
    if runs.is_empty() {
        return (
            Run::not_run(
                "no ibstat output among the inputs (layer 1 checks the ports from sysfs at boot)",
            ),
            Vec::new(),
        );
    }
    // Every port once: a later output of the same port replaces an earlier one.
    let mut ports: Vec<Port> = Vec::new();
    let mut paths: Vec<&Path> = Vec::new();
    for (path, run) in &runs {
        if let Some((line, text)) = &run.panic {
            ctx.push(
                &PANIC,
                None,
                Verdict::Fail,
                "every device listed",
                text.clone(),
                vec![at(path, *line)],
            );
        }
        for port in &run.ports {
            match ports.iter().position(|p| p.name() == port.name()) {
                Some(i) => {
                    ports[i] = port.clone();
                    paths[i] = path;
                }
                None => {
                    ports.push(port.clone());
                    paths.push(path);
                }
            }
        }
    }
    let index = |p: &Port| {
        ports
            .iter()
            .position(|q| std::ptr::eq(q, p))
            .expect("a matched port is one of the ports")
    };
    let groups = declared(blueprint);
    let (matched, _) = assign(&groups, &ports);
    let mut group_of = vec![None; ports.len()];
    let mut rails = Vec::new();
    for g in &matched {
        let describe = g.describe();
        for port in &g.ports {
            let i = index(port);
            group_of[i] = Some(format!("network.nics[{}]", g.index));
            if g.group.role == NicRole::Compute {
                rails.push(port.device.clone());
            }
            let ok = g.healthy(port);
            let wrong_layer = !layer_fits(port, g.group);
            let f = F {
                fault: if wrong_layer {
                    FaultClass::Device
                } else {
                    PORT.fault
                },
                ..PORT
            };
            ctx.push(
                &f,
                Some(port.name()),
                if ok { Verdict::Pass } else { Verdict::Fail },
                format!("{} ({describe})", g.expected()),
                shown(port),
                vec![at(paths[i], port.line)],
            );
        }
        let missing = g.missing();
        ctx.push(
            &COUNT,
            Some(describe),
            if missing == 0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            },
            format!("{} port(s)", g.group.count),
            if missing == 0 {
                format!("{} listed", g.ports.len())
            } else {
                format!(
                    "{} listed ({}), {missing} missing",
                    g.ports.len(),
                    g.ports
                        .iter()
                        .map(|p| p.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            runs.iter().map(|(p, r)| at(p, r.lines.0)).collect(),
        );
    }
    let section = ports
        .iter()
        .zip(&paths)
        .zip(group_of)
        .map(|((p, path), group)| record::RailPort {
            device: p.device.clone(),
            port: p.port,
            ca_type: p.ca_type.clone(),
            firmware: p.firmware.clone(),
            state: p.state.as_str().to_owned(),
            physical_state: p.physical_state.clone(),
            rate_gbps: p.rate_gbps,
            link_layer: p.link_layer.clone(),
            group,
            evidence: at(path, p.line),
        })
        .collect();
    (Run::Done(section), rails)
}

/// NCCL uses GPUDirect RDMA only up to this path by default (`ncclTopoCheckGdr` in
/// NCCL's src/graph/paths.cc: `netGdrLevel = PATH_PXB`, overridable with
/// `NCCL_NET_GDR_LEVEL`); farther, a rail's traffic bounces through host memory.
const GDR_WHY: &str = "NCCL enables GPUDirect RDMA up to PXB by default (NCCL_NET_GDR_LEVEL)";

/// Judges `nvidia-smi topo -m` against the blueprint's GPU↔NIC affinity. `rails` are the
/// compute rails' RDMA devices as ibstat matched them; without ibstat, every NIC of the
/// matrix counts.
pub(super) fn judge_gpu_nic(
    ctx: &mut Ctx<'_>,
    inputs: &[Input],
    blueprint: &Spec,
    rails: &[String],
) -> Run<Vec<record::GpuNic>> {
    const GPUS: F = F {
        id: Cow::Borrowed("gpu-nic.gpus"),
        layer: Layer::Interconnect,
        summary: "nvidia-smi topo -m shows every GPU of the blueprint",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const SWITCH: F = F {
        id: Cow::Borrowed("gpu-nic.pcie-switch"),
        layer: Layer::Interconnect,
        summary: "a GPU shares a PCIe switch (PIX/PXB) with a rail NIC (GPUDirect RDMA declared)",
        fault: FaultClass::Link,
        action: Action::Service,
    };
    const NUMA: F = F {
        id: Cow::Borrowed("gpu-nic.numa"),
        layer: Layer::Interconnect,
        summary: "a GPU has a rail NIC on its NUMA node (not SYS)",
        fault: FaultClass::Link,
        action: Action::Service,
    };
    let topos: Vec<(&Path, &Topology)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Topology(t) => Some((i.path.as_path(), t)),
            _ => None,
        })
        .collect();
    let Some((path, topo)) = topos.last() else {
        return Run::not_run("no nvidia-smi topo -m output among the inputs");
    };
    let affinity = &blueprint.network.affinity;
    let want = ctx.policy.topology.gpus as usize;
    let have = topo.gpus().count();
    if want > 0 {
        ctx.push(
            &GPUS,
            None,
            if have >= want {
                Verdict::Pass
            } else {
                Verdict::Incomplete
            },
            format!("{want} GPUs"),
            format!("{have} GPU(s)"),
            vec![at(path, topo.lines.0)],
        );
    }
    let near = nearest(topo, rails);
    let which = if rails.is_empty() {
        "any NIC of the matrix"
    } else {
        "a compute rail of ibstat"
    };
    let mut section = Vec::new();
    for n in &near {
        let observed = match (&n.nic, n.link) {
            (Some((nic, rdma)), Some(link)) => format!(
                "nearest {nic}{} at {}",
                rdma.as_ref().map(|r| format!(" ({r})")).unwrap_or_default(),
                link.as_str()
            ),
            _ => format!("no NIC in the matrix is {which}"),
        };
        let ev = vec![at(path, n.line)];
        if affinity.gpu_nic_same_pcie_switch {
            let ok = n.link.is_some_and(Link::same_pcie_switch);
            ctx.push(
                &SWITCH,
                Some(n.gpu.clone()),
                if ok { Verdict::Pass } else { Verdict::Fail },
                format!("{which} at PIX or PXB (network.affinity.gpuNicSamePcieSwitch; {GDR_WHY})"),
                observed.clone(),
                ev.clone(),
            );
        }
        if affinity.gpu_nic_same_numa {
            let ok = n.link.is_some_and(Link::same_numa);
            ctx.push(
                &NUMA,
                Some(n.gpu.clone()),
                if ok { Verdict::Pass } else { Verdict::Fail },
                format!(
                    "{which} within the GPU's NUMA node, not SYS (network.affinity.gpuNicSameNuma)"
                ),
                observed,
                ev.clone(),
            );
        }
        section.push(record::GpuNic {
            gpu: n.gpu.clone(),
            numa: n.gpu_numa,
            nic: n.nic.as_ref().map(|(c, _)| c.clone()),
            rdma_device: n.nic.as_ref().and_then(|(_, r)| r.clone()),
            path: n.link.map(Link::as_str),
            evidence: ev[0].clone(),
        });
    }
    Run::Done(section)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accept::ibstat;

    fn nic(model: &str, count: u32, speed: u32, layer: &str) -> Nic {
        serde_yaml::from_str(&format!(
            "{{role: compute, model: {model}, count: {count}, speedGbps: {speed}, mtu: 4096, linkLayer: {layer}, rdma: true}}"
        ))
        .unwrap()
    }

    fn port(device: &str, ca: &str, state: &str, rate: u32, layer: &str) -> String {
        format!(
            "CA '{device}'\n\tCA type: {ca}\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: {state}\n\t\tPhysical state: {}\n\t\tRate: {rate}\n\t\tLink layer: {layer}\n",
            if state == "Active" {
                "LinkUp"
            } else {
                "Disabled"
            }
        )
    }

    #[test]
    fn healthy_ports_are_matched_first_and_the_rest_is_named() {
        let text = [
            port("mlx5_0", "MT4129", "Down", 400, "InfiniBand"),
            port("mlx5_1", "MT4129", "Active", 400, "InfiniBand"),
            port("mlx5_2", "MT4129", "Active", 200, "InfiniBand"),
            port("mlx5_3", "MT4125", "Active", 100, "Ethernet"),
            port("mlx5_4", "MT41692", "Active", 200, "Ethernet"),
        ]
        .concat();
        let ports = ibstat::parse(&text).unwrap().ports;
        let groups = [
            nic("ConnectX-7", 2, 400, "infiniband"),
            nic("ConnectX-6 Dx", 1, 100, "ethernet"),
        ];
        let declared: Vec<(usize, &Nic)> = groups.iter().enumerate().collect();
        let (matched, rest) = assign(&declared, &ports);
        let names =
            |g: &GroupPorts<'_>| g.ports.iter().map(|p| p.device.clone()).collect::<Vec<_>>();
        // mlx5_1 is healthy; of the two faulty CX-7 ports the first fills the group.
        assert_eq!(names(&matched[0]), ["mlx5_1", "mlx5_0"]);
        assert!(matched[0].healthy(matched[0].ports[0]));
        assert!(!matched[0].healthy(matched[0].ports[1]));
        assert_eq!(names(&matched[1]), ["mlx5_3"]);
        let rest: Vec<&str> = rest.iter().map(|p| p.device.as_str()).collect();
        // The BlueField-3 is no ConnectX-6 Dx: undeclared, as is the extra CX-7.
        assert_eq!(rest, ["mlx5_2", "mlx5_4"]);
    }

    #[test]
    fn a_port_of_another_link_layer_is_matched_to_be_reported() {
        let text = port("mlx5_0", "MT4129", "Active", 400, "Ethernet");
        let ports = ibstat::parse(&text).unwrap().ports;
        let groups = [nic("ConnectX-7", 1, 400, "infiniband")];
        let declared: Vec<(usize, &Nic)> = groups.iter().enumerate().collect();
        let (matched, rest) = assign(&declared, &ports);
        assert_eq!(matched[0].ports.len(), 1);
        assert!(!matched[0].healthy(matched[0].ports[0]));
        assert!(rest.is_empty());
        assert_eq!(model_of("MT4126"), None, "a VF names no model");
    }
}
