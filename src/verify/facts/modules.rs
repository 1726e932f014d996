//! Kernel modules: loaded modules (`/proc/modules`), module versions
//! (`/sys/module/*/version`), the NVIDIA kernel driver (`/proc/driver/nvidia/version`), and
//! whether nouveau is loaded.
//!
//! The first line of `/proc/driver/nvidia/version` differs between the proprietary
//! (`... Kernel Module  550.54.15  Tue Mar ...`) and open modules
//! (`... Open Kernel Module for x86_64  570.158.01  Release Build ...`), so the version is
//! the first dotted number, not the word after "Module". nouveau must not be bound next to
//! the NVIDIA driver.

use super::attribute;
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelModules {
    /// Names from `/proc/modules`.
    pub loaded: Fact<Vec<String>>,
    /// `version` of every module that has one.
    pub versions: Fact<BTreeMap<String, String>>,
    /// `amdgpu`'s `version`, as a version (the AMD driver check compares it).
    pub amdgpu_version: Fact<Version>,
    pub nvidia_driver: Fact<NvidiaKernelDriver>,
    pub nouveau_loaded: Fact<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NvidiaKernelDriver {
    pub version: Version,
    /// The open GPU kernel modules (`Open Kernel Module`).
    pub open: bool,
    pub banner: String,
}

pub fn collect(host: &dyn Host) -> KernelModules {
    let loaded = attribute::text(host, "/proc/modules").map(|text| {
        text.lines()
            .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
            .collect::<Vec<_>>()
    });
    let versions = attribute::list(host, "/sys/module", false).map(|names| {
        names
            .iter()
            .filter_map(|name| {
                let text = host
                    .read_text(Path::new(&format!("/sys/module/{name}/version")))
                    .ok()?;
                Some((name.clone(), text.trim().to_owned()))
            })
            .collect()
    });
    // Every loaded module has a /sys/module/<name> directory, so when
    // /sys/module is readable and has no nouveau, nouveau is not loaded —
    // also on kernels without /proc/modules (built without module support).
    let nouveau_loaded = match host.list_dir(Path::new("/sys/module/nouveau")) {
        Ok(_) => Fact::Known(true),
        Err(e) if e.is_not_found() && host.list_dir(Path::new("/sys/module")).is_ok() => {
            Fact::Known(false)
        }
        Err(_) => loaded
            .as_ref()
            .map(|names| names.iter().any(|name| name == "nouveau")),
    };
    let amdgpu_version = versions
        .as_ref()
        .and_then(|v: &BTreeMap<String, String>| match v.get("amdgpu") {
            Some(version) => Fact::Known(version.clone()),
            None => {
                Fact::unknown("/sys/module/amdgpu/version: amdgpu is not loaded or has no version")
            }
        })
        .version("/sys/module/amdgpu/version");
    KernelModules {
        nvidia_driver: attribute::parsed(host, "/proc/driver/nvidia/version", parse_nvidia_version),
        loaded,
        versions,
        amdgpu_version,
        nouveau_loaded,
    }
}

/// The first line's first `N.N[.N]` token.
pub fn parse_nvidia_version(text: &str) -> Result<NvidiaKernelDriver, String> {
    let banner = text.lines().next().unwrap_or("").trim().to_owned();
    let version = banner
        .split_whitespace()
        .find(|word| {
            let parts: Vec<&str> = word.split('.').collect();
            (2..=3).contains(&parts.len())
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .ok_or_else(|| "no version number in the first line".to_owned())?
        .parse()?;
    Ok(NvidiaKernelDriver {
        version,
        open: banner.contains("Open Kernel Module"),
        banner,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proprietary_and_open_banners() {
        let proprietary = parse_nvidia_version(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.3.0\n",
        );
        assert_eq!(
            proprietary.as_ref().map(|d| (d.version.as_str(), d.open)),
            Ok(("550.54.15", false))
        );
        let open = parse_nvidia_version(
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  (dvs-builder@U16-I3-B03-4-3)  Mon Jun  2 13:13:04 UTC 2025\n",
        );
        assert_eq!(
            open.as_ref().map(|d| (d.version.as_str(), d.open)),
            Ok(("570.158.01", true))
        );
        assert!(parse_nvidia_version("NVRM version: none").is_err());
    }
}
