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
    bmc: ">=5.10"
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
    kernel_modules(&tree);
    ipmitool(&tree, "5.10");
    tree
}

/// A stand-in `ipmitool mc info` answering with firmware revision `revision`, in the
/// layout of ipmitool 1.8's `ipmi_mc_get_deviceid`.
pub fn ipmitool(tree: &Tree, revision: &str) {
    tree.script(
        "/usr/bin/ipmitool",
        &format!(
            "#!/bin/sh\n[ \"$1 $2\" = \"mc info\" ] || exit 1\ncat <<'EOF'\nDevice ID                 : 32\nDevice Revision           : 1\nFirmware Revision         : {revision}\nIPMI Version              : 2.0\nManufacturer ID           : 10876\nDevice Available          : yes\nProvides Device SDRs      : no\nEOF\n"
        ),
    );
}

/// `modinfo` of the healthy node's GPU and RDMA modules: the DKMS-built, MOK-signed
/// `nvidia` and the in-tree `mlx5_core` and `ib_core` of 5.15.0-122-generic.
pub fn modinfo_nvidia(vermagic: &str, srcversion: &str, signer: Option<&str>) -> String {
    let signature = signer.map_or(String::new(), |signer| {
        format!(
            "sig_id:         PKCS#7\nsigner:         {signer}\nsig_key:        5A:1C:0E:2B:77:90:3D:44:C1:08:6F:3B:92:DE:10:55:AA:07:61:3C\nsig_hashalgo:   sha512\nsignature:      30:65:02:31:00:B4:2F:10:9C:6A:DE:37:5D:11:82:44:70:0B:CF:91:\n\t\t5E:27:43:8A:01:90:FD:2E:6C:17:3B:88:0E:4A:92:D1\n"
        )
    });
    format!(
        "filename:       /lib/modules/5.15.0-122-generic/updates/dkms/nvidia.ko\nversion:        570.172.08\nlicense:        Dual MIT/GPL\nsrcversion:     {srcversion}\nalias:          pci:v000010DEd*sv*sd*bc03sc02i00*\ndepends:        \nretpoline:      Y\nname:           nvidia\nvermagic:       {vermagic} SMP mod_unload modversions \n{signature}parm:           NVreg_EnableGpuFirmware:int\n"
    )
}

/// The in-tree module `name` of 5.15.0-122-generic as modinfo prints it.
fn modinfo_in_tree(name: &str, path: &str, srcversion: &str) -> String {
    format!(
        "filename:       /lib/modules/5.15.0-122-generic/kernel/{path}\nlicense:        Dual BSD/GPL\nsrcversion:     {srcversion}\ndepends:        \nretpoline:      Y\nintree:         Y\nname:           {name}\nvermagic:       5.15.0-122-generic SMP mod_unload modversions \nsig_id:         PKCS#7\nsigner:         Build time autogenerated kernel key\nsig_key:        3B:7A:51:90:0C:2D:E4:16:88:AF:5E:21:C9:03:6D:7B:14:E2:9A:40\nsig_hashalgo:   sha512\nsignature:      30:64:02:30:1F:3D:2A:90:6C:0B:55:E1:72:4D:08:A3:91:7E:2C:55:\n\t\t0D:44:6E:19:B3:28:7A:90:11:C2:5F:83\n"
    )
}

/// The `srcversion` of the healthy node's nvidia.ko.
pub const NVIDIA_SRCVERSION: &str = "7C3F0B0E54A1B6AF2E8C1D9";

/// A stand-in `modinfo -- NAME` printing `answers` (name, output); kmod's error and exit
/// status 1 for any other name.
pub fn modinfo(tree: &Tree, answers: &[(&str, String)]) {
    let mut script = String::from("#!/bin/sh\n[ \"$1\" = -- ] || exit 2\ncase \"$2\" in\n");
    for (name, output) in answers {
        script.push_str(&format!("  {name}) cat <<'EOF'\n{output}EOF\n  ;;\n"));
    }
    script.push_str("  *) echo \"modinfo: ERROR: Module $2 not found.\" >&2; exit 1;;\nesac\n");
    tree.script("/usr/sbin/modinfo", &script);
}

/// The healthy node's modules on disk (`modinfo`) and in memory (`/sys/module`).
pub fn kernel_modules(tree: &Tree) {
    modinfo(
        tree,
        &[
            (
                "nvidia",
                modinfo_nvidia(
                    "5.15.0-122-generic",
                    NVIDIA_SRCVERSION,
                    Some("nodeimg-fleet DKMS module signing key"),
                ),
            ),
            (
                "mlx5_core",
                modinfo_in_tree(
                    "mlx5_core",
                    "drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko",
                    "8F5B1D7C2E0A1F5D4C6B3A9",
                ),
            ),
            (
                "ib_core",
                modinfo_in_tree(
                    "ib_core",
                    "drivers/infiniband/core/ib_core.ko",
                    "2D9E4A61B0C37F58E1A2B4C",
                ),
            ),
        ],
    );
    for (name, srcversion, taint) in [
        ("nvidia", NVIDIA_SRCVERSION, "O"),
        ("mlx5_core", "8F5B1D7C2E0A1F5D4C6B3A9", ""),
        ("ib_core", "2D9E4A61B0C37F58E1A2B4C", ""),
    ] {
        tree.attr(&format!("/sys/module/{name}/initstate"), "live");
        tree.attr(&format!("/sys/module/{name}/srcversion"), srcversion);
        tree.attr(&format!("/sys/module/{name}/taint"), taint);
    }
    // Bit 12 (O): an out-of-tree module is loaded.
    tree.attr("/proc/sys/kernel/tainted", "4096");
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
