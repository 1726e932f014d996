//! Every check against the healthy 8×H100 fixture (all pass) and against one mutation of
//! the fixture each (that check does not pass, with its id, subject, verdict, fault class
//! and observed value). A last test makes sure every check in the catalog has both.

use crate::support;

use crate::support::fixture_tree::Tree;
use crate::support::nvidia_smi::{RetiredPages, SmiGpu, SmiLog};
use crate::support::verify_fixture::{self, BLUEPRINT, NVIDIA_SRCVERSION};
use nodeimg::blueprint::compat::Matrix;
use nodeimg::fault::{Action, FaultClass, Severity};
use nodeimg::verify::checks::{self, CheckResult, Phase, Selection, Verdict};

struct Fixture {
    tree: Tree,
    /// nvidia-smi's output, as data.
    smi: SmiLog,
    /// Output that is not nvidia-smi's at all, in place of `smi`.
    raw_xml: Option<String>,
    blueprint: String,
}

impl Fixture {
    fn healthy() -> Fixture {
        Fixture {
            tree: verify_fixture::healthy_tree(),
            smi: SmiLog::h100_healthy(),
            raw_xml: None,
            blueprint: BLUEPRINT.to_owned(),
        }
    }

    fn results(&self) -> Vec<CheckResult> {
        verify_fixture::results(&self.tree, &self.xml(), &self.blueprint)
    }

    /// What nvidia-smi prints.
    fn xml(&self) -> String {
        self.raw_xml.clone().unwrap_or_else(|| self.smi.xml())
    }

    /// The first GPU nvidia-smi lists (the one at [`GPU0`]).
    fn gpu0(&mut self) -> &mut SmiGpu {
        self.smi.gpu(0)
    }

    /// Every GPU nvidia-smi lists.
    fn gpus(&mut self) -> &mut [SmiGpu] {
        &mut self.smi.gpus
    }

    /// Sets one blueprint field (a dotted YAML path).
    fn bp(&mut self, path: &str, value: serde_json::Value) {
        let v = support::Variant::parse("bp.yaml", &self.blueprint);
        assert!(v.get(path).is_some(), "fixture blueprint has no {path}");
        self.blueprint = v.set(path, value).text();
    }

    fn remove(&self, path: &str) {
        let local = self.tree.local(path);
        let removed = std::fs::remove_file(&local).or_else(|_| std::fs::remove_dir_all(&local));
        assert!(removed.is_ok(), "cannot remove {path}");
    }
}

/// GPU `i`'s PCI address (bus 0x13, 0x33, ... 0xf3).
fn gpu(i: usize) -> String {
    format!("0000:{:02x}:00.0", 0x13 + i * 0x20)
}

struct Case {
    id: &'static str,
    subject: Option<&'static str>,
    verdict: Verdict,
    fault: FaultClass,
    observed: &'static str,
    mutate: fn(&mut Fixture),
}

const fn fail(
    id: &'static str,
    subject: Option<&'static str>,
    fault: FaultClass,
    observed: &'static str,
    mutate: fn(&mut Fixture),
) -> Case {
    Case {
        id,
        subject,
        verdict: Verdict::Fail,
        fault,
        observed,
        mutate,
    }
}

use FaultClass::{Device, DriverDaemon, Link, OsMemoryDisk, TransientApplication};

const GPU0: Option<&str> = Some("0000:13:00.0");
const GPU1: Option<&str> = Some("0000:33:00.0");

fn resource_low_bars(f: &mut Fixture) {
    let mut resource = String::from(
        "0x00000000a0000000 0x00000000a0ffffff 0x0000000000040200\n0x00000000c0000000 0x00000000cfffffff 0x000000000014220c\n",
    );
    for _ in 0..11 {
        resource.push_str("0x0000000000000000 0x0000000000000000 0x0000000000000000\n");
    }
    f.tree.file(
        &format!("/sys/bus/pci/devices/{}/resource", gpu(0)),
        &resource,
    );
}

/// A GPU before Ampere: retired pages instead of remapped rows.
fn pre_ampere(f: &mut Fixture) {
    for gpu in f.gpus() {
        gpu.remapped_rows = None;
        gpu.retired_pages = Some(RetiredPages {
            single_bit: 0,
            double_bit: 0,
            pending: "No".into(),
        });
    }
}

/// Replaces `modinfo nvidia`'s answer, keeping the RDMA modules'.
fn nvidia_modinfo(f: &mut Fixture, vermagic: &str, srcversion: &str, signer: Option<&str>) {
    let mut answers = Vec::new();
    for name in ["mlx5_core", "ib_core"] {
        let out = std::process::Command::new(f.tree.local("/usr/sbin/modinfo"))
            .args(["--", name])
            .output()
            .expect("run the fixture's modinfo");
        answers.push((name, String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    answers.push((
        "nvidia",
        verify_fixture::modinfo_nvidia(vermagic, srcversion, signer),
    ));
    verify_fixture::modinfo(&f.tree, &answers);
}

/// The switch downstream port above GPU 0 (the fixture's first pair).
const GPU0_SWITCH_PORT: &str = "0000:12:00.0";

/// Sets the ACS Control register of the switch port above GPU 0.
fn acs(f: &mut Fixture, control: u16) {
    f.tree.bytes(
        "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/config",
        &support::fixture_tree::bridge_config(0x1000, 0xc030, 0x6, control),
    );
}

fn kmsg(f: &mut Fixture, line: &str) {
    f.tree.file(
        "/dev/kmsg",
        &format!("6,1,0,-;Linux version 5.15.0-122-generic\n4,2,5000000,-;{line}\n"),
    );
}

/// `df` on the fixture reporting `line` for its root file system.
fn df(f: &mut Fixture, line: &str) {
    f.tree.script(
        "/usr/bin/df",
        &format!("#!/bin/sh\necho '     1B-blocks         Avail    Inodes    IFree Mounted on'\necho '{line}'\n"),
    );
}

fn cases() -> Vec<Case> {
    vec![
        // host health: errors the kernel logged, file systems remounted read-only or full
        fail(
            "host.fs.free-space",
            Some("/var/lib/containerd"),
            OsMemoryDisk,
            "(5.0 %) on /",
            |f| df(f, "1919850381312 95992519065 119209984  93000000 /"),
        ),
        fail(
            "host.fs.free-inodes",
            Some("/var/lib/kubelet"),
            OsMemoryDisk,
            "(1.0 %) on /",
            |f| df(f, "1919850381312 1500000000000 119209984  1192099 /"),
        ),
        fail(
            "host.errors.uncorrected",
            None,
            OsMemoryDisk,
            "1 EDAC memory error line(s)",
            |f| {
                kmsg(
                    f,
                    "EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#0 (channel:0 slot:0 page:0x3f0a1c offset:0x0 grain:32)",
                )
            },
        ),
        fail(
            "host.errors.uncorrected",
            None,
            OsMemoryDisk,
            "1 machine-check line(s)",
            |f| {
                kmsg(
                    f,
                    "Memory failure: 0x3f0a1c: recovery action for dirty LRU page: Recovered",
                )
            },
        ),
        fail(
            "host.errors.corrected",
            None,
            OsMemoryDisk,
            "1 machine-check line(s)",
            |f| kmsg(f, "mce: [Hardware Error]: Machine check events logged"),
        ),
        fail(
            "host.errors.corrected",
            None,
            OsMemoryDisk,
            "1 EDAC memory error line(s)",
            |f| {
                kmsg(
                    f,
                    "EDAC MC1: 1 CE memory read error on CPU_SrcID#1_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0 page:0x1b2c offset:0x240 grain:32 syndrome:0x0)",
                )
            },
        ),
        fail(
            "host.fs.read-write",
            Some("/var/lib/containerd"),
            OsMemoryDisk,
            "read-only (/dev/nvme1n1p1 on /var/lib/containerd, xfs)",
            |f| {
                let mounts = std::fs::read_to_string(f.tree.local("/proc/mounts")).unwrap();
                f.tree.file(
                    "/proc/mounts",
                    &format!(
                        "{mounts}/dev/nvme1n1p1 /var/lib/containerd xfs ro,relatime,attr2 0 0\n"
                    ),
                )
            },
        ),
        fail(
            "host.fs.read-write",
            Some("/var/lib/kubelet"),
            OsMemoryDisk,
            "read-only (/dev/nvme0n1p2 on /, ext4)",
            |f| {
                let mounts = std::fs::read_to_string(f.tree.local("/proc/mounts")).unwrap();
                f.tree.file(
                    "/proc/mounts",
                    &format!("{mounts}/dev/nvme0n1p2 / ext4 ro,relatime,errors=remount-ro 0 0\n"),
                )
            },
        ),
        // os
        fail("os.distro", None, OsMemoryDisk, "debian", |f| {
            f.tree
                .file("/etc/os-release", "ID=debian\nVERSION_ID=\"22.04\"\n")
        }),
        fail("os.version", None, OsMemoryDisk, "24.04", |f| {
            f.tree
                .file("/etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
        }),
        fail(
            "os.kernel.release",
            None,
            OsMemoryDisk,
            "5.15.0-999-generic",
            |f| {
                f.tree
                    .attr("/proc/sys/kernel/osrelease", "5.15.0-999-generic")
            },
        ),
        fail(
            "os.kernel.arg.required",
            Some("pci=realloc=off"),
            OsMemoryDisk,
            "absent",
            |f| {
                f.tree.attr(
                    "/proc/cmdline",
                    &verify_fixture::CMDLINE.replace(" pci=realloc=off", ""),
                )
            },
        ),
        fail(
            "os.kernel.arg.implied",
            Some("iommu=pt"),
            OsMemoryDisk,
            "absent",
            |f| {
                f.tree.attr(
                    "/proc/cmdline",
                    &verify_fixture::CMDLINE.replace(" iommu=pt", ""),
                )
            },
        ),
        fail(
            "os.kernel.arg.forbidden",
            Some("mitigations=off"),
            OsMemoryDisk,
            "mitigations=off",
            |f| {
                f.tree.attr(
                    "/proc/cmdline",
                    &format!("{} mitigations=off", verify_fixture::CMDLINE),
                )
            },
        ),
        fail("os.cgroup", None, OsMemoryDisk, "hybrid", |f| {
            f.remove("/sys/fs/cgroup/cgroup.controllers");
            f.tree.dir("/sys/fs/cgroup/unified");
        }),
        fail("os.hugepages", Some("1Gi"), OsMemoryDisk, "8", |f| {
            f.tree.attr(
                "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
                "8",
            )
        }),
        // 80 GiB of RAM, 17 GiB of it in the 1 GiB hugepage pool: 63 GiB for 64 GiB.
        fail(
            "os.shm.size",
            None,
            OsMemoryDisk,
            "67645734912 bytes",
            |f| {
                f.tree.file(
                "/proc/meminfo",
                "MemTotal:       83886080 kB\nMemFree:        1000000 kB\nMemAvailable:   1000000 kB\nHugePages_Total:      16\nHugePages_Free:       16\nHugepagesize:    1048576 kB\n",
            );
                f.tree.attr(
                    "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
                    "17",
                );
            },
        ),
        fail(
            "os.sysctl",
            Some("vm.overcommit_memory"),
            OsMemoryDisk,
            "0",
            |f| f.tree.attr("/proc/sys/vm/overcommit_memory", "0"),
        ),
        fail("os.nouveau.absent", None, DriverDaemon, "loaded", |f| {
            f.tree.dir("/sys/module/nouveau")
        }),
        // A kernel update whose DKMS rebuild did not run: nvidia.ko is the old kernel's.
        fail(
            "os.module.kernel-build",
            Some("nvidia"),
            DriverDaemon,
            "nvidia.ko was built for 5.15.0-119-generic, the running kernel is 5.15.0-122-generic",
            |f| nvidia_modinfo(f, "5.15.0-119-generic", NVIDIA_SRCVERSION, Some("k")),
        ),
        fail(
            "os.module.signature",
            Some("nvidia"),
            DriverDaemon,
            "nvidia.ko carries no signature",
            |f| nvidia_modinfo(f, "5.15.0-122-generic", NVIDIA_SRCVERSION, None),
        ),
        // firmware
        fail("firmware.bios.version", None, OsMemoryDisk, "1.2.9", |f| {
            f.tree.attr("/sys/class/dmi/id/bios_version", "1.2.9")
        }),
        fail("firmware.bmc.version", None, OsMemoryDisk, "5.02", |f| {
            verify_fixture::ipmitool(&f.tree, "5.02")
        }),
        fail("firmware.iommu", None, OsMemoryDisk, "mostly DMA-FQ", |f| {
            for group in 1..=21 {
                f.tree
                    .attr(&format!("/sys/kernel/iommu_groups/{group}/type"), "DMA-FQ");
            }
        }),
        fail("firmware.smt", None, OsMemoryDisk, "disabled", |f| {
            f.tree.attr("/sys/devices/system/cpu/smt/active", "0")
        }),
        fail(
            "firmware.secure-boot",
            None,
            OsMemoryDisk,
            "disabled",
            |f| {
                f.tree.bytes(
                    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
                    &[0x06, 0, 0, 0, 0],
                )
            },
        ),
        fail(
            "firmware.module-signing",
            None,
            OsMemoryDisk,
            "not enforced",
            |f| {
                f.tree
                    .attr("/sys/module/module/parameters/sig_enforce", "N")
            },
        ),
        fail(
            "firmware.numa-per-socket",
            None,
            OsMemoryDisk,
            "1 (2 nodes, 2 sockets)",
            |f| f.bp("firmware.bios.numaPerSocket", serde_json::json!(2)),
        ),
        fail(
            "firmware.power-profile",
            None,
            OsMemoryDisk,
            "schedutil ×2",
            |f| verify_fixture::governors(&f.tree, "schedutil"),
        ),
        fail(
            "firmware.resizable-bar",
            GPU0,
            OsMemoryDisk,
            "largest BAR 256 MiB",
            resource_low_bars,
        ),
        fail(
            "firmware.above-4g-decoding",
            GPU0,
            OsMemoryDisk,
            "highest 64-bit BAR at 0xc0000000",
            resource_low_bars,
        ),
        // pcie (GPU 3 is idle at 2.5 GT/s in the healthy fixture and passes)
        fail(
            "gpu.pcie.link-width",
            GPU1,
            Link,
            "x8 (device max x16)",
            |f| {
                f.tree.attr(
                    &format!("/sys/bus/pci/devices/{}/current_link_width", gpu(1)),
                    "8",
                )
            },
        ),
        fail("gpu.pcie.max-speed", GPU1, Link, "max Gen4", |f| {
            f.tree.attr(
                &format!("/sys/bus/pci/devices/{}/max_link_speed", gpu(1)),
                "16.0 GT/s PCIe",
            )
        }),
        fail("gpu.pcie.upstream-width", GPU1, Link, "x4", |f| {
            f.tree
                .attr("/sys/bus/pci/devices/0000:32:00.0/current_link_width", "4")
        }),
        fail("gpu.pcie.upstream-max-speed", GPU1, Link, "Gen3", |f| {
            f.tree.attr(
                "/sys/bus/pci/devices/0000:32:00.0/max_link_speed",
                "8.0 GT/s PCIe",
            )
        }),
        fail(
            "nic.pcie.link-width",
            Some("ibp20s0 0000:14:00.0"),
            Link,
            "x8 of x16",
            |f| {
                f.tree
                    .attr("/sys/bus/pci/devices/0000:14:00.0/current_link_width", "8")
            },
        ),
        fail(
            "nic.pcie.link-speed",
            Some("ibp20s0 0000:14:00.0"),
            Link,
            "Gen4 (16 GT/s) now",
            |f| {
                f.tree.attr(
                    "/sys/bus/pci/devices/0000:14:00.0/current_link_speed",
                    "16.0 GT/s PCIe",
                )
            },
        ),
        fail(
            "pcie.aer.uncorrectable",
            GPU0,
            Link,
            "1 non-fatal, 0 fatal",
            |f| {
                f.tree.file(
                    &format!("/sys/bus/pci/devices/{}/aer_dev_nonfatal", gpu(0)),
                    "Undefined 0\nDLP 1\nTOTAL_ERR_NONFATAL 1\n",
                )
            },
        ),
        // The switch port above GPU 0 redirects peer requests and completions.
        fail(
            "pcie.acs.p2p-redirect",
            Some(GPU0_SWITCH_PORT),
            Link,
            "ACSCtl SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans- (above 0000:13:00.0); turn off ReqRedir CmpltRedir: the BIOS's ACS / IO virtualization setting for the switch, or `setpci -s 0000:12:00.0 ECAP_ACS+0x6.w=0011`",
            |f| acs(f, 0x001d),
        ),
        // gpu
        fail("gpu.count", None, Device, "7", |f| {
            f.remove(&format!("/sys/bus/pci/devices/{}", gpu(7)))
        }),
        fail("gpu.nvswitch.present", None, Device, "0", |f| {
            for bus in 5..9 {
                f.remove(&format!("/sys/bus/pci/devices/0000:{bus:02x}:00.0"));
            }
        }),
        fail("gpu.model", GPU0, Device, "NVIDIA H200", |f| {
            for gpu in f.gpus() {
                gpu.product_name = "NVIDIA H200".into();
            }
        }),
        fail(
            "gpu.driver.version",
            None,
            DriverDaemon,
            "570.124.06",
            |f| {
                f.tree.file(
                "/proc/driver/nvidia/version",
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build\n",
            )
            },
        ),
        fail(
            "gpu.driver.kernel-module",
            None,
            DriverDaemon,
            "proprietary",
            |f| {
                f.tree.file(
                "/proc/driver/nvidia/version",
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.172.08  Tue Jul  8 17:12:49 UTC 2025\n",
            )
            },
        ),
        fail("gpu.cuda.version", None, DriverDaemon, "12.4", |f| {
            f.smi.cuda_version = "12.4".into()
        }),
        fail("gpu.vbios", GPU0, Device, "96.00.74.00.01", |f| {
            f.gpu0().vbios = "96.00.74.00.01".into()
        }),
        fail(
            "gpu.vbios.identical",
            None,
            Device,
            "96.00.99.00.01 ×7, 96.00.74.00.01 ×1",
            |f| f.gpu0().vbios = "96.00.74.00.01".into(),
        ),
        fail("gpu.ecc.mode", GPU0, Device, "disabled", |f| {
            f.gpu0().current_ecc = "Disabled".into()
        }),
        fail("gpu.ecc.volatile-uncorrectable", GPU0, Device, "2", |f| {
            f.gpu0().volatile_dram_uncorrectable = 2
        }),
        fail("gpu.row-remap.pending", GPU0, Device, "yes", |f| {
            f.gpu0().remapped().pending = "Yes".into()
        }),
        fail("gpu.row-remap.failure", GPU0, Device, "yes", |f| {
            f.gpu0().remapped().failure = "Yes".into()
        }),
        fail("gpu.retired-pages", GPU0, Device, "pending: yes", |f| {
            pre_ampere(f);
            f.gpu0().retired().pending = "Yes".into();
        }),
        fail("gpu.xid", GPU1, Device, "Xid 79", |f| {
            kmsg(
                f,
                "NVRM: Xid (PCI:0000:33:00): 79, pid=1, name=python3, GPU has fallen off the bus.",
            )
        }),
        fail("gpu.event.unknown", GPU1, Device, "Xid 999", |f| {
            kmsg(
                f,
                "NVRM: Xid (PCI:0000:33:00): 999, pid=1, name=python3, a code a newer driver added",
            )
        }),
        fail(
            "gpu.sxid",
            Some("0000:05:00.0"),
            Link,
            "SXid 12028 egress non-posted PRIV error link 32",
            |f| {
                kmsg(
                    f,
                    "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)",
                )
            },
        ),
        fail(
            "gpu.fabric-manager.log",
            None,
            DriverDaemon,
            "Fabric Manager aborted",
            |f| {
                f.tree.file(
                    "/var/log/fabricmanager.log",
                    "[Jul 23 2024 07:50:00] [INFO] [tid 2] Fabric Manager version 570.172.08 is running with the following configuration options\n\
                     [Jul 23 2024 07:54:00] [ERROR] [tid 3] detected number of NVSwitches don't match with any supported system topology, aborting fabric manager\n",
                )
            },
        ),
        fail(
            "gpu.clocks.hw-slowdown",
            GPU0,
            Device,
            "hw_thermal_slowdown active",
            |f| f.gpu0().hw_thermal_slowdown = true,
        ),
        fail(
            "gpu.temperature.margin",
            GPU0,
            Device,
            "GPU -3 C from T.Limit",
            |f| f.gpu0().tlimit_c = -3,
        ),
        fail(
            "gpu.recovery",
            GPU0,
            Device,
            "recovery action Drain and Reset",
            |f| f.gpu0().recovery_action = Some("Drain and Reset".into()),
        ),
        fail("gpu.persistence", GPU0, DriverDaemon, "disabled", |f| {
            f.gpu0().persistence_mode = "Disabled".into()
        }),
        fail("gpu.mig.mode", GPU0, DriverDaemon, "enabled", |f| {
            f.gpu0().current_mig = "Enabled".into()
        }),
        fail(
            "gpu.fabric-manager.active",
            None,
            DriverDaemon,
            "inactive",
            |f| verify_fixture::systemctl(&f.tree, &[("nvidia-fabricmanager", "inactive")]),
        ),
        fail(
            "gpu.fabric.state",
            GPU0,
            Link,
            "In Progress / Success",
            |f| f.gpu0().fabric_state = "In Progress".into(),
        ),
        // network
        fail("nic.count", Some("compute ConnectX-7"), Link, "7 (", |f| {
            f.remove("/sys/class/net/ibp20s0")
        }),
        Case {
            verdict: Verdict::Error,
            ..fail(
                "nic.model",
                Some("management Mystery NIC"),
                Link,
                "unknown: the compatibility matrix has no PCI ids",
                |f| f.bp("network.nics[1].model", serde_json::json!("Mystery NIC")),
            )
        },
        // A NIC of another model where the group's should be shows with its own id.
        fail(
            "nic.model",
            Some("compute ConnectX-7"),
            Link,
            "device id 0x1021 ×7, device id 0x101b ×1",
            |f| {
                f.tree
                    .attr("/sys/bus/pci/devices/0000:14:00.0/device", "0x101b")
            },
        ),
        fail("nic.link.state", Some("ibp20s0"), Link, "down", |f| {
            f.tree.attr("/sys/class/net/ibp20s0/operstate", "down")
        }),
        fail("nic.speed", Some("ibp20s0"), Link, "200 Gb/s", |f| {
            f.tree.attr("/sys/class/net/ibp20s0/speed", "200000")
        }),
        fail("nic.mtu", Some("ibp20s0"), OsMemoryDisk, "2044", |f| {
            f.tree.attr("/sys/class/net/ibp20s0/mtu", "2044")
        }),
        fail(
            "nic.rdma.port-state",
            Some("ibp20s0"),
            Link,
            "port 1: DOWN/LinkUp",
            |f| {
                f.tree
                    .attr("/sys/class/infiniband/mlx5_0/ports/1/state", "1: DOWN")
            },
        ),
        fail(
            "nic.rdma.rate",
            Some("ibp20s0"),
            Link,
            "port 1: 200 Gb/s",
            |f| {
                f.tree.attr(
                    "/sys/class/infiniband/mlx5_0/ports/1/rate",
                    "200 Gb/sec (4X HDR)",
                )
            },
        ),
        fail("nic.firmware", Some("ibp20s0"), Link, "28.38.1000", |f| {
            f.tree
                .attr("/sys/class/infiniband/mlx5_0/fw_ver", "28.38.1000")
        }),
        fail(
            "nic.firmware.identical",
            Some("compute ConnectX-7"),
            Link,
            "28.39.1002 ×7, 28.38.1000 ×1",
            |f| {
                f.tree
                    .attr("/sys/class/infiniband/mlx5_0/fw_ver", "28.38.1000")
            },
        ),
        fail(
            "gpu.nic.numa",
            Some("0000:93:00.0"),
            Link,
            "compute NICs there: none",
            |f| {
                for i in 4..8 {
                    f.tree.attr(
                        &format!(
                            "/sys/bus/pci/devices/0000:{:02x}:00.0/numa_node",
                            0x14 + i * 0x20
                        ),
                        "0",
                    );
                }
            },
        ),
        fail(
            "gpu.nic.pcie-switch",
            GPU0,
            Link,
            "same switch: none",
            |f| f.remove("/sys/class/net/ibp20s0"),
        ),
        // runtime
        fail(
            "runtime.containerd.version",
            None,
            DriverDaemon,
            "1.7.20",
            |f| {
                f.tree.script(
                "/usr/bin/containerd",
                "#!/bin/sh\necho 'containerd github.com/containerd/containerd v1.7.20 8fc6bcf'\n",
            )
            },
        ),
        fail(
            "runtime.kubelet.version",
            None,
            DriverDaemon,
            "1.31.0",
            |f| {
                f.tree
                    .script("/usr/bin/kubelet", "#!/bin/sh\necho 'Kubernetes v1.31.0'\n")
            },
        ),
        // GPUDirect RDMA without OFED: DMA-BUF.
        fail(
            "gpudirect.dma-buf.kernel",
            None,
            OsMemoryDisk,
            "Linux 5.15.0-122-generic, CONFIG_DMA_SHARED_BUFFER not set",
            |f| {
                f.tree.file(
                    "/boot/config-5.15.0-122-generic",
                    "# CONFIG_DMA_SHARED_BUFFER is not set\n",
                )
            },
        ),
        fail(
            "gpudirect.dma-buf.driver",
            None,
            DriverDaemon,
            "proprietary kernel modules 570.172.08; nvidia_peermem not loaded",
            |f| {
                f.tree.file(
                    "/proc/driver/nvidia/version",
                    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.172.08  Tue Jul  8 17:12:49 UTC 2025\n",
                )
            },
        ),
        fail(
            "runtime.containerd.memlock",
            None,
            DriverDaemon,
            "soft 8388608 bytes, hard 8388608 bytes (pid 1234)",
            |f| {
                // containerd without the rendered drop-in: the kernel's 8 MiB default.
                f.tree.file(
                    "/proc/1234/limits",
                    "Limit                     Soft Limit           Hard Limit           Units     \nMax locked memory         8388608              8388608              bytes     \n",
                )
            },
        ),
        fail(
            "system.time-sync.active",
            None,
            OsMemoryDisk,
            "chrony inactive",
            |f| {
                verify_fixture::systemctl(
                    &f.tree,
                    &[
                        ("chrony", "inactive"),
                        ("chronyd", "inactive"),
                        ("systemd-timesyncd", "inactive"),
                    ],
                )
            },
        ),
        fail("system.capacity.cpu", None, OsMemoryDisk, "224", |f| {
            f.bp("kubernetes.capacity.cpu", serde_json::json!(256))
        }),
        fail(
            "system.capacity.memory",
            None,
            OsMemoryDisk,
            "(65.6 % of declared)",
            |f| f.bp("kubernetes.capacity.memory", serde_json::json!("3Ti")),
        ),
        fail("runtime.cdi.spec", None, DriverDaemon, "none", |f| {
            f.remove("/etc/cdi/nvidia.yaml")
        }),
        fail(
            "runtime.cdi.devices",
            Some("/etc/cdi/nvidia.yaml"),
            DriverDaemon,
            "1 of 8 GPUs not listed: 0000:f3:00.0",
            |f| {
                f.tree
                    .file("/etc/cdi/nvidia.yaml", &support::fixture_tree::cdi_spec(7))
            },
        ),
        fail(
            "runtime.cdi.device-nodes",
            Some("/etc/cdi/nvidia.yaml"),
            DriverDaemon,
            "missing: /dev/nvidia3",
            |f| f.remove("/dev/nvidia3"),
        ),
        fail(
            "runtime.cdi.driver-version",
            Some("/etc/cdi/nvidia.yaml"),
            DriverDaemon,
            "libcuda.so.570.124.06",
            |f| {
                let spec = support::fixture_tree::cdi_spec(8).replace("570.172.08", "570.124.06");
                f.tree.file("/etc/cdi/nvidia.yaml", &spec);
            },
        ),
        // A second spec in the same directory defines GPU 0 again: the CDI cache
        // drops the device.
        fail(
            "runtime.cdi.conflicts",
            None,
            DriverDaemon,
            "nvidia.com/gpu=0, nvidia.com/gpu=all: conflict in /etc/cdi/nvidia-extra.yaml, /etc/cdi/nvidia.yaml",
            |f| {
                f.tree.file(
                    "/etc/cdi/nvidia-extra.yaml",
                    &support::fixture_tree::cdi_spec(1),
                )
            },
        ),
        // A second generator writes the same devices under /var/run/cdi: it shadows the
        // spec the node's own generator wrote.
        fail(
            "runtime.cdi.conflicts",
            None,
            DriverDaemon,
            "nvidia.com/gpu=0, nvidia.com/gpu=1, nvidia.com/gpu=2 and 6 more: shadowed across /etc/cdi/nvidia.yaml, /var/run/cdi/nvidia.yaml",
            |f| {
                f.tree.file(
                    "/var/run/cdi/nvidia.yaml",
                    &support::fixture_tree::cdi_spec(8),
                )
            },
        ),
    ]
}

fn find<'a>(results: &'a [CheckResult], id: &str, subject: Option<&str>) -> &'a CheckResult {
    results
        .iter()
        .find(|r| r.id() == id && (subject.is_none() || r.subject.as_deref() == subject))
        .unwrap_or_else(|| {
            let names: Vec<String> = results.iter().map(CheckResult::name).collect();
            panic!("no result {id} {subject:?} among {names:?}")
        })
}

fn show(results: &[CheckResult]) -> String {
    results
        .iter()
        .filter(|r| r.verdict != Verdict::Pass)
        .map(|r| format!("{} {}: {}", r.name(), r.verdict, r.observed))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn healthy_fixture_passes_every_check() {
    let results = Fixture::healthy().results();
    assert!(
        results.iter().all(|r| r.verdict == Verdict::Pass),
        "{}",
        show(&results)
    );
    assert!(results.iter().all(|r| r.action == Action::None));
    // The idle GPU (2.5 GT/s now, Gen5 capable) passes the speed check.
    let idle = find(&results, "gpu.pcie.max-speed", Some("0000:73:00.0"));
    assert!(idle.observed.contains("now Gen1"), "{}", idle.observed);
}

/// The GPU Operator runs Fabric Manager in its driver container: no host unit
/// to ask, and no false failure for its absence; the fabric state still counts.
#[test]
fn an_operator_run_fabric_manager_is_judged_by_the_fabric_not_a_host_unit() {
    let mut f = Fixture::healthy();
    f.bp(
        "accelerators.driver.authority",
        serde_json::json!("operator"),
    );
    f.blueprint = support::Variant::parse("bp.yaml", &f.blueprint)
        .set(
            "accelerators.operator",
            serde_json::json!({"name": "gpu-operator", "version": "v25.10.1", "manages": ["driver", "device-plugin"]}),
        )
        .text();
    verify_fixture::systemctl(&f.tree, &[("nvidia-fabricmanager", "inactive")]);
    let results = f.results();
    assert!(
        !results
            .iter()
            .any(|r| r.id() == "gpu.fabric-manager.active"),
        "{}",
        show(&results)
    );
    assert!(
        results
            .iter()
            .any(|r| r.id() == "gpu.fabric.state" && r.verdict == Verdict::Pass),
        "{}",
        show(&results)
    );
    f.gpu0().fabric_state = "In Progress".into();
    let results = f.results();
    assert!(
        results
            .iter()
            .any(|r| r.id() == "gpu.fabric.state" && r.verdict == Verdict::Fail),
        "{}",
        show(&results)
    );
}

/// An H100 SXM whose NVML name is `NVIDIA H100-SXM5-80GB` (the matrix's second alias, the
/// name `rollout plan` accepts in its `nvidia.com/gpu.product` label) is the declared model.
#[test]
fn the_gpu_model_is_known_by_every_alias_of_the_matrix() {
    let mut fixture = Fixture::healthy();
    for gpu in fixture.gpus() {
        gpu.product_name = "NVIDIA H100-SXM5-80GB".into();
    }
    let results = fixture.results();
    let r = find(&results, "gpu.model", GPU0);
    assert_eq!(r.verdict, Verdict::Pass, "{}", show(&results));
    assert!(r.observed.contains("H100-SXM5-80GB"), "{}", r.observed);
}

#[test]
fn pre_ampere_gpus_are_checked_through_retired_pages() {
    let mut fixture = Fixture::healthy();
    pre_ampere(&mut fixture);
    let results = fixture.results();
    assert!(
        results.iter().all(|r| r.verdict == Verdict::Pass),
        "{}",
        show(&results)
    );
    assert_eq!(
        find(&results, "gpu.retired-pages", GPU0).observed,
        "pending: no"
    );
    assert!(!results.iter().any(|r| r.id().starts_with("gpu.row-remap")));
}

fn run_cases(family: &str) {
    let mut failures = Vec::new();
    for case in cases().iter().filter(|c| c.id.starts_with(family)) {
        let mut fixture = Fixture::healthy();
        (case.mutate)(&mut fixture);
        let results = fixture.results();
        let result = find(&results, case.id, case.subject);
        let ok = result.verdict == case.verdict
            && result.fault == case.fault
            && result.observed.contains(case.observed)
            && (result.action != Action::None || result.severity == Severity::Warning);
        if !ok {
            failures.push(format!(
                "{}: got {} fault {} action {} observed {:?}",
                result.name(),
                result.verdict,
                result.fault,
                result.action,
                result.observed
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn os_checks_fail_on_their_mutation() {
    run_cases("os.");
}

#[test]
fn firmware_checks_fail_on_their_mutation() {
    run_cases("firmware.");
}

#[test]
fn pcie_checks_fail_on_their_mutation() {
    run_cases("gpu.pcie.");
    run_cases("nic.pcie.");
    run_cases("pcie.");
}

#[test]
fn gpu_checks_fail_on_their_mutation() {
    for family in [
        "gpu.count",
        "gpu.nvswitch",
        "gpu.model",
        "gpu.driver",
        "gpu.cuda",
        "gpu.vbios",
        "gpu.ecc",
        "gpu.row-remap",
        "gpu.retired",
        "gpu.xid",
        "gpu.recovery",
        "gpu.persistence",
        "gpu.mig",
        "gpu.fabric",
    ] {
        run_cases(family);
    }
}

#[test]
fn network_checks_fail_on_their_mutation() {
    run_cases("nic.count");
    run_cases("nic.model");
    run_cases("nic.link");
    run_cases("nic.speed");
    run_cases("nic.mtu");
    run_cases("nic.rdma");
    run_cases("nic.firmware");
    run_cases("gpu.nic.");
}

#[test]
fn gpudirect_checks_fail_on_their_mutation() {
    run_cases("gpudirect.");
}

/// The DMA-BUF prerequisites: the kernel configuration from `/proc/config.gz` when
/// `/boot` has none, unknown (an error, never a pass) when neither is there, a kernel
/// older than 5.12 fails without it; `nvidia_peermem` is never asked for; with OFED
/// pinned (`nvidia_peermem`) the checks do not apply and nothing reads the configuration.
#[test]
fn dma_buf_prerequisites_are_read_where_the_kernel_keeps_them() {
    use std::io::Write;
    let healthy = Fixture::healthy().results();
    let driver = find(&healthy, "gpudirect.dma-buf.driver", None);
    assert_eq!(driver.verdict, Verdict::Pass);
    assert!(
        driver
            .observed
            .contains("nvidia_peermem not loaded (not needed)"),
        "{}",
        driver.observed
    );
    assert_eq!(
        find(&healthy, "gpudirect.dma-buf.kernel", None).evidence,
        [
            "/proc/sys/kernel/osrelease",
            "/boot/config-5.15.0-122-generic"
        ]
    );

    let f = Fixture::healthy();
    f.remove("/boot/config-5.15.0-122-generic");
    let unknown = find(&f.results(), "gpudirect.dma-buf.kernel", None).clone();
    assert_eq!(unknown.verdict, Verdict::Error, "{}", unknown.observed);
    assert!(
        unknown.observed.contains("/proc/config.gz"),
        "{}",
        unknown.observed
    );

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"CONFIG_DMA_SHARED_BUFFER=y\n").unwrap();
    std::fs::write(f.tree.local("/proc/config.gz"), gz.finish().unwrap()).unwrap();
    let from_proc = find(&f.results(), "gpudirect.dma-buf.kernel", None).clone();
    assert_eq!(from_proc.verdict, Verdict::Pass, "{}", from_proc.observed);
    assert!(from_proc.evidence.contains(&"/proc/config.gz".to_owned()));

    let old = Fixture::healthy();
    old.tree
        .attr("/proc/sys/kernel/osrelease", "5.4.0-200-generic");
    let result = find(&old.results(), "gpudirect.dma-buf.kernel", None).clone();
    assert_eq!(result.verdict, Verdict::Fail);
    assert!(
        result.observed.contains("older than 5.12"),
        "{}",
        result.observed
    );

    let mut ofed = Fixture::healthy();
    ofed.blueprint = support::Variant::parse("bp.yaml", &ofed.blueprint)
        .set("network.ofed", serde_json::json!("24.10-1.1.4.0"))
        .text();
    let results = ofed.results();
    assert!(
        !results.iter().any(|r| r.id().starts_with("gpudirect.")),
        "{}",
        show(&results)
    );
    let bp = verify_fixture::blueprint(&ofed.blueprint);
    let all = Selection {
        phase: Phase::All,
        patterns: Vec::new(),
    };
    assert!(!checks::Needs::of(bp.spec(), &all).kernel_config);
    let bp = verify_fixture::blueprint(&Fixture::healthy().blueprint);
    assert!(checks::Needs::of(bp.spec(), &all).kernel_config);
}

#[test]
fn host_health_checks_fail_on_their_mutation() {
    run_cases("host.");
}

/// The model cache's file system against `system.cache.highWatermark`: 22 % used passes
/// 85 %, 95 % used fails as a warning; a blueprint without a cache has no such check.
#[test]
fn host_checks_judge_the_cache_watermark() {
    let mut fixture = Fixture::healthy();
    assert!(
        !fixture
            .results()
            .iter()
            .any(|r| r.id() == "host.fs.cache-watermark"),
        "no system.cache, no check"
    );
    fixture.blueprint = support::Variant::parse("bp.yaml", &fixture.blueprint)
        .set(
            "system.cache",
            serde_json::json!({"path": "/var/cache/models", "highWatermark": "85%", "lowWatermark": "70%"}),
        )
        .text();
    let results = fixture.results();
    let r = find(
        &results,
        "host.fs.cache-watermark",
        Some("/var/cache/models"),
    );
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.observed);
    assert!(r.observed.contains("21.9 % used on /"), "{}", r.observed);
    df(
        &mut fixture,
        "1919850381312 95992519065 119209984  93000000 /",
    );
    let results = fixture.results();
    let r = find(
        &results,
        "host.fs.cache-watermark",
        Some("/var/cache/models"),
    );
    assert_eq!(
        (r.verdict, r.severity, r.fault),
        (Verdict::Fail, Severity::Warning, FaultClass::OsMemoryDisk),
        "{}",
        r.observed
    );
}

#[test]
fn runtime_checks_fail_on_their_mutation() {
    run_cases("runtime.");
    run_cases("system.");
}

#[test]
fn every_check_has_a_passing_and_a_failing_fixture() {
    let mut failing: Vec<&str> = cases().iter().map(|c| c.id).collect();
    // Checks the H100 fixture's blueprint does not ask for: their own fixtures pass and
    // fail them in container_devices.
    for id in [
        "runtime.cdi.management-spec",
        "gpu.render-nodes",
        "system.partition.mounted", // partitions
        "image.signature",          // trust_node
        "image.config",             // trust_node
        "image.applied",            // a_node_without_the_image_names_image_applied_as_the_root
        // AMD RAS: the MI300X fixture in gpu_faults.
        "gpu.ras.events",
        "gpu.ras.errors",
        "gpu.ras.bad-pages",
        // The model cache: host_checks_judge_the_cache_watermark.
        "host.fs.cache-watermark",
    ] {
        failing.push(id);
    }
    let mut passing: Vec<&str> = Fixture::healthy()
        .results()
        .into_iter()
        .filter(|r| r.verdict == Verdict::Pass)
        .map(|r| r.id())
        .collect();
    passing.push("gpu.retired-pages"); // pre_ampere_gpus_are_checked_through_retired_pages
    passing.extend([
        "runtime.cdi.management-spec", // container_devices
        "gpu.render-nodes",            // container_devices
        "system.partition.mounted",    // partitions
        "image.signature",             // trust_node
        "image.config",                // trust_node
        "image.applied",               // a_node_without_the_image_names_image_applied_as_the_root
        "gpu.ras.events",              // gpu_faults
        "gpu.ras.errors",              // gpu_faults
        "gpu.ras.bad-pages",           // gpu_faults
        "host.fs.cache-watermark",     // host_checks_judge_the_cache_watermark
    ]);
    // The cluster checks judge a Node object, not the host: their fixtures are in
    // cluster_cli.
    for spec in checks::catalog()
        .iter()
        .filter(|s| s.stage != checks::Stage::Cluster)
    {
        assert!(
            failing.contains(&spec.id),
            "{} has no failing fixture",
            spec.id
        );
        assert!(
            passing.contains(&spec.id),
            "{} has no passing fixture",
            spec.id
        );
    }
}

/// Every result of every fixture (healthy and each mutation) points at a row of the check
/// table: no check can produce a result without being listed.
#[test]
fn every_result_comes_from_the_check_table() {
    let listed = |result: &CheckResult| {
        checks::CATALOG
            .iter()
            .any(|spec| std::ptr::eq(*spec, result.spec))
    };
    let mut fixtures = vec![Fixture::healthy()];
    for case in cases() {
        let mut fixture = Fixture::healthy();
        (case.mutate)(&mut fixture);
        fixtures.push(fixture);
    }
    let mut seen = std::collections::BTreeSet::new();
    for fixture in &fixtures {
        for result in fixture.results() {
            assert!(listed(&result), "{} is not in the check table", result.id());
            seen.insert(result.id());
        }
    }
    assert!(seen.len() > 40, "only {} distinct checks ran", seen.len());
}

/// Xids are judged by NVIDIA's catalog, not by a guess: the contained ECC error (94) is the
/// application's, the catalog's IGNORE codes (63, 92) never block, the context-switch
/// timeout (109) resets the GPU, the fallen-off-the-bus Xid reboots the node; an Xid the
/// catalog does not list is its own warning, `gpu.event.unknown`.
#[test]
fn xids_are_judged_by_the_catalog() {
    let cases = [
        (
            "13",
            TransientApplication,
            Action::RestartApp,
            Severity::Warning,
        ),
        ("94", Device, Action::RestartApp, Severity::Warning),
        ("63", Device, Action::Ignore, Severity::Warning),
        ("92", Device, Action::Ignore, Severity::Warning),
        ("109", Device, Action::ResetGpu, Severity::Critical),
        ("74", Link, Action::ResetGpu, Severity::Critical),
        ("79", Device, Action::RebootNode, Severity::Critical),
        ("119", DriverDaemon, Action::ResetGpu, Severity::Critical),
    ];
    for (code, fault, action, severity) in cases {
        let fixture = Fixture::healthy();
        let mut fixture = fixture;
        kmsg(
            &mut fixture,
            &format!("NVRM: Xid (PCI:0000:33:00): {code}, pid=1, name=x, details"),
        );
        let results = fixture.results();
        let result = find(&results, "gpu.xid", GPU1);
        assert_eq!(result.verdict, Verdict::Fail);
        assert_eq!(
            (result.fault, result.action, result.severity),
            (fault, action, severity),
            "Xid {code}"
        );
        assert_eq!(find(&results, "gpu.xid", GPU0).verdict, Verdict::Pass);
        assert_eq!(
            find(&results, "gpu.event.unknown", GPU1).verdict,
            Verdict::Pass
        );
    }
    let mut fixture = Fixture::healthy();
    kmsg(
        &mut fixture,
        "NVRM: Xid (PCI:0000:33:00): 999, pid=1, name=x, a code from a newer driver",
    );
    let results = fixture.results();
    assert_eq!(find(&results, "gpu.xid", GPU1).verdict, Verdict::Pass);
    let unknown = find(&results, "gpu.event.unknown", GPU1);
    assert_eq!(
        (unknown.verdict, unknown.severity, unknown.action),
        (Verdict::Fail, Severity::Warning, Action::None)
    );
    assert!(
        unknown.observed.contains("Xid 999") && unknown.observed.contains("a newer driver"),
        "{}",
        unknown.observed
    );
}

#[test]
fn unreadable_facts_are_errors_never_passes() {
    let mut fixture = Fixture::healthy();
    fixture.raw_xml = Some("<not-nvidia-smi/>".to_owned());
    fixture.remove("/dev/kmsg");
    fixture.remove("/sys/class/dmi/id/bios_version");
    let results = fixture.results();
    for (id, subject) in [
        ("gpu.model", GPU0),
        ("gpu.ecc.volatile-uncorrectable", GPU0),
        ("gpu.row-remap.pending", GPU0),
        ("gpu.retired-pages", GPU0),
        ("gpu.fabric.state", GPU0),
        ("gpu.cuda.version", None),
        ("gpu.xid", GPU0),
        ("firmware.bios.version", None),
    ] {
        let result = find(&results, id, subject);
        assert_eq!(result.verdict, Verdict::Error, "{id}: {}", result.observed);
        assert!(
            result.observed.starts_with("unknown: "),
            "{}",
            result.observed
        );
        assert!(result.blocks());
    }
}

/// A GPU the driver flags fails `gpu.recovery`, in `--phase health` too, whichever flag
/// the driver uses; the board-replacement flags ask for repair.
#[test]
fn gpus_the_driver_flags_do_not_pass() {
    type Flag = fn(&mut SmiGpu);
    let flags: [(&str, Flag, &str, Action); 4] = [
        (
            "recovery action Reset",
            |gpu| gpu.recovery_action = Some("Reset".into()),
            "recovery action Reset",
            Action::ResetGpu,
        ),
        (
            "reset required",
            |gpu| gpu.reset_required = "Yes".into(),
            "reset required",
            Action::ResetGpu,
        ),
        (
            "SRAM threshold exceeded",
            |gpu| gpu.sram_threshold_exceeded = Some("Yes".into()),
            "SRAM error threshold exceeded",
            Action::Service,
        ),
        (
            "channel repair pending",
            |gpu| gpu.channel_repair_pending = Some("Yes".into()),
            "memory repair pending",
            Action::ResetGpu,
        ),
    ];
    for (to, flag, observed, action) in flags {
        let mut fixture = Fixture::healthy();
        flag(fixture.gpu0());
        let bp = verify_fixture::blueprint(&fixture.blueprint);
        let facts = verify_fixture::facts(&fixture.tree, &fixture.xml());
        let health = Selection {
            phase: Phase::Health,
            patterns: Vec::new(),
        };
        let results = checks::evaluate(bp.spec(), &facts, &Matrix::builtin(), &health);
        let result = find(&results, "gpu.recovery", GPU0);
        assert_eq!(result.verdict, Verdict::Fail, "{to}: {}", result.observed);
        assert!(result.observed.contains(observed), "{}", result.observed);
        assert_eq!(result.action, action, "{to}");
    }
}

/// A driver that reports no recovery state at all leaves the check unreadable, not passed.
#[test]
fn a_driver_without_recovery_state_is_not_a_pass() {
    let mut fixture = Fixture::healthy();
    for gpu in fixture.gpus() {
        gpu.recovery_action = None;
        gpu.sram_threshold_exceeded = None;
    }
    let results = fixture.results();
    let result = find(&results, "gpu.recovery", GPU0);
    assert_eq!(result.verdict, Verdict::Error, "{}", result.observed);
}

/// Two nvidia-smi entries for one bus id: neither is believed (a second copy with
/// uncorrectable errors used to be ignored).
#[test]
fn a_gpu_listed_twice_by_nvidia_smi_is_not_a_pass() {
    let mut fixture = Fixture::healthy();
    let mut copy = fixture.gpu0().clone();
    copy.volatile_dram_uncorrectable = 100;
    fixture.smi.gpus.insert(1, copy);
    let results = fixture.results();
    let result = find(&results, "gpu.ecc.volatile-uncorrectable", GPU0);
    assert_eq!(result.verdict, Verdict::Error, "{}", result.observed);
    assert!(result.observed.contains("2 times"), "{}", result.observed);
}

/// A tree without `/sys` says nothing about Secure Boot; it is not a legacy BIOS boot.
#[test]
fn a_missing_sys_is_unreadable_not_legacy_boot() {
    let fixture = Fixture::healthy();
    fixture.remove("/sys/firmware");
    let results = fixture.results();
    let result = find(&results, "firmware.secure-boot", None);
    assert_eq!(result.verdict, Verdict::Error, "{}", result.observed);
    assert!(!result.observed.contains("legacy"), "{}", result.observed);
}

/// Per-GPU settings the blueprint asks for, with no GPU to look at, say so.
#[test]
fn zero_gpus_leave_no_requested_check_silent() {
    let mut fixture = Fixture::healthy();
    for i in 0..8 {
        fixture.remove(&format!("/sys/bus/pci/devices/{}", gpu(i)));
    }
    // nvidia-smi lists no GPU either (a GPU it lists is checked even off the PCI bus).
    fixture.smi.gpus.clear();
    fixture.smi.attached_gpus = 0;
    let results = fixture.results();
    for id in [
        "gpu.ecc.mode",
        "gpu.persistence",
        "gpu.vbios",
        "gpu.nic.numa",
        "gpu.nic.pcie-switch",
    ] {
        let result = find(&results, id, None);
        assert_eq!(result.verdict, Verdict::Error, "{id}: {}", result.observed);
        assert!(
            result.observed.contains("not checked"),
            "{}",
            result.observed
        );
    }
}

/// A BIOS that keeps CPU frequencies to itself (no cpufreq) makes the power profile not
/// checkable, said as such.
#[test]
fn a_power_profile_without_cpufreq_is_not_checkable() {
    let fixture = Fixture::healthy();
    fixture.remove("/sys/devices/system/cpu/cpufreq");
    let results = fixture.results();
    let result = find(&results, "firmware.power-profile", None);
    assert_eq!(result.verdict, Verdict::Error, "{}", result.observed);
    assert!(
        result.observed.contains("not checkable"),
        "{}",
        result.observed
    );
    assert_eq!(result.severity, Severity::Warning);
}

/// `/proc/cmdline` read as the kernel reads it: a later occurrence overrides, and numbers
/// compare by value.
#[test]
fn kernel_arguments_are_read_as_the_kernel_reads_them() {
    let cases = [
        (
            format!("{} pci=realloc=on", verify_fixture::CMDLINE),
            "os.kernel.arg.required",
            "pci=realloc=off pci=realloc=on",
        ),
        (
            verify_fixture::CMDLINE.replace("nouveau.modeset=0", "nouveau.modeset=0x1"),
            "os.kernel.arg.forbidden",
            "nouveau.modeset=0x1",
        ),
        (
            verify_fixture::CMDLINE.replace("nouveau.modeset=0", "nouveau.modeset=01"),
            "os.kernel.arg.forbidden",
            "nouveau.modeset=01",
        ),
        (
            verify_fixture::CMDLINE.replace("nouveau.modeset=0", "nouveau.modeset=+1"),
            "os.kernel.arg.forbidden",
            "nouveau.modeset=+1",
        ),
    ];
    for (cmdline, id, observed) in cases {
        let fixture = Fixture::healthy();
        fixture.tree.attr("/proc/cmdline", &cmdline);
        let results = fixture.results();
        let failed: Vec<&CheckResult> = results
            .iter()
            .filter(|r| r.id() == id && r.verdict == Verdict::Fail)
            .collect();
        assert!(
            failed.iter().any(|r| r.observed == observed),
            "{cmdline}: {}",
            show(&results)
        );
    }
}

/// Every parameter the image writes is read back from `/proc/sys` as the kernel holds it.
#[test]
fn kernel_parameters_are_read_back_from_proc_sys() {
    // A parameter the kernel does not have (br_netfilter not loaded) is unreadable, and
    // blocks: kubelet needs bridged traffic filtered.
    let fixture = Fixture::healthy();
    fixture.remove("/proc/sys/net/bridge");
    let results = fixture.results();
    let bridge = find(
        &results,
        "os.sysctl",
        Some("net.bridge.bridge-nf-call-iptables"),
    );
    assert_eq!(bridge.verdict, Verdict::Error, "{}", bridge.observed);
    assert!(bridge.blocks());
    assert!(
        bridge
            .evidence
            .contains(&"/proc/sys/net/bridge/bridge-nf-call-iptables".to_owned()),
        "{:?}",
        bridge.evidence
    );

    // Tuning the node works without is a warning, not a blocked node.
    let fixture = Fixture::healthy();
    fixture
        .tree
        .attr("/proc/sys/fs/inotify/max_user_watches", "8192");
    let results = fixture.results();
    let watches = find(&results, "os.sysctl", Some("fs.inotify.max_user_watches"));
    assert_eq!(watches.verdict, Verdict::Fail);
    assert_eq!(watches.severity, Severity::Warning);
    assert!(!watches.blocks());

    // A value written in another spelling the kernel reads as the same number holds.
    let fixture = Fixture::healthy();
    fixture.tree.attr("/proc/sys/kernel/panic", "10");
    let mut fixture = fixture;
    fixture
        .blueprint
        .push_str("security:\n  sysctls:\n    kernel.panic: \"0xa\"\n");
    let results = fixture.results();
    let panic = find(&results, "os.sysctl", Some("kernel.panic"));
    assert_eq!(panic.verdict, Verdict::Pass, "{}", panic.observed);
}

/// `security.sysctls` are checked too, multi-value fields compared field by field whatever
/// the whitespace (`/proc/sys` prints tabs), and a tuning key the blueprint asks for
/// itself gates.
#[test]
fn blueprint_sysctls_gate_with_the_kernel_semantics() {
    let mut fixture = Fixture::healthy();
    fixture.blueprint.push_str(
        "security:\n  sysctls:\n    net.ipv4.ip_local_port_range: \"32768 60999\"\n    kernel.pid_max: 65536\n",
    );
    let bp = verify_fixture::blueprint(&fixture.blueprint);
    let mut options = verify_fixture::options(&fixture.xml());
    for key in bp.spec().security.sysctls.keys() {
        options.sysctls.push(key.clone());
    }
    let run = |fixture: &Fixture| {
        let facts = nodeimg::verify::collect(&fixture.tree.host(), &options);
        checks::evaluate(bp.spec(), &facts, &Matrix::builtin(), &Selection::default())
    };
    fixture
        .tree
        .attr("/proc/sys/net/ipv4/ip_local_port_range", "32768\t60999");
    fixture.tree.attr("/proc/sys/kernel/pid_max", "65536");
    let results = run(&fixture);
    let range = find(&results, "os.sysctl", Some("net.ipv4.ip_local_port_range"));
    assert_eq!(range.verdict, Verdict::Pass, "{}", range.observed);

    fixture
        .tree
        .attr("/proc/sys/net/ipv4/ip_local_port_range", "1024\t60999");
    fixture.tree.attr("/proc/sys/kernel/pid_max", "4194304");
    let results = run(&fixture);
    let range = find(&results, "os.sysctl", Some("net.ipv4.ip_local_port_range"));
    assert_eq!(range.verdict, Verdict::Fail);
    assert_eq!(range.observed, "1024 60999");
    let pid_max = find(&results, "os.sysctl", Some("kernel.pid_max"));
    assert_eq!(pid_max.verdict, Verdict::Fail);
    assert_eq!(pid_max.severity, Severity::Critical);
}

/// A capture made without a blueprint reads every parameter an example's image writes
/// (except those its own `security.sysctls` add, which verify asks for by name).
#[test]
fn the_sysctl_baseline_covers_every_example() {
    use nodeimg::blueprint::kernel::Kernel;
    use nodeimg::verify::facts::sysctl::BASELINE;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".yaml").map(str::to_owned))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for name in &names {
        let bp = support::example(name);
        let spec = bp.spec();
        for group in Kernel::of(spec).sysctls {
            for entry in group.entries {
                let own = spec
                    .security
                    .sysctls
                    .keys()
                    .any(|k| k.as_str() == entry.key);
                assert!(
                    own || BASELINE.contains(&entry.key.as_str()),
                    "{name}: {} is written but not in sysctl::BASELINE",
                    entry.key
                );
            }
        }
    }
}

/// `system.shmSize` sizes pods' `/dev/shm` (a cluster-side policy): the host's own
/// `/dev/shm`, which nothing in the image sets and no pod sees, does not decide the check.
#[test]
fn shm_size_is_judged_on_memory_not_the_host_mount() {
    let fixture = Fixture::healthy();
    fixture.tree.file(
        "/proc/mounts",
        "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1g,inode64 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n",
    );
    let results = fixture.results();
    let shm = find(&results, "os.shm.size", None);
    assert_eq!(shm.verdict, Verdict::Pass, "{}", shm.observed);
    assert!(
        shm.evidence.iter().all(|e| e != "/proc/mounts"),
        "{:?}",
        shm.evidence
    );
}

/// `os.version` compares releases as versions, both parsed at their edges: the blueprint's
/// pin and os-release's `VERSION_ID` in each quoting form. A `VERSION_ID` that is no
/// version is an unknown fact naming the field, an error verdict.
#[test]
fn os_version_compares_releases_as_versions() {
    let cases: [(&str, &str, Verdict); 7] = [
        ("12.10", "VERSION_ID=\"12.10\"", Verdict::Pass),
        ("12.10", "VERSION_ID=12.9", Verdict::Fail),
        ("12.10", "VERSION_ID='12.1'", Verdict::Fail),
        ("22.04", "VERSION_ID=22.4", Verdict::Pass),
        ("9", "VERSION_ID=\"9.4\"", Verdict::Fail),
        ("9.4", "VERSION_ID=9.4.0", Verdict::Pass),
        ("12", "VERSION_ID=\"bookworm/sid\"", Verdict::Error),
    ];
    for (pinned, line, verdict) in cases {
        let mut fixture = Fixture::healthy();
        fixture.bp("os.version", serde_json::json!(pinned));
        fixture
            .tree
            .file("/etc/os-release", &format!("ID=ubuntu\n{line}\n"));
        let results = fixture.results();
        let result = find(&results, "os.version", None);
        assert_eq!(
            result.verdict, verdict,
            "{pinned} vs {line}: {}",
            result.observed
        );
        if verdict == Verdict::Error {
            assert!(
                result.observed.contains("VERSION_ID \"bookworm/sid\""),
                "{}",
                result.observed
            );
        }
    }
}

/// A run reads only the costly facts its selected checks need (`checks::Needs`). Every
/// check, run alone with only those, gets the verdict it gets from every fact: on the
/// healthy fixture and on its failing mutation.
#[test]
fn each_check_alone_reads_what_it_needs() {
    let key = |r: &CheckResult| {
        (
            r.id(),
            r.subject.clone(),
            r.verdict,
            r.expected.clone(),
            r.observed.clone(),
        )
    };
    let mut fixtures: Vec<(&str, Fixture)> = vec![("healthy", Fixture::healthy())];
    for case in cases() {
        let mut fixture = Fixture::healthy();
        (case.mutate)(&mut fixture);
        fixtures.push((case.id, fixture));
    }
    for (name, fixture) in &fixtures {
        let bp = verify_fixture::blueprint(&fixture.blueprint);
        let all = fixture.results();
        let ids: Vec<&str> = if *name == "healthy" {
            checks::catalog().iter().map(|s| s.id).collect()
        } else {
            vec![*name]
        };
        // Checks that need the same facts run together, alone with those facts.
        let mut groups: Vec<(checks::Needs, Vec<String>)> = Vec::new();
        for id in ids {
            let selection = Selection {
                phase: Phase::All,
                patterns: vec![id.to_owned()],
            };
            let needs = checks::Needs::of(bp.spec(), &selection);
            match groups.iter_mut().find(|(n, _)| *n == needs) {
                Some((_, ids)) => ids.push(id.to_owned()),
                None => groups.push((needs, vec![id.to_owned()])),
            }
        }
        for (needs, ids) in groups {
            let selection = Selection {
                phase: Phase::All,
                patterns: ids.clone(),
            };
            assert_eq!(checks::Needs::of(bp.spec(), &selection), needs);
            let mut options = verify_fixture::options(&fixture.xml());
            needs.apply(&mut options);
            let facts = nodeimg::verify::collect(&fixture.tree.host(), &options);
            let alone: Vec<_> = checks::evaluate(bp.spec(), &facts, &Matrix::builtin(), &selection)
                .iter()
                .map(key)
                .collect();
            let expected: Vec<_> = all
                .iter()
                .filter(|r| ids.iter().any(|id| id == r.id()))
                .map(key)
                .collect();
            assert_eq!(
                alone, expected,
                "{ids:?} on the {name} fixture, with {needs:?}"
            );
        }
    }
    // The boot phase of a CPU blueprint needs none of the costly facts but the
    // containerd and kubelet versions (the host's memory errors and machine checks, which
    // read the kernel log, are judged in service, not at boot).
    let cpu = support::example("cpu-minimal");
    let boot = Selection {
        phase: Phase::Boot,
        patterns: Vec::new(),
    };
    assert_eq!(
        checks::Needs::of(cpu.spec(), &boot),
        checks::Needs {
            gpu_tool: false,
            kernel_log: false,
            containerd_version: true,
            kubelet_version: true,
            unit_states: false,
            sysctls: true,
            kernel_config: false,
            image: false,
            module_builds: false,
            bmc: false,
        }
    );
}

/// A NIC model the built-in matrix does not know is told apart by the PCI ids a site's
/// `--matrix` gives it: verify reads them from the matrix entries the blueprint was
/// validated with (what the image's lock carries), not from a list in the code.
#[test]
fn a_nic_model_from_a_site_matrix_is_used_by_verify() {
    let mut f = Fixture::healthy();
    f.bp("network.nics[0].model", serde_json::json!("Acme HCA 400"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let nic_model = |site: Option<&str>| {
        let mut matrix = Matrix::builtin();
        if let Some(ids) = site {
            let path = dir.path().join("site.yaml");
            std::fs::write(
                &path,
                format!("schemaVersion: 1\nnics:\n  - {{model: acme-hca-400, deviceIds: [{ids}], source: site qualification}}\n"),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            matrix
                .extend_from_file(&path)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let loaded = nodeimg::blueprint::load_bytes(
            f.blueprint.as_bytes(),
            std::path::Path::new("bp.yaml"),
            None,
            &matrix,
        )
        .unwrap_or_else(|d| panic!("{d:?}"));
        let bp = loaded.blueprint;
        let facts = verify_fixture::facts(&f.tree, &f.xml());
        let results = checks::evaluate(
            bp.spec(),
            &facts,
            bp.identity().matrix(),
            &Selection::default(),
        );
        let result = find(&results, "nic.model", Some("compute Acme HCA 400"));
        (result.verdict, result.observed.clone())
    };
    let (verdict, observed) = nic_model(None);
    assert_eq!(verdict, Verdict::Error, "{observed}");
    assert!(observed.contains("no PCI ids"), "{observed}");
    // The fixture's compute NICs are 0x1021 functions.
    let (verdict, observed) = nic_model(Some("\"0x1021\""));
    assert_eq!(verdict, Verdict::Pass, "{observed}");
    let (verdict, observed) = nic_model(Some("\"0x1572\""));
    assert_eq!(verdict, Verdict::Fail, "{observed}");
}

/// With the GPUs gone, the checks that read them say "blocked by gpu.count" and the
/// summary leads with the root; an ECC error on a GPU that is there stays a root.
#[test]
fn checks_of_missing_gpus_are_blocked_by_gpu_count() {
    use nodeimg::verify::checks::blocked;
    let mut f = Fixture::healthy();
    for i in 0..8 {
        f.remove(&format!("/sys/bus/pci/devices/{}", gpu(i)));
    }
    f.smi.gpus.clear();
    let results = f.results();
    let count = results.iter().find(|r| r.id() == "gpu.count").unwrap();
    assert_eq!(count.verdict, Verdict::Fail);
    assert_eq!(count.blocked_by, None);
    let dependents: Vec<&CheckResult> = results
        .iter()
        .filter(|r| r.blocks() && r.id() != "gpu.count" && r.id().starts_with("gpu."))
        .filter(|r| r.id() != "gpu.nvswitch.present")
        .collect();
    assert!(dependents.len() >= 5, "{dependents:#?}");
    for r in &dependents {
        assert_eq!(r.blocked_by, Some("gpu.count"), "{}", r.name());
        // The verdict stays: the node still fails.
        assert_ne!(r.verdict, Verdict::Pass);
    }
    let roots: Vec<&str> = blocked::roots(&results).map(|r| r.id()).collect();
    assert!(roots.contains(&"gpu.count"), "{roots:?}");
    assert!(!roots.contains(&"gpu.driver.version"), "{roots:?}");
    assert!(!roots.contains(&"runtime.cdi.spec"), "{roots:?}");

    // One GPU gone and an ECC error on one that is there: that error is a root of its own.
    let mut f = Fixture::healthy();
    f.remove(&format!("/sys/bus/pci/devices/{}", gpu(7)));
    f.gpu0().volatile_dram_uncorrectable = 2;
    let results = f.results();
    let ecc = results
        .iter()
        .find(|r| r.id() == "gpu.ecc.volatile-uncorrectable" && r.verdict == Verdict::Fail)
        .unwrap();
    assert_eq!(ecc.blocked_by, None, "{ecc:?}");
}

/// A machine the image was never applied to: the kernel parameters it sets do not hold
/// there, and verify says once, as the root, that the image's files are absent, instead of
/// one `os.sysctl` failure per parameter with evidence citing a file that is not there.
#[test]
fn a_node_without_the_image_names_image_applied_as_the_root() {
    use nodeimg::verify::checks::blocked;
    let f = Fixture::healthy();
    f.tree.attr("/proc/sys/kernel/panic", "0");
    f.tree.attr("/proc/sys/vm/overcommit_memory", "0");
    let results = f.results();
    let applied = results
        .iter()
        .find(|r| r.id() == "image.applied")
        .unwrap_or_else(|| panic!("no image.applied: {results:#?}"));
    assert_eq!(applied.verdict, Verdict::Fail);
    assert!(
        applied
            .observed
            .contains("/etc/nodeimg/blueprint.lock.json")
            && applied.observed.contains("/etc/sysctl.d/90-nodeimg.conf"),
        "{}",
        applied.observed
    );
    let sysctls: Vec<&CheckResult> = results
        .iter()
        .filter(|r| r.id() == "os.sysctl" && r.verdict != Verdict::Pass)
        .collect();
    assert_eq!(sysctls.len(), 2, "{sysctls:#?}");
    for r in &sysctls {
        assert_eq!(r.blocked_by, Some("image.applied"), "{}", r.name());
    }
    let roots: Vec<&str> = blocked::roots(&results).map(|r| r.id()).collect();
    assert_eq!(roots, ["image.applied"]);
    assert!(
        nodeimg::verify::checks::remedy::of(applied.spec).contains("nodeimg apply"),
        "the remedy is to apply the image"
    );

    // With the image's files on the node, a parameter that does not hold is its own root.
    f.tree.file("/etc/nodeimg/blueprint.lock.json", "{}");
    f.tree
        .file("/etc/sysctl.d/90-nodeimg.conf", "kernel.panic = 10\n");
    let results = f.results();
    let applied = results.iter().find(|r| r.id() == "image.applied").unwrap();
    assert_eq!(applied.verdict, Verdict::Pass, "{}", applied.observed);
    let roots: Vec<&str> = blocked::roots(&results).map(|r| r.id()).collect();
    assert_eq!(roots, ["os.sysctl", "os.sysctl"]);
    // A healthy node is not asked.
    let results = Fixture::healthy().results();
    assert!(!results.iter().any(|r| r.id() == "image.applied"));
}

/// ACS is judged against the blueprint's use: bare metal wants the redirect off on the
/// switch ports, VFIO passthrough wants it on; a port without ACS redirects nothing; a
/// configuration space read without root is unknown, never "no ACS".
#[test]
fn acs_is_judged_against_the_blueprints_use() {
    let verdict = |f: &Fixture| {
        let results = f.results();
        let result = find(&results, "pcie.acs.p2p-redirect", Some(GPU0_SWITCH_PORT));
        (result.verdict, result.observed.clone())
    };
    // Bare metal: every control off passes; Egress Control alone fails.
    let mut fixture = Fixture::healthy();
    assert_eq!(
        verdict(&fixture).0,
        Verdict::Pass,
        "{}",
        verdict(&fixture).1
    );
    acs(&mut fixture, 0x0020);
    let (got, observed) = verdict(&fixture);
    assert_eq!(got, Verdict::Fail, "{observed}");
    assert!(observed.contains("turn off EgressCtrl"), "{observed}");
    // No ACS capability (extended list ends at AER): nothing redirects.
    let mut no_acs = support::fixture_tree::bridge_config(0x1000, 0xc030, 0x6, 0);
    no_acs[0x100..0x104].copy_from_slice(&(0x0001u32 | (2 << 16)).to_le_bytes());
    fixture.tree.bytes(
        "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/config",
        &no_acs,
    );
    let (got, observed) = verdict(&fixture);
    assert_eq!(got, Verdict::Pass, "{observed}");
    assert!(observed.contains("no ACS capability"), "{observed}");
    // What a non-root reader gets: 64 bytes.
    fixture.tree.bytes(
        "/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/config",
        &no_acs[..64],
    );
    let (got, observed) = verdict(&fixture);
    assert_eq!(got, Verdict::Error, "{observed}");
    assert!(observed.contains("run verify as root"), "{observed}");

    // VFIO passthrough: the healthy bare-metal setting fails, naming the bits to set.
    let mut vfio = Fixture::healthy();
    vfio.blueprint = vfio.blueprint.replace(
        "  persistence: true\n",
        "  persistence: true\n  vfioPassthrough: true\n",
    );
    let (got, observed) = verdict(&vfio);
    assert_eq!(got, Verdict::Fail, "{observed}");
    assert!(
        observed.contains("turn on ReqRedir CmpltRedir")
            && observed.contains("setpci -s 0000:12:00.0 ECAP_ACS+0x6.w=000c"),
        "{observed}"
    );
    acs(&mut vfio, 0x001d);
    assert_eq!(verdict(&vfio).0, Verdict::Pass, "{}", verdict(&vfio).1);
    // Root ports and switch upstream ports are read but not judged.
    let results = vfio.results();
    for port in ["0000:10:01.0", "0000:11:00.0"] {
        assert!(
            !results
                .iter()
                .any(|r| r.id() == "pcie.acs.p2p-redirect" && r.subject.as_deref() == Some(port)),
            "{port} was judged"
        );
    }
}

/// The module the kernel runs: none for this kernel, another build in memory, and a
/// signature the kernel did not trust (taint E) each fail, naming the module; with Secure
/// Boot off signatures are not judged; an operator-installed driver is not judged here.
#[test]
fn the_module_the_kernel_runs_is_judged() {
    let result = |f: &Fixture, id: &str| {
        let results = f.results();
        let r = find(&results, id, Some("nvidia"));
        (r.verdict, r.observed.clone())
    };
    let healthy = Fixture::healthy();
    for id in ["os.module.kernel-build", "os.module.signature"] {
        assert_eq!(
            result(&healthy, id).0,
            Verdict::Pass,
            "{id}: {}",
            result(&healthy, id).1
        );
    }
    for name in ["mlx5_core", "ib_core"] {
        let results = healthy.results();
        assert_eq!(
            find(&results, "os.module.kernel-build", Some(name)).verdict,
            Verdict::Pass
        );
    }
    // No module for the running kernel (the rebuild failed).
    let missing = Fixture::healthy();
    let mut answers = Vec::new();
    for name in ["mlx5_core", "ib_core"] {
        let out = std::process::Command::new(missing.tree.local("/usr/sbin/modinfo"))
            .args(["--", name])
            .output()
            .expect("run the fixture's modinfo");
        answers.push((name, String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    verify_fixture::modinfo(&missing.tree, &answers);
    let (verdict, observed) = result(&missing, "os.module.kernel-build");
    assert_eq!(verdict, Verdict::Fail, "{observed}");
    assert!(
        observed.contains("no nvidia module for Linux 5.15.0-122-generic"),
        "{observed}"
    );
    // The installed file is another build than the one in memory.
    let mut upgraded = Fixture::healthy();
    nvidia_modinfo(
        &mut upgraded,
        "5.15.0-122-generic",
        "0A1B2C3D4E5F60718293A4B",
        Some("k"),
    );
    let (verdict, observed) = result(&upgraded, "os.module.kernel-build");
    assert_eq!(verdict, Verdict::Fail, "{observed}");
    assert!(
        observed.contains("another build is in memory"),
        "{observed}"
    );
    // Signed, but by a key the kernel does not trust.
    let untrusted = Fixture::healthy();
    untrusted.tree.attr("/sys/module/nvidia/taint", "OE");
    untrusted.tree.attr("/proc/sys/kernel/tainted", "12288");
    let (verdict, observed) = result(&untrusted, "os.module.signature");
    assert_eq!(verdict, Verdict::Fail, "{observed}");
    assert!(observed.contains("tainted E"), "{observed}");
    // Secure Boot off: an unsigned module is not judged.
    let mut off = Fixture::healthy();
    nvidia_modinfo(&mut off, "5.15.0-122-generic", NVIDIA_SRCVERSION, None);
    off.tree.bytes(
        "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        &[6, 0, 0, 0, 0],
    );
    assert!(
        !off.results()
            .iter()
            .any(|r| r.id() == "os.module.signature")
    );
    // The operator's driver is not in this kernel's module tree.
    let mut operator = Fixture::healthy();
    operator.bp(
        "accelerators.driver.authority",
        serde_json::json!("operator"),
    );
    operator.blueprint = support::Variant::parse("bp.yaml", &operator.blueprint)
        .set(
            "accelerators.operator",
            serde_json::json!({"name": "gpu-operator", "version": "v25.10.1", "manages": ["driver", "device-plugin"]}),
        )
        .text();
    assert!(
        !operator
            .results()
            .iter()
            .any(|r| r.id().starts_with("os.module.") && r.subject.as_deref() == Some("nvidia"))
    );
}
