//! First boot in a VM (opt-in suite `boot_vm`, compiled only with the `boot-vm` feature:
//! `cargo test --features boot-vm -- --ignored boot_vm::`, as root; ~10 min a boot under TCG):
//! what a container cannot show, because it shares the host's kernel. The GPU example's
//! image (h100-sxm-debian, unchanged: its kernel pin is the test root's kernel) is
//! applied onto the cached Debian 12 root, which is copied onto an ext4 disk image;
//! `update-initramfs` and `update-grub` run inside it as the README's Debian steps say,
//! and QEMU boots the disk with Debian's own kernel and initramfs and the kernel
//! arguments of the `grub.cfg` that `grub-mkconfig` wrote (KVM when it works here,
//! else TCG). From inside, the probe saves /proc/cmdline, the hugepage pools, the
//! modules, the sysctls, and runs verify's kernel and hugepage checks.
//!
//! The VM has no GPU: the GPU stand-ins of the nspawn scenarios stand in, nouveau has no device to
//! bind, and the gate itself (nodeimg-verify.service, masked here) is the nspawn
//! scenarios' subject. A second boot with deliberately wrong arguments shows that the
//! same checks then fail.
//!
//! Needs, besides the nspawn suite's: qemu-system-x86, e2fsprogs, util-linux (losetup).

use std::path::Path;

use crate::support::boot_root::{
    Node, example, get, manifest_digest, root_versions, run, script, set, staged_for_reboot, tail,
};

/// The checks the probe runs inside the VM.
const CHECKS: &str = "os.kernel.*,os.hugepages";
/// The test root's own module, which the GPU image's modprobe.d gives options.
const MODPROBE: &str = "nouveau";

struct Vm {
    out: std::path::PathBuf,
    console: String,
}

impl Vm {
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.out.join(name)).unwrap_or_else(|e| {
            panic!(
                "the probe left no {name} ({e}); console:\n{}",
                tail(&self.console, 60)
            )
        })
    }

    fn verify(&self) -> (i32, serde_json::Value) {
        let rc = self.read("verify-checks.rc").trim().parse().unwrap();
        let json = serde_json::from_str(&self.read("verify-checks.json")).unwrap_or_else(|e| {
            panic!(
                "verify-checks.json: {e}\n{}",
                self.read("verify-checks.txt")
            )
        });
        (rc, json)
    }

    /// (check id, verdict) of every check verify ran.
    fn outcomes(&self) -> Vec<(String, String)> {
        let (_, json) = self.verify();
        json["results"]
            .as_array()
            .unwrap_or_else(|| panic!("no results in {json}"))
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_string(),
                    c["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

/// The GPU example's image applied and put on a disk, with the probe told what to run.
fn vm_node() -> Node {
    let root = root_versions();
    let bp = example("h100-sxm-debian");
    assert_eq!(
        get(&bp, &["os", "kernel"]).as_str(),
        Some(root.kernel.as_str()),
        "the example's kernel pin is not the test root's kernel"
    );
    // With the GPU stand-ins: the driver packages' units the image enables exist.
    let node = Node::build(&bp, true);
    node.write("/etc/boot-test/verify-checks", CHECKS);
    node.write("/etc/boot-test/modprobe", MODPROBE);
    // What is asserted on is done by basic.target: the probe need not wait for the
    // rest of startup (TCG is slow).
    node.write("/etc/boot-test/no-wait", "");
    // The gate is the nspawn scenarios' subject; here it would only fail on the
    // missing GPUs and retry.
    let unit = node
        .root()
        .join("etc/systemd/system/nodeimg-verify.service");
    std::fs::remove_file(&unit).unwrap();
    std::os::unix::fs::symlink("/dev/null", &unit).unwrap();
    let mut c = script();
    c.arg("disk").arg(node.dir.path());
    run(c);
    node
}

fn boot_vm(node: &Node, edit: Option<&str>) -> Vm {
    let mut c = script();
    c.arg("vm").arg(node.dir.path()).arg("1500");
    if let Some(e) = edit {
        c.arg("--edit-cmdline").arg(e);
    }
    let o = c.output().unwrap();
    let console =
        std::fs::read_to_string(node.dir.path().join("vm-console.log")).unwrap_or_default();
    assert!(
        o.status.success(),
        "the VM did not power off by itself ({}):\n{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr),
        tail(&console, 60)
    );
    Vm {
        out: node.dir.path().join("vm"),
        console,
    }
}

/// The modules the image's modules-load.d names, split into those the root's kernel
/// has (in its modules.dep or modules.builtin) and those it lacks.
fn modules_load(root: &Path) -> (Vec<String>, Vec<String>) {
    let kernels = root.join("usr/lib/modules");
    let kernel = std::fs::read_dir(&kernels)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let index = ["modules.dep", "modules.builtin"]
        .iter()
        .map(|f| std::fs::read_to_string(kernel.join(f)).unwrap())
        .collect::<String>();
    let known = |m: &str| {
        let file = m.replace('_', "[-_]");
        let re = regex::Regex::new(&format!(r"(?m)/{file}\.ko(\.[a-z]+)?:?")).unwrap();
        re.is_match(&index)
    };
    let mut have = Vec::new();
    let mut lack = Vec::new();
    let dir = root.join("etc/modules-load.d");
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for m in text.lines().map(str::trim) {
            if m.is_empty() || m.starts_with('#') {
                continue;
            }
            if known(m) {
                have.push(m.to_string());
            } else {
                lack.push(m.to_string());
            }
        }
    }
    (have, lack)
}

/// The blueprint's kernel arguments as rendered for update-grub
/// (`GRUB_CMDLINE_LINUX` in etc/default/grub.d/50-nodeimg.cfg).
fn rendered_args(root: &Path) -> Vec<String> {
    let cfg = std::fs::read_to_string(root.join("etc/default/grub.d/50-nodeimg.cfg")).unwrap();
    let line = cfg
        .lines()
        .find_map(|l| l.strip_prefix("GRUB_CMDLINE_LINUX=\""))
        .unwrap_or_else(|| panic!("no GRUB_CMDLINE_LINUX in:\n{cfg}"));
    line.trim_end_matches('"')
        .split_whitespace()
        .filter(|a| !a.starts_with("${"))
        .map(str::to_string)
        .collect()
}

#[test]
#[ignore = "opt-in suite `boot_vm`: boots a Debian 12 disk image under QEMU (root, mmdebstrap, qemu-system-x86; cargo test --features boot-vm -- --ignored boot_vm::)"]
fn boot_vm_kernel_arguments_hugepages_modules_and_sysctls_take_effect() {
    let node = vm_node();
    let args = rendered_args(&node.root());
    assert!(args.iter().any(|a| a == "hugepages=1024"), "{args:?}");

    // grub-mkconfig inside the root wrote linux lines carrying every argument.
    let grub = std::fs::read_to_string(node.dir.path().join("grub.cfg")).unwrap();
    let linux: Vec<&str> = grub
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("linux\t") || l.starts_with("linux "))
        .collect();
    assert!(!linux.is_empty(), "{grub}");
    for line in &linux {
        let words: Vec<&str> = line.split_whitespace().collect();
        for a in &args {
            assert!(words.contains(&a.as_str()), "{a} missing from: {line}");
        }
    }

    let vm = boot_vm(&node, None);
    // The kernel was started with them.
    let cmdline = vm.read("cmdline");
    let words: Vec<&str> = cmdline.split_whitespace().collect();
    for a in &args {
        assert!(
            words.contains(&a.as_str()),
            "{a} missing from /proc/cmdline: {cmdline}"
        );
    }
    // The hugepages are reserved.
    let pools = vm.read("hugepages");
    assert!(
        pools.lines().any(|l| l == "hugepages-2048kB 1024"),
        "{pools}"
    );
    // The module policy. modules-load.d: every module it names that Debian's
    // kernel has is loaded (overlay, br_netfilter); the NVIDIA ones it does not
    // have, and systemd-modules-load says so. modprobe.d: its options for
    // nouveau, which the kernel has, apply when it loads.
    let (have, lack) = modules_load(&node.root());
    assert!(!have.is_empty() && !lack.is_empty(), "{have:?} {lack:?}");
    let loaded = vm.read("modules-before");
    let loaded: Vec<&str> = loaded.lines().collect();
    for m in &have {
        assert!(loaded.contains(&m.as_str()), "{m} was not loaded at boot");
    }
    let journal = vm.read("journal.json");
    for m in &lack {
        assert!(
            journal.contains(&format!("Failed to find module '{m}'")),
            "systemd-modules-load did not try {m}"
        );
    }
    assert!(
        !loaded.contains(&MODPROBE),
        "{MODPROBE} was loaded before anyone asked"
    );
    let modprobe = vm.read("modprobe");
    assert!(modprobe.contains("nouveau modprobe=0"), "{modprobe}");
    assert!(modprobe.contains("nouveau modeset=0"), "{modprobe}");
    // The sysctls no container can set hold.
    let sysctl = vm.read("sysctl");
    for want in [
        "vm.overcommit_memory = 1",
        "kernel.panic = 10",
        "kernel.panic_on_oops = 1",
    ] {
        assert!(sysctl.lines().any(|l| l == want), "{want} does not hold");
    }
    // verify's kernel-argument and hugepage checks pass on the running kernel.
    let (rc, _) = vm.verify();
    let outcomes = vm.outcomes();
    assert!(
        outcomes.iter().any(|(id, _)| id == "os.hugepages")
            && outcomes
                .iter()
                .any(|(id, _)| id == "os.kernel.arg.required"),
        "{outcomes:?}"
    );
    assert!(
        outcomes.iter().all(|(_, o)| o == "pass"),
        "{outcomes:?}\n{}",
        vm.read("verify-checks.txt")
    );
    assert_eq!(rc, 0, "{}", vm.read("verify-checks.txt"));

    // A deliberately wrong command line: a required argument changed and half
    // the hugepages. The same checks fail.
    let vm = boot_vm(
        &node,
        Some("s/init_on_alloc=0/init_on_alloc=1/; s/ hugepages=1024/ hugepages=512/"),
    );
    let cmdline = vm.read("cmdline");
    assert!(cmdline.contains("init_on_alloc=1"), "{cmdline}");
    let (rc, _) = vm.verify();
    assert_eq!(rc, 1, "{}", vm.read("verify-checks.txt"));
    let failed: Vec<String> = vm
        .outcomes()
        .into_iter()
        .filter(|(_, o)| o == "fail")
        .map(|(id, _)| id)
        .collect();
    assert!(
        failed.contains(&"os.hugepages".to_string())
            && failed.contains(&"os.kernel.arg.required".to_string()),
        "{failed:?}\n{}",
        vm.read("verify-checks.txt")
    );
}

/// Boot assessment on a machine of its own: the Debian CPU example (whose kernel pin is
/// the test root's kernel) on the VM's disk, then an image applied in place whose verify
/// fails at boot (it pins a kernel the node does not run) with `rollout.bootAttempts: 2`.
/// QEMU boots the disk with grub.cfg's arguments each time the guest reboots: two
/// boots fail verify and reboot, the third puts the previous image back by itself and
/// reboots, the fourth boots the previous image, verify passes and kubelet starts.
#[test]
#[ignore = "opt-in suite `boot_vm`: four QEMU boots of a Debian 12 disk (root, qemu-system-x86, ~10 min a boot under TCG)"]
fn boot_vm_an_image_whose_verify_fails_goes_back_by_itself_after_its_attempts() {
    let root = root_versions();
    let mut good = example("debian12-cpu");
    assert_eq!(
        get(&good, &["os", "kernel"]).as_str(),
        Some(root.kernel.as_str()),
        "the example's kernel pin is not the test root's kernel"
    );
    // The VM's memory (QEMU -m 4096), the root's containerd.
    set(
        &mut good,
        &["kubernetes", "capacity", "memory"],
        "4Gi".into(),
    );
    set(
        &mut good,
        &["runtime", "containerd", "version"],
        root.containerd_upstream().into(),
    );
    let node = Node::build(&good, false);
    let previous = manifest_digest(&node.layout);
    let mut broken = good.clone();
    set(&mut broken, &["metadata", "version"], "2026.12.92".into());
    set(&mut broken, &["os", "kernel"], "6.1.0-99-amd64".into());
    set(
        &mut broken,
        &["rollout"],
        serde_yaml::from_str("bootAttempts: 2").unwrap(),
    );
    let file = node.dir.path().join("broken.yaml");
    std::fs::write(&file, serde_yaml::to_string(&broken).unwrap()).unwrap();
    let layout = node.dir.path().join("broken");
    run({
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_nodeimg"));
        c.args(["-q", "build"]).arg(&file).arg("-o").arg(&layout);
        c
    });
    let digest = manifest_digest(&layout);
    // Applied in place, the reboot left to the VM's first boot (as a pipeline hands
    // over a node whose trial is armed).
    let report = staged_for_reboot(&node.root(), &layout);
    assert_eq!(report["trial"]["attempts"], 2, "{report}");
    // Under TCG the initramfs and boot loader steps of the fallback would take minutes
    // each and change nothing here (both images have the same kernel and arguments).
    node.write(
        "/etc/nodeimg/apply.env",
        "NODEIMG_APPLY_SKIP=initramfs,boot-loader\nNODEIMG_APPLY_NO_PACKAGE_CHECK=1\n",
    );
    let mut c = script();
    c.arg("disk").arg(node.dir.path());
    run(c);

    let mut c = script();
    c.arg("vm-boots").arg(node.dir.path()).arg("6").arg("1800");
    let o = c.output().unwrap();
    let boots: usize = String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    let console = |n: usize| {
        std::fs::read_to_string(node.dir.path().join(format!("vm-console-{n}.log")))
            .unwrap_or_default()
    };
    assert!(
        o.status.success() && boots == 4,
        "expected 4 boots (2 failed attempts, the fallback, the previous image): {boots}, {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        tail(&console(boots.max(1)), 80)
    );
    // What the disk holds after the last boot.
    let vm = node.dir.path().join("vm");
    let mnt = node.dir.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let loop_dev = String::from_utf8(
        run({
            let mut c = std::process::Command::new("losetup");
            c.args(["--find", "--show", "--read-only"])
                .arg(node.dir.path().join("disk.img"));
            c
        })
        .stdout,
    )
    .unwrap();
    let loop_dev = loop_dev.trim().to_owned();
    run({
        let mut c = std::process::Command::new("mount");
        c.args(["-o", "ro,noload", &loop_dev]).arg(&mnt);
        c
    });
    let read = |p: &str| std::fs::read_to_string(mnt.join(p)).unwrap_or_default();
    let failed: serde_json::Value =
        serde_json::from_str(&read("var/lib/nodeimg/apply/trial-failed.json")).unwrap_or_default();
    let current: serde_json::Value =
        serde_json::from_str(&read("var/lib/nodeimg/apply/current.json")).unwrap_or_default();
    let on_trial = mnt.join("var/lib/nodeimg/apply/trial.json").exists();
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    let _ = std::process::Command::new("losetup")
        .args(["-d", &loop_dev])
        .status();
    assert_eq!(failed["image"], digest.as_str(), "{failed}");
    assert_eq!(failed["boots"], 2, "{failed}");
    assert_eq!(failed["back_to"], previous.as_str(), "{failed}");
    assert!(!on_trial, "the trial is over");
    assert_eq!(current["image"]["manifest"], previous.as_str(), "{current}");
    // The last boot: the previous image's verify passed and the gate let kubelet start.
    let verify: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(vm.join("verify.json")).unwrap_or_default())
            .unwrap_or_else(|e| panic!("verify.json: {e}\n{}", tail(&console(4), 80)));
    assert_eq!(
        verify["outcome"],
        "pass",
        "{verify}\n{}",
        tail(&console(4), 80)
    );
    assert!(
        vm.join("kubelet-started").exists(),
        "kubelet started on the previous image"
    );
}
