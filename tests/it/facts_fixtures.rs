//! Facts collected from synthetic machine trees: an 8×H100 SXM node with NVSwitches and
//! ConnectX-7 NDR NICs, an 8×MI300X node, and edge cases real kernels produce.

use crate::support::fault_host::FaultHost;
use crate::support::fixture_tree::{self, IDLE_GPU, REMAP_PENDING_GPU, Tree};
use nodeimg::verify::facts::boot_security::SecureBoot;
use nodeimg::verify::facts::cgroup::CgroupMode;
use nodeimg::verify::facts::cpu::SmtControl;
use nodeimg::verify::facts::gpu::{Gpu, GpuVendor};
use nodeimg::verify::facts::kernel_log::KernelEventKind;
use nodeimg::verify::facts::pci::{BarKind, PciDevice};
use nodeimg::verify::{
    CollectOptions, Fact, Facts, HostErrorKind, KernelLogSource, ToolOutput, collect,
};

fn options_with(nvidia: ToolOutput, rocm: ToolOutput) -> CollectOptions {
    CollectOptions {
        nvidia_smi: nvidia,
        rocm_smi: rocm,
        runtime_commands: false,
        ..CollectOptions::default()
    }
}

fn h100_facts() -> (Tree, Facts) {
    let tree = fixture_tree::h100_node();
    let facts = collect(
        &tree.host(),
        &options_with(
            ToolOutput::Provided(fixture_tree::h100_nvidia_smi_xml()),
            ToolOutput::Skip,
        ),
    );
    (tree, facts)
}

fn known<T: std::fmt::Debug>(fact: &Fact<T>) -> &T {
    match fact.known() {
        Some(value) => value,
        None => panic!("expected a known value, got {fact:?}"),
    }
}

fn present<T: std::fmt::Debug>(fact: &Option<Fact<T>>) -> &T {
    match fact {
        Some(fact) => known(fact),
        None => panic!("expected a fact, got None"),
    }
}

fn pci<'a>(facts: &'a Facts, address: &str) -> &'a PciDevice {
    known(&facts.pci_devices)
        .iter()
        .find(|d| d.address.to_string() == address)
        .unwrap_or_else(|| panic!("no PCI device {address}"))
}

fn gpu_pci(gpu: &Gpu) -> &PciDevice {
    known(&gpu.pci)
}

#[test]
fn h100_node_system_facts() {
    let (_tree, facts) = h100_facts();
    let os = known(&facts.os);
    assert_eq!(known(&os.id), "ubuntu");
    assert_eq!(known(&os.version_id).as_str(), "22.04");
    assert_eq!(known(&facts.kernel.release), "5.15.0-122-generic");
    let cmdline = known(&facts.kernel.cmdline);
    assert_eq!(
        cmdline.get("iommu").and_then(|p| p.value.as_deref()),
        Some("pt")
    );
    assert_eq!(
        cmdline.get("dyndbg").and_then(|p| p.value.as_deref()),
        Some("module mlx5_core +p")
    );
    assert_eq!(known(&facts.cgroup), &CgroupMode::V2);
    assert_eq!(*known(&facts.cpus.online_count), 224);
    assert_eq!(*known(&facts.cpus.sockets), 2);
    assert_eq!(known(&facts.cpus.smt_control), &SmtControl::On);
    assert!(*known(&facts.cpus.smt_active));
    let nodes = known(&facts.numa_nodes);
    assert_eq!(nodes.len(), 2);
    assert_eq!(known(&nodes[1].cpus).to_string(), "56-111,168-223");
    assert_eq!(
        known(&nodes[0].hugepages)
            .iter()
            .find(|p| p.size_kb == 1_048_576)
            .map(|p| p.total.clone()),
        Some(Fact::Known(8))
    );
    assert_eq!(*known(&facts.memory.total_kb), 2_113_617_408);
    assert_eq!(*known(&facts.memory.hugepage_size_kb), 1_048_576);
    assert_eq!(known(&facts.memory.transparent_hugepage), "madvise");
    assert_eq!(
        *known(&known(&facts.dev_shm).size_bytes),
        1_056_808_704 * 1024
    );
    assert_eq!(
        known(&facts.boot_security.secure_boot),
        &SecureBoot::Enabled
    );
    assert!(*known(&facts.boot_security.module_sig_enforce));
    assert_eq!(known(&facts.boot_security.lockdown), "integrity");
    assert_eq!(known(&facts.dmi.bios_version), "1.3.2");
    assert_eq!(known(&facts.dmi.product_name), "SYS-821GE-TNHR");
    assert_eq!(known(&facts.iommu.default_domain_type), "identity");
    assert_eq!(known(&facts.iommu.groups).len(), 21);
}

#[test]
fn h100_node_gpus_join_sysfs_and_nvidia_smi() {
    let (_tree, facts) = h100_facts();
    let gpus = &facts.gpus.gpus;
    assert_eq!(gpus.len(), 8);
    assert_eq!(facts.gpus.nvswitches.len(), 4);
    let summary = present(&facts.gpus.nvidia_smi);
    assert_eq!(known(&summary.driver_version).as_str(), "570.172.08");
    assert_eq!(known(&summary.cuda_version).as_str(), "12.8");
    assert_eq!(summary.dtd_version, Some(12));
    assert!(summary.warnings.is_empty());
    for (index, (gpu, pair)) in gpus.iter().zip(fixture_tree::h100_pairs()).enumerate() {
        assert_eq!(gpu.vendor, GpuVendor::Nvidia);
        assert_eq!(gpu.address.to_string(), pair.gpu_address());
        let device = gpu_pci(gpu);
        assert_eq!(*known(&device.device), 0x2330);
        assert_eq!(known(&device.driver).as_deref(), Some("nvidia"));
        assert_eq!(*known(&device.numa_node), Some(pair.numa_node as u32));
        assert_eq!(*known(&device.link.max_width), 16);
        assert_eq!(known(&device.link.max_speed).generation, Some(5));
        let expected_current = if index == IDLE_GPU { 2.5 } else { 32.0 };
        assert_eq!(known(&device.link.current_speed).gt_per_s, expected_current);
        let upstream = known(&device.upstream)
            .as_ref()
            .unwrap_or_else(|| panic!("GPU {index} has no upstream port"));
        assert_eq!(upstream.address.to_string(), pair.gpu_port());
        assert_eq!(known(&upstream.link.current_speed).generation, Some(5));
        let bars = known(&device.bars);
        let bar1 = bars
            .iter()
            .find(|b| b.index == 1)
            .unwrap_or_else(|| panic!("no BAR1"));
        assert_eq!(
            (bar1.size, bar1.kind, bar1.prefetchable),
            (128 << 30, BarKind::Memory64, true)
        );
        assert_eq!(known(&device.aer.correctable).total, Some(0));
        let smi = present(&gpu.nvidia);
        assert_eq!(known(&smi.product_name), "NVIDIA H100 80GB HBM3");
        assert_eq!(smi.bus_id.known(), Some(&gpu.address));
        assert!(*known(&smi.ecc_mode.current));
        assert!(*known(&smi.persistence_mode));
        assert!(!*known(&smi.mig.current));
        assert_eq!(*known(&smi.mig.devices), 0);
        assert_eq!(*known(&smi.ecc_errors.aggregate.correctable), 7);
        let remap = known(&smi.remapped_rows);
        assert_eq!(*known(&remap.pending), index == REMAP_PENDING_GPU);
        assert_eq!(
            *known(&smi.ecc_errors.volatile.uncorrectable),
            u64::from(index == REMAP_PENDING_GPU)
        );
        assert!(
            smi.reset_required
                .reason()
                .is_some_and(|r| r.contains("deprecated"))
        );
        assert!(
            smi.retired_pages
                .double_bit
                .reason()
                .is_some_and(|r| r.contains("N/A"))
        );
        assert!(
            smi.memory_temperature_c
                .reason()
                .is_some_and(|r| r.contains("[N/A]"))
        );
        assert_eq!(known(&smi.fabric.state), "Completed");
        assert_eq!(known(&smi.recovery_action), "None");
        assert_eq!(*known(&smi.power_limit_w), 700.0);
        let expected_power = if index == IDLE_GPU { 69.52 } else { 412.3 };
        assert_eq!(*known(&smi.power_draw_w), expected_power);
        assert_eq!(*known(&smi.pcie.max_gen), 5);
    }
}

#[test]
fn h100_node_gpu_nic_numa_pairing_and_rdma() {
    let (_tree, facts) = h100_facts();
    let nics = known(&facts.nics);
    assert_eq!(nics.len(), 10);
    for pair in fixture_tree::h100_pairs() {
        let nic = nics
            .iter()
            .find(|n| n.name == pair.netdev())
            .unwrap_or_else(|| panic!("no {}", pair.netdev()));
        assert_eq!(*known(&nic.speed_mbps), 400_000);
        assert_eq!(*known(&nic.mtu), 4092);
        assert_eq!(known(&nic.operstate), "up");
        assert_eq!(*known(&nic.link_type), 32);
        assert_eq!(known(&nic.driver).as_deref(), Some("mlx5_core"));
        let address = known(&nic.pci_address).map(|a| a.to_string());
        assert_eq!(address.as_deref(), Some(pair.nic_address().as_str()));
        let gpu = pci(&facts, &pair.gpu_address());
        assert_eq!(
            known(&nic.numa_node),
            known(&gpu.numa_node),
            "pair {}",
            pair.index
        );
        let nic_pci = pci(&facts, &pair.nic_address());
        let nic_up = known(&nic_pci.upstream).as_ref().map(|u| u.address);
        let gpu_up = known(&gpu.upstream).as_ref().map(|u| u.address);
        // Both hang off downstream ports of the same switch: the ports share a parent
        // (the device's sysfs path is switch/port/device; bridges' own details are not
        // read, as no check needs them).
        let switch_of = |address: &str| {
            let real = known(&pci(&facts, address).sysfs_path).clone();
            std::path::Path::new(&real)
                .parent()
                .and_then(|port| port.parent())
                .map(|p| p.to_path_buf())
        };
        assert_ne!(nic_up, gpu_up);
        assert_eq!(
            switch_of(&pair.nic_address()),
            switch_of(&pair.gpu_address())
        );
    }
    let lo = nics
        .iter()
        .find(|n| n.name == "lo")
        .unwrap_or_else(|| panic!("no lo"));
    assert_eq!(*known(&lo.pci_address), None);
    assert!(lo.speed_mbps.reason().is_some_and(|r| r.contains("-1")));
    let eno1 = nics
        .iter()
        .find(|n| n.name == "eno1")
        .unwrap_or_else(|| panic!("no eno1"));
    assert_eq!(*known(&eno1.speed_mbps), 1000);
    let rdma = known(&facts.rdma_devices);
    assert_eq!(rdma.len(), 8);
    for device in rdma {
        assert_eq!(known(&device.fw_ver).as_str(), "28.39.1002");
        assert_eq!(known(&device.hca_type), "MT4129");
        let ports = known(&device.ports);
        assert_eq!(ports.len(), 1);
        assert_eq!(known(&ports[0].state).name, "ACTIVE");
        assert_eq!(known(&ports[0].phys_state).code, 5);
        let rate = known(&ports[0].rate);
        assert_eq!(
            (rate.gbps, rate.lanes, rate.speed.as_deref()),
            (400.0, 4, Some("NDR"))
        );
        assert_eq!(known(&ports[0].link_layer), "InfiniBand");
        assert!(known(&device.pci_address).is_some());
    }
}

#[test]
fn h100_node_modules_cdi_and_kernel_log() {
    let tree = fixture_tree::h100_node();
    let facts = collect(
        &tree.host(),
        &CollectOptions {
            kernel_log: KernelLogSource::Kmsg,
            ..options_with(ToolOutput::Skip, ToolOutput::Skip)
        },
    );
    let driver = known(&facts.modules.nvidia_driver);
    assert_eq!((driver.version.as_str(), driver.open), ("570.172.08", true));
    assert_eq!(
        known(&facts.modules.versions)
            .get("nvidia")
            .map(String::as_str),
        Some("570.172.08")
    );
    assert!(!*known(&facts.modules.nouveau_loaded));
    let specs = known(&facts.cdi_specs);
    assert_eq!(specs.len(), 1);
    let spec = known(&specs[0].content);
    assert_eq!(spec.kind, "nvidia.com/gpu");
    assert_eq!(spec.devices.len(), 9);
    assert_eq!(spec.common.hooks, vec!["/usr/bin/nvidia-cdi-hook"]);
    assert!(spec.common.mounts[0].ends_with("libcuda.so.570.172.08"));
    let presence: Vec<(String, Fact<bool>)> = spec
        .common
        .device_nodes
        .iter()
        .map(|n| (n.path.clone(), n.present.clone()))
        .collect();
    assert_eq!(
        presence,
        vec![
            ("/dev/nvidiactl".to_owned(), Fact::Known(true)),
            ("/dev/nvidia-uvm".to_owned(), Fact::Known(false))
        ]
    );
    // GPUs present but nvidia-smi skipped: every GPU says why its tool view is unknown.
    assert!(facts.gpus.gpus.iter().all(|g| {
        g.nvidia
            .as_ref()
            .is_some_and(|n| n.reason().is_some_and(|r| r.contains("skipped")))
    }));
    let log = present(&facts.kernel_log);
    assert_eq!(log.events.len(), 2);
    assert_eq!(
        log.events[0].kind,
        KernelEventKind::Xid {
            code: 63,
            pci: nodeimg::verify::facts::pci_address::PciAddress::parse("0000:73:00.0").ok(),
            detail: None
        }
    );
    assert!(matches!(
        log.events[1].kind,
        KernelEventKind::PcieAer { .. }
    ));
}

#[test]
fn h100_node_runs_nvidia_smi_under_the_root() {
    let tree = fixture_tree::h100_node();
    tree.file(
        "/opt/capture/nvidia-smi.xml",
        &fixture_tree::h100_nvidia_smi_xml(),
    );
    let xml = tree.local("/opt/capture/nvidia-smi.xml");
    tree.script(
        "/usr/bin/nvidia-smi",
        &format!("#!/bin/sh\nexec cat '{}'\n", xml.display()),
    );
    let facts = collect(
        &tree.host(),
        &options_with(ToolOutput::Run, ToolOutput::Run),
    );
    let summary = present(&facts.gpus.nvidia_smi);
    assert_eq!(known(&summary.attached_gpus), &8);
    assert!(
        facts
            .gpus
            .gpus
            .iter()
            .all(|g| g.nvidia.as_ref().is_some_and(Fact::is_known))
    );
    // No AMD GPU: rocm-smi does not apply and is not run.
    assert_eq!(facts.gpus.rocm_smi, None);
    // A JSON rendering has the unknown marker shape for unknown values.
    let json = serde_json::to_value(&facts).unwrap_or_default();
    assert_eq!(
        json["gpus"]["gpus"][0]["nvidia"]["memory_temperature_c"]["unknown"]
            .as_str()
            .map(|s| s.contains("N/A")),
        Some(true)
    );
    assert_eq!(json["nics"][0]["name"], "eno1");
    assert_eq!(json["nics"][1]["speed_mbps"], 400_000);
}

#[test]
fn mi300x_node_joins_rocm_smi() {
    let tree = fixture_tree::mi300x_node();
    let facts = collect(
        &tree.host(),
        &options_with(
            ToolOutput::Run,
            ToolOutput::Provided(fixture_tree::mi300x_rocm_smi_json()),
        ),
    );
    let gpus = &facts.gpus.gpus;
    assert_eq!(gpus.len(), 8);
    assert_eq!(facts.gpus.nvidia_smi, None);
    let summary = present(&facts.gpus.rocm_smi);
    assert_eq!(known(&summary.driver_version).as_str(), "6.8.5");
    for (index, gpu) in gpus.iter().enumerate() {
        assert_eq!(gpu.vendor, GpuVendor::Amd);
        let device = gpu_pci(gpu);
        assert_eq!(*known(&device.numa_node), Some((index / 4) as u32));
        assert_eq!(
            known(&device.bars).iter().map(|b| b.size).max(),
            Some(256 << 30)
        );
        let amd = present(&gpu.amd);
        assert_eq!(amd.bus_id.known(), Some(&gpu.address));
        assert_eq!(known(&amd.product_name), "AMD Instinct MI300X");
        assert_eq!(*known(&amd.device_id), 0x74a1);
        assert_eq!(*known(&amd.numa_node), Some((index / 4) as u32));
        assert_eq!(*known(&amd.power_w), 130.0 + index as f64);
        assert_eq!(*known(&amd.vram_total_bytes), 206_141_652_992);
        assert!(
            amd.temperature_edge_c
                .reason()
                .is_some_and(|r| r.contains("N/A"))
        );
    }
}

/// A VM-like tree: old kernel link strings, no NUMA affinity, a GPU without link files.
fn edge_tree() -> Tree {
    let tree = Tree::new();
    fixture_tree::base_system(&tree, 8, 1);
    let port = "pci0000:00/0000:00:02.0";
    fixture_tree::add_pci(
        &tree,
        &fixture_tree::bridge(port, -1, ("8 GT/s", "8 GT/s", 16, 16)),
    );
    let mut nic = fixture_tree::PciFn {
        real: format!("{port}/0000:01:00.0"),
        vendor: 0x15b3,
        device: 0x101d,
        class: 0x020000,
        driver: None,
        numa_node: -1,
        link: Some(("8.0 GT/s PCIe", "16 GT/s", 8, 16)),
        bars: Vec::new(),
        iommu_group: None,
    };
    fixture_tree::add_pci(&tree, &nic);
    nic.real = "pci0000:00/0000:00:05.0".to_owned();
    nic.vendor = 0x10de;
    nic.device = 0x20b5;
    nic.class = 0x030200;
    nic.driver = Some("nvidia");
    nic.link = None;
    fixture_tree::add_pci(&tree, &nic);
    let net = "/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0/net/ens1f0";
    tree.attr(&format!("{net}/type"), "1");
    tree.attr(&format!("{net}/operstate"), "down");
    tree.attr(&format!("{net}/speed"), "25000");
    tree.attr(&format!("{net}/mtu"), "9000");
    tree.link(&format!("{net}/device"), "../../../0000:01:00.0");
    tree.link(
        "/sys/class/net/ens1f0",
        "../../devices/pci0000:00/0000:00:02.0/0000:01:00.0/net/ens1f0",
    );
    tree.attr("/sys/devices/system/cpu/smt/control", "notsupported");
    tree
}

#[test]
fn edge_cases_from_real_kernels() {
    let tree = edge_tree();
    // A down link makes the kernel fail the read of `speed` with EINVAL; a file cannot.
    let host = FaultHost::new(tree.host()).fail_read(
        "/sys/class/net/ens1f0/speed",
        HostErrorKind::InvalidArgument,
    );
    let facts = collect(&host, &options_with(ToolOutput::Skip, ToolOutput::Skip));
    let nic = pci(&facts, "0000:01:00.0");
    assert_eq!(known(&nic.link.current_speed).generation, Some(3));
    assert_eq!(known(&nic.link.max_speed).generation, Some(4));
    assert_eq!(*known(&nic.link.current_width), 8);
    assert_eq!(*known(&nic.numa_node), None);
    assert_eq!(*known(&nic.driver), None);
    let upstream = known(&nic.upstream)
        .as_ref()
        .unwrap_or_else(|| panic!("no upstream"));
    assert_eq!(upstream.address.to_string(), "0000:00:02.0");
    assert_eq!(known(&upstream.link.max_speed).gt_per_s, 8.0);
    let gpu = pci(&facts, "0000:00:05.0");
    assert!(
        gpu.link
            .current_speed
            .reason()
            .is_some_and(|r| r.contains("not found"))
    );
    assert!(
        gpu.link
            .max_width
            .reason()
            .is_some_and(|r| r.contains("max_link_width"))
    );
    assert_eq!(*known(&gpu.upstream), None);
    let ens = known(&facts.nics)
        .iter()
        .find(|n| n.name == "ens1f0")
        .cloned()
        .unwrap_or_else(|| panic!("no ens1f0"));
    let reason = ens.speed_mbps.reason().unwrap_or_default().to_owned();
    assert!(
        reason.contains("EINVAL") && reason.contains("link is down"),
        "{reason}"
    );
    assert_eq!(*known(&ens.mtu), 9000);
    assert_eq!(*known(&ens.numa_node), None);
    assert_eq!(known(&facts.cpus.smt_control), &SmtControl::NotSupported);
    // No nvidia-smi was named for this tree, and nothing is run from it: an Unknown that
    // says how to supply the output.
    let facts = collect(&host, &options_with(ToolOutput::Run, ToolOutput::Run));
    let reason = facts
        .gpus
        .nvidia_smi
        .as_ref()
        .and_then(Fact::reason)
        .unwrap_or_default()
        .to_owned();
    assert!(
        reason.contains("never executed") && reason.contains("--nvidia-smi-xml FILE"),
        "{reason}"
    );
}

#[test]
fn legacy_boot_and_missing_files_are_not_defaults() {
    let tree = Tree::new();
    tree.dir("/sys/bus/pci/devices");
    tree.dir("/sys/class/net");
    // sysfs without `firmware/efi`: a BIOS boot (without /sys/firmware, unknown).
    tree.dir("/sys/firmware/acpi");
    let facts = collect(
        &tree.host(),
        &options_with(ToolOutput::Run, ToolOutput::Run),
    );
    assert_eq!(
        known(&facts.boot_security.secure_boot),
        &SecureBoot::LegacyBoot
    );
    assert!(
        facts
            .os
            .reason()
            .is_some_and(|r| r.contains("/etc/os-release"))
    );
    assert!(!facts.kernel.release.is_known());
    assert!(!facts.memory.total_kb.is_known());
    assert!(!facts.dev_shm.is_known());
    assert!(!facts.cgroup.is_known());
    assert!(!facts.modules.nouveau_loaded.is_known());
    assert!(known(&facts.pci_devices).is_empty());
    assert!(facts.gpus.gpus.is_empty());
    assert_eq!(facts.gpus.nvidia_smi, None);
    assert!(known(&facts.rdma_devices).is_empty());
    assert!(
        facts
            .kernel_log
            .as_ref()
            .is_some_and(|l| l.reason().is_some_and(|r| r.contains("/dev/kmsg")))
    );
}
