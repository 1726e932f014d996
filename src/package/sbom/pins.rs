//! The packages an image pins, read from the holds file it carries — the
//! very file the node's package manager reads (render's plan writes it from
//! the blueprint: the kernel, the GPU driver, the container toolkit,
//! containerd, kubelet/kubeadm/kubectl):
//!
//! - `etc/apt/preferences.d/nodeimg-pins` (apt_preferences(5)): each record
//!   with a positive `Pin-Priority` holds its `Package:` names at
//!   `Pin: version V`. `2.1.4-*` holds upstream version 2.1.4 at any
//!   Debian revision; `*` holds the package by name alone (kernel packages,
//!   whose names carry the kernel release). Records with a negative priority
//!   forbid versions and pin nothing.
//! - `etc/dnf/plugins/versionlock.list` (dnf versionlock): one
//!   `name-[epoch:]version-release.arch` per line, globs allowed; the comment
//!   above a group says what the blueprint pins there.
//!
//! Reading the file instead of the blueprint keeps one source of truth: the
//! SBOM names what apt or dnf will hold on the node, templates overridden
//! with `--templates` included. A name with a glob (`*nvidia*`) is not a
//! package: it is kept as a pattern, which the SBOM states as such, never
//! as an invented package name.

use crate::blueprint::model::Distro;

/// Where render's plan writes the holds (src/render/plan.rs).
pub const APT_PINS: &str = "etc/apt/preferences.d/nodeimg-pins";
pub const DNF_VERSIONLOCK: &str = "etc/dnf/plugins/versionlock.list";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Manager {
    Deb,
    Rpm,
}

impl Manager {
    pub fn purl_type(self) -> &'static str {
        match self {
            Manager::Deb => "deb",
            Manager::Rpm => "rpm",
        }
    }
}

/// One package held by name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pinned {
    pub manager: Manager,
    pub name: String,
    /// The version it is held at, as far as the pin fixes it: the upstream
    /// version of `2.1.4-*`, or an rpm `version-release`; `None` when the
    /// pin allows any version.
    pub version: Option<String>,
    /// An rpm epoch other than 0.
    pub epoch: Option<String>,
    /// The pin as the file writes it (`version 2.1.4-*`, or the versionlock
    /// entry).
    pub pin: String,
    /// What the file says the pin is for (`containerd 2.1.4 (runtime.containerd.version)`).
    pub why: String,
}

/// A pin by pattern: it holds whatever packages match, not a package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pattern {
    pub manager: Manager,
    pub pattern: String,
    pub pin: String,
    pub why: String,
}

/// Everything the holds file pins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    /// The file read (`etc/apt/…` or `etc/dnf/…`), when the image has one.
    pub file: Option<&'static str>,
    pub packages: Vec<Pinned>,
    pub patterns: Vec<Pattern>,
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// The pins of the holds file at `path`, if it is one.
pub fn read(path: &str, bytes: &[u8]) -> Option<Result<Pins, String>> {
    let text = || std::str::from_utf8(bytes).map_err(|_| format!("/{path} is not UTF-8 text"));
    match path {
        APT_PINS => Some(text().map(apt)),
        DNF_VERSIONLOCK => Some(text().map(versionlock)),
        _ => None,
    }
}

/// apt_preferences(5) records.
fn apt(text: &str) -> Pins {
    let mut pins = Pins {
        file: Some(APT_PINS),
        ..Pins::default()
    };
    for record in text.split("\n\n") {
        let (mut why, mut names, mut version, mut priority) = ("", "", None, 0i64);
        for line in record.lines().filter(|l| !l.starts_with('#')) {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match key.trim() {
                "Explanation" => why = value,
                "Package" => names = value,
                "Pin" => version = value.strip_prefix("version ").map(str::trim),
                "Pin-Priority" => priority = value.parse().unwrap_or(0),
                _ => {}
            }
        }
        let Some(version) = version else { continue };
        if priority <= 0 || names.is_empty() {
            continue;
        }
        let held = upstream(version);
        for name in names.split_whitespace() {
            if is_glob(name) {
                pins.patterns.push(Pattern {
                    manager: Manager::Deb,
                    pattern: name.to_string(),
                    pin: format!("version {version}"),
                    why: why.to_string(),
                });
            } else {
                pins.packages.push(Pinned {
                    manager: Manager::Deb,
                    name: name.to_string(),
                    version: held.clone(),
                    epoch: None,
                    pin: format!("version {version}"),
                    why: why.to_string(),
                });
            }
        }
    }
    pins.packages.sort();
    pins.patterns.sort();
    pins
}

/// The version an apt pin fixes: `2.1.4-*` → `2.1.4`, `1.2-3` → `1.2-3`,
/// `*` → none.
fn upstream(pin: &str) -> Option<String> {
    let fixed = match pin.find(['*', '?', '[']) {
        Some(i) => pin[..i].trim_end_matches(['-', '.', '~', '+']),
        None => pin,
    };
    (!fixed.is_empty()).then(|| fixed.to_string())
}

/// dnf versionlock lines.
fn versionlock(text: &str) -> Pins {
    let mut pins = Pins {
        file: Some(DNF_VERSIONLOCK),
        ..Pins::default()
    };
    let mut why = String::new();
    for line in text.lines().map(str::trim) {
        if let Some(comment) = line.strip_prefix('#') {
            why = comment.trim().to_string();
            continue;
        }
        if line.is_empty() {
            continue;
        }
        match nevra(line) {
            Some((name, epoch, version, release)) => pins.packages.push(Pinned {
                manager: Manager::Rpm,
                name: name.to_string(),
                version: Some(match release {
                    Some(r) => format!("{version}-{r}"),
                    None => version.to_string(),
                }),
                epoch: epoch.filter(|e| *e != "0").map(str::to_string),
                pin: line.to_string(),
                why: why.clone(),
            }),
            None => pins.patterns.push(Pattern {
                manager: Manager::Rpm,
                pattern: line.to_string(),
                pin: line.to_string(),
                why: why.clone(),
            }),
        }
    }
    pins.packages.sort();
    pins.patterns.sort();
    pins
}

/// `name-[epoch:]version-release[.arch]` with a glob-free name and version:
/// (name, epoch, version, release when glob-free). `None` for a pattern.
fn nevra(entry: &str) -> Option<(&str, Option<&str>, &str, Option<&str>)> {
    let (name_version, release_arch) = entry.rsplit_once('-')?;
    let (name, evr) = name_version.rsplit_once('-')?;
    if name.is_empty() || is_glob(name) || is_glob(evr) {
        return None;
    }
    let (epoch, version) = match evr.split_once(':') {
        Some((e, v)) => (Some(e), v),
        None => (None, evr),
    };
    if version.is_empty() || epoch.is_some_and(|e| !e.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    // `427.13.1.el9_4.*` → `427.13.1.el9_4`; a bare `*` leaves the release open.
    let release = release_arch
        .strip_suffix(".*")
        .or_else(|| {
            ARCHES
                .iter()
                .find_map(|(_, rpm)| release_arch.strip_suffix(&format!(".{rpm}")))
        })
        .unwrap_or(release_arch);
    let release = (!release.is_empty() && !is_glob(release)).then_some(release);
    Some((name, epoch, version, release))
}

/// Package URL namespaces and `distro` qualifiers by distribution: the
/// namespace is the vendor (purl-spec PURL-TYPES: `deb` "debian, ubuntu";
/// `rpm` "fedora, centos, redhat…"), the qualifier the os-release
/// `ID-VERSION_ID`, as syft writes it (`distro=ubuntu-22.04`, `rhel-9.4`).
const DISTROS: &[(Distro, &str, &str)] = &[
    (Distro::Ubuntu, "ubuntu", "ubuntu"),
    (Distro::Debian, "debian", "debian"),
    (Distro::Rhel, "redhat", "rhel"),
    (Distro::Rocky, "rocky", "rocky"),
    (Distro::Almalinux, "almalinux", "almalinux"),
];

/// OCI architecture → rpm architecture (the Debian architecture names are
/// the OCI ones: `amd64`, `arm64`).
const ARCHES: &[(&str, &str)] = &[("amd64", "x86_64"), ("arm64", "aarch64")];

/// The package URL of a pinned package on `distro` `version`, `arch` (OCI).
pub fn purl(p: &Pinned, distro: Distro, os_version: &str, arch: &str) -> String {
    let (namespace, id) = DISTROS
        .iter()
        .find(|(d, _, _)| *d == distro)
        .map(|(_, n, i)| (*n, *i))
        .unwrap_or((distro.as_str(), distro.as_str()));
    let arch = match p.manager {
        Manager::Deb => arch,
        Manager::Rpm => ARCHES
            .iter()
            .find(|(oci, _)| *oci == arch)
            .map_or(arch, |(_, rpm)| rpm),
    };
    let mut s = format!(
        "pkg:{}/{}/{}",
        p.manager.purl_type(),
        namespace,
        percent(&p.name)
    );
    if let Some(v) = &p.version {
        s.push('@');
        s.push_str(&percent(v));
    }
    // Qualifiers sorted by key, as the purl spec's canonical form has them.
    s.push_str(&format!(
        "?arch={}&distro={}",
        percent(arch),
        percent(&format!("{id}-{os_version}"))
    ));
    if let Some(e) = &p.epoch {
        s.push_str(&format!("&epoch={}", percent(e)));
    }
    s
}

/// purl percent-encoding: everything but `A-Za-z0-9.-_~`.
pub fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apt_pins_name_packages_and_keep_patterns_apart() {
        let text = "# header\n\nExplanation: kernel 6.1.0-27-amd64 (os.kernel)\nPackage: linux-image-6.1.0-27-amd64 linux-modules-nvidia-*-6.1.0-27-amd64\nPin: version *\nPin-Priority: 1001\n\nExplanation: NVIDIA driver 580.105.08 (accelerators.driver.version)\nPackage: *nvidia* libxnvctrl*\nPin: version 580.105.08-*\nPin-Priority: 1001\n\nExplanation: containerd 2.1.4 (runtime.containerd.version)\nPackage: containerd containerd.io\nPin: version 2.1.4-*\nPin-Priority: 1001\n\nExplanation: no other kernel\nPackage: linux-image-*\nPin: version *\nPin-Priority: -1\n";
        let pins = read(APT_PINS, text.as_bytes()).unwrap().unwrap();
        let names: Vec<(&str, Option<&str>)> = pins
            .packages
            .iter()
            .map(|p| (p.name.as_str(), p.version.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("containerd", Some("2.1.4")),
                ("containerd.io", Some("2.1.4")),
                ("linux-image-6.1.0-27-amd64", None),
            ]
        );
        let patterns: Vec<&str> = pins.patterns.iter().map(|p| p.pattern.as_str()).collect();
        assert_eq!(
            patterns,
            [
                "*nvidia*",
                "libxnvctrl*",
                "linux-modules-nvidia-*-6.1.0-27-amd64"
            ]
        );
        assert_eq!(
            purl(&pins.packages[0], Distro::Ubuntu, "22.04", "amd64"),
            "pkg:deb/ubuntu/containerd@2.1.4?arch=amd64&distro=ubuntu-22.04"
        );
        assert_eq!(
            purl(&pins.packages[2], Distro::Debian, "12", "amd64"),
            "pkg:deb/debian/linux-image-6.1.0-27-amd64?arch=amd64&distro=debian-12"
        );
    }

    #[test]
    fn versionlock_entries_become_rpm_packages() {
        let text = "# header\n# kernel 5.14.0-427.13.1.el9_4.x86_64 (os.kernel)\nkernel-0:5.14.0-427.13.1.el9_4.*\n# NVIDIA driver\n*nvidia*-580.105.08-*\n# containerd 1.7.22 (runtime.containerd.version)\ncontainerd.io-1.7.22-*\nfoo-2:1.0-3.el9.aarch64\n";
        let pins = read(DNF_VERSIONLOCK, text.as_bytes()).unwrap().unwrap();
        let urls: Vec<String> = pins
            .packages
            .iter()
            .map(|p| purl(p, Distro::Rhel, "9.4", "amd64"))
            .collect();
        assert_eq!(
            urls,
            [
                "pkg:rpm/redhat/containerd.io@1.7.22?arch=x86_64&distro=rhel-9.4",
                "pkg:rpm/redhat/foo@1.0-3.el9?arch=x86_64&distro=rhel-9.4&epoch=2",
                "pkg:rpm/redhat/kernel@5.14.0-427.13.1.el9_4?arch=x86_64&distro=rhel-9.4",
            ]
        );
        assert_eq!(
            pins.packages[2].why,
            "kernel 5.14.0-427.13.1.el9_4.x86_64 (os.kernel)"
        );
        assert_eq!(pins.patterns.len(), 1);
        assert_eq!(pins.patterns[0].pattern, "*nvidia*-580.105.08-*");
        assert!(read("etc/other", b"").is_none());
        assert!(read(APT_PINS, b"\xff").unwrap().is_err());
    }

    #[test]
    fn purl_escapes_what_the_spec_reserves() {
        assert_eq!(percent("1:2.3+dfsg~1"), "1%3A2.3%2Bdfsg~1");
    }
}
