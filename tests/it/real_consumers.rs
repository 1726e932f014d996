//! The real programs that consume rendered files accept them: containerd,
//! sshd, chronyd, logrotate and systemd-analyze. An opt-in suite, run by
//! `cargo test -- --ignored` (.ci/run installs the Debian packages); a
//! missing program fails the test. Each tool is also shown a broken file, to prove
//! the check can fail.

use std::process::{Command, Output};

use crate::support::unit_root::unit_root;
use crate::support::*;

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("`{program}` must be installed for the real-tools tests: {e}"))
}

fn ok(o: &Output) -> bool {
    o.status.success()
}

fn show(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs containerd, sshd, chronyd, logrotate, systemd-analyze (cargo test -- --ignored)"]
fn containerd_dumps_the_rendered_version_2_configs() {
    // Debian's containerd is 1.6; it reads config version 2, which nodeimg
    // renders for containerd 1.x pins. (Version 3 is checked against the
    // upstream reference config in the corpus tests.)
    let dir = tempfile::tempdir().unwrap();
    let h100_v17 = containerd_1_7();
    for bp in [h100_v17, example("mi300x-rhel"), example("cpu-minimal")] {
        let r = rendered(&bp);
        let f = write_file(dir.path(), &r, "etc/containerd/config.toml");
        let o = run(
            "containerd",
            &["--config", f.to_str().unwrap(), "config", "dump"],
        );
        assert!(ok(&o), "{}: {}", bp.name(), show(&o));
        let dump = String::from_utf8_lossy(&o.stdout);
        let rt = bp.spec().runtime.containerd.default_runtime;
        let want = format!(
            "default_runtime_name = \"{}\"",
            if rt == nodeimg::blueprint::model::DefaultRuntime::Nvidia {
                "nvidia"
            } else {
                "runc"
            }
        );
        assert!(
            dump.contains(&want),
            "{}: {want} missing in\n{dump}",
            bp.name()
        );
        assert!(
            dump.contains("config_path = \"/etc/containerd/certs.d\""),
            "{}",
            bp.name()
        );
        assert!(dump.contains("SystemdCgroup = true"), "{}", bp.name());
        assert!(
            dump.contains(&format!(
                "sandbox_image = \"{}\"",
                nodeimg::render::context::sandbox_image(bp.spec())
            )),
            "{}: {dump}",
            bp.name()
        );
        // containerd resolved the drop-in glob (nothing there on this
        // machine) and lists the files it read.
        assert!(
            dump.contains(&format!("imports = [\"{}\"]", f.display())),
            "{}: {dump}",
            bp.name()
        );
        assert!(
            dump.contains(&format!("root = \"{}\"", bp.spec().runtime.containerd.root)),
            "{}",
            bp.name()
        );
        if bp.name() == "h100-sxm-ubuntu" {
            assert!(
                dump.contains("BinaryName = \"/usr/bin/nvidia-container-runtime\""),
                "{dump}"
            );
            assert!(
                dump.contains("max_concurrent_downloads = 8"),
                "extraConfig is merged: {dump}"
            );
        }
    }
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"\n",
    )
    .unwrap();
    assert!(!ok(&run(
        "containerd",
        &["--config", bad.to_str().unwrap(), "config", "dump"]
    )));
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs containerd, sshd, chronyd, logrotate, systemd-analyze (cargo test -- --ignored)"]
fn sshd_accepts_the_rendered_configs() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("host_ed25519");
    assert!(ok(&run(
        "ssh-keygen",
        &["-q", "-t", "ed25519", "-N", "", "-f", key.to_str().unwrap()]
    )));
    // sshd -t insists on its privilege-separation directory.
    std::fs::create_dir_all("/run/sshd").expect("the real-tools tests run as root");
    for bp in EXAMPLES.iter().map(|n| example(n)) {
        let r = rendered(&bp);
        let f = write_file(dir.path(), &r, "etc/ssh/sshd_config.d/00-nodeimg.conf");
        let o = run(
            "/usr/sbin/sshd",
            &["-t", "-f", f.to_str().unwrap(), "-h", key.to_str().unwrap()],
        );
        assert!(ok(&o), "{}: {}", bp.name(), show(&o));
        // The drop-in's values are the ones sshd ends up with (-T prints
        // the effective configuration).
        let o = run(
            "/usr/sbin/sshd",
            &["-T", "-f", f.to_str().unwrap(), "-h", key.to_str().unwrap()],
        );
        let effective = String::from_utf8_lossy(&o.stdout).to_lowercase();
        for want in [
            "disableforwarding yes",
            "permituserenvironment no",
            "maxstartups 10:30:60",
            "loglevel verbose",
            "allowtcpforwarding no",
        ] {
            assert!(
                effective.lines().any(|l| l == want),
                "{}: {want} not in effect:\n{effective}",
                bp.name()
            );
        }
    }
    let bad = dir.path().join("bad.conf");
    std::fs::write(&bad, "PermitRootLogin maybe\n").unwrap();
    assert!(!ok(&run(
        "/usr/sbin/sshd",
        &[
            "-t",
            "-f",
            bad.to_str().unwrap(),
            "-h",
            key.to_str().unwrap()
        ]
    )));
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs containerd, sshd, chronyd, logrotate, systemd-analyze (cargo test -- --ignored)"]
fn chronyd_parses_the_rendered_configs() {
    let dir = tempfile::tempdir().unwrap();
    for (name, path) in [
        ("h100-sxm-ubuntu", "etc/chrony/chrony.conf"),
        ("mi300x-rhel", "etc/chrony.conf"),
    ] {
        let bp = example(name);
        let r = rendered(&bp);
        let f = write_file(dir.path(), &r, path);
        let o = run("chronyd", &["-p", "-f", f.to_str().unwrap()]);
        assert!(ok(&o), "{name}: {}", show(&o));
        let t = bp.spec().system.time_sync.as_ref().unwrap();
        let printed = String::from_utf8_lossy(&o.stdout);
        for s in &t.servers {
            assert!(printed.contains(&format!("server {s} iburst")), "{printed}");
        }
        for s in &t.pools {
            assert!(printed.contains(&format!("pool {s} iburst")), "{printed}");
        }
        assert!(printed.contains("makestep 1"), "{name}: {printed}");
    }
    let bad = dir.path().join("bad.conf");
    std::fs::write(&bad, "server\nmakestep x y\n").unwrap();
    assert!(!ok(&run("chronyd", &["-p", "-f", bad.to_str().unwrap()])));
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs containerd, sshd, chronyd, logrotate, systemd-analyze (cargo test -- --ignored)"]
fn logrotate_accepts_the_rendered_rules() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let bp = example("h100-sxm-ubuntu");
    let r = rendered(&bp);
    let f = write_file(dir.path(), &r, "etc/logrotate.d/nodeimg");
    let o = run(
        "logrotate",
        &["-d", "-s", state.to_str().unwrap(), f.to_str().unwrap()],
    );
    assert!(ok(&o), "{}", show(&o));
    assert!(
        show(&o).contains("considering log /var/log/nodeimg/*.log"),
        "{}",
        show(&o)
    );
    let bad = dir.path().join("bad");
    std::fs::write(&bad, "/var/log/x.log {\n    rotate many\n}\n").unwrap();
    let o = run(
        "logrotate",
        &["-d", "-s", state.to_str().unwrap(), bad.to_str().unwrap()],
    );
    assert!(!ok(&o) || show(&o).contains("error"), "{}", show(&o));
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs containerd, sshd, chronyd, logrotate, systemd-analyze (cargo test -- --ignored)"]
fn systemd_analyze_verifies_the_rendered_units() {
    for name in EXAMPLES {
        let bp = example(name);
        let r = rendered(&bp);
        let dir = tempfile::tempdir().unwrap();
        unit_root(&r, dir.path());
        let mut units: Vec<String> = r
            .layer
            .files()
            .filter_map(|(p, _, _)| p.strip_prefix("etc/systemd/system/"))
            .filter(|p| !p.contains('/') && (p.ends_with(".service") || p.ends_with(".mount")))
            .map(str::to_string)
            .collect();
        units.push("kubelet.service".into());
        let root_arg = format!("--root={}", dir.path().display());
        let mut args = vec!["verify", root_arg.as_str(), "--man=no", "--generators=no"];
        args.extend(units.iter().map(String::as_str));
        let o = run("systemd-analyze", &args);
        assert!(ok(&o) && o.stderr.is_empty(), "{name}: {}", show(&o));
        // kubelet requires the acceptance unit through the drop-in.
        let deps = run(
            "systemd-analyze",
            &[
                root_arg.as_str(),
                "--no-pager",
                "cat-config",
                "systemd/system/kubelet.service.d/10-nodeimg-verify.conf",
            ],
        );
        assert!(
            show(&deps).contains("Requires=nodeimg-verify.service"),
            "{}",
            show(&deps)
        );
    }
    // A unit that starts a missing program fails verification.
    let dir = tempfile::tempdir().unwrap();
    unit_root(&rendered(&example("cpu-minimal")), dir.path());
    std::fs::write(
        dir.path().join("etc/systemd/system/broken.service"),
        "[Service]\nExecStart=/nonexistent/x\n",
    )
    .unwrap();
    let root_arg = format!("--root={}", dir.path().display());
    assert!(!ok(&run(
        "systemd-analyze",
        &[
            "verify",
            &root_arg,
            "--man=no",
            "--generators=no",
            "broken.service"
        ]
    )));
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs containerd, sshd, chronyd, logrotate, systemd-analyze (cargo test -- --ignored)"]
fn systemctl_sees_sshd_masked_when_ssh_is_off() {
    for (name, units) in [
        ("cpu-minimal", ["ssh.service", "ssh.socket"]),
        ("mi300x-rhel", ["sshd.service", "sshd.socket"]),
    ] {
        let bp = Variant::of(name)
            .set("security.ssh.enabled", serde_json::json!(false))
            .load();
        let r = rendered(&bp);
        let dir = tempfile::tempdir().unwrap();
        unit_root(&r, dir.path());
        let lib = dir.path().join("usr/lib/systemd/system");
        for unit in units {
            // The vendor unit the mask hides.
            std::fs::write(
                lib.join(unit),
                "[Unit]\nDescription=OpenSSH\n[Service]\nExecStart=/usr/sbin/sshd -D\n[Install]\nWantedBy=multi-user.target\n",
            )
            .unwrap();
            let root_arg = format!("--root={}", dir.path().display());
            let o = run("systemctl", &[root_arg.as_str(), "is-enabled", unit]);
            assert_eq!(
                String::from_utf8_lossy(&o.stdout).trim(),
                "masked",
                "{name} {unit}: {}",
                show(&o)
            );
        }
    }
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs containerd, sshd, chronyd, logrotate, systemd-analyze (cargo test -- --ignored)"]
fn apt_reads_the_package_holds() {
    // apt parses the rendered preferences and gives the pinned versions 1001
    // and every other kernel -1: here, Debian 12's own kernel meta package
    // (in this machine's package lists) gets no candidate at all.
    let bp = Variant::of("cpu-minimal")
        .set(
            "runtime.containerd.version",
            serde_json::json!("1.6.20~ds1"),
        )
        .load();
    let r = rendered(&bp);
    let dir = tempfile::tempdir().unwrap();
    let parts = dir.path().join("preferences.d");
    std::fs::create_dir_all(&parts).unwrap();
    std::fs::write(
        parts.join("nodeimg-pins"),
        r.layer.file("etc/apt/preferences.d/nodeimg-pins").unwrap(),
    )
    .unwrap();
    let parts_arg = format!("Dir::Etc::PreferencesParts={}", parts.display());
    // `apt-cache policy PKG` with only the rendered preferences.
    let apt_policy = |pkg: &str| {
        run(
            "apt-cache",
            &[
                "-o",
                parts_arg.as_str(),
                "-o",
                "Dir::Etc::Preferences=/dev/null",
                "policy",
                pkg,
            ],
        )
    };
    let policy = |pkg: &str| {
        let o = apt_policy(pkg);
        assert!(ok(&o) && o.stderr.is_empty(), "{}", show(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let meta = policy("linux-image-amd64");
    assert!(meta.contains("Candidate: (none)"), "{meta}");
    let containerd = policy("containerd");
    assert!(
        containerd
            .lines()
            .any(|l| l.trim_start().starts_with("1.6.20~ds1-") && l.trim_end().ends_with(" 1001")),
        "{containerd}"
    );
    // A broken record is an error apt reports.
    std::fs::write(
        parts.join("nodeimg-pins"),
        "Pin: version 1\nPin-Priority: 1001\n",
    )
    .unwrap();
    let o = apt_policy("x");
    assert!(!o.stderr.is_empty(), "{}", show(&o));

    // unattended-upgrades' exclusions as apt's configuration parser reads them.
    let f = write_file(
        dir.path(),
        &r,
        "etc/apt/apt.conf.d/51nodeimg-unattended-upgrades",
    );
    let o = run(
        "apt-config",
        &[
            "-c",
            f.to_str().unwrap(),
            "dump",
            "Unattended-Upgrade::Package-Blacklist",
        ],
    );
    assert!(ok(&o), "{}", show(&o));
    let dump = String::from_utf8_lossy(&o.stdout);
    for p in ["linux-", "containerd", "kubelet$"] {
        assert!(
            dump.contains(&format!("Unattended-Upgrade::Package-Blacklist:: \"{p}\";")),
            "{p}: {dump}"
        );
    }
}
