//! A static check of an applied root, before the image pipeline seals it:
//! what a node booted from this root needs and the files alone can show.
//!
//! - every unit the image enables exists and the programs its `Exec*=`
//!   lines run are in the root;
//! - the pinned kernel is installed (its modules folder and its image in
//!   `/boot`), and with a preinstalled driver the GPU module is built for
//!   that very kernel (a kernel update without a DKMS/KMM rebuild leaves
//!   the module only under the old kernel);
//! - every boot entry carries the blueprint's kernel arguments (grub.cfg's
//!   `linux` lines on Debian and Ubuntu, the BLS entries' `options` on the
//!   RHEL family);
//! - the initramfs of that kernel holds the image's `modprobe.d` files
//!   (and on the RHEL family its `modules-load.d`, which dracut copies;
//!   initramfs-tools does not, systemd reads it from the real root), listed
//!   with the root's own `lsinitramfs` or `lsinitrd`;
//! - the trust store holds every CA the image brings.
//!
//! A failure names what is missing and the blueprint field that wants it.
//! A check whose step was skipped in this run is not judged, and says so.

use serde::Serialize;

use super::entry::{Entry, Kind, RelPath};
use super::impact::Lock;
use super::root::Root;
use super::steps::{Family, StepLog};
use crate::blueprint::model::{DriverAuthority, Vendor};

/// One check of the applied root.
#[derive(Debug, Clone, Serialize)]
pub struct RootCheck {
    pub id: &'static str,
    /// `pass`, `fail`, or `not-judged`.
    pub status: &'static str,
    /// The blueprint field (or image part) that wants it.
    pub field: String,
    pub detail: String,
}

impl RootCheck {
    pub fn failed(&self) -> bool {
        self.status == "fail"
    }
}

fn check(
    id: &'static str,
    field: impl Into<String>,
    missing: Vec<String>,
    what: &str,
) -> RootCheck {
    RootCheck {
        id,
        status: if missing.is_empty() { "pass" } else { "fail" },
        field: field.into(),
        detail: if missing.is_empty() {
            what.to_string()
        } else {
            format!("{what}: missing {}", missing.join(", "))
        },
    }
}

fn not_judged(id: &'static str, field: impl Into<String>, why: &str) -> RootCheck {
    RootCheck {
        id,
        status: "not-judged",
        field: field.into(),
        detail: why.to_string(),
    }
}

fn read(root: &Root, path: &str) -> Option<String> {
    let rel = RelPath::parse(path).ok()?;
    let real = root.locate(&rel).ok()?;
    crate::input::read_text(&real, 64 << 20).ok()
}

fn exists(root: &Root, path: &str) -> bool {
    RelPath::parse(path)
        .ok()
        .and_then(|p| root.locate(&p).ok())
        .is_some_and(|p| std::fs::metadata(p).is_ok())
}

/// Runs every check on `root`, which holds `entries` of the image whose
/// lock is `lock`; `steps` says which steps this run skipped.
pub fn run(
    root: &Root,
    family: Family,
    lock: &Lock,
    entries: &[Entry],
    steps: &[StepLog],
) -> Vec<RootCheck> {
    let skipped = |id: &str| steps.iter().any(|s| s.id == id && s.status == "skipped");
    let spec = lock.spec();
    let kernel = spec.os.kernel.to_string();
    let mut out = vec![units(root, entries)];

    // The kernel and its modules.
    let modules = ["lib/modules", "usr/lib/modules"]
        .iter()
        .find(|d| exists(root, &format!("{d}/{kernel}")))
        .map(|d| format!("{d}/{kernel}"));
    let image = match family {
        Family::Debian => format!("boot/vmlinuz-{kernel}"),
        Family::Rhel => format!("lib/modules/{kernel}/vmlinuz"),
    };
    let mut missing = Vec::new();
    if modules.is_none() {
        missing.push(format!("/lib/modules/{kernel}"));
    }
    if !exists(root, &image) && !exists(root, &format!("boot/vmlinuz-{kernel}")) {
        missing.push(format!("/{image}"));
    }
    out.push(check(
        "kernel.installed",
        "os.kernel",
        missing,
        &format!("kernel {kernel}"),
    ));

    if let Some(acc) = &spec.accelerators
        && acc.driver.authority == DriverAuthority::Preinstalled
    {
        let module = match acc.vendor {
            Vendor::Nvidia => "nvidia",
            Vendor::Amd => "amdgpu",
        };
        let found = modules
            .as_ref()
            .is_some_and(|m| has_module(root, m, module));
        out.push(check(
            "driver.module-for-kernel",
            "accelerators.driver.version",
            if found { vec![] } else { vec![format!("{module}.ko under /lib/modules/{kernel} (build it for this kernel: DKMS, or the vendor's precompiled modules)")] },
            &format!("{module} module for kernel {kernel}"),
        ));
    }

    // The boot entries' command line.
    let wanted: Vec<(String, String)> = crate::blueprint::cmdline::full(spec)
        .iter()
        .map(|w| (w.arg.to_string(), w.from.clone()))
        .collect();
    if skipped("boot-loader") {
        out.push(not_judged(
            "boot.entries-carry-args",
            "boot.kernelArgs",
            "the boot-loader step was skipped in this run",
        ));
    } else {
        out.push(boot_entries(root, family, &wanted));
    }

    // The initramfs holds the module policy.
    let policy: Vec<&str> = entries
        .iter()
        .filter(|e| matches!(e.kind, Kind::File { .. }))
        .map(|e| e.path.as_str())
        // Debian's initramfs-tools copies modprobe.d (the options and
        // blacklists of modules the initramfs loads); modules-load.d is read
        // from the real root after the switch, so only dracut carries it.
        .filter(|p| {
            p.starts_with("etc/modprobe.d/")
                || (family == Family::Rhel && p.starts_with("etc/modules-load.d/"))
        })
        .collect();
    if !policy.is_empty() {
        out.push(if skipped("initramfs") {
            not_judged(
                "initramfs.holds-module-policy",
                "accelerators.driver",
                "the initramfs step was skipped in this run",
            )
        } else {
            initramfs(root, family, &kernel, &policy)
        });
    }

    // The trust store.
    let cas: Vec<&Entry> = entries
        .iter()
        .filter(|e| matches!(e.kind, Kind::File { .. }))
        .filter(|e| {
            e.path
                .as_str()
                .starts_with("usr/local/share/ca-certificates/")
                || e.path
                    .as_str()
                    .starts_with("etc/pki/ca-trust/source/anchors/")
        })
        .collect();
    if !cas.is_empty() && skipped("trust-store") {
        out.push(not_judged(
            "trust-store.holds-cas",
            "system.certificates",
            "the trust-store step was skipped in this run",
        ));
    } else if !cas.is_empty() {
        let bundle = match family {
            Family::Debian => "etc/ssl/certs/ca-certificates.crt",
            Family::Rhel => "etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        };
        let text = read(root, bundle).unwrap_or_default();
        let missing = cas
            .iter()
            .filter(|e| {
                let pem = read(root, e.path.as_str()).unwrap_or_default();
                let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
                body.is_empty() || !text.lines().collect::<String>().contains(&body)
            })
            .map(|e| format!("{} in /{bundle}", e.path))
            .collect();
        out.push(check(
            "trust-store.holds-cas",
            "system.certificates, runtime.containerd.registries[].caFile",
            missing,
            "every CA of the image in the trust store",
        ));
    }
    out
}

/// Every unit the image enables, and the programs it runs.
fn units(root: &Root, entries: &[Entry]) -> RootCheck {
    let mut missing = Vec::new();
    for e in entries {
        let Kind::Symlink { target } = &e.kind else {
            continue;
        };
        let p = e.path.as_str();
        let Some(dir) = p
            .strip_prefix("etc/systemd/system/")
            .and_then(|r| r.split_once('/').map(|(d, _)| d))
        else {
            continue;
        };
        if !(dir.ends_with(".wants") || dir.ends_with(".requires")) {
            continue;
        }
        if target == "/dev/null" {
            continue;
        }
        let unit = target.trim_start_matches('/');
        let Some(text) = read(root, unit) else {
            missing.push(format!("{target} (enabled by /{p})"));
            continue;
        };
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            if !matches!(
                key.trim(),
                "ExecStart" | "ExecStartPre" | "ExecStartPost" | "ExecStop" | "ExecReload"
            ) {
                continue;
            }
            let program = value.trim().trim_start_matches(['-', '@', ':', '+', '!']);
            let program = program
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_matches('"');
            if program.starts_with('/') && !executable(root, program) {
                missing.push(format!("{program} (run by {target})"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    check(
        "units.programs",
        "the units the image enables",
        missing,
        "every enabled unit and the programs it runs",
    )
}

fn executable(root: &Root, program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    RelPath::parse(program)
        .ok()
        .and_then(|p| root.locate(&p).ok())
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn has_module(root: &Root, modules: &str, name: &str) -> bool {
    let Some(dir) = RelPath::parse(modules)
        .ok()
        .and_then(|p| root.locate(&p).ok())
    else {
        return false;
    };
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .any(|e| {
            let f = e.file_name().to_string_lossy();
            f == format!("{name}.ko") || f.starts_with(&format!("{name}.ko."))
        })
}

fn boot_entries(root: &Root, family: Family, wanted: &[(String, String)]) -> RootCheck {
    let lines: Vec<String> = match family {
        Family::Debian => read(root, "boot/grub/grub.cfg")
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("linux ") || l.starts_with("linux\t"))
            .map(str::to_string)
            .collect(),
        Family::Rhel => RelPath::parse("boot/loader/entries")
            .ok()
            .and_then(|p| root.locate(&p).ok())
            .and_then(|d| std::fs::read_dir(d).ok())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| crate::input::read_text(&e.path(), 1 << 20).ok())
            .flat_map(|t| {
                t.lines()
                    .filter(|l| l.starts_with("options "))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect(),
    };
    if lines.is_empty() {
        let place = match family {
            Family::Debian => "/boot/grub/grub.cfg has no linux line",
            Family::Rhel => "/boot/loader/entries has no entry",
        };
        return check(
            "boot.entries-carry-args",
            "boot.kernelArgs",
            vec![place.to_string()],
            "boot entries",
        );
    }
    let mut missing = Vec::new();
    for (arg, from) in wanted {
        let bad = lines
            .iter()
            .filter(|l| !l.split_whitespace().any(|w| w == arg))
            .count();
        if bad > 0 {
            missing.push(format!(
                "{arg} ({from}) on {bad} of {} entries",
                lines.len()
            ));
        }
    }
    check(
        "boot.entries-carry-args",
        "boot.kernelArgs",
        missing,
        &format!(
            "{} kernel argument(s) on {} boot entries",
            wanted.len(),
            lines.len()
        ),
    )
}

fn initramfs(root: &Root, family: Family, kernel: &str, policy: &[&str]) -> RootCheck {
    let (image, lister) = match family {
        Family::Debian => (format!("/boot/initrd.img-{kernel}"), "lsinitramfs"),
        Family::Rhel => (format!("/boot/initramfs-{kernel}.img"), "lsinitrd"),
    };
    if !exists(root, image.trim_start_matches('/')) {
        return check(
            "initramfs.holds-module-policy",
            "os.kernel",
            vec![image],
            "the initramfs of the pinned kernel",
        );
    }
    let listing = run_in(root, &[lister, &image]);
    let Ok(listing) = listing else {
        return check(
            "initramfs.holds-module-policy",
            "accelerators.driver",
            vec![format!("{lister} in the root ({})", listing.unwrap_err())],
            "the initramfs listing",
        );
    };
    let missing = policy
        .iter()
        .filter(|p| {
            !listing.lines().any(|l| {
                l.trim_start_matches("./")
                    .trim_start_matches('/')
                    .ends_with(*p)
            })
        })
        .map(|p| format!("/{p} in {image}"))
        .collect();
    check(
        "initramfs.holds-module-policy",
        "accelerators.driver, network.nics[].rdma",
        missing,
        "the image's modprobe.d and modules-load.d files in the initramfs",
    )
}

fn run_in(root: &Root, argv: &[&str]) -> Result<String, String> {
    let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
    match super::steps::execute(root, &argv, false, 64 << 20)? {
        (Some(0), listing) => Ok(listing),
        (code, out) => Err(format!(
            "exit {}: {}",
            code.map_or("by a signal".to_string(), |c| c.to_string()),
            out.chars().take(500).collect::<String>()
        )),
    }
}
