//! The plan: every file nodeimg renders, in one table — where it goes, its
//! mode, the template that writes it, and when it is produced.
//!
//! Rows with `each` are produced once per item of a list in the template
//! context (one `hosts.toml` per registry, one logrotate file per rule), and
//! their path is itself a small template over `item`.

use serde_json::Value;

/// Inside the image layer, or beside it for the cluster (Helm values, rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Layer,
    Cluster,
}

pub struct Output {
    /// Path relative to the layer root (or the cluster folder); may use `{{ item.… }}`.
    pub path: &'static str,
    pub mode: u32,
    /// Template name under `templates/`.
    pub template: &'static str,
    /// When the file is produced, in words (for the README and reviewers).
    pub when: &'static str,
    pub condition: fn(&Value) -> bool,
    /// Dotted path of a list in the context to produce one file per item.
    pub each: Option<&'static str>,
    pub side: Side,
}

fn always(_: &Value) -> bool {
    true
}

fn truthy(v: &Value, path: &str) -> bool {
    let mut cur = v;
    for part in path.split('.') {
        cur = match cur.get(part) {
            Some(x) => x,
            None => return false,
        };
    }
    match cur {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::String(s) => !s.is_empty(),
        Value::Number(_) => true,
    }
}

macro_rules! when {
    ($path:literal) => {{
        fn f(v: &Value) -> bool {
            truthy(v, $path)
        }
        f
    }};
}

#[rustfmt::skip]
pub const PLAN: &[Output] = &[
    Output { path: "etc/nodeimg/blueprint.lock.json", mode: 0o644, template: "etc/nodeimg/blueprint.lock.json.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/containerd/config.toml", mode: 0o644, template: "etc/containerd/config.toml.j2", when: "always (config version 2 for containerd 1.x, 3 for 2.x)", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/containerd/certs.d/{{ item.host }}/hosts.toml", mode: 0o644, template: "etc/containerd/certs.d/hosts.toml.j2", when: "per runtime.containerd.registries entry", condition: always, each: Some("containerd.registries"), side: Side::Layer },
    Output { path: "var/lib/kubelet/config.yaml", mode: 0o644, template: "var/lib/kubelet/config.yaml.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/default/grub.d/50-nodeimg.cfg", mode: 0o644, template: "etc/default/grub.d/50-nodeimg.cfg.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/kernel/cmdline", mode: 0o644, template: "etc/kernel/cmdline.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/modprobe.d/nodeimg-gpu.conf", mode: 0o644, template: "etc/modprobe.d/nodeimg-gpu.conf.j2", when: "accelerators present", condition: when!("gpu"), each: None, side: Side::Layer },
    Output { path: "etc/modules-load.d/nodeimg.conf", mode: 0o644, template: "etc/modules-load.d/nodeimg.conf.j2", when: "a preinstalled driver or RDMA NICs", condition: modules_wanted, each: None, side: Side::Layer },
    Output { path: "etc/sysctl.d/90-nodeimg.conf", mode: 0o644, template: "etc/sysctl.d/90-nodeimg.conf.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/security/limits.d/90-nodeimg-memlock.conf", mode: 0o644, template: "etc/security/limits.d/90-nodeimg-memlock.conf.j2", when: "RDMA NICs", condition: when!("rdma"), each: None, side: Side::Layer },
    Output { path: "etc/tmpfiles.d/nodeimg.conf", mode: 0o644, template: "etc/tmpfiles.d/nodeimg.conf.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-shm.service", mode: 0o644, template: "etc/systemd/system/nodeimg-shm.service.j2", when: "system.shmSize set", condition: when!("system.shm_bytes"), each: None, side: Side::Layer },
    Output { path: "usr/lib/repart.d/{{ item.index }}-{{ item.label }}.conf", mode: 0o644, template: "usr/lib/repart.d/partition.conf.j2", when: "per system.partitions entry", condition: always, each: Some("system.partitions"), side: Side::Layer },
    Output { path: "etc/systemd/system/{{ item.mount_point | unit_path }}.mount", mode: 0o644, template: "etc/systemd/system/partition.mount.j2", when: "per system.partitions entry", condition: always, each: Some("system.partitions"), side: Side::Layer },
    Output { path: "{{ distro.chrony_conf }}", mode: 0o644, template: "etc/chrony/chrony.conf.j2", when: "system.timeSync set", condition: when!("system.time_sync"), each: None, side: Side::Layer },
    Output { path: "etc/systemd/resolved.conf.d/50-nodeimg.conf", mode: 0o644, template: "etc/systemd/resolved.conf.d/50-nodeimg.conf.j2", when: "system.dns set", condition: when!("system.dns"), each: None, side: Side::Layer },
    Output { path: "etc/systemd/journald.conf.d/50-nodeimg.conf", mode: 0o644, template: "etc/systemd/journald.conf.d/50-nodeimg.conf.j2", when: "journal limits set", condition: journal_wanted, each: None, side: Side::Layer },
    Output { path: "etc/logrotate.d/{{ item.name }}", mode: 0o644, template: "etc/logrotate.d/rule.j2", when: "per system.logs.rotate entry", condition: always, each: Some("system.rotate"), side: Side::Layer },
    Output { path: "etc/ssh/sshd_config.d/50-nodeimg.conf", mode: 0o600, template: "etc/ssh/sshd_config.d/50-nodeimg.conf.j2", when: "always (disables sshd when security.ssh.enabled is false)", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/audit/rules.d/50-nodeimg.rules", mode: 0o640, template: "etc/audit/rules.d/50-nodeimg.rules.j2", when: "security.audit set", condition: when!("security.audit"), each: None, side: Side::Layer },
    Output { path: "etc/kubernetes/node-feature-discovery/nfd-worker.conf", mode: 0o644, template: "etc/kubernetes/node-feature-discovery/nfd-worker.conf.j2", when: "kubernetes.nfd.sources set", condition: when!("nfd.sources"), each: None, side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-cdi-generate.service", mode: 0o644, template: "etc/systemd/system/nodeimg-cdi-generate.service.j2", when: "CDI generated on the node (nvidia-ctk or amd-ctk)", condition: when!("cdi.generate"), each: None, side: Side::Layer },
    Output { path: "{{ cdi.static_file }}", mode: 0o644, template: "etc/cdi/static-spec.yaml.j2", when: "runtime.cdi.generator is static (AMD)", condition: when!("cdi.static"), each: None, side: Side::Layer },
    Output { path: "etc/udev/rules.d/90-nodeimg-cdi-refresh.rules", mode: 0o644, template: "etc/udev/rules.d/90-nodeimg-cdi-refresh.rules.j2", when: "CDI generated on the node and refreshed on driver change", condition: cdi_refresh_wanted, each: None, side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-verify.service", mode: 0o644, template: "etc/systemd/system/nodeimg-verify.service.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/systemd/system/kubelet.service.d/10-nodeimg-verify.conf", mode: 0o644, template: "etc/systemd/system/kubelet.service.d/10-nodeimg-verify.conf.j2", when: "always", condition: always, each: None, side: Side::Layer },
    Output { path: "etc/node-problem-detector.d/nodeimg-health.json", mode: 0o644, template: "etc/node-problem-detector.d/nodeimg-health.json.j2", when: "accelerators present", condition: when!("gpu"), each: None, side: Side::Layer },
    Output { path: "nfd-platform-labels.yaml", mode: 0o644, template: "cluster/nfd-platform-labels.yaml.j2", when: "kubernetes.nfd.platformLabels set", condition: when!("nfd.labels"), each: None, side: Side::Cluster },
    Output { path: "gpu-operator-values.yaml", mode: 0o644, template: "cluster/gpu-operator-values.yaml.j2", when: "an NVIDIA GPU operator is declared", condition: nvidia_operator, each: None, side: Side::Cluster },
    Output { path: "amd-gpu-operator-values.yaml", mode: 0o644, template: "cluster/amd-gpu-operator-values.yaml.j2", when: "an AMD GPU operator is declared", condition: amd_operator, each: None, side: Side::Cluster },
];

fn modules_wanted(v: &Value) -> bool {
    truthy(v, "gpu.preinstalled") || truthy(v, "rdma")
}

fn journal_wanted(v: &Value) -> bool {
    truthy(v, "system.journal_max_use") || truthy(v, "system.journal_retention_s")
}

fn cdi_refresh_wanted(v: &Value) -> bool {
    truthy(v, "cdi.generate") && truthy(v, "cdi.on_driver_change")
}

fn nvidia_operator(v: &Value) -> bool {
    truthy(v, "gpu.operator") && truthy(v, "gpu.nvidia")
}

fn amd_operator(v: &Value) -> bool {
    truthy(v, "gpu.operator") && truthy(v, "gpu.amd")
}

/// The list of items for an `each` row.
pub fn items<'v>(ctx: &'v Value, path: &str) -> &'v [Value] {
    let mut cur = ctx;
    for part in path.split('.') {
        match cur.get(part) {
            Some(x) => cur = x,
            None => return &[],
        }
    }
    cur.as_array().map(Vec::as_slice).unwrap_or(&[])
}
