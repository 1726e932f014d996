//! The host side of "the node works": what the rendered boot loader,
//! kernel, runtime, network, time, DNS, SSH, audit, trust store and package
//! files make the node do, asserted on their meaning (parsed back, sourced
//! by a shell as grub-mkconfig does) rather than on their bytes.

use std::collections::BTreeMap;
use std::process::Command;

use nodeimg::blueprint::{compat::Matrix, load_bytes};
use nodeimg::render::Rendered;

use crate::support::*;
use nodeimg::blueprint::yaml_path::YamlPath;
use serde_json::json;

fn text<'a>(r: &'a Rendered, path: &str) -> &'a str {
    std::str::from_utf8(
        r.layer
            .file(path)
            .unwrap_or_else(|| panic!("{path} is not rendered")),
    )
    .unwrap()
}

fn has(r: &Rendered, path: &str) -> bool {
    r.layer.file(path).is_some()
}

/// Validation diagnostics (errors and warnings) of an example variant.
fn codes_of(name: &str, edit: impl FnOnce(Variant) -> Variant) -> Vec<String> {
    let path = root().join("blueprints").join(format!("{name}.yaml"));
    match load_bytes(
        edit(Variant::of(name)).text().as_bytes(),
        &path,
        Some(&root().join("blueprints")),
        &Matrix::builtin(),
    ) {
        Ok(l) => l.warnings.iter().map(|d| d.code.clone()).collect(),
        Err(d) => d.iter().map(|d| d.code.clone()).collect(),
    }
}

/// `key = value` lines of a sysctl.d file.
fn sysctls(t: &str) -> Vec<(String, String)> {
    t.lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

fn lines(t: &str) -> Vec<&str> {
    t.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

// --- boot loader and kernel command line -------------------------------

#[test]
fn no_partial_kernel_cmdline_file_is_written_anywhere() {
    for name in EXAMPLES {
        let r = rendered(&example(name));
        assert!(!has(&r, "etc/kernel/cmdline"), "{name}");
    }
}

#[test]
fn debian_family_arguments_reach_every_grub_entry_when_sourced() {
    // grub-mkconfig sources /etc/default/grub, then each grub.d/*.cfg, with
    // /bin/sh; what it then puts on every `linux` line (recovery included)
    // is GRUB_CMDLINE_LINUX.
    for name in ["h100-sxm-ubuntu", "cpu-minimal"] {
        let bp = example(name);
        let r = rendered(&bp);
        let dir = tempfile::tempdir().unwrap();
        let dropin = write_file(dir.path(), &r, "etc/default/grub.d/50-nodeimg.cfg");
        let script = format!(
            "GRUB_CMDLINE_LINUX='root=UUID=1 ro'; GRUB_CMDLINE_LINUX_DEFAULT='quiet'; . '{}'; printf '%s\\n%s' \"$GRUB_CMDLINE_LINUX\" \"$GRUB_CMDLINE_LINUX_DEFAULT\"",
            dropin.display()
        );
        let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8(o.stdout).unwrap();
        let (linux, default) = out.split_once('\n').unwrap();
        assert_eq!(
            default, "quiet",
            "{name}: the default-only list is untouched"
        );
        assert!(linux.starts_with("root=UUID=1 ro "), "{name}: {linux}");
        let want = nodeimg::blueprint::cmdline::full(bp.spec());
        for a in &want {
            assert!(
                linux.split(' ').any(|w| w == a.to_string()),
                "{name}: {a} missing from {linux}"
            );
        }
        assert!(!has(&r, "etc/systemd/system/nodeimg-kernel-args.service"));
    }
}

#[test]
fn rhel_family_arguments_go_through_grubby_on_every_boot_entry() {
    let bp = example("mi300x-rhel");
    let r = rendered(&bp);
    // grub2-mkconfig on RHEL never reads grub.d, and BLS entries keep their
    // own options line: the drop-in would be inert.
    assert!(!has(&r, "etc/default/grub.d/50-nodeimg.cfg"));
    let unit = text(&r, "etc/systemd/system/nodeimg-kernel-args.service");
    let args: Vec<String> = nodeimg::blueprint::cmdline::full(bp.spec())
        .iter()
        .map(|a| a.to_string())
        .collect();
    let exec = unit
        .lines()
        .find(|l| l.starts_with("ExecStart=/usr/sbin/grubby"))
        .expect("a grubby step");
    assert!(exec.contains("--update-kernel=ALL"), "{exec}");
    assert!(
        exec.contains(&format!("\"--args={}\"", args.join(" "))),
        "{exec}"
    );
    // It runs only while an argument is missing, reboots at most once per
    // argument set, and comes before acceptance.
    for a in &args {
        assert!(
            unit.contains(&format!("ConditionKernelCommandLine=|!{a}\n")),
            "{a}"
        );
    }
    assert!(unit.contains("ConditionPathExists=!/var/lib/nodeimg/kernel-args-"));
    assert!(unit.contains("Before=nodeimg-verify.service"));
    // A different argument set gets a different stamp (a new reboot allowed).
    let other = rendered(
        &Variant::of("mi300x-rhel")
            .set(
                "boot.kernelArgs.required",
                json!(["pci=realloc=off", "amdgpu.vm_fragment_size=8"]),
            )
            .load(),
    );
    let stamp = |u: &str| {
        u.lines()
            .find_map(|l| l.strip_prefix("ConditionPathExists=!"))
            .unwrap()
            .to_string()
    };
    assert_ne!(
        stamp(unit),
        stamp(text(
            &other,
            "etc/systemd/system/nodeimg-kernel-args.service"
        ))
    );
}

#[test]
fn iommu_arguments_only_when_asked_and_never_amd_iommu_on() {
    let cpu = rendered(&example("cpu-minimal"));
    let grub = text(&cpu, "etc/default/grub.d/50-nodeimg.cfg");
    assert!(
        !grub.contains("iommu"),
        "a CPU node asked for nothing: {grub}"
    );
    for name in EXAMPLES {
        let args = nodeimg::blueprint::cmdline::full(example(name).spec());
        assert!(
            !args
                .iter()
                .any(|a| a.arg.name() == "amd_iommu" && a.arg.value() == Some("on")),
            "{name}: amd_iommu has no `on` value"
        );
    }
    let h100 = nodeimg::blueprint::cmdline::full(example("h100-sxm-ubuntu").spec());
    let names: Vec<String> = h100.iter().map(|a| a.to_string()).collect();
    assert!(names.contains(&"intel_iommu=on".to_string()));
    assert!(names.contains(&"iommu=pt".to_string()));
    // SR-IOV without an explicit IOMMU mode is refused rather than silently broken.
    let codes = codes_of("cpu-minimal", |v| {
        v.set(
            "network.nics",
            json!([{"role": "compute", "model": "ConnectX-7", "count": 1, "speedGbps": 400,
                    "mtu": 9000, "linkLayer": "ethernet", "sriovVfs": 8}]),
        )
    });
    assert!(codes.contains(&"iommu".to_string()), "{codes:?}");
}

#[test]
fn cpu_governor_follows_the_bios_power_profile() {
    let args = |bp: &nodeimg::blueprint::Blueprint| -> Vec<String> {
        nodeimg::blueprint::cmdline::full(bp.spec())
            .iter()
            .map(|a| a.to_string())
            .collect()
    };
    let gov = "cpufreq.default_governor=performance".to_string();
    assert!(args(&example("h100-sxm-ubuntu")).contains(&gov));
    assert!(!args(&example("cpu-minimal")).contains(&gov));
    let balanced = Variant::of("h100-sxm-ubuntu")
        .set("firmware.bios.powerProfile", json!("balanced"))
        .load();
    assert!(!args(&balanced).contains(&gov));
}

// --- container runtime ---------------------------------------------------

fn toml_of(r: &Rendered, path: &str) -> toml::Table {
    toml::from_str(text(r, path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn with_cdi_runc_is_the_default_and_nvidia_stays_a_handler() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let t = toml_of(&r, "etc/containerd/config.toml");
    let cri = &t["plugins"]["io.containerd.cri.v1.runtime"];
    assert_eq!(cri["enable_cdi"].as_bool(), Some(true));
    assert_eq!(
        cri["containerd"]["default_runtime_name"].as_str(),
        Some("runc")
    );
    assert_eq!(
        cri["containerd"]["runtimes"]["nvidia"]["options"]["BinaryName"].as_str(),
        Some("/usr/bin/nvidia-container-runtime")
    );
    // Making nvidia the default again is refused.
    let codes = codes_of("h100-sxm-ubuntu", |v| {
        v.set("runtime.containerd.defaultRuntime", json!("nvidia"))
    });
    assert!(codes.contains(&"default-runtime".to_string()), "{codes:?}");
}

#[test]
fn containerd_2_settings_live_in_the_plugin_that_owns_them() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let t = toml_of(&r, "etc/containerd/config.toml");
    assert_eq!(
        t["plugins"]["io.containerd.transfer.v1.local"]["max_concurrent_downloads"].as_integer(),
        Some(8)
    );
    assert!(
        t["plugins"]["io.containerd.cri.v1.images"]
            .get("max_concurrent_downloads")
            .is_none(),
        "the CRI images plugin would switch to the local pull path"
    );
    assert_eq!(
        t["plugins"]["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"].as_str(),
        Some("registry.k8s.io/pause:3.10.1")
    );
    assert_eq!(
        t["imports"].as_array().unwrap()[0].as_str(),
        Some("/etc/containerd/conf.d/*.toml")
    );
    let codes = codes_of("h100-sxm-ubuntu", |v| {
        let extra = YamlPath::parse("runtime.containerd.extraConfig");
        v.remove_at(
            &extra.key("plugins.\"io.containerd.transfer.v1.local\".max_concurrent_downloads"),
        )
        .set_at(
            &extra.key("plugins.\"io.containerd.cri.v1.images\".max_concurrent_downloads"),
            json!(8),
        )
    });
    assert!(
        codes.contains(&"containerd-plugin".to_string()),
        "{codes:?}"
    );
    // containerd 1.x: the sandbox image in the CRI plugin, at kubeadm's tag
    // for the pinned minor; a site mirror replaces it.
    let cpu = rendered(&example("cpu-minimal"));
    let t = toml_of(&cpu, "etc/containerd/config.toml");
    assert_eq!(
        t["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"].as_str(),
        Some("registry.k8s.io/pause:3.10")
    );
    let mirrored = rendered(
        &Variant::of("cpu-minimal")
            .set(
                "runtime.containerd.sandboxImage",
                json!("registry.corp.example/pause:3.10"),
            )
            .load(),
    );
    let t = toml_of(&mirrored, "etc/containerd/config.toml");
    assert_eq!(
        t["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"].as_str(),
        Some("registry.corp.example/pause:3.10")
    );
    let codes = codes_of("cpu-minimal", |v| {
        v.set(
            "runtime.containerd.sandboxImage",
            json!("registry.corp.example/pause"),
        )
    });
    assert!(codes.contains(&"sandbox-image".to_string()), "{codes:?}");
}

#[test]
fn pods_inherit_unlimited_memlock_from_containerd() {
    for name in ["h100-sxm-ubuntu", "mi300x-rhel"] {
        let r = rendered(&example(name));
        let dropin = text(
            &r,
            "etc/systemd/system/containerd.service.d/10-nodeimg-memlock.conf",
        );
        assert!(lines(dropin).contains(&"[Service]"), "{name}");
        assert!(lines(dropin).contains(&"LimitMEMLOCK=infinity"), "{name}");
    }
    assert!(!has(
        &rendered(&example("cpu-minimal")),
        "etc/systemd/system/containerd.service.d/10-nodeimg-memlock.conf"
    ));
    // limits.d is for login sessions (RDMA tools over SSH), root included:
    // `*` does not match root in pam_limits. Changing it restarts nothing.
    let limits_path = "etc/security/limits.d/90-nodeimg-memlock.conf";
    let rdma = rendered(&example("mi300x-rhel"));
    let limits: Vec<Vec<&str>> = lines(text(&rdma, limits_path))
        .into_iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for domain in ["*", "root"] {
        for kind in ["soft", "hard"] {
            assert!(
                limits.contains(&vec![domain, kind, "memlock", "unlimited"]),
                "{domain} {kind}: {limits:?}"
            );
        }
    }
    let row = nodeimg::render::plan::PLAN
        .iter()
        .find(|o| o.path == limits_path)
        .unwrap();
    assert_eq!(row.impact.0, nodeimg::diff::impact::Impact::Live);
}

#[test]
fn unprivileged_containers_cannot_take_gpus_by_environment() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let t = toml_of(&r, "etc/nvidia-container-runtime/config.toml");
    assert_eq!(
        t["accept-nvidia-visible-devices-envvar-when-unprivileged"].as_bool(),
        Some(false)
    );
    assert_eq!(t["nvidia-container-runtime"]["mode"].as_str(), Some("cdi"));
    assert_eq!(
        t["nvidia-container-runtime"]["modes"]["cdi"]["default-kind"].as_str(),
        Some("nvidia.com/gpu")
    );
    let rule = text(&r, "etc/udev/rules.d/71-nvidia-dev-char.rules");
    let rule = lines(rule);
    assert_eq!(rule.len(), 1);
    assert!(rule[0].contains("DEVPATH==\"/bus/pci/drivers/nvidia\""));
    assert!(rule[0].contains("nvidia-ctk system create-dev-char-symlinks --create-all"));
    // The AMD node has no NVIDIA toolkit.
    let amd = rendered(&example("mi300x-rhel"));
    assert!(!has(&amd, "etc/nvidia-container-runtime/config.toml"));
    assert!(!has(&amd, "etc/udev/rules.d/71-nvidia-dev-char.rules"));
}

// --- kernel modules and parameters -----------------------------------------

#[test]
fn kubernetes_prerequisites_and_gpu_tuning_are_set_once_each() {
    for name in EXAMPLES {
        let bp = example(name);
        let r = rendered(&bp);
        let s = sysctls(text(&r, "etc/sysctl.d/90-nodeimg.conf"));
        let map: BTreeMap<_, _> = s.iter().cloned().collect();
        assert_eq!(map.len(), s.len(), "{name}: a key is written twice");
        for (k, v) in [
            ("net.ipv4.ip_forward", "1"),
            ("net.bridge.bridge-nf-call-iptables", "1"),
            ("vm.overcommit_memory", "1"),
            ("kernel.keys.root_maxkeys", "1000000"),
        ] {
            assert_eq!(map.get(k).map(String::as_str), Some(v), "{name}: {k}");
        }
        assert_eq!(
            map.get("kernel.numa_balancing").map(String::as_str),
            bp.spec().accelerators.as_ref().map(|_| "0"),
            "{name}"
        );
        // The blueprint's own values win.
        for (k, v) in &bp.spec().security.sysctls {
            assert_eq!(map.get(k.as_str()), Some(&v.to_string()), "{name}: {k}");
        }
        let modules = lines(text(&r, "etc/modules-load.d/nodeimg.conf"));
        assert!(modules.contains(&"overlay") && modules.contains(&"br_netfilter"));
    }
}

#[test]
fn roce_rails_get_loose_rp_filter_and_no_arp_flux() {
    let roce = rendered(&example("mi300x-rhel"));
    let map: BTreeMap<_, _> = sysctls(text(&roce, "etc/sysctl.d/90-nodeimg.conf"))
        .into_iter()
        .collect();
    assert_eq!(map["net.ipv4.conf.all.rp_filter"], "2");
    assert_eq!(map["net.ipv4.conf.all.arp_ignore"], "1");
    assert_eq!(map["net.ipv4.conf.all.arp_announce"], "2");
    // InfiniBand rails are not Ethernet: no ARP settings.
    let ib = rendered(&example("h100-sxm-ubuntu"));
    let map: BTreeMap<_, _> = sysctls(text(&ib, "etc/sysctl.d/90-nodeimg.conf"))
        .into_iter()
        .collect();
    assert!(!map.contains_key("net.ipv4.conf.all.arp_ignore"));
}

#[test]
fn nvidia_peermem_only_with_a_pinned_ofed() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    assert!(!lines(text(&r, "etc/modules-load.d/nodeimg.conf")).contains(&"nvidia_peermem"));
    let ofed = rendered(
        &Variant::of("h100-sxm-ubuntu")
            .set("network.ofed", json!("24.10-1.1.4.0"))
            .load(),
    );
    assert!(lines(text(&ofed, "etc/modules-load.d/nodeimg.conf")).contains(&"nvidia_peermem"));
    // Without OFED the DMA-BUF path needs the open modules.
    let codes = codes_of("h100-sxm-ubuntu", |v| {
        v.set("accelerators.driver.kernelModule", json!("proprietary"))
    });
    assert!(codes.contains(&"gpudirect".to_string()), "{codes:?}");
}

#[test]
fn operator_owned_amd_driver_blacklists_the_inbox_module() {
    let r = rendered(&example("mi300x-rhel"));
    let m = lines(text(&r, "etc/modprobe.d/nodeimg-gpu.conf"));
    assert!(m.contains(&"blacklist amdgpu"), "{m:?}");
    assert!(!m.iter().any(|l| l.starts_with("options amdgpu")), "{m:?}");
}

// --- network -----------------------------------------------------------------

/// A stand-in for udev (no udevd on a test machine): the interface properties
/// the NIC rules match on, and what applying the rules in file order leaves.
#[derive(Debug, Clone)]
struct Netdev {
    link_type: u32,
    driver: Option<&'static str>,
    device: Option<String>,
}

/// Applies `rules` as udev does on `add`: every rule whose matches all hold
/// runs its assignments in file order (a later `ATTR{mtu}=` overwrites an
/// earlier one). Returns the MTU written last and whether the link is set up.
/// An unknown key fails the test, so the stand-in keeps up with the template.
fn apply_udev(rules: &str, dev: &Netdev) -> (Option<u32>, bool) {
    let (mut mtu, mut up) = (None, false);
    for rule in lines(rules) {
        let mut matched = true;
        let mut assigns = Vec::new();
        for part in rule.split(", ") {
            let (key, op, value) = if let Some((k, v)) = part.split_once("==") {
                (k, "==", v)
            } else if let Some((k, v)) = part.split_once("+=") {
                (k, "+=", v)
            } else {
                let (k, v) = part.split_once('=').unwrap_or_else(|| panic!("{part}"));
                (k, "=", v)
            };
            let value = value.trim_matches('"');
            match (key, op) {
                ("ACTION", "==") => matched &= value == "add",
                ("SUBSYSTEM", "==") => matched &= value == "net",
                ("ATTR{type}", "==") => matched &= value == dev.link_type.to_string(),
                ("DRIVERS", "==") => matched &= dev.driver == Some(value),
                ("ATTRS{device}", "==") => matched &= dev.device.as_deref() == Some(value),
                ("ATTR{mtu}", "=") | ("RUN", "+=") => assigns.push((key, value.to_string())),
                _ => panic!("the udev stand-in does not know `{part}` in {rule}"),
            }
        }
        if matched {
            for (key, value) in assigns {
                match key {
                    "ATTR{mtu}" => mtu = Some(value.parse().unwrap()),
                    _ => {
                        assert_eq!(value, "/usr/sbin/ip link set dev $name up");
                        up = true;
                    }
                }
            }
        }
    }
    (mtu, up)
}

#[test]
fn nic_rules_set_the_mtu_and_link_state_verify_checks() {
    use nodeimg::blueprint::model::LinkLayer;
    let matrix = nodeimg::blueprint::compat::Matrix::builtin();
    let path = "etc/udev/rules.d/81-nodeimg-nics.rules";
    for name in ["h100-sxm-ubuntu", "mi300x-rhel"] {
        let bp = example(name);
        let r = rendered(&bp);
        let rules = text(&r, path);
        let groups = &bp.spec().network.nics;
        for (i, g) in groups.iter().enumerate() {
            // One interface of every device id of the group: it ends with
            // the MTU verify's nic.mtu expects of it (the netdev MTU, IB MTU
            // less the IPoIB header) and with its link set up.
            for id in matrix.nic_device_ids(&g.model).unwrap() {
                let dev = Netdev {
                    link_type: match g.link_layer {
                        LinkLayer::Ethernet => 1,
                        LinkLayer::Infiniband => 32,
                    },
                    driver: Some(match g.driver.as_deref() {
                        Some("mlx5_core") => "mlx5_core",
                        Some("ice") => "ice",
                        other => panic!("{name}: network.nics[{i}] driver {other:?}"),
                    }),
                    device: Some(format!("0x{id:04x}")),
                };
                let want = match g.link_layer {
                    LinkLayer::Ethernet => g.mtu,
                    LinkLayer::Infiniband => g.mtu - 4,
                };
                assert_eq!(
                    apply_udev(rules, &dev),
                    (Some(want), true),
                    "{name}: network.nics[{i}] {dev:?}"
                );
                // Another vendor's NIC of the same link type is left alone.
                let other = Netdev {
                    driver: Some("e1000e"),
                    device: Some("0x10d3".into()),
                    ..dev
                };
                assert_eq!(apply_udev(rules, &other), (None, false));
            }
        }
    }
    // Overlapping groups: an interface belongs to the first group it fits
    // (verify's rule), so its MTU is the first group's.
    let nic = |mtu: u32, role: &str| {
        json!({"role": role, "model": "ConnectX-7", "driver": "mlx5_core", "count": 1,
               "speedGbps": 400, "mtu": mtu, "linkLayer": "ethernet", "rdma": true})
    };
    let overlap = rendered(
        &Variant::of("cpu-minimal")
            .set(
                "network.nics",
                json!([nic(9000, "compute"), nic(4200, "storage")]),
            )
            .load(),
    );
    let cx7 = Netdev {
        link_type: 1,
        driver: Some("mlx5_core"),
        device: Some("0x1021".into()),
    };
    assert_eq!(apply_udev(text(&overlap, path), &cx7), (Some(9000), true));
    // A group nodeimg cannot identify gets no rule (and a warning); without
    // any identifiable group there is no file.
    assert!(!has(&rendered(&example("cpu-minimal")), path));
    let mystery = Variant::of("cpu-minimal").set(
        "network.nics",
        json!([{"role": "compute", "model": "Mystery NIC", "count": 1, "speedGbps": 100,
                "mtu": 9000, "linkLayer": "ethernet"}]),
    );
    assert!(!has(&rendered(&mystery.clone().load()), path));
    let codes = codes_of("cpu-minimal", |_| mystery);
    assert!(codes.contains(&"nic-unidentified".to_string()), "{codes:?}");
}

// --- time, DNS, SSH, audit, trust store ---------------------------------------

#[test]
fn chrony_steps_a_wrong_clock_by_default() {
    let r = rendered(&example("mi300x-rhel"));
    assert!(lines(text(&r, "etc/chrony.conf")).contains(&"makestep 1 3"));
    let r = rendered(&example("h100-sxm-ubuntu"));
    assert!(lines(text(&r, "etc/chrony/chrony.conf")).contains(&"makestep 1 3"));
}

#[test]
fn dns_goes_through_the_resolver_the_distro_uses() {
    let rhel = rendered(&example("mi300x-rhel"));
    assert!(!has(&rhel, "etc/systemd/resolved.conf.d/50-nodeimg.conf"));
    let nm = lines(text(&rhel, "etc/NetworkManager/conf.d/50-nodeimg-dns.conf"));
    assert_eq!(
        nm,
        ["[global-dns]", "[global-dns-domain-*]", "servers=10.0.0.53"]
    );
    let ubuntu = rendered(&example("h100-sxm-ubuntu"));
    assert!(!has(
        &ubuntu,
        "etc/NetworkManager/conf.d/50-nodeimg-dns.conf"
    ));
    let resolved = lines(text(&ubuntu, "etc/systemd/resolved.conf.d/50-nodeimg.conf"));
    assert!(
        resolved.contains(&"DNS=10.0.0.53 10.0.1.53"),
        "{resolved:?}"
    );
}

#[test]
fn sshd_drop_in_wins_and_ssh_off_masks_the_units() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    assert!(!has(&r, "etc/ssh/sshd_config.d/50-nodeimg.conf"));
    let c = lines(text(&r, "etc/ssh/sshd_config.d/00-nodeimg.conf"));
    for want in [
        "DisableForwarding yes",
        "PermitUserEnvironment no",
        "MaxStartups 10:30:60",
        "LogLevel VERBOSE",
        "PermitRootLogin no",
    ] {
        assert!(c.contains(&want), "{want} missing: {c:?}");
    }
    let off = |name: &str| {
        rendered(
            &Variant::of(name)
                .set("security.ssh.enabled", json!(false))
                .load(),
        )
    };
    let r = off("cpu-minimal");
    for unit in ["ssh.service", "ssh.socket"] {
        assert_eq!(
            r.layer.file(&format!("etc/systemd/system/{unit}")),
            Some(&[][..]),
            "an empty unit file masks {unit}"
        );
    }
    assert!(!has(&r, "etc/ssh/sshd_config.d/00-nodeimg.conf"));
    assert!(
        !r.layer
            .files()
            .any(|(_, _, b)| String::from_utf8_lossy(b).contains("DenyUsers"))
    );
}

#[test]
fn audit_rules_watch_the_node_baseline_and_lock_themselves() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let rules = lines(text(&r, "etc/audit/rules.d/50-nodeimg.rules"));
    for want in [
        "-w /etc/kubernetes -p wa -k kubernetes",
        "-w /var/lib/kubelet/pki -p wa -k kubelet-pki",
        "-w /etc/sudoers.d -p wa -k privilege",
        "-w /etc/nvidia-container-runtime -p wa -k gpu-runtime",
        "-w /etc/cdi -p wa -k cdi",
        "-w /etc/nodeimg -p wa -k nodeimg",
        "-a always,exit -F arch=b64 -S init_module,finit_module,delete_module -k modules",
    ] {
        assert!(rules.contains(&want), "{want} missing: {rules:?}");
    }
    assert_eq!(rules.last(), Some(&"-e 2"));
    let watched: Vec<&str> = rules
        .iter()
        .filter_map(|l| l.strip_prefix("-w "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    let mut unique = watched.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        watched.len(),
        "auditctl refuses a duplicate rule"
    );
    assert_eq!(
        r.impact_of("layer/etc/audit/rules.d/50-nodeimg.rules").0,
        nodeimg::render::plan::Impact::Reboot
    );
}

#[test]
fn the_trust_store_is_rebuilt_before_containerd_and_kubelet() {
    for (name, cmd) in [
        (
            "h100-sxm-ubuntu",
            "ExecStart=/usr/sbin/update-ca-certificates",
        ),
        ("mi300x-rhel", "ExecStart=/usr/bin/update-ca-trust extract"),
    ] {
        let r = rendered(&example(name));
        let unit = lines(text(&r, "etc/systemd/system/nodeimg-trust.service"));
        assert!(unit.contains(&cmd), "{name}: {unit:?}");
        assert!(
            unit.iter()
                .any(|l| l.starts_with("Before=containerd.service"))
        );
    }
    assert!(!has(
        &rendered(&example("cpu-minimal")),
        "etc/systemd/system/nodeimg-trust.service"
    ));
}

#[test]
fn swap_stays_off_for_kubelet() {
    let r = rendered(&example("cpu-minimal"));
    let unit = lines(text(&r, "etc/systemd/system/nodeimg-swapoff.service"));
    assert!(unit.contains(&"ExecStart=/usr/sbin/swapoff --all"));
    assert!(unit.contains(&"After=swap.target local-fs.target"));
    let swap_ok = rendered(
        &Variant::of("cpu-minimal")
            .set("kubernetes.kubelet.extraConfig.failSwapOn", json!(false))
            .load(),
    );
    assert!(!has(&swap_ok, "etc/systemd/system/nodeimg-swapoff.service"));
}

// --- package holds ------------------------------------------------------------

#[test]
fn apt_and_dnf_hold_what_the_blueprint_pins() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let pins = text(&r, "etc/apt/preferences.d/nodeimg-pins");
    let records: Vec<&str> = pins
        .split("\n\n")
        .filter(|r| r.contains("Package:"))
        .collect();
    let find = |pkg: &str| {
        records
            .iter()
            .find(|r| {
                r.lines()
                    .any(|l| l.starts_with("Package:") && l.split(' ').any(|w| w == pkg))
            })
            .unwrap_or_else(|| panic!("no record for {pkg}"))
    };
    assert!(find("linux-image-5.15.0-171-generic").contains("Pin-Priority: 1001"));
    assert!(find("*nvidia*").contains("Pin: version 580.105.08-*"));
    assert!(find("nvidia-container-toolkit").contains("Pin: version 1.18.1-*"));
    assert!(find("kubelet").contains("Pin: version 1.34.2-*"));
    let last = records.last().unwrap();
    assert!(last.contains("linux-image-*") && last.contains("Pin-Priority: -1"));
    let uu = text(&r, "etc/apt/apt.conf.d/51nodeimg-unattended-upgrades");
    assert!(uu.contains("\"linux-\";") && uu.contains("\"nvidia-\";"));
    assert!(!has(&r, "etc/dnf/plugins/versionlock.list"));

    let rhel = rendered(&example("mi300x-rhel"));
    let locks = lines(text(&rhel, "etc/dnf/plugins/versionlock.list"));
    assert!(
        locks.contains(&"kernel-core-0:5.14.0-427.13.1.el9_4.*"),
        "{locks:?}"
    );
    assert!(locks.contains(&"kubelet-1.31.4-*"), "{locks:?}");
    assert!(
        !locks.iter().any(|l| l.contains("nvidia")),
        "the AMD node holds no NVIDIA packages"
    );
    assert!(!has(&rhel, "etc/apt/preferences.d/nodeimg-pins"));
}

/// `Key=` values of a unit file, all occurrences joined.
fn unit_values(t: &str, key: &str) -> Vec<String> {
    t.lines()
        .filter_map(|l| l.strip_prefix(&format!("{key}=")))
        .flat_map(|v| v.split_whitespace().map(str::to_owned))
        .collect()
}

#[test]
fn verify_runs_after_what_it_judges_is_produced() {
    let r = rendered(&example("h100-sxm-ubuntu"));
    let verify = text(&r, "etc/systemd/system/nodeimg-verify.service");
    let cdi = text(&r, "etc/systemd/system/nodeimg-cdi-generate.service");
    let after = unit_values(verify, "After");
    for unit in ["nodeimg-cdi-generate.service", "containerd.service"] {
        assert!(after.iter().any(|u| u == unit), "verify not after {unit}");
    }
    assert!(
        unit_values(verify, "Wants")
            .iter()
            .any(|u| u == "containerd.service")
    );
    assert!(
        !unit_values(cdi, "After")
            .iter()
            .any(|u| u == "nodeimg-verify.service")
    );
    assert!(
        unit_values(cdi, "Before")
            .iter()
            .any(|u| u == "nodeimg-verify.service")
    );
}

#[test]
fn a_mount_point_with_a_dash_gets_its_escaped_mount_unit() {
    // systemd names a mount unit after its path, `-` escaped as `\x2d`
    // (systemd.unit(5)); the unit must be written under that name, or
    // systemd ignores a Where= that does not match it.
    let r = rendered(
        &Variant::of("h100-sxm-ubuntu")
            .set(
                "system.partitions[1].mountPoint",
                json!("/var/cache/llm-models"),
            )
            .load(),
    );
    let unit = text(&r, "etc/systemd/system/var-cache-llm\\x2dmodels.mount");
    assert!(unit.contains("Where=/var/cache/llm-models"), "{unit}");
}
