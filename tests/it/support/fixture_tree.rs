//! Synthetic sysfs/procfs trees of real machine shapes, written into a temporary directory
//! and read through [`Tree::host`]: `LiveHost::new(tree.root())` with the tree's stand-in
//! programs named explicitly (a host never runs programs from a tree on its own).
//!
//! Layouts follow the kernel: `/sys/bus/pci/devices/X` and `/sys/class/net/N` are relative
//! links into `/sys/devices/pci<domain>:<bus>/<root port>/<switch up>/<switch down>/X`, so
//! the upstream port is the parent directory, as on real hardware. Attribute files end in a
//! newline like sysfs. Values are written from the formats in the kernel sources; nothing
//! here is copied from captured machines.

use nodeimg::verify::LiveHost;
use nodeimg::verify::host::Program;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub struct Tree {
    dir: TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().expect("create a temporary directory"),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn local(&self, path: &str) -> PathBuf {
        self.root().join(path.trim_start_matches('/'))
    }

    /// Writes `content` at the machine path `path`, creating parents.
    pub fn file(&self, path: &str, content: &str) {
        self.bytes(path, content.as_bytes());
    }

    pub fn bytes(&self, path: &str, content: &[u8]) {
        let local = self.local(path);
        if let Some(parent) = local.parent() {
            fs::create_dir_all(parent).expect("create parent directories");
        }
        fs::write(&local, content).expect("write fixture file");
    }

    /// A sysfs attribute: the value and a newline.
    pub fn attr(&self, path: &str, value: &str) {
        self.file(path, &format!("{value}\n"));
    }

    pub fn dir(&self, path: &str) {
        fs::create_dir_all(self.local(path)).expect("create directory");
    }

    /// A symbolic link at `path` with the literal `target`.
    pub fn link(&self, path: &str, target: &str) {
        let local = self.local(path);
        if let Some(parent) = local.parent() {
            fs::create_dir_all(parent).expect("create parent directories");
        }
        symlink(target, &local).expect("create symlink");
    }

    /// The stand-in programs in the tree: for each program, the first of its fixed paths
    /// that holds a file, as a local path.
    pub fn programs(&self) -> Vec<(Program, PathBuf)> {
        Program::ALL
            .into_iter()
            .filter_map(|program| {
                program
                    .candidates()
                    .iter()
                    .map(|candidate| self.local(candidate))
                    .find(|local| local.is_file())
                    .map(|local| (program, local))
            })
            .collect()
    }

    /// A host that reads the tree and runs its stand-in programs.
    pub fn host(&self) -> LiveHost {
        self.programs()
            .into_iter()
            .fold(LiveHost::new(self.root()), |host, (program, path)| {
                host.with_program(program, path)
            })
    }

    /// `--tool NAME=PATH` arguments for the tree's stand-in programs.
    pub fn tool_args(&self) -> Vec<String> {
        self.programs()
            .into_iter()
            .flat_map(|(program, path)| {
                ["--tool".to_owned(), format!("{program}={}", path.display())]
            })
            .collect()
    }

    /// An executable script at the machine path `path`.
    pub fn script(&self, path: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        self.file(path, body);
        let local = self.local(path);
        fs::set_permissions(&local, fs::Permissions::from_mode(0o755)).expect("chmod script");
    }
}

/// `../` repeated `n` times.
fn up(n: usize) -> String {
    "../".repeat(n)
}

/// One PCI function to write.
#[derive(Clone)]
pub struct PciFn {
    /// Real directory under `/sys/devices`, e.g. `pci0000:10/0000:10:01.0/0000:11:00.0`.
    pub real: String,
    pub vendor: u16,
    pub device: u16,
    pub class: u32,
    pub driver: Option<&'static str>,
    pub numa_node: i32,
    /// `(current_speed, max_speed, current_width, max_width)`; `None` writes no link files.
    pub link: Option<(&'static str, &'static str, u32, u32)>,
    /// `(start, size, flags)` per resource line, 13 lines written.
    pub bars: Vec<(usize, u64, u64, u64)>,
    pub iommu_group: Option<u32>,
}

impl PciFn {
    pub fn address(&self) -> &str {
        self.real.rsplit('/').next().unwrap_or("")
    }
}

pub const LINK_GEN5_X16: (&str, &str, u32, u32) = ("32.0 GT/s PCIe", "32.0 GT/s PCIe", 16, 16);

/// Writes the device directory, its `/sys/bus/pci/devices` link, driver and IOMMU links.
pub fn add_pci(tree: &Tree, f: &PciFn) {
    let dir = format!("/sys/devices/{}", f.real);
    let address = f.address().to_owned();
    tree.attr(&format!("{dir}/vendor"), &format!("0x{:04x}", f.vendor));
    tree.attr(&format!("{dir}/device"), &format!("0x{:04x}", f.device));
    tree.attr(
        &format!("{dir}/subsystem_vendor"),
        &format!("0x{:04x}", f.vendor),
    );
    tree.attr(&format!("{dir}/subsystem_device"), "0x16c1");
    tree.attr(&format!("{dir}/class"), &format!("0x{:06x}", f.class));
    tree.attr(&format!("{dir}/numa_node"), &f.numa_node.to_string());
    if let Some((cur, max, cur_w, max_w)) = f.link {
        tree.attr(&format!("{dir}/current_link_speed"), cur);
        tree.attr(&format!("{dir}/max_link_speed"), max);
        tree.attr(&format!("{dir}/current_link_width"), &cur_w.to_string());
        tree.attr(&format!("{dir}/max_link_width"), &max_w.to_string());
    }
    let mut resource = String::new();
    for line in 0..13 {
        match f.bars.iter().find(|(index, ..)| *index == line) {
            Some((_, start, size, flags)) => resource.push_str(&format!(
                "0x{start:016x} 0x{:016x} 0x{flags:016x}\n",
                start + size - 1
            )),
            None => resource.push_str("0x0000000000000000 0x0000000000000000 0x0000000000000000\n"),
        }
    }
    tree.file(&format!("{dir}/resource"), &resource);
    tree.file(
        &format!("{dir}/aer_dev_correctable"),
        "RxErr 0\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 0\n",
    );
    tree.file(
        &format!("{dir}/aer_dev_fatal"),
        "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nTOTAL_ERR_FATAL 0\n",
    );
    tree.file(
        &format!("{dir}/aer_dev_nonfatal"),
        "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nTOTAL_ERR_NONFATAL 0\n",
    );
    // Bridges: a PCIe configuration space with ACS present and every control off (a
    // bare-metal switch set up for peer-to-peer).
    // The first bridge below the root bus is a root port, then upstream and downstream
    // switch ports alternate.
    if f.class >> 8 == 0x0604 {
        let depth = f.real.matches('/').count();
        let port_type = match depth {
            1 => 0x4,
            d if d % 2 == 0 => 0x5,
            _ => 0x6,
        };
        tree.bytes(
            &format!("{dir}/config"),
            &bridge_config(f.vendor, f.device, port_type, 0x0000),
        );
    }
    // From the device directory up to /sys: one level per component of `real`, plus devices.
    let depth = f.real.matches('/').count() + 2;
    if let Some(driver) = f.driver {
        tree.dir(&format!("/sys/bus/pci/drivers/{driver}"));
        tree.link(
            &format!("{dir}/driver"),
            &format!("{}bus/pci/drivers/{driver}", up(depth)),
        );
    }
    if let Some(group) = f.iommu_group {
        let group_dir = format!("/sys/kernel/iommu_groups/{group}");
        tree.attr(&format!("{group_dir}/type"), "identity");
        tree.link(
            &format!("{dir}/iommu_group"),
            &format!("{}kernel/iommu_groups/{group}", up(depth)),
        );
        tree.link(
            &format!("{group_dir}/devices/{address}"),
            &format!("../../../../devices/{}", f.real),
        );
    }
    tree.link(
        &format!("/sys/bus/pci/devices/{address}"),
        &format!("../../../devices/{}", f.real),
    );
}

/// The 4096-byte configuration space of a PCI-to-PCI bridge as sysfs `config` returns it
/// to root: a type 1 header whose capability list holds the PCI Express capability, then
/// the extended capabilities AER (`0x0001`) at `0x100` and ACS (`0x000d`) at `0x148`,
/// the ACS Capability register claiming SV, RR, CR, UF and DT (`0x005f`) and the Control
/// register set to `control`; `port_type` is the PCI Express capability's Device/Port Type
/// (4 root port, 5 switch upstream, 6 switch downstream). Offsets and layout per the PCIe
/// Base Specification.
pub fn bridge_config(vendor: u16, device: u16, port_type: u8, control: u16) -> Vec<u8> {
    let mut c = vec![0u8; 4096];
    c[0x00..0x02].copy_from_slice(&vendor.to_le_bytes());
    c[0x02..0x04].copy_from_slice(&device.to_le_bytes());
    // Status: capabilities list present.
    c[0x06..0x08].copy_from_slice(&0x0010u16.to_le_bytes());
    // Class code 0x060400, header type 1.
    c[0x09..0x0c].copy_from_slice(&[0x00, 0x04, 0x06]);
    c[0x0e] = 0x01;
    // Capabilities pointer -> PCI Express capability (ID 0x10), last in the list,
    // version 2, the device/port type in bits 4-7.
    c[0x34] = 0x68;
    c[0x68..0x6c].copy_from_slice(&[0x10, 0x00, 0x02 | (port_type << 4), 0x00]);
    // AER, version 2, next at 0x148.
    c[0x100..0x104].copy_from_slice(&(0x0001u32 | (2 << 16) | (0x148 << 20)).to_le_bytes());
    // ACS, version 1, last.
    c[0x148..0x14c].copy_from_slice(&(0x000du32 | (1 << 16)).to_le_bytes());
    c[0x14c..0x14e].copy_from_slice(&0x005fu16.to_le_bytes());
    c[0x14e..0x150].copy_from_slice(&control.to_le_bytes());
    c
}

/// A bridge (root port or switch port) with a Gen5 x16 link.
pub fn bridge(real: &str, numa_node: i32, link: (&'static str, &'static str, u32, u32)) -> PciFn {
    PciFn {
        real: real.to_owned(),
        vendor: 0x1000,
        device: 0xc030,
        class: 0x060400,
        driver: Some("pcieport"),
        numa_node,
        link: Some(link),
        bars: Vec::new(),
        iommu_group: None,
    }
}

/// One GPU/NIC pair behind a PCIe switch, as placed in the 8-GPU node.
pub struct Pair {
    pub index: usize,
    pub numa_node: i32,
    pub root_bus: u8,
}

impl Pair {
    pub fn gpu_address(&self) -> String {
        format!("0000:{:02x}:00.0", self.root_bus + 3)
    }
    pub fn nic_address(&self) -> String {
        format!("0000:{:02x}:00.0", self.root_bus + 4)
    }
    pub fn gpu_port(&self) -> String {
        format!("0000:{:02x}:00.0", self.root_bus + 2)
    }
    pub fn nic_port(&self) -> String {
        format!("0000:{:02x}:01.0", self.root_bus + 2)
    }
    pub fn netdev(&self) -> String {
        format!("ibp{}s0", self.root_bus + 4)
    }
}

pub const H100_PAIRS: usize = 8;

pub fn h100_pairs() -> Vec<Pair> {
    (0..H100_PAIRS)
        .map(|index| Pair {
            index,
            numa_node: if index < 4 { 0 } else { 1 },
            root_bus: 0x10 + (index as u8) * 0x20,
        })
        .collect()
}

/// GPU index whose link has downshifted to 2.5 GT/s at idle.
pub const IDLE_GPU: usize = 3;
/// GPU index with a pending row remap in the synthetic nvidia-smi output.
pub const REMAP_PENDING_GPU: usize = 5;

/// Common files of a Linux machine: OS, kernel, CPUs, NUMA, memory, firmware, DMI.
pub fn base_system(tree: &Tree, cpus_per_node: u32, nodes: u32) {
    tree.file(
        "/etc/os-release",
        "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nVERSION=\"22.04.4 LTS (Jammy Jellyfish)\"\nID=ubuntu\nID_LIKE=debian\n",
    );
    tree.attr("/proc/sys/kernel/osrelease", "5.15.0-122-generic");
    tree.attr(
        "/proc/cmdline",
        "BOOT_IMAGE=/boot/vmlinuz-5.15.0-122-generic root=UUID=2b1c ro intel_iommu=on iommu=pt hugepagesz=1G hugepages=16 dyndbg=\"module mlx5_core +p\" nouveau.modeset=0",
    );
    tree.attr(
        "/sys/fs/cgroup/cgroup.controllers",
        "cpuset cpu io memory hugetlb pids rdma misc",
    );
    let total = cpus_per_node * nodes;
    let half = total / 2;
    tree.attr(
        "/sys/devices/system/cpu/online",
        &format!("0-{}", total - 1),
    );
    tree.attr("/sys/devices/system/cpu/smt/control", "on");
    tree.attr("/sys/devices/system/cpu/smt/active", "1");
    let mut cpuinfo = String::new();
    for cpu in 0..total {
        let socket = (cpu % half) / (half / nodes);
        cpuinfo.push_str(&format!(
            "processor\t: {cpu}\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: {socket}\n\n"
        ));
    }
    tree.file("/proc/cpuinfo", &cpuinfo);
    tree.attr(
        "/sys/devices/system/node/online",
        &format!("0-{}", nodes - 1),
    );
    let per_half = half / nodes;
    for node in 0..nodes {
        let dir = format!("/sys/devices/system/node/node{node}");
        let low = node * per_half;
        tree.attr(
            &format!("{dir}/cpulist"),
            &format!(
                "{}-{},{}-{}",
                low,
                low + per_half - 1,
                half + low,
                half + low + per_half - 1
            ),
        );
        tree.file(
            &format!("{dir}/meminfo"),
            &format!("Node {node} MemTotal:       1056808704 kB\nNode {node} MemFree:        1000000000 kB\n"),
        );
        tree.attr(
            &format!("{dir}/hugepages/hugepages-1048576kB/nr_hugepages"),
            "8",
        );
        tree.attr(
            &format!("{dir}/hugepages/hugepages-1048576kB/free_hugepages"),
            "8",
        );
        tree.attr(
            &format!("{dir}/hugepages/hugepages-2048kB/nr_hugepages"),
            "0",
        );
        tree.attr(
            &format!("{dir}/hugepages/hugepages-2048kB/free_hugepages"),
            "0",
        );
    }
    tree.file(
        "/proc/meminfo",
        "MemTotal:       2113617408 kB\nMemFree:        2000000000 kB\nMemAvailable:   2050000000 kB\nHugePages_Total:      16\nHugePages_Free:       16\nHugepagesize:    1048576 kB\n",
    );
    tree.attr(
        "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
        "16",
    );
    tree.attr(
        "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages",
        "16",
    );
    tree.attr(
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "always [madvise] never",
    );
    tree.file(
        "/proc/mounts",
        "/dev/nvme0n1p2 / ext4 rw,relatime,errors=remount-ro 0 0\nsysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\ntmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1056808704k,inode64 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n",
    );
    // GNU df over the one local disk file system: 1.75 TiB, 78 % of it and of the
    // inodes free.
    tree.script(
        "/usr/bin/df",
        "#!/bin/sh\necho '     1B-blocks         Avail    Inodes    IFree Mounted on'\necho '1919850381312 1500000000000 119209984  93000000 /'\n",
    );
    // containerd with the rendered LimitMEMLOCK=infinity, and a shim beside it.
    tree.file(
        "/sys/fs/cgroup/system.slice/containerd.service/cgroup.procs",
        "1240\n1234\n",
    );
    tree.attr("/proc/1240/comm", "containerd-shim");
    tree.attr("/proc/1234/comm", "containerd");
    tree.file(
        "/proc/1234/limits",
        "Limit                     Soft Limit           Hard Limit           Units     \nMax locked memory         unlimited            unlimited            bytes     \nMax open files            1048576              1048576              files     \n",
    );
    tree.bytes(
        "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        &[0x06, 0x00, 0x00, 0x00, 0x01],
    );
    tree.attr("/sys/module/module/parameters/sig_enforce", "Y");
    tree.attr(
        "/sys/kernel/security/lockdown",
        "none [integrity] confidentiality",
    );
    for (name, value) in [
        ("bios_vendor", "American Megatrends International, LLC."),
        ("bios_version", "1.3.2"),
        ("bios_date", "03/14/2024"),
        ("bios_release", "5.27"),
        ("sys_vendor", "Supermicro"),
        ("product_name", "SYS-821GE-TNHR"),
        ("product_sku", "To be filled by O.E.M."),
        ("product_serial", "S123456X4B01234"),
        ("board_vendor", "Supermicro"),
        ("board_name", "X13DEG-OAD"),
        ("board_version", "1.01"),
        ("board_serial", "OM23AS000123"),
        ("chassis_type", "17"),
    ] {
        tree.attr(&format!("/sys/class/dmi/id/{name}"), value);
    }
}

/// The four NVSwitches of an HGX H100 board, each behind a root port of its own on the
/// first root bus, in the IOMMU groups `iommu_group` hands out.
pub fn add_nvswitches(tree: &Tree, mut iommu_group: impl FnMut() -> Option<u32>) {
    for switch in 0..4u8 {
        let root_port = format!("pci0000:00/0000:00:0{}.0", switch + 1);
        let link = ("16.0 GT/s PCIe", "16.0 GT/s PCIe", 2, 2);
        add_pci(tree, &bridge(&root_port, 0, link));
        add_pci(
            tree,
            &PciFn {
                real: format!("{root_port}/0000:{:02x}:00.0", 0x05 + switch),
                vendor: 0x10de,
                device: 0x22a3,
                class: 0x068000,
                driver: Some("nvidia-nvswitch"),
                numa_node: 0,
                link: Some(link),
                bars: vec![(
                    0,
                    0x9000_0000 + u64::from(switch) * 0x0200_0000,
                    32 << 20,
                    0x0004_0200,
                )],
                iommu_group: iommu_group(),
            },
        );
    }
}

/// A dual-socket 8×H100 SXM node: 4 NVSwitches, 8 ConnectX-7 NDR NICs, each GPU and NIC
/// behind the same PCIe switch, GPUs 0-3 and NICs 0-3 on NUMA node 0, 4-7 on node 1.
pub fn h100_node() -> Tree {
    let tree = Tree::new();
    base_system(&tree, 112, 2);
    let mut group = 0;
    let mut next_group = || {
        group += 1;
        Some(group)
    };
    for pair in h100_pairs() {
        let b = pair.root_bus;
        let numa = pair.numa_node;
        let root = format!("pci0000:{b:02x}");
        let root_port = format!("{root}/0000:{b:02x}:01.0");
        let upstream = format!("{root_port}/0000:{:02x}:00.0", b + 1);
        let gpu_port = format!("{upstream}/{}", pair.gpu_port());
        let nic_port = format!("{upstream}/{}", pair.nic_port());
        add_pci(&tree, &bridge(&root_port, numa, LINK_GEN5_X16));
        add_pci(&tree, &bridge(&upstream, numa, LINK_GEN5_X16));
        add_pci(&tree, &bridge(&gpu_port, numa, LINK_GEN5_X16));
        add_pci(&tree, &bridge(&nic_port, numa, LINK_GEN5_X16));
        let gpu_link = if pair.index == IDLE_GPU {
            ("2.5 GT/s PCIe", "32.0 GT/s PCIe", 16, 16)
        } else {
            LINK_GEN5_X16
        };
        let bar_base = 0x2000_0000_0000u64 + (pair.index as u64) * 0x40_0000_0000;
        add_pci(
            &tree,
            &PciFn {
                real: format!("{gpu_port}/{}", pair.gpu_address()),
                vendor: 0x10de,
                device: 0x2330,
                class: 0x030200,
                driver: Some("nvidia"),
                numa_node: numa,
                link: Some(gpu_link),
                bars: vec![
                    (
                        0,
                        0xa000_0000 + (pair.index as u64) * 0x0400_0000,
                        16 << 20,
                        0x0004_0200,
                    ),
                    (1, bar_base, 128 << 30, 0x0014_220c),
                    (3, bar_base + (128 << 30), 32 << 20, 0x0014_220c),
                ],
                iommu_group: next_group(),
            },
        );
        let nic_real = format!("{nic_port}/{}", pair.nic_address());
        add_pci(
            &tree,
            &PciFn {
                real: nic_real.clone(),
                vendor: 0x15b3,
                device: 0x1021,
                class: 0x020700,
                driver: Some("mlx5_core"),
                numa_node: numa,
                link: Some(LINK_GEN5_X16),
                bars: vec![(
                    0,
                    0x2100_0000_0000 + (pair.index as u64) * 0x0200_0000,
                    32 << 20,
                    0x0014_220c,
                )],
                iommu_group: next_group(),
            },
        );
        let nic_dir = format!("/sys/devices/{nic_real}");
        let netdev = pair.netdev();
        let net_dir = format!("{nic_dir}/net/{netdev}");
        tree.attr(&format!("{net_dir}/type"), "32");
        tree.attr(&format!("{net_dir}/operstate"), "up");
        tree.attr(&format!("{net_dir}/speed"), "400000");
        tree.attr(&format!("{net_dir}/mtu"), "4092");
        tree.attr(
            &format!("{net_dir}/address"),
            &format!(
                "00:00:10:49:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:{:02x}:00:0{}",
                b, pair.index
            ),
        );
        tree.link(
            &format!("{net_dir}/device"),
            &format!("../../../{}", pair.nic_address()),
        );
        tree.link(
            &format!("/sys/class/net/{netdev}"),
            &format!("../../devices/{nic_real}/net/{netdev}"),
        );
        let ib = format!("mlx5_{}", pair.index);
        let ib_dir = format!("{nic_dir}/infiniband/{ib}");
        tree.attr(&format!("{ib_dir}/fw_ver"), "28.39.1002");
        tree.attr(&format!("{ib_dir}/hca_type"), "MT4129");
        tree.attr(&format!("{ib_dir}/board_id"), "MT_0000000838");
        tree.attr(&format!("{ib_dir}/node_type"), "1: CA");
        tree.link(
            &format!("{ib_dir}/device"),
            &format!("../../../{}", pair.nic_address()),
        );
        tree.attr(&format!("{ib_dir}/ports/1/state"), "4: ACTIVE");
        tree.attr(&format!("{ib_dir}/ports/1/phys_state"), "5: LinkUp");
        tree.attr(&format!("{ib_dir}/ports/1/rate"), "400 Gb/sec (4X NDR)");
        tree.attr(&format!("{ib_dir}/ports/1/link_layer"), "InfiniBand");
        tree.link(
            &format!("/sys/class/infiniband/{ib}"),
            &format!("../../devices/{nic_real}/infiniband/{ib}"),
        );
    }
    add_nvswitches(&tree, &mut next_group);
    // A management NIC on the chipset root bus, and the loopback.
    let mgmt = "pci0000:00/0000:00:1c.0";
    add_pci(
        &tree,
        &PciFn {
            real: mgmt.to_owned(),
            vendor: 0x8086,
            device: 0x1533,
            class: 0x020000,
            driver: Some("igb"),
            numa_node: 0,
            link: Some(("2.5 GT/s PCIe", "2.5 GT/s PCIe", 1, 1)),
            bars: vec![(0, 0x9c00_0000, 1 << 20, 0x0004_0200)],
            iommu_group: next_group(),
        },
    );
    let mgmt_net = format!("/sys/devices/{mgmt}/net/eno1");
    tree.attr(&format!("{mgmt_net}/type"), "1");
    tree.attr(&format!("{mgmt_net}/operstate"), "up");
    tree.attr(&format!("{mgmt_net}/speed"), "1000");
    tree.attr(&format!("{mgmt_net}/mtu"), "1500");
    tree.attr(&format!("{mgmt_net}/address"), "3c:ec:ef:00:11:22");
    tree.link(&format!("{mgmt_net}/device"), "../../../0000:00:1c.0");
    tree.link(
        "/sys/class/net/eno1",
        &format!("../../devices/{mgmt}/net/eno1"),
    );
    let lo = "/sys/devices/virtual/net/lo";
    tree.attr(&format!("{lo}/type"), "772");
    tree.attr(&format!("{lo}/operstate"), "unknown");
    tree.attr(&format!("{lo}/mtu"), "65536");
    tree.attr(&format!("{lo}/address"), "00:00:00:00:00:00");
    tree.attr(&format!("{lo}/speed"), "-1");
    tree.link("/sys/class/net/lo", "../../devices/virtual/net/lo");

    // Driver, modules, device nodes, CDI, kernel log.
    tree.attr("/sys/module/nvidia/version", "570.172.08");
    tree.attr("/sys/module/mlx5_core/version", "24.10-1.1.4");
    tree.dir("/sys/module/nvidia_uvm");
    tree.file(
        "/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.172.08  Release Build  (dvs-builder@U16-I2-C03-12-4)  Tue Jul  8 17:12:49 UTC 2025\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n",
    );
    tree.file(
        "/proc/modules",
        "nvidia_uvm 4956160 0 - Live 0x0000000000000000 (POE)\nnvidia 9744384 12 nvidia_uvm, Live 0x0000000000000000 (POE)\nmlx5_ib 495616 0 - Live 0x0000000000000000 (OE)\nmlx5_core 2478080 1 mlx5_ib, Live 0x0000000000000000 (OE)\n",
    );
    for gpu in 0..8 {
        tree.file(&format!("/dev/nvidia{gpu}"), "");
    }
    tree.file("/dev/nvidiactl", "");
    tree.file("/etc/cdi/nvidia.yaml", &cdi_spec(8));
    tree.file("/etc/cdi/README", "not a spec\n");
    tree.file(
        "/dev/kmsg",
        "6,1,0,-;Linux version 5.15.0-122-generic\n4,2100,5112000000,-;NVRM: Xid (PCI:0000:73:00): 63, pid=2315, name=python3, Row Remapper: New row marked for remapping, reset gpu to activate.\n SUBSYSTEM=pci\n3,2101,5113000000,-;pcieport 0000:10:01.0: AER: Corrected error received: 0000:13:00.0\n",
    );
    tree
}

/// A CDI spec in the shape nvidia-ctk writes (YAML), for `gpus` GPUs and `all`.
pub fn cdi_spec(gpus: usize) -> String {
    let mut spec = String::from("---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n");
    for gpu in 0..gpus {
        spec.push_str(&format!(
            "- name: \"{gpu}\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia{gpu}\n"
        ));
    }
    spec.push_str("- name: all\n  containerEdits:\n    deviceNodes:\n");
    for gpu in 0..gpus {
        spec.push_str(&format!("    - path: /dev/nvidia{gpu}\n"));
    }
    spec.push_str(
        "containerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n  - path: /dev/nvidia-uvm\n  hooks:\n  - hookName: createContainer\n    path: /usr/bin/nvidia-cdi-hook\n    args: [nvidia-cdi-hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]\n  mounts:\n  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.172.08\n    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.570.172.08\n    options: [ro, nosuid, nodev, bind]\n",
    );
    spec
}

/// `nvidia-smi -q -x` for the 8×H100 node, in the 570 driver's layout (DTD v12): split
/// power readings, split SRAM uncorrectable counters, recovery action, deprecated reset
/// status. GPU [`REMAP_PENDING_GPU`] has a pending row remap; [`IDLE_GPU`] is in P8.
pub fn h100_nvidia_smi_xml() -> String {
    super::nvidia_smi::SmiLog::h100().xml()
}

/// An 8×MI300X node: GPUs are processing accelerators (class 0x1200) behind switch ports,
/// 4 per NUMA node.
pub fn mi300x_node() -> Tree {
    let tree = Tree::new();
    base_system(&tree, 96, 2);
    for gpu in 0..8u8 {
        let b = 0x08 + gpu * 0x20;
        let numa = i32::from(gpu / 4);
        let root_port = format!("pci0000:{b:02x}/0000:{b:02x}:01.1");
        let upstream = format!("{root_port}/0000:{:02x}:00.0", b + 1);
        let downstream = format!("{upstream}/0000:{:02x}:00.0", b + 2);
        add_pci(&tree, &bridge(&root_port, numa, LINK_GEN5_X16));
        add_pci(&tree, &bridge(&upstream, numa, LINK_GEN5_X16));
        add_pci(&tree, &bridge(&downstream, numa, LINK_GEN5_X16));
        add_pci(
            &tree,
            &PciFn {
                real: format!("{downstream}/0000:{:02x}:00.0", b + 3),
                vendor: 0x1002,
                device: 0x74a1,
                class: 0x120000,
                driver: Some("amdgpu"),
                numa_node: numa,
                link: Some(LINK_GEN5_X16),
                bars: vec![
                    (
                        0,
                        0x1_0000_0000_0000 + u64::from(gpu) * 0x100_0000_0000,
                        256 << 30,
                        0x0014_220c,
                    ),
                    (
                        2,
                        0xf000_0000 + u64::from(gpu) * 0x0100_0000,
                        2 << 20,
                        0x0014_220c,
                    ),
                    (
                        5,
                        0xe000_0000 + u64::from(gpu) * 0x0010_0000,
                        512 << 10,
                        0x0004_0200,
                    ),
                ],
                iommu_group: None,
            },
        );
        // amdgpu RAS on, VRAM (UMC) ECC among its blocks, no errors, no retired page.
        let ras = format!("/sys/bus/pci/devices/0000:{:02x}:00.0/ras", b + 3);
        tree.file(&format!("{ras}/umc_err_count"), "ue: 0\nce: 0\n");
        tree.file(&format!("{ras}/gfx_err_count"), "ue: 0\nce: 0\n");
        tree.file(&format!("{ras}/gpu_vram_bad_pages"), "");
    }
    tree.attr("/sys/module/amdgpu/version", "6.8.5");
    tree
}

/// The facts of an MI300X tree (e.g. [`mi300x_node`]) as verify collects them, with
/// [`mi300x_rocm_smi_json`] as rocm-smi's output and no NVIDIA tool or runtime commands.
pub fn mi300x_facts(tree: &Tree) -> nodeimg::verify::Facts {
    nodeimg::verify::collect(
        &LiveHost::new(tree.root()),
        &nodeimg::verify::CollectOptions {
            nvidia_smi: nodeimg::verify::ToolOutput::Skip,
            rocm_smi: nodeimg::verify::ToolOutput::Provided(mi300x_rocm_smi_json()),
            runtime_commands: false,
            ..nodeimg::verify::CollectOptions::default()
        },
    )
}

/// `rocm-smi --json` for [`mi300x_node`] in the ROCm 6.1 key set (all values strings).
pub fn mi300x_rocm_smi_json() -> String {
    let cards: Vec<String> = (0..8u8)
        .map(|gpu| {
            let b = 0x08 + gpu * 0x20 + 3;
            format!(
                "\"card{gpu}\": {{\"Device Name\": \"AMD Instinct MI300X\", \"Device ID\": \"0x74a1\", \"Device Rev\": \"0x00\", \"Subsystem ID\": \"0x74a1\", \"GUID\": \"{}\", \"Unique ID\": \"0x{:016x}\", \"VBIOS version\": \"113-M3000100-102\", \"Temperature (Sensor edge) (C)\": \"N/A\", \"Temperature (Sensor junction) (C)\": \"{}.0\", \"Temperature (Sensor memory) (C)\": \"35.0\", \"Current Socket Graphics Package Power (W)\": \"{}.0\", \"Card Series\": \"AMD Instinct MI300X\", \"Card Model\": \"0x74a1\", \"Card Vendor\": \"Advanced Micro Devices, Inc. [AMD/ATI]\", \"Card SKU\": \"M3000100\", \"Serial Number\": \"692251001{gpu:03}\", \"PCI Bus\": \"0000:{b:02X}:00.0\", \"(Topology) Numa Node\": \"{}\", \"(Topology) Numa Affinity\": \"{}\", \"VRAM Total Memory (B)\": \"206141652992\"}}",
                28000 + u32::from(gpu),
                0x5f00_0000_0000_0000u64 + u64::from(gpu),
                40 + gpu,
                130 + u32::from(gpu),
                gpu / 4,
                gpu / 4,
            )
        })
        .collect();
    format!(
        "{{{}, \"system\": {{\"Driver version\": \"6.8.5\"}}}}",
        cards.join(", ")
    )
}
