//! Runtime checks: containerd and kubelet versions, containerd's locked-memory limit (which
//! every pod inherits), and the GPU CDI spec being
//! fresh: it exists, lists every GPU (by index or UUID), its device nodes exist, the
//! driver libraries it mounts (`libcuda.so.<version>`) are the loaded driver's, and no
//! device is defined by two spec files.
//!
//! A stale spec (written before the driver was ready, or before a driver upgrade) is a
//! common cause of pods that cannot see their GPUs; the CDI checks need the driver, so
//! they run in the driver stage.

use super::catalog::runtime::*;
use super::matcher::Expect;
use super::{Inputs, Observation, Results};
use crate::blueprint::model::{CdiGenerator, Vendor};
use crate::blueprint::value::VersionReq;
use crate::verify::fact::Fact;
use crate::verify::facts::cdi::{CdiSpec, CdiSpecContent};
use crate::verify::facts::gpu::Gpu;
use crate::verify::facts::memlock::Limit;
use regex::Regex;
use std::collections::BTreeMap;
use std::path::Path;

pub fn evaluate(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    let runtime = input.facts.runtime.as_ref();
    let exact = |v| Expect::Version(VersionReq::pinned(v));
    out.expect(
        &CONTAINERD,
        None,
        &exact(&bp.runtime.containerd.version),
        &runtime.clone().and_then(|r| r.containerd_version.clone()),
        vec!["containerd --version".to_owned()],
    );
    out.expect(
        &KUBELET,
        None,
        &exact(&bp.kubernetes.version),
        &runtime.and_then(|r| r.kubelet_version.clone()),
        vec!["kubelet --version".to_owned()],
    );
    // Rendered with the containerd drop-in for GPU and RDMA nodes: pods
    // inherit containerd's limit, and NCCL/RCCL registration needs it.
    if bp.accelerators.is_some() || bp.network.nics.iter().any(|n| n.rdma) {
        out.record(
            &MEMLOCK,
            None,
            "unlimited (LimitMEMLOCK=infinity)",
            Observation::of(
                &input.facts.containerd_memlock,
                |m| format!("soft {}, hard {} (pid {})", m.soft, m.hard, m.pid),
                |m| m.soft == Limit::Unlimited && m.hard == Limit::Unlimited,
            ),
            vec!["/proc/<containerd pid>/limits".to_owned()],
        );
    }
    cdi(input, out);
}

fn cdi(input: &Inputs, out: &mut Results) {
    let bp = input.blueprint;
    let Some(accelerators) = &bp.accelerators else {
        return;
    };
    let cdi = &bp.runtime.cdi;
    if !cdi.enabled || cdi.generator == CdiGenerator::None {
        return;
    }
    let facts = input.facts;
    let kind = match accelerators.vendor {
        Vendor::Nvidia => "nvidia.com/gpu",
        Vendor::Amd => "amd.com/gpu",
    };
    let evidence = || vec!["/etc/cdi".to_owned(), "/var/run/cdi".to_owned()];
    let found = facts
        .cdi_specs
        .clone()
        .and_then(|specs| find_spec(&specs, kind));
    out.record(
        &CDI_SPEC,
        None,
        format!("a parseable spec of kind {kind}"),
        Observation::of(
            &found,
            |spec| {
                spec.as_ref()
                    .map_or("none".to_owned(), |(path, _)| path.clone())
            },
            Option::is_some,
        ),
        evidence(),
    );
    conflicts(input, out);
    let Fact::Known(Some((path, spec))) = found else {
        return;
    };
    let gpus: Vec<&Gpu> = facts.gpus.gpus.iter().collect();
    let names: Vec<&str> = spec.devices.iter().map(|d| d.name.as_str()).collect();
    let mut missing = Vec::new();
    let mut unknown = None;
    for (index, gpu) in gpus.iter().enumerate() {
        let by_index = names.contains(&index.to_string().as_str());
        let uuid = gpu
            .nvidia
            .as_ref()
            .and_then(|n| n.known())
            .and_then(|n| n.uuid.known().cloned());
        let by_uuid = uuid.as_deref().is_some_and(|u| names.contains(&u));
        if !by_index && !by_uuid {
            missing.push(gpu.address.to_string());
            if uuid.is_none() && unknown.is_none() {
                unknown = Some(format!("no UUID known for {}", gpu.address));
            }
        }
    }
    let observation = if gpus.is_empty() {
        Observation::value("no GPU on the node to list", false)
    } else if missing.is_empty() {
        Observation::value(format!("all {} GPUs listed", gpus.len()), true)
    } else {
        Observation::value(
            format!(
                "{} of {} GPUs not listed: {}",
                missing.len(),
                gpus.len(),
                missing.join(", ")
            ),
            false,
        )
    };
    out.record(
        &CDI_DEVICES,
        Some(path.clone()),
        format!("every GPU ({}) by index or UUID", gpus.len()),
        observation,
        vec![path.clone()],
    );
    let nodes: Vec<_> = spec
        .common
        .device_nodes
        .iter()
        .chain(
            spec.devices
                .iter()
                .flat_map(|d| d.edits.device_nodes.iter()),
        )
        .collect();
    let mut absent: Vec<&str> = Vec::new();
    let mut reason = None;
    for node in &nodes {
        match &node.present {
            Fact::Known(true) => {}
            Fact::Known(false) => absent.push(node.host_path.as_deref().unwrap_or(&node.path)),
            Fact::Unknown { reason: why } => reason = reason.or(Some(why.clone())),
        }
    }
    absent.sort_unstable();
    absent.dedup();
    let observation = match reason {
        Some(why) => Observation::unknown(why),
        None if absent.is_empty() => {
            Observation::value(format!("{} nodes present", nodes.len()), true)
        }
        None => Observation::value(format!("missing: {}", absent.join(", ")), false),
    };
    out.record(
        &CDI_NODES,
        Some(path.clone()),
        "every device node present",
        observation,
        vec![path.clone()],
    );
    if accelerators.vendor == Vendor::Nvidia {
        let loaded = facts.modules.nvidia_driver.clone().map(|d| d.version);
        let libs = library_versions(&spec);
        let observation = match &loaded {
            Fact::Unknown { reason } => Observation::unknown(reason.clone()),
            Fact::Known(_) if libs.is_empty() => {
                Observation::value("no libcuda.so.<version> mount", false)
            }
            Fact::Known(version) => Observation::value(
                format!("libcuda.so.{}", libs.join(", libcuda.so.")),
                libs.iter().all(|l| *l == version.as_str()),
            ),
        };
        let expected = match &loaded {
            Fact::Known(version) => format!("libcuda.so.{version} (the loaded driver)"),
            Fact::Unknown { .. } => "the loaded driver's version".to_owned(),
        };
        out.record(
            &CDI_DRIVER,
            Some(path.clone()),
            expected,
            observation,
            vec![path, "/proc/driver/nvidia/version".to_owned()],
        );
    }
}

/// Devices defined by more than one spec file, across every kind: a conflict within one
/// spec directory (the CDI cache drops the device), a shadowed definition across two.
fn conflicts(input: &Inputs, out: &mut Results) {
    let dirs = || vec!["/etc/cdi".to_owned(), "/var/run/cdi".to_owned()];
    let specs = match &input.facts.cdi_specs {
        Fact::Known(specs) => specs,
        Fact::Unknown { reason } => {
            out.record(
                &CDI_CONFLICTS,
                None,
                "each device in one spec",
                Observation::unknown(reason.clone()),
                dirs(),
            );
            return;
        }
    };
    let mut defined: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for spec in specs {
        if let Fact::Known(content) = &spec.content {
            for device in &content.devices {
                let paths = defined
                    .entry(format!("{}={}", content.kind, device.name))
                    .or_default();
                if !paths.contains(&spec.path.as_str()) {
                    paths.push(&spec.path);
                }
            }
        }
    }
    let dir = |p: &str| Path::new(p).parent().map(Path::to_path_buf);
    // Grouped by the files involved: (conflict within one directory, files) → devices.
    let mut groups: BTreeMap<(bool, String), Vec<&str>> = BTreeMap::new();
    let mut evidence: Vec<String> = Vec::new();
    for (device, paths) in defined.iter().filter(|(_, p)| p.len() > 1) {
        let same_dir = paths.iter().skip(1).any(|p| dir(p) == dir(paths[0]));
        groups
            .entry((same_dir, paths.join(", ")))
            .or_default()
            .push(device);
        for p in paths {
            if !evidence.iter().any(|e| e == p) {
                evidence.push((*p).to_owned());
            }
        }
    }
    let found: Vec<String> = groups
        .iter()
        .map(|((same_dir, files), devices)| {
            let shown = devices
                .iter()
                .take(3)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            let more = match devices.len() {
                n if n > 3 => format!(" and {} more", n - 3),
                _ => String::new(),
            };
            let how = if *same_dir {
                "conflict in"
            } else {
                "shadowed across"
            };
            format!("{shown}{more}: {how} {files}")
        })
        .collect();
    let observation = if found.is_empty() {
        Observation::value(format!("{} devices, each in one spec", defined.len()), true)
    } else {
        Observation::value(found.join("; "), false)
    };
    if evidence.is_empty() {
        evidence = dirs();
    }
    out.record(
        &CDI_CONFLICTS,
        None,
        "each device in one spec",
        observation,
        evidence,
    );
}

/// The first spec of `kind`; unknown when none is and some spec could not be read.
fn find_spec(specs: &[CdiSpec], kind: &str) -> Fact<Option<(String, CdiSpecContent)>> {
    let mut last_error = None;
    for spec in specs {
        match &spec.content {
            Fact::Known(content) if content.kind == kind => {
                return Fact::Known(Some((spec.path.clone(), content.clone())));
            }
            Fact::Known(_) => {}
            Fact::Unknown { reason } => last_error = Some(format!("{}: {reason}", spec.path)),
        }
    }
    match last_error {
        Some(reason) => Fact::unknown(reason),
        None => Fact::Known(None),
    }
}

/// Versions in `libcuda.so.<version>` mounts, sorted and deduplicated.
fn library_versions(spec: &CdiSpecContent) -> Vec<String> {
    let Ok(pattern) = Regex::new(r"libcuda\.so\.(\d+(?:\.\d+)+)$") else {
        return Vec::new();
    };
    let mut versions: Vec<String> = spec
        .common
        .mounts
        .iter()
        .chain(spec.devices.iter().flat_map(|d| d.edits.mounts.iter()))
        .filter_map(|m| {
            pattern
                .captures(m)
                .and_then(|c| c.get(1))
                .map(|v| v.as_str().to_owned())
        })
        .collect();
    versions.sort();
    versions.dedup();
    versions
}
