//! `holds`: the package manager keeps what the blueprint pins — the kernel,
//! the image's GPU driver (with Fabric Manager and the persistence daemon,
//! which share its version), the container toolkit, containerd and the
//! kubelet — so a routine upgrade cannot move a node off its blueprint
//! (verify would then fail `os.kernel.release`, `gpu.driver.version`, …
//! fleet-wide after the next reboot).
//!
//! - Debian and Ubuntu: `etc/apt/preferences.d/nodeimg-pins`. apt gives each
//!   package version the priority of the first record that matches it
//!   (apt_preferences(5)), so the pinned versions come first at 1001 and a
//!   last record puts every other kernel package (the `linux-image-generic`
//!   / `linux-image-amd64` meta packages included) at -1: never installed.
//!   `etc/apt/apt.conf.d/51nodeimg-unattended-upgrades` also keeps
//!   unattended-upgrades away from those packages.
//! - RHEL family: `etc/dnf/plugins/versionlock.list` (dnf versionlock
//!   plugin): each line locks its names to the given version and excludes
//!   every other version of them.

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::model::*;
use crate::blueprint::value::Version;

#[derive(Debug, Clone, Serialize)]
pub struct Holds {
    pub apt: Vec<AptPin>,
    /// unattended-upgrades' Package-Blacklist (Python regular expressions
    /// matched at the start of the package name).
    pub unattended_blacklist: Vec<String>,
    /// dnf versionlock entries (`name-[epoch:]version-release.arch`, globs).
    pub versionlock: Vec<Lock>,
}

/// One apt_preferences record.
#[derive(Debug, Clone, Serialize)]
pub struct AptPin {
    pub explanation: String,
    pub packages: Vec<String>,
    pub version: String,
    pub priority: i32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Lock {
    pub why: String,
    pub entries: Vec<String>,
}

/// Kernel packages Debian and Ubuntu name after the kernel release.
const DEB_KERNEL: &[&str] = &[
    "linux-image-",
    "linux-image-unsigned-",
    "linux-modules-",
    "linux-modules-extra-",
    "linux-headers-",
];

/// RHEL kernel packages, all built from one source at one version.
const RPM_KERNEL: &[&str] = &[
    "kernel",
    "kernel-core",
    "kernel-modules",
    "kernel-modules-core",
    "kernel-modules-extra",
    "kernel-devel",
    "kernel-headers",
];

/// `5.14.0-427.13.1.el9_4.x86_64` → (`5.14.0`, `427.13.1.el9_4`).
fn rpm_version_release(kernel: &str) -> Option<(&str, &str)> {
    let base = ["x86_64", "aarch64", "ppc64le", "s390x"]
        .iter()
        .find_map(|arch| kernel.strip_suffix(&format!(".{arch}")))
        .unwrap_or(kernel);
    base.split_once('-')
}

pub(super) fn of(s: &Spec) -> Holds {
    let kernel = s.os.kernel.as_str();
    let containerd = s.runtime.containerd.version.as_str();
    let kubernetes = s.kubernetes.version.as_str();
    let driver: Option<&str> = s.accelerators.as_ref().and_then(|a| {
        (a.vendor == Vendor::Nvidia && a.driver.authority == DriverAuthority::Preinstalled)
            .then(|| a.driver.version.as_str())
    });
    let toolkit: Option<&Version> = s.accelerators.as_ref().and_then(|a| {
        let operator_owned = a
            .operator
            .as_ref()
            .is_some_and(|o| o.manages.contains(&OperatorComponent::Toolkit));
        (a.vendor == Vendor::Nvidia && !operator_owned)
            .then_some(a.container_toolkit.as_ref())
            .flatten()
    });

    let mut apt = vec![AptPin {
        explanation: format!("kernel {kernel} (os.kernel)"),
        packages: DEB_KERNEL
            .iter()
            .map(|p| format!("{p}{kernel}"))
            .chain(std::iter::once(format!("linux-modules-nvidia-*-{kernel}")))
            .collect(),
        version: "*".into(),
        priority: 1001,
    }];
    if let Some(d) = driver {
        apt.push(AptPin {
            explanation: format!(
                "NVIDIA driver {d}, Fabric Manager and persistence daemon (accelerators.driver.version)"
            ),
            packages: vec!["*nvidia*".into(), "libxnvctrl*".into()],
            version: format!("{d}-*"),
            priority: 1001,
        });
    }
    if let Some(t) = toolkit {
        apt.push(AptPin {
            explanation: format!("NVIDIA Container Toolkit {t} (accelerators.containerToolkit)"),
            packages: vec![
                "nvidia-container-toolkit".into(),
                "nvidia-container-toolkit-base".into(),
                "libnvidia-container1".into(),
                "libnvidia-container-tools".into(),
            ],
            version: format!("{t}-*"),
            priority: 1001,
        });
    }
    apt.push(AptPin {
        explanation: format!("containerd {containerd} (runtime.containerd.version)"),
        packages: vec!["containerd".into(), "containerd.io".into()],
        version: format!("{containerd}-*"),
        priority: 1001,
    });
    apt.push(AptPin {
        explanation: format!("Kubernetes {kubernetes} (kubernetes.version)"),
        packages: vec!["kubelet".into(), "kubeadm".into(), "kubectl".into()],
        version: format!("{kubernetes}-*"),
        priority: 1001,
    });
    apt.push(AptPin {
        explanation: "no other kernel, and no kernel meta package upgrade".into(),
        packages: DEB_KERNEL
            .iter()
            .map(|p| format!("{p}*"))
            .chain(
                [
                    "linux-generic*",
                    "linux-virtual*",
                    "linux-aws*",
                    "linux-azure*",
                    "linux-gcp*",
                    "linux-oracle*",
                ]
                .map(String::from),
            )
            .collect(),
        version: "*".into(),
        priority: -1,
    });

    let mut unattended_blacklist: Vec<String> = vec![
        "linux-".into(),
        "containerd".into(),
        "kubelet$".into(),
        "kubeadm$".into(),
        "kubectl$".into(),
    ];
    if driver.is_some() || toolkit.is_some() {
        unattended_blacklist.extend(["nvidia-".into(), "libnvidia-".into()]);
    }

    let mut versionlock = Vec::new();
    if let Some((version, release)) = rpm_version_release(kernel) {
        versionlock.push(Lock {
            why: format!("kernel {kernel} (os.kernel)"),
            entries: RPM_KERNEL
                .iter()
                .map(|n| format!("{n}-0:{version}-{release}.*"))
                .collect(),
        });
    }
    if let Some(d) = driver {
        versionlock.push(Lock {
            why: format!(
                "NVIDIA driver {d}, Fabric Manager and persistence daemon (accelerators.driver.version)"
            ),
            entries: vec![format!("*nvidia*-{d}-*")],
        });
    }
    if let Some(t) = toolkit {
        versionlock.push(Lock {
            why: format!("NVIDIA Container Toolkit {t} (accelerators.containerToolkit)"),
            entries: vec![
                format!("nvidia-container-toolkit-{t}-*"),
                format!("nvidia-container-toolkit-base-{t}-*"),
                format!("libnvidia-container1-{t}-*"),
                format!("libnvidia-container-tools-{t}-*"),
            ],
        });
    }
    versionlock.push(Lock {
        why: format!("containerd {containerd} (runtime.containerd.version)"),
        entries: vec![format!("containerd.io-{containerd}-*")],
    });
    versionlock.push(Lock {
        why: format!("Kubernetes {kubernetes} (kubernetes.version)"),
        entries: ["kubelet", "kubeadm", "kubectl"]
            .iter()
            .map(|n| format!("{n}-{kubernetes}-*"))
            .collect(),
    });
    Holds {
        apt,
        unattended_blacklist,
        versionlock,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rhel_kernel_release_splits_into_version_and_release() {
        assert_eq!(
            rpm_version_release("5.14.0-427.13.1.el9_4.x86_64"),
            Some(("5.14.0", "427.13.1.el9_4"))
        );
        assert_eq!(
            rpm_version_release("5.14.0-503.11.1.el9_5.aarch64"),
            Some(("5.14.0", "503.11.1.el9_5"))
        );
        assert_eq!(rpm_version_release("nodash"), None);
    }
}
