//! LiveHost under a root prefix: no path leaves the root, absolute links are re-rooted,
//! and a hung vendor command is killed at its deadline.

use crate::support::fixture_tree::Tree;
use nodeimg::verify::host::{UnitName, VendorCommand};
use nodeimg::verify::{Host, HostErrorKind, LiveHost};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn paths_cannot_leave_the_root() {
    let outer = Tree::new();
    outer.file("/secret", "outside\n");
    outer.file("/root/etc/hostname", "node-1\n");
    let host = LiveHost::new(outer.local("/root"));
    assert_eq!(
        host.read_text(Path::new("/etc/hostname")).ok().as_deref(),
        Some("node-1\n")
    );
    let escape = host.read(Path::new("/etc/../../secret"));
    assert_eq!(escape.map_err(|e| e.kind), Err(HostErrorKind::OutsideRoot));
    let relative = host.read(Path::new("etc/hostname"));
    assert_eq!(
        relative.map_err(|e| e.kind),
        Err(HostErrorKind::OutsideRoot)
    );
    // A relative link climbing above the root stops at the root.
    outer.link("/root/etc/climb", "../../../../secret");
    let climbed = host.read(Path::new("/etc/climb"));
    assert_eq!(climbed.map_err(|e| e.kind), Err(HostErrorKind::NotFound));
}

#[test]
fn a_link_is_judged_by_its_target_in_the_root_not_on_this_machine() {
    // On this machine /dev/null is a device and /run/initctl may be a FIFO; in the root
    // they are plain files, and those are what a link to them means there.
    let tree = Tree::new();
    tree.file("/dev/null", "ID=debian\n");
    tree.link("/etc/os-release", "/dev/null");
    tree.file("/dev/zero", "quiet\n");
    tree.link("/proc/cmdline", "/dev/zero");
    let host = tree.host();
    assert_eq!(
        host.read_text(Path::new("/etc/os-release"))
            .map_err(|e| e.to_string())
            .as_deref(),
        Ok("ID=debian\n")
    );
    assert_eq!(
        host.read_text(Path::new("/proc/cmdline"))
            .map_err(|e| e.to_string())
            .as_deref(),
        Ok("quiet\n")
    );
}

#[test]
fn a_device_node_in_an_inspected_tree_is_not_opened_as_its_kernel_log() {
    // A character device with no driver behind it: opening it fails with ENXIO, so a
    // refusal that names the device shows it was judged without being opened.
    let tree = Tree::new();
    tree.dir("/dev");
    let node = tree.local("/dev/kmsg");
    let c = std::ffi::CString::new(node.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mknod reads a valid NUL-terminated path and touches no other memory.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(511, 0)) };
    assert_eq!(
        made,
        0,
        "this test makes a device node and needs root: {}",
        std::io::Error::last_os_error()
    );
    assert_eq!(
        tree.host().read_kernel_log().map_err(|e| e.kind),
        Err(HostErrorKind::NotRegular {
            file_kind: "a character device".to_owned()
        })
    );
}

#[test]
fn absolute_links_are_rerooted() {
    let tree = Tree::new();
    tree.file("/usr/lib/os-release", "ID=rocky\n");
    tree.link("/etc/os-release", "/usr/lib/os-release");
    tree.dir("/sys/devices/pci0000:00/0000:00:01.0");
    tree.link(
        "/sys/bus/pci/devices/0000:00:01.0",
        "/sys/devices/pci0000:00/0000:00:01.0",
    );
    tree.link("/loop", "/loop");
    let host = tree.host();
    assert_eq!(
        host.read_text(Path::new("/etc/os-release")).ok().as_deref(),
        Some("ID=rocky\n")
    );
    assert_eq!(
        host.canonicalize(Path::new("/sys/bus/pci/devices/0000:00:01.0"))
            .ok(),
        Some(Path::new("/sys/devices/pci0000:00/0000:00:01.0").to_path_buf())
    );
    assert_eq!(
        host.read_link(Path::new("/etc/os-release")).ok(),
        Some(Path::new("/usr/lib/os-release").to_path_buf())
    );
    assert_eq!(
        host.read(Path::new("/loop")).map_err(|e| e.kind),
        Err(HostErrorKind::LinkLoop)
    );
    assert_eq!(
        host.list_dir(Path::new("/sys/bus/pci/devices")).ok(),
        Some(vec!["0000:00:01.0".to_owned()])
    );
    let missing = host
        .read(Path::new("/proc/cmdline"))
        .map_err(|e| (e.kind, e.target));
    assert_eq!(
        missing,
        Err((HostErrorKind::NotFound, "/proc/cmdline".to_owned()))
    );
}

/// Whether process `pid` has ended (gone, or a zombie waiting for its parent).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// Polls `done` until it holds or `limit` passes; for outcomes that come after an event,
/// not after a fixed time, so a slow machine only makes the test slower.
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

#[test]
fn hung_command_is_killed_at_the_deadline() {
    // The command never ends by itself and starts a child that would keep the pipes
    // open if only the shell were killed. So `run` returns only if the deadline kills
    // the whole process group; no assertion depends on how fast this machine is.
    let tree = Tree::new();
    let pid_file = tree.local("/tmp/child.pid");
    std::fs::create_dir_all(pid_file.parent().unwrap()).unwrap();
    tree.script(
        "/usr/bin/nvidia-smi",
        &format!(
            "#!/bin/sh\n(while :; do sleep 1; done) &\necho $! > '{}.new'\nmv '{0}.new' '{0}'\nwhile :; do sleep 1; done\n",
            pid_file.display()
        ),
    );
    let host = std::sync::Arc::new(tree.host());
    // The deadline may pass before a loaded machine even starts the script; then there
    // is no child to look at, and the run is repeated with a longer deadline.
    let mut deadline = Duration::from_millis(300);
    let child = loop {
        let (sent, received) = std::sync::mpsc::channel();
        let run_host = std::sync::Arc::clone(&host);
        std::thread::spawn(move || {
            let _ = sent.send(run_host.run(&VendorCommand::NvidiaSmiQueryXml, deadline));
        });
        let result = received
            .recv_timeout(Duration::from_secs(120))
            .expect("run did not return: the hung command was not killed");
        let after_ms = u64::try_from(deadline.as_millis()).unwrap();
        assert_eq!(
            result.map_err(|e| e.kind),
            Err(HostErrorKind::Timeout { after_ms })
        );
        if let Ok(pid) = std::fs::read_to_string(&pid_file) {
            break pid.trim().parse::<u32>().expect("a pid");
        }
        assert!(
            deadline < Duration::from_secs(60),
            "the script never started"
        );
        deadline *= 4;
    };
    assert!(
        eventually(Duration::from_secs(60), || ended(child)),
        "process {child} of the killed group kept running"
    );
}

#[test]
fn commands_report_status_and_output() {
    let tree = Tree::new();
    tree.script(
        "/usr/bin/systemctl",
        "#!/bin/sh\n[ \"$1\" = is-active ] && [ \"$2\" = -- ] || exit 2\necho inactive\nexit 3\n",
    );
    tree.script("/usr/local/bin/containerd", "#!/bin/sh\necho \"containerd github.com/containerd/containerd v1.7.22 7f7fdf5fed64eb6a7caf99b3e12efcf9d60e311c\"\n");
    let host = tree.host();
    let unit = UnitName::parse("kubelet").unwrap_or_else(|e| panic!("{e}"));
    let output = host
        .run(
            &VendorCommand::SystemctlIsActive(vec![unit]),
            Duration::from_secs(5),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (output.status, output.stdout_text().trim()),
        (Some(3), "inactive")
    );
    let output = host
        .run(&VendorCommand::ContainerdVersion, Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(output.success() && output.stdout_text().contains("v1.7.22"));
    assert!(UnitName::parse("--force").is_err());
    assert!(UnitName::parse("a b").is_err());
}
