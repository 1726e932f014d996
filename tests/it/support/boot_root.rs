//! The node a first-boot test boots (suites `boot` and `boot_vm`): the cached Debian 12
//! root (`scripts/boot-test root`), example blueprints edited as data, and a [`Node`] —
//! a blueprint built with this nodeimg, its image applied onto an overlay of that root
//! with the Debian post-apply steps and the stand-ins (`scripts/boot-test prepare`),
//! GPU nodes with the stand-in hardware only verify sees. How a node is booted is each
//! suite's own (systemd-nspawn in `boot.rs`, QEMU in `boot_vm.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_yaml::Value;

use super::fixture_tree::{self, LINK_GEN5_X16, PciFn};
use super::root;

/// The driver-phase unit of a node whose GPU driver an operator installs.
pub const DRIVER_UNIT: &str = "nodeimg-verify-driver.service";

/// What the cached Debian root holds (`scripts/boot-test root`).
pub struct RootVersions {
    pub dir: PathBuf,
    pub kernel: String,
    /// Debian version, e.g. `1.7.24~ds1-6+deb13u1`.
    pub containerd: String,
}

impl RootVersions {
    /// containerd's upstream version as `containerd --version` prints it.
    pub fn containerd_upstream(&self) -> &str {
        self.containerd
            .rsplit_once('-')
            .map_or(self.containerd.as_str(), |(v, _)| v)
    }
}

pub fn script() -> Command {
    let mut c = Command::new(root().join("scripts/boot-test"));
    c.env_remove("NODEIMG_BOOT_NVIDIA_SMI_XML")
        // `prepare` applies images with this very nodeimg.
        .env("NODEIMG", env!("CARGO_BIN_EXE_nodeimg"));
    c
}

pub fn run(mut c: Command) -> Output {
    let shown = format!("{c:?}");
    let o = c
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        o.status.success(),
        "{shown} failed ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Makes (once) or finds the cached root and reads what it holds.
pub fn root_versions() -> RootVersions {
    let mut c = script();
    c.arg("root");
    let o = run(c);
    let dir = PathBuf::from(String::from_utf8(o.stdout).unwrap().trim());
    let text = std::fs::read_to_string(dir.join("versions")).unwrap();
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {}/versions", dir.display()))
            .to_string()
    };
    RootVersions {
        kernel: get("kernel"),
        containerd: get("containerd"),
        dir,
    }
}

/// An example blueprint, as a YAML value.
pub fn example(name: &str) -> Value {
    let path = root().join("blueprints").join(format!("{name}.yaml"));
    serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

pub fn set(v: &mut Value, path: &[&str], value: Value) {
    let (last, parents) = path.split_last().unwrap();
    let mut cur = v;
    for p in parents {
        cur = cur
            .as_mapping_mut()
            .unwrap()
            .entry(Value::from(*p))
            .or_insert_with(|| Value::Mapping(Default::default()));
    }
    cur.as_mapping_mut()
        .unwrap()
        .insert(Value::from(*last), value);
}

pub fn get<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |cur, p| &cur[*p])
}

/// Appends `item` to the list at `path` (a new list when there is none).
pub fn push(v: &mut Value, path: &[&str], item: Value) {
    let mut list = get(v, path).as_sequence().cloned().unwrap_or_default();
    list.push(item);
    set(v, path, Value::Sequence(list));
}

/// The container variant of an example: the running kernel, no `boot` requests, only
/// network-namespaced sysctls, the root's containerd, and the test machine's capacity
/// (the one `debian12-cpu` declares).
pub fn container_variant(name: &str, root: &RootVersions) -> Value {
    let mut bp = example(name);
    let capacity = get(&example("debian12-cpu"), &["kubernetes", "capacity"]).clone();
    set(&mut bp, &["kubernetes", "capacity"], capacity);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    set(&mut bp, &["os", "kernel"], Value::from(kernel.trim()));
    set(
        &mut bp,
        &["boot"],
        serde_yaml::from_str("{iommu: \"off\"}").unwrap(),
    );
    if let Some(sysctls) = bp["security"]["sysctls"].as_mapping_mut() {
        sysctls.retain(|k, _| k.as_str().is_some_and(|k| k.starts_with("net.")));
    }
    set(
        &mut bp,
        &["runtime", "containerd", "version"],
        Value::from(root.containerd_upstream()),
    );
    bp
}

/// One node: a blueprint, its built image and the prepared root (`DIR/root`, an overlay
/// over the cached root, unmounted on drop).
pub struct Node {
    pub dir: tempfile::TempDir,
    pub layout: PathBuf,
    pub blueprint: Value,
}

impl Node {
    /// Builds `bp` with this nodeimg and prepares a root with the image applied;
    /// with `gpu`, the GPU stand-ins too (see [`install_gpu_hardware`]).
    pub fn build(bp: &Value, gpu: bool) -> Node {
        Node::build_with(bp, gpu, None)
    }

    /// [`Node::build`]; `operator_driver` (`SECONDS` or `never`, GPU nodes only):
    /// the driver is not in the image but arrives that long after kubelet
    /// started, as a GPU operator installs it (`scripts/boot-test prepare
    /// --operator-driver`).
    pub fn build_with(bp: &Value, gpu: bool, operator_driver: Option<&str>) -> Node {
        let dir = tempfile::Builder::new()
            .prefix("nodeimg-boot-")
            .tempdir_in(std::env::temp_dir())
            .unwrap();
        let bp_path = dir.path().join("blueprint.yaml");
        std::fs::write(&bp_path, serde_yaml::to_string(bp).unwrap()).unwrap();
        let layout = dir.path().join("oci");
        let mut c = Command::new(env!("CARGO_BIN_EXE_nodeimg"));
        c.args(["-q", "build"])
            .arg(&bp_path)
            .arg("-o")
            .arg(&layout)
            .env_remove("SOURCE_DATE_EPOCH");
        // NODEIMG_BOOT_TEMPLATES=DIR boots images rendered with templates
        // replaced from DIR (`build --templates`): how a scenario is seen to
        // fail when the behaviour it guards is broken, without rebuilding.
        if let Some(dir) = std::env::var_os("NODEIMG_BOOT_TEMPLATES") {
            c.arg("--templates").arg(dir);
        }
        run(c);
        let node = Node {
            dir,
            layout,
            blueprint: bp.clone(),
        };
        let mut c = script();
        c.arg("prepare")
            .arg(&node.layout)
            .arg(node.dir.path())
            .arg("--kubelet-version")
            .arg(get(bp, &["kubernetes", "version"]).as_str().unwrap());
        if gpu {
            let xml = node.dir.path().join("nvidia-smi.xml");
            std::fs::write(&xml, h100_nvidia_smi_xml(bp)).unwrap();
            c.arg("--gpu").env("NODEIMG_BOOT_NVIDIA_SMI_XML", &xml);
        }
        if let Some(delay) = operator_driver {
            c.args(["--operator-driver", delay]);
        }
        run(c);
        if gpu {
            install_gpu_hardware(&node, operator_driver.is_some());
        }
        node
    }

    /// A file `nodeimg render` writes for this node's blueprint (`cluster/…`
    /// or `layer/…`), with the same templates as its image.
    pub fn rendered(&self, path: &str) -> String {
        let out = self.dir.path().join("rendered");
        if !out.exists() {
            let mut c = Command::new(env!("CARGO_BIN_EXE_nodeimg"));
            c.args(["-q", "render"])
                .arg(self.dir.path().join("blueprint.yaml"))
                .arg("-o")
                .arg(&out);
            if let Some(dir) = std::env::var_os("NODEIMG_BOOT_TEMPLATES") {
                c.arg("--templates").arg(dir);
            }
            run(c);
        }
        std::fs::read_to_string(out.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The node's root file system.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    /// Writes a file into the root before it boots.
    pub fn write(&self, path: &str, content: &str) {
        let p = self.root().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let mut c = script();
        c.arg("release").arg(self.dir.path());
        let _ = c.output();
    }
}

pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The project's 8×H100 `nvidia-smi -q -x` capture (tests/it/support), healthy, with
/// the blueprint's driver and CUDA versions.
fn h100_nvidia_smi_xml(bp: &Value) -> String {
    let driver = get(bp, &["accelerators", "driver", "version"])
        .as_str()
        .unwrap();
    let cuda = get(bp, &["accelerators", "cuda"]).as_str().unwrap();
    let mut smi = super::nvidia_smi::SmiLog::h100_healthy();
    smi.driver_version = driver.to_owned();
    smi.cuda_version = cuda.to_owned();
    smi.xml()
}

/// The GPU hardware stand-in: a container has no GPU, so verify (and only verify,
/// through a drop-in that binds these over the host's files in its own mount
/// namespace) sees the project's synthetic 8×H100 HGX PCI tree — GPUs behind PCIe
/// switches at Gen5 x16, four NVSwitches — and the open NVIDIA driver's
/// /proc/driver/nvidia/version. The tree is built with tests/it/support, written under
/// /usr/share/boot-test/hw, and listed by absolute links so it resolves there.
///
/// With `operator_driver` the driver is not there at boot: the driver files are
/// staged under hw/operator for the operator stand-in to "load", /proc/driver and
/// the stand-in /sys/module start empty, and the driver-phase unit sees the same
/// hardware plus that /sys/module (where the driver's `initstate` appears).
fn install_gpu_hardware(node: &Node, operator_driver: bool) {
    let bp = &node.blueprint;
    let driver = get(bp, &["accelerators", "driver", "version"])
        .as_str()
        .unwrap();
    let tree = fixture_tree::Tree::new();
    for pair in fixture_tree::h100_pairs() {
        let b = pair.root_bus;
        let root_port = format!("pci0000:{b:02x}/0000:{b:02x}:01.0");
        let upstream = format!("{root_port}/0000:{:02x}:00.0", b + 1);
        let gpu_port = format!("{upstream}/{}", pair.gpu_port());
        for bridge in [&root_port, &upstream, &gpu_port] {
            fixture_tree::add_pci(
                &tree,
                &fixture_tree::bridge(bridge, pair.numa_node, LINK_GEN5_X16),
            );
        }
        fixture_tree::add_pci(
            &tree,
            &PciFn {
                real: format!("{gpu_port}/{}", pair.gpu_address()),
                vendor: 0x10de,
                device: 0x2330,
                class: 0x030200,
                driver: Some("nvidia"),
                numa_node: pair.numa_node,
                link: Some(LINK_GEN5_X16),
                bars: vec![(
                    1,
                    0x2000_0000_0000 + (pair.index as u64) * 0x40_0000_0000,
                    128 << 30,
                    0x0014_220c,
                )],
                iommu_group: None,
            },
        );
    }
    fixture_tree::add_nvswitches(&tree, || None);
    let hw = node.root().join("usr/share/boot-test/hw");
    std::fs::create_dir_all(&hw).unwrap();
    let copied = Command::new("cp")
        .arg("-a")
        .arg(tree.local("/sys"))
        .arg(&hw)
        .status()
        .unwrap();
    assert!(copied.success());
    let devices = hw.join("pci-devices");
    std::fs::create_dir_all(&devices).unwrap();
    for e in std::fs::read_dir(hw.join("sys/bus/pci/devices")).unwrap() {
        let e = e.unwrap();
        let target = std::fs::read_link(e.path()).unwrap();
        let real = target
            .to_string_lossy()
            .replace("../../../devices/", "/usr/share/boot-test/hw/sys/devices/");
        std::os::unix::fs::symlink(real, devices.join(e.file_name())).unwrap();
    }
    let version = format!(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build  (stand-in)  Mon Dec  1 00:00:00 UTC 2026\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
    );
    if operator_driver {
        node.write("/usr/share/boot-test/hw/operator/version", &version);
        std::fs::create_dir_all(hw.join("proc-driver")).unwrap();
        std::fs::create_dir_all(hw.join("module")).unwrap();
    } else {
        node.write(
            "/usr/share/boot-test/hw/proc-driver/nvidia/version",
            &version,
        );
    }
    // The GPUs' kernel log: the driver loaded, no Xid events (a container may
    // not read the host's, and the host has no GPU events to show).
    node.write(
        "/usr/share/boot-test/hw/kmsg",
        &format!("6,1,0,-;Linux version (stand-in)\n6,2,4100000,-;nvidia: loading out-of-tree module taints kernel.\n6,3,4200000,-;NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build\n"),
    );
    // The driver's user-space library the CDI spec mounts.
    node.write(
        &format!("/usr/lib/x86_64-linux-gnu/libcuda.so.{driver}"),
        "",
    );
    let dropin = "# STAND-IN hardware (nodeimg boot test): a container has no GPU. verify sees the\n\
         # project's synthetic 8xH100 PCI tree, NVIDIA driver files and the GPUs' kernel\n\
         # log instead of the host's.\n\
         [Service]\n\
         BindReadOnlyPaths=/usr/share/boot-test/hw/pci-devices:/sys/bus/pci/devices\n\
         BindReadOnlyPaths=/usr/share/boot-test/hw/proc-driver:/proc/driver\n\
         BindReadOnlyPaths=/usr/share/boot-test/hw/kmsg:/dev/kmsg\n";
    node.write(
        "/etc/systemd/system/nodeimg-verify.service.d/99-boot-test-gpu-hardware.conf",
        dropin,
    );
    if operator_driver {
        node.write(
            &format!("/etc/systemd/system/{DRIVER_UNIT}.d/99-boot-test-gpu-hardware.conf"),
            &format!(
                "{dropin}# The driver's module state as the operator stand-in sets it.\n\
                 BindReadOnlyPaths=/usr/share/boot-test/hw/module:/sys/module\n"
            ),
        );
    }
}

/// The image's manifest digest in a layout `nodeimg build` wrote.
pub fn manifest_digest(layout: &Path) -> String {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    index["manifests"][0]["digest"].as_str().unwrap().to_owned()
}

/// `nodeimg apply --in-place` of `layout` onto the stopped node at `root`, as a pipeline
/// hands over a node whose trial is armed: the reboot is left to the next boot, the
/// initramfs and boot-loader steps skipped (both images have the same kernel and
/// arguments). Asserts that it applied with impact `reboot`, and returns the report.
pub fn staged_for_reboot(root: &Path, layout: &Path) -> serde_json::Value {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nodeimg"))
        .args(["apply", "--in-place", "--no-reboot", "--no-package-check"])
        .args(["--skip", "initramfs", "--skip", "boot-loader"])
        .args(["--format", "json", "--root"])
        .arg(root)
        .arg(layout)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    assert!(
        o.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(report["impact"], "reboot", "{report}");
    report
}
