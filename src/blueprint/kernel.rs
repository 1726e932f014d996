//! The kernel modules loaded at boot and the kernel parameters (sysctls) a blueprint
//! implies, each with the reason it is there. Render writes them
//! (`etc/modules-load.d/nodeimg.conf`, `etc/sysctl.d/90-nodeimg.conf`); verify reads the
//! parameters back from `/proc/sys` (`os.sysctl`), so both take them from here.
//! Baselines come first; `security.sysctls` overrides any of them, so every key is
//! written once and the file says who asked for it.

use super::Spec;
use super::model::*;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    pub modules: Vec<Group>,
    pub sysctls: Vec<Group>,
}

impl Kernel {
    /// The modules and parameters the image writes for `s`: what the template lays out,
    /// and what `verify` reads back (`os.sysctl`).
    pub fn of(s: &Spec) -> Self {
        of(s)
    }
}

/// Lines that share one reason (a comment above them).
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub why: &'static str,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub key: String,
    /// Empty for a module name.
    pub value: String,
}

fn group(why: &'static str, entries: &[(&str, &str)]) -> Group {
    Group {
        why,
        entries: entries
            .iter()
            .map(|(k, v)| Entry {
                key: (*k).to_string(),
                value: (*v).to_string(),
            })
            .collect(),
    }
}

/// Whether the blueprint has RoCE NICs: RDMA over an Ethernet link layer.
pub fn roce(s: &Spec) -> bool {
    s.network
        .nics
        .iter()
        .any(|n| n.rdma && n.link_layer == LinkLayer::Ethernet)
}

fn of(s: &Spec) -> Kernel {
    let rdma = s.network.nics.iter().any(|n| n.rdma);
    let mut mods = vec![group(
        "containerd's overlayfs snapshotter; bridged pod traffic through iptables (Kubernetes node prerequisites)",
        &[("overlay", ""), ("br_netfilter", "")],
    )];
    if let Some(a) = &s.accelerators
        && a.driver.authority == DriverAuthority::Preinstalled
    {
        mods.push(match a.vendor {
            Vendor::Nvidia => group(
                "the image's NVIDIA driver, loaded before CDI generation and acceptance",
                &[("nvidia", ""), ("nvidia_uvm", ""), ("nvidia_modeset", "")],
            ),
            Vendor::Amd => group("the image's amdgpu driver", &[("amdgpu", "")]),
        });
        if a.vendor == Vendor::Nvidia && rdma && s.network.ofed.is_some() {
            mods.push(group(
                "GPUDirect RDMA through the pinned OFED's peer-memory API (network.ofed)",
                &[("nvidia_peermem", "")],
            ));
        }
    }
    if rdma {
        mods.push(group(
            "RDMA user-space access (verbs, RDMA-CM) for the RDMA NICs",
            &[("ib_umad", ""), ("rdma_ucm", "")],
        ));
    }

    let mut sysctls = vec![
        group(
            "kubelet protectKernelDefaults refuses to start unless these hold",
            &[
                ("vm.overcommit_memory", "1"),
                ("vm.panic_on_oom", "0"),
                ("kernel.panic", "10"),
                ("kernel.panic_on_oops", "1"),
                ("kernel.keys.root_maxkeys", "1000000"),
                ("kernel.keys.root_maxbytes", "25000000"),
            ],
        ),
        group(
            "Kubernetes node prerequisites: pod traffic is forwarded and bridged traffic passes iptables (needs br_netfilter)",
            &[
                ("net.ipv4.ip_forward", "1"),
                ("net.bridge.bridge-nf-call-iptables", "1"),
                ("net.bridge.bridge-nf-call-ip6tables", "1"),
            ],
        ),
        group(
            "Many containers per node: inotify instances and watches, PIDs",
            &[
                ("fs.inotify.max_user_instances", "8192"),
                ("fs.inotify.max_user_watches", "524288"),
                ("kernel.pid_max", "4194304"),
            ],
        ),
    ];
    if s.accelerators.is_some() {
        sysctls.push(group(
            "Automatic NUMA balancing migrates pages under GPU jobs that are pinned to their NUMA node; AMD's MI300X and NVIDIA's Grace tuning guides turn it off",
            &[("kernel.numa_balancing", "0")],
        ));
    }
    if roce(s) {
        sysctls.push(group(
            "RoCE multi-rail: several NICs on one subnet; loose reverse-path filtering (strict drops RoCEv2 replies arriving on another rail) and no ARP flux (each NIC answers only for its own address)",
            &[
                ("net.ipv4.conf.all.rp_filter", "2"),
                ("net.ipv4.conf.all.arp_ignore", "1"),
                ("net.ipv4.conf.all.arp_announce", "2"),
            ],
        ));
    }
    // security.sysctls wins over every baseline: drop the keys it sets.
    let own: BTreeSet<String> = s.security.sysctls.keys().map(|k| k.to_string()).collect();
    for g in &mut sysctls {
        g.entries.retain(|e| !own.contains(&e.key));
    }
    sysctls.retain(|g| !g.entries.is_empty());
    if !s.security.sysctls.is_empty() {
        sysctls.push(Group {
            why: "security.sysctls",
            entries: s
                .security
                .sysctls
                .iter()
                .map(|(k, v)| Entry {
                    key: k.to_string(),
                    value: v.to_string(),
                })
                .collect(),
        });
    }
    Kernel {
        modules: mods,
        sysctls,
    }
}
