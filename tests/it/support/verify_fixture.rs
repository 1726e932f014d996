//! A healthy 8×H100 node for verify tests and the blueprint it satisfies: the facts
//! fixture with a complete kernel command line, a clean kernel log, a clean nvidia-smi
//! output, and stand-in `containerd`, `kubelet` and `systemctl` programs.
//!
//! Tests mutate this tree (or the nvidia-smi [`SmiLog`]) to make exactly one check fail.

use super::fixture_tree::{self, Tree};
use super::nvidia_smi::SmiLog;
use nodeimg::blueprint::{self, Blueprint, compat::Matrix};
use nodeimg::verify::checks::{self, CheckResult, Selection};
use nodeimg::verify::{CollectOptions, Facts, KernelLogSource, ToolOutput, collect};
use std::path::Path;
use std::time::Duration;

pub const CMDLINE: &str = "BOOT_IMAGE=/boot/vmlinuz-5.15.0-122-generic root=UUID=2b1c ro intel_iommu=on amd_iommu=on iommu=pt systemd.unified_cgroup_hierarchy=1 rd.driver.blacklist=nouveau modprobe.blacklist=nouveau default_hugepagesz=1G hugepagesz=1G hugepages=16 pci=realloc=off nouveau.modeset=0 cpufreq.default_governor=performance";

/// The blueprint the healthy fixture satisfies.
pub const BLUEPRINT: &str = r#"apiVersion: nodeimg.dev/v1alpha1
kind: NodeBlueprint
metadata:
  name: h100-fixture
  version: "2026.11.1"
os:
  distro: ubuntu
  version: "22.04"
  patchLevel: "2026-11-15"
  kernel: 5.15.0-122-generic
  cgroup: v2
boot:
  iommu: passthrough
  kernelArgs:
    required: [pci=realloc=off]
    forbidden: [mitigations=off, nouveau.modeset=1]
  hugepages:
    - size: 1Gi
      count: 16
firmware:
  bios:
    iommu: enabled
    above4gDecoding: enabled
    resizableBar: enabled
    smt: enabled
    numaPerSocket: 1
    secureBoot: enabled
    moduleSigning: enforce
    powerProfile: performance
  versions:
    bios: ">=1.3"
    gpuVbios: "96.00.99.00.01"
    nic: "28.39.1002"
accelerators:
  vendor: nvidia
  model: H100 SXM
  count: 8
  pcie:
    generation: 5
    width: 16
  interconnect:
    gpuLinks: true
    nvswitch: true
    fabricManager:
      version: "570.172.08"
  driver:
    version: "570.172.08"
    authority: preinstalled
    kernelModule: open
  cuda: "12.8"
  containerToolkit: "1.18.1"
  sharing:
    mode: none
  eccRequired: true
  persistence: true
network:
  nics:
    - role: compute
      model: ConnectX-7
      count: 8
      speedGbps: 400
      mtu: 4096
      linkLayer: infiniband
      rdma: true
      driver: mlx5_core
      firmware: "28.39.1002"
    - role: management
      model: I210
      count: 1
      speedGbps: 1
      mtu: 1500
      linkLayer: ethernet
      driver: igb
  affinity:
    gpuNicSameNuma: true
    gpuNicSamePcieSwitch: true
runtime:
  containerd:
    version: 1.7.27
  cdi:
    enabled: true
    generator: nvidia-ctk
kubernetes:
  version: 1.32.4
  capacity:
    cpu: 224
    memory: 2Ti
  kubelet:
    kubeReserved:
      policy: eks
    systemReserved:
      cpu: 500m
      memory: 2Gi
  deviceInjection:
    mode: device-plugin
    version: 0.17.1
system:
  timeSync:
    servers: [time1.example.com]
  shmSize: 64Gi
"#;

/// The healthy node.
pub fn healthy_tree() -> Tree {
    let tree = fixture_tree::h100_node();
    tree.attr("/proc/cmdline", CMDLINE);
    tree.attr("/proc/sys/kernel/hostname", "gpu-node-01");
    sysctls(&tree);
    tree.file("/dev/nvidia-uvm", "");
    // GPUDirect RDMA without OFED goes through DMA-BUF: the kernel is built with it.
    tree.file(
        "/boot/config-5.15.0-122-generic",
        "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 5.15.0-122-generic Kernel Configuration\n#\nCONFIG_DMA_SHARED_BUFFER=y\n# CONFIG_DMABUF_DEBUG is not set\n",
    );
    tree.file(
        "/dev/kmsg",
        "6,1,0,-;Linux version 5.15.0-122-generic\n6,2,1000,-;NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.172.08\n",
    );
    tree.script(
        "/usr/bin/containerd",
        "#!/bin/sh\necho 'containerd github.com/containerd/containerd v1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da'\n",
    );
    tree.script("/usr/bin/kubelet", "#!/bin/sh\necho 'Kubernetes v1.32.4'\n");
    systemctl(&tree, &[]);
    governors(&tree, "performance");
    tree
}

/// The kernel parameters the image writes for the fixture blueprint, as `/proc/sys`
/// shows them once `systemd-sysctl` applied them.
pub fn sysctls(tree: &Tree) {
    for (path, value) in [
        ("vm/overcommit_memory", "1"),
        ("vm/panic_on_oom", "0"),
        ("kernel/panic", "10"),
        ("kernel/panic_on_oops", "1"),
        ("kernel/keys/root_maxkeys", "1000000"),
        ("kernel/keys/root_maxbytes", "25000000"),
        ("net/ipv4/ip_forward", "1"),
        ("net/bridge/bridge-nf-call-iptables", "1"),
        ("net/bridge/bridge-nf-call-ip6tables", "1"),
        ("fs/inotify/max_user_instances", "8192"),
        ("fs/inotify/max_user_watches", "524288"),
        ("kernel/pid_max", "4194304"),
        ("kernel/numa_balancing", "0"),
    ] {
        tree.attr(&format!("/proc/sys/{path}"), value);
    }
}

/// One cpufreq policy per socket (2), each with `governor`.
pub fn governors(tree: &Tree, governor: &str) {
    for policy in 0..2 {
        tree.attr(
            &format!("/sys/devices/system/cpu/cpufreq/policy{policy}/scaling_governor"),
            governor,
        );
    }
}

/// A `systemctl` whose `is-active` prints `active` except for the units listed.
pub fn systemctl(tree: &Tree, states: &[(&str, &str)]) {
    // Like systemd: one line per unit, in order; exit 3 unless every unit is active.
    let mut script = String::from(
        "#!/bin/sh\n# is-active -- UNIT...\n[ \"$1\" = is-active ] && [ \"$2\" = -- ] || exit 2\nshift 2\nrc=0\nfor unit in \"$@\"; do\n  case \"$unit\" in\n",
    );
    for (unit, state) in states {
        script.push_str(&format!("    {unit}) echo {state}; rc=3;;\n"));
    }
    script.push_str("    *) echo active;;\n  esac\ndone\nexit $rc\n");
    tree.script("/usr/bin/systemctl", &script);
}

/// nvidia-smi output of the healthy node: no pending remap, no uncorrectable errors.
pub fn healthy_xml() -> String {
    SmiLog::h100_healthy().xml()
}

/// Loads blueprint text, panicking with the diagnostics when it is invalid.
pub fn blueprint(text: &str) -> Blueprint {
    match blueprint::load_bytes(
        text.as_bytes(),
        Path::new("fixture.yaml"),
        None,
        &Matrix::builtin(),
    ) {
        Ok(loaded) => loaded.blueprint,
        Err(diagnostics) => panic!(
            "fixture blueprint is invalid:\n{}",
            diagnostics
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

pub fn options(xml: &str) -> CollectOptions {
    CollectOptions {
        nvidia_smi: ToolOutput::Provided(xml.to_owned()),
        rocm_smi: ToolOutput::Skip,
        kernel_log: KernelLogSource::Kmsg,
        command_timeout: Duration::from_secs(10),
        ..CollectOptions::default()
    }
}

pub fn facts(tree: &Tree, xml: &str) -> Facts {
    collect(&tree.host(), &options(xml))
}

/// Every check result for the tree, the XML and the blueprint text.
pub fn results(tree: &Tree, xml: &str, blueprint_text: &str) -> Vec<CheckResult> {
    let bp = blueprint(blueprint_text);
    checks::evaluate(
        bp.spec(),
        &facts(tree, xml),
        &Matrix::builtin(),
        &Selection::default(),
    )
}
