//! `containerd`: `etc/containerd/config.toml` and `certs.d/<host>/hosts.toml`.

use crate::blueprint::Spec;
use std::collections::BTreeMap;

use serde::Serialize;

use super::CERTS_DIR;
use crate::blueprint::model::*;
use crate::blueprint::value::{MirrorUrl, TomlKeyPath, Version};

#[derive(Debug, Clone, Serialize)]
pub struct Containerd<'a> {
    pub version: String,
    /// 2 for containerd 1.x, 3 for 2.x.
    pub config_version: u8,
    pub root: &'a str,
    pub state: &'a str,
    pub default_runtime: &'static str,
    pub runtimes: Vec<Runtime>,
    pub cdi_enabled: bool,
    pub cdi_dirs: Vec<&'a str>,
    pub certs_dir: &'static str,
    pub registries: Vec<Registry<'a>>,
    /// The pod sandbox (pause) image, pinned.
    pub sandbox_image: String,
    /// Where drop-ins are imported from (`nvidia-ctk runtime configure
    /// --drop-in-config`, an operator's toolkit).
    pub imports: &'static str,
    /// containerd's unit gets `LimitMEMLOCK=infinity` (GPUs or RDMA NICs):
    /// pods inherit containerd's RLIMIT_MEMLOCK, not limits.d's.
    pub unlimited_memlock: bool,
    /// Merged into the rendered file after the template (a post step of
    /// the plan row), never seen by the template.
    #[serde(skip)]
    pub extra_config: &'a BTreeMap<TomlKeyPath, serde_json::Value>,
}

/// One `[…containerd.runtimes.<name>]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Runtime {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub runtime_type: &'static str,
    pub binary: Option<&'static str>,
    pub systemd_cgroup: Option<bool>,
}

/// One registry host (`certs.d/<host>/hosts.toml`).
#[derive(Debug, Clone, Serialize)]
pub struct Registry<'a> {
    pub host: &'a str,
    pub server: String,
    pub mirrors: &'a [MirrorUrl],
    /// Where its CA lands on the node.
    pub ca: Option<String>,
}

impl Containerd<'_> {
    /// The CRI plugin that holds runtimes and CDI in this config version.
    pub fn cri_plugin(&self) -> &'static str {
        if self.config_version == 3 {
            "io.containerd.cri.v1.runtime"
        } else {
            "io.containerd.grpc.v1.cri"
        }
    }
}

/// Drop-in folder of containerd's config.
pub const IMPORTS: &str = "/etc/containerd/conf.d/*.toml";

/// The pause image tag kubeadm pins for a Kubernetes minor
/// (`PauseVersion` in kubernetes cmd/kubeadm/app/constants/constants.go:
/// 3.9 through 1.30, 3.10 for 1.31–1.33, 3.10.1 from 1.34).
pub fn pause_tag(kubernetes: &Version) -> &'static str {
    match (kubernetes.major(), kubernetes.minor()) {
        (1, ..=30) => "3.9",
        (1, 31..=33) => "3.10",
        _ => "3.10.1",
    }
}

/// The sandbox image of `s`: the blueprint's, or kubeadm's pause image for
/// the pinned Kubernetes minor.
pub fn sandbox_image(s: &Spec) -> String {
    s.runtime
        .containerd
        .sandbox_image
        .clone()
        .unwrap_or_else(|| format!("registry.k8s.io/pause:{}", pause_tag(&s.kubernetes.version)))
}

pub(super) fn of(s: &Spec) -> Containerd<'_> {
    let c = &s.runtime.containerd;
    let systemd = s.kubernetes.kubelet.cgroup_driver == CgroupDriver::Systemd;
    let mut runtimes = vec![Runtime {
        name: "runc",
        runtime_type: "io.containerd.runc.v2",
        binary: None,
        systemd_cgroup: Some(systemd),
    }];
    if s.accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        runtimes.push(Runtime {
            name: "nvidia",
            runtime_type: "io.containerd.runc.v2",
            binary: Some("/usr/bin/nvidia-container-runtime"),
            systemd_cgroup: Some(systemd),
        });
    }
    for r in &c.extra_runtimes {
        runtimes.push(match r {
            ExtraRuntime::Kata => Runtime {
                name: "kata",
                runtime_type: "io.containerd.kata.v2",
                binary: None,
                systemd_cgroup: None,
            },
            ExtraRuntime::Gvisor => Runtime {
                name: "runsc",
                runtime_type: "io.containerd.runsc.v1",
                binary: None,
                systemd_cgroup: None,
            },
        });
    }
    let registries = c
        .registries
        .iter()
        .map(|r| Registry {
            host: &r.host,
            // docker.io is served from registry-1.docker.io.
            server: if r.host == "docker.io" {
                "https://registry-1.docker.io".to_string()
            } else {
                format!("https://{}", r.host)
            },
            mirrors: &r.mirrors,
            ca: r
                .ca_file
                .as_ref()
                .map(|_| format!("{CERTS_DIR}/{}/ca.crt", r.host)),
        })
        .collect();
    Containerd {
        version: c.version.to_string(),
        config_version: if c.version.major() >= 2 { 3 } else { 2 },
        root: c.root.as_str(),
        state: c.state.as_str(),
        default_runtime: match c.default_runtime {
            DefaultRuntime::Runc => "runc",
            DefaultRuntime::Nvidia => "nvidia",
        },
        runtimes,
        // Validation refuses CDI with a containerd older than 1.7.
        cdi_enabled: s.runtime.cdi.enabled,
        cdi_dirs: s.runtime.cdi.spec_dirs.iter().map(|d| d.as_str()).collect(),
        certs_dir: CERTS_DIR,
        registries,
        sandbox_image: sandbox_image(s),
        imports: IMPORTS,
        unlimited_memlock: s.accelerators.is_some() || s.network.nics.iter().any(|n| n.rdma),
        extra_config: &c.extra_config,
    }
}
