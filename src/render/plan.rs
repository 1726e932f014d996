//! The plan: every file nodeimg renders, in one table — where it goes, its
//! mode, the template that writes it, when it is produced (a function of
//! the typed [`Context`]) and any post step on the rendered text.
//!
//! Rows with `each` are produced once per item of a list in the context
//! (one `hosts.toml` per registry, one logrotate file per rule), and their
//! path is itself a small template over `item`.

use serde::Serialize;

use super::RenderError;
use super::context::Context;
use super::extra_config;

/// Inside the image layer, or beside it for the cluster (Helm values, rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Layer,
    Cluster,
}

/// What changing a file means for a running fleet. Ordered: a set of
/// changes has the impact of its worst member.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Impact {
    /// Applies without touching workloads (a reload, the next boot's checks).
    Live,
    /// Drain the node, restart a daemon (containerd, kubelet), uncordon.
    Drain,
    /// Drain and reboot (kernel, kernel arguments, modules, disk layout).
    Reboot,
}

impl Impact {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A file's impact and the action behind it.
pub type FileImpact = (Impact, &'static str);

/// The impact of a rendered file with none declared: the most disruptive.
pub const UNDECLARED: FileImpact = (Impact::Reboot, "no impact declared for this file");

/// The acceptance workloads: applied to the nodes labelled for acceptance only.
const ACCEPTANCE: FileImpact = (
    Impact::Live,
    "cluster-side acceptance workload: kubectl apply, on nodes labelled nodeimg.dev/acceptance=run",
);

/// Files render adds beside the plan rows (copied or derived), by path prefix.
#[rustfmt::skip]
pub const EXTRA: &[(&str, FileImpact)] = &[
    ("layer/etc/nodeimg/blueprint.id", (Impact::Live, "verification expectations, read by verify at the next boot")),
    ("layer/etc/nodeimg/trust/", (Impact::Live, "keys the next image must be signed by, read by apply and by verify at the next boot")),
    ("layer/etc/containerd/certs.d/", (Impact::Drain, "restart containerd")),
    ("layer/usr/local/share/ca-certificates/", (Impact::Live, "update-ca-certificates (nodeimg-trust.service at the next boot)")),
    ("layer/etc/pki/ca-trust/source/anchors/", (Impact::Live, "update-ca-trust extract (nodeimg-trust.service at the next boot)")),
    ("layer/etc/systemd/system/multi-user.target.wants/", (Impact::Live, "enabled: starts at the next boot")),
    ("layer/etc/systemd/system/sysinit.target.wants/", (Impact::Live, "enabled: starts at the next boot")),
    ("layer/etc/systemd/system/boot-complete.target.requires/", (Impact::Live, "a good boot needs a passing verify, from the next boot")),
    ("layer/etc/systemd/system/local-fs.target.wants/", (Impact::Reboot, "enabled mount: disk layout at the next boot")),
    ("layer/etc/systemd/system/nvidia-cdi-refresh.", (Impact::Live, "masked: the toolkit's own CDI generator stays off")),
];

/// A step applied to a rendered file's text before it is stored.
pub type Post = fn(String, &Context<'_>) -> Result<String, RenderError>;

pub struct Output {
    /// Path relative to the layer root (or the cluster folder); may use `{{ item.… }}`.
    pub path: &'static str,
    pub mode: u32,
    /// Template name under `templates/`.
    pub template: &'static str,
    /// When the file is produced, in words (for the README and reviewers).
    pub produced: &'static str,
    /// When the file is produced.
    pub when: fn(&Context<'_>) -> bool,
    /// The items to produce one file each for.
    pub each: Option<fn(&Context<'_>) -> Vec<minijinja::Value>>,
    /// Applied to the rendered text (the containerd extraConfig merge).
    pub post: Option<Post>,
    /// What changing this file means for a running fleet (`nodeimg diff`).
    pub impact: FileImpact,
    pub side: Side,
}

fn always(_: &Context<'_>) -> bool {
    true
}

/// The re-admission placement, as the one `item` of a re-admission workload.
fn readmission(c: &Context<'_>) -> Vec<minijinja::Value> {
    c.readmission
        .as_ref()
        .map(|r| items(std::slice::from_ref(r)))
        .unwrap_or_default()
}

fn items<T: Serialize>(list: &[T]) -> Vec<minijinja::Value> {
    list.iter()
        .map(|x| minijinja::Value::from(minijinja::value::Serde(x)))
        .collect()
}

#[rustfmt::skip]
pub const PLAN: &[Output] = &[
    Output { path: "etc/nodeimg/blueprint.lock.json", mode: 0o644, template: "etc/nodeimg/blueprint.lock.json.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Live, "verification expectations, read by verify at the next boot"), side: Side::Layer },
    Output { path: "etc/nodeimg/blueprint.matrix.json", mode: 0o644, template: "etc/nodeimg/blueprint.matrix.json.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Live, "verification expectations, read by verify at the next boot"), side: Side::Layer },
    Output { path: "etc/containerd/config.toml", mode: 0o644, template: "etc/containerd/config.toml.j2", produced: "always (config version 2 for containerd 1.x, 3 for 2.x)", when: always, each: None, post: Some(extra_config::merge_containerd), impact: (Impact::Drain, "restart containerd"), side: Side::Layer },
    Output { path: "etc/systemd/system/containerd.service.d/10-nodeimg-memlock.conf", mode: 0o644, template: "etc/systemd/system/containerd.service.d/10-nodeimg-memlock.conf.j2", produced: "accelerators or RDMA NICs present", when: |c| c.containerd.unlimited_memlock, each: None, post: None, impact: (Impact::Drain, "daemon-reload, restart containerd; pods started before keep the old limit"), side: Side::Layer },
    Output { path: "etc/nvidia-container-runtime/config.toml", mode: 0o644, template: "etc/nvidia-container-runtime/config.toml.j2", produced: "NVIDIA GPUs, toolkit not deployed by the operator", when: |c| c.toolkit.is_some(), each: None, post: None, impact: (Impact::Drain, "read when a container starts through the nvidia runtime; running pods keep their devices"), side: Side::Layer },
    Output { path: "etc/udev/rules.d/81-nodeimg-nics.rules", mode: 0o644, template: "etc/udev/rules.d/81-nodeimg-nics.rules.j2", produced: "network.nics groups identifiable by driver or model", when: |c| !c.nics.is_empty(), each: None, post: None, impact: (Impact::Drain, "udevadm control --reload; udevadm trigger --subsystem-match=net --action=add (an MTU change bounces RDMA traffic)"), side: Side::Layer },
    Output { path: "etc/udev/rules.d/71-nvidia-dev-char.rules", mode: 0o644, template: "etc/udev/rules.d/71-nvidia-dev-char.rules.j2", produced: "NVIDIA driver and toolkit in the image", when: |c| c.toolkit.as_ref().is_some_and(|t| t.dev_char_links), each: None, post: None, impact: (Impact::Live, "udevadm control --reload; nvidia-ctk system create-dev-char-symlinks --create-all"), side: Side::Layer },
    Output { path: "etc/containerd/certs.d/{{ item.host }}/hosts.toml", mode: 0o644, template: "etc/containerd/certs.d/hosts.toml.j2", produced: "per runtime.containerd.registries entry", when: always, each: Some(|c| items(&c.containerd.registries)), post: None, impact: (Impact::Drain, "restart containerd"), side: Side::Layer },
    Output { path: "{{ kubelet.config_path }}", mode: 0o644, template: "var/lib/kubelet/config.yaml.j2", produced: "always: a --config-dir drop-in (etc/kubernetes/kubelet.conf.d/50-nodeimg.conf) from Kubernetes 1.28, var/lib/kubelet/config.yaml before", when: always, each: None, post: None, impact: (Impact::Drain, "restart kubelet; when the CPU (memory) manager policy changes, stop kubelet and delete /var/lib/kubelet/cpu_manager_state (memory_manager_state) first, or it refuses to start; labels apply only when the Node object is created"), side: Side::Layer },
    Output { path: "etc/systemd/system/kubelet.service.d/20-nodeimg-flags.conf", mode: 0o644, template: "etc/systemd/system/kubelet.service.d/20-nodeimg-flags.conf.j2", produced: "kubelet flags needed (--config-dir from 1.28, --node-labels for kubernetes.labels)", when: |c| !c.kubelet.flags.is_empty(), each: None, post: None, impact: (Impact::Live, "read when kubelet next starts; --node-labels reach only a Node registered afresh: kubectl label the existing nodes (--config-dir changes only with the Kubernetes version, which drains anyway)"), side: Side::Layer },
    Output { path: "etc/default/grub.d/50-nodeimg.cfg", mode: 0o644, template: "etc/default/grub.d/50-nodeimg.cfg.j2", produced: "Debian and Ubuntu (read by update-grub)", when: |c| c.boot.grub_dropin, each: None, post: None, impact: (Impact::Reboot, "kernel command line: update-grub, reboot"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-kernel-args.service", mode: 0o644, template: "etc/systemd/system/nodeimg-kernel-args.service.j2", produced: "RHEL family (grubby on BLS entries)", when: |c| c.boot.grubby, each: None, post: None, impact: (Impact::Reboot, "kernel command line: grubby --update-kernel=ALL, reboot"), side: Side::Layer },
    Output { path: "etc/modprobe.d/nodeimg-gpu.conf", mode: 0o644, template: "etc/modprobe.d/nodeimg-gpu.conf.j2", produced: "accelerators present", when: |c| c.gpu.is_some(), each: None, post: None, impact: (Impact::Reboot, "kernel module options"), side: Side::Layer },
    Output { path: "etc/modules-load.d/nodeimg.conf", mode: 0o644, template: "etc/modules-load.d/nodeimg.conf.j2", produced: "always (overlay, br_netfilter; the image's GPU driver; RDMA)", when: always, each: None, post: None, impact: (Impact::Reboot, "modules loaded at boot"), side: Side::Layer },
    Output { path: "etc/apt/preferences.d/nodeimg-pins", mode: 0o644, template: "etc/apt/preferences.d/nodeimg-pins.j2", produced: "Debian and Ubuntu", when: |c| c.distro.family == "debian", each: None, post: None, impact: (Impact::Live, "read by the next apt run"), side: Side::Layer },
    Output { path: "etc/apt/apt.conf.d/51nodeimg-unattended-upgrades", mode: 0o644, template: "etc/apt/apt.conf.d/51nodeimg-unattended-upgrades.j2", produced: "Debian and Ubuntu", when: |c| c.distro.family == "debian", each: None, post: None, impact: (Impact::Live, "read by the next unattended-upgrades run"), side: Side::Layer },
    Output { path: "etc/dnf/plugins/versionlock.list", mode: 0o644, template: "etc/dnf/plugins/versionlock.list.j2", produced: "RHEL family", when: |c| c.distro.family == "rhel", each: None, post: None, impact: (Impact::Live, "read by the next dnf run"), side: Side::Layer },
    Output { path: "etc/sysctl.d/90-nodeimg.conf", mode: 0o644, template: "etc/sysctl.d/90-nodeimg.conf.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Live, "sysctl --system"), side: Side::Layer },
    Output { path: "etc/security/limits.d/90-nodeimg-memlock.conf", mode: 0o644, template: "etc/security/limits.d/90-nodeimg-memlock.conf.j2", produced: "RDMA NICs", when: |c| c.rdma, each: None, post: None, impact: (Impact::Live, "new login sessions (pam_limits); pods keep containerd's limit"), side: Side::Layer },
    Output { path: "etc/tmpfiles.d/nodeimg.conf", mode: 0o644, template: "etc/tmpfiles.d/nodeimg.conf.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Live, "systemd-tmpfiles --create"), side: Side::Layer },
    Output { path: "usr/lib/repart.d/{{ item.index }}-{{ item.label }}.conf", mode: 0o644, template: "usr/lib/repart.d/partition.conf.j2", produced: "per system.partitions entry", when: always, each: Some(|c| items(&c.system.partitions)), post: None, impact: (Impact::Reboot, "disk layout"), side: Side::Layer },
    Output { path: "etc/systemd/system/{{ item.mount_point | unit_path }}.mount", mode: 0o644, template: "etc/systemd/system/partition.mount.j2", produced: "per system.partitions entry", when: always, each: Some(|c| items(&c.system.partitions)), post: None, impact: (Impact::Reboot, "disk layout"), side: Side::Layer },
    Output { path: "{{ distro.chrony_conf }}", mode: 0o644, template: "etc/chrony/chrony.conf.j2", produced: "system.timeSync set", when: |c| c.system.time_sync.is_some(), each: None, post: None, impact: (Impact::Live, "restart chronyd"), side: Side::Layer },
    Output { path: "etc/systemd/resolved.conf.d/50-nodeimg.conf", mode: 0o644, template: "etc/systemd/resolved.conf.d/50-nodeimg.conf.j2", produced: "system.dns set, Debian and Ubuntu (systemd-resolved)", when: |c| c.system.dns.is_some() && c.distro.resolver == "resolved", each: None, post: None, impact: (Impact::Live, "restart systemd-resolved"), side: Side::Layer },
    Output { path: "etc/NetworkManager/conf.d/50-nodeimg-dns.conf", mode: 0o644, template: "etc/NetworkManager/conf.d/50-nodeimg-dns.conf.j2", produced: "system.dns set, RHEL family (NetworkManager)", when: |c| c.system.dns.is_some() && c.distro.resolver == "networkmanager", each: None, post: None, impact: (Impact::Live, "nmcli general reload"), side: Side::Layer },
    Output { path: "etc/systemd/journald.conf.d/50-nodeimg.conf", mode: 0o644, template: "etc/systemd/journald.conf.d/50-nodeimg.conf.j2", produced: "journal limits set", when: |c| c.system.journal_wanted(), each: None, post: None, impact: (Impact::Live, "restart systemd-journald"), side: Side::Layer },
    Output { path: "etc/logrotate.d/{{ item.name }}", mode: 0o644, template: "etc/logrotate.d/rule.j2", produced: "per system.logs.rotate entry", when: always, each: Some(|c| items(&c.system.rotate)), post: None, impact: (Impact::Live, "read at the next rotation"), side: Side::Layer },
    Output { path: "etc/ssh/sshd_config.d/00-nodeimg.conf", mode: 0o600, template: "etc/ssh/sshd_config.d/00-nodeimg.conf.j2", produced: "security.ssh.enabled (the default)", when: |c| c.security.ssh.enabled, each: None, post: None, impact: (Impact::Live, "reload sshd"), side: Side::Layer },
    Output { path: "etc/systemd/system/{{ item }}", mode: 0o644, template: "etc/systemd/system/masked.unit.j2", produced: "security.ssh.enabled false: sshd's units masked (empty unit files)", when: |c| !c.security.ssh.enabled, each: Some(|c| c.security.ssh.units.iter().map(|u| minijinja::Value::from(*u)).collect()), post: None, impact: (Impact::Live, "daemon-reload; systemctl stop the masked units"), side: Side::Layer },
    Output { path: "etc/audit/rules.d/50-nodeimg.rules", mode: 0o640, template: "etc/audit/rules.d/50-nodeimg.rules.j2", produced: "security.audit set (with a baseline of node, Kubernetes, privilege and module watches)", when: |c| !c.security.audit.is_empty(), each: None, post: None, impact: (Impact::Reboot, "audit rules are immutable (-e 2) until reboot"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-cdi-generate.service", mode: 0o644, template: "etc/systemd/system/nodeimg-cdi-generate.service.j2", produced: "CDI generated on the node (nvidia-ctk or amd-ctk)", when: |c| c.cdi.generate, each: None, post: None, impact: (Impact::Drain, "CDI specs regenerate before pods start"), side: Side::Layer },
    Output { path: "{{ cdi.static_file }}", mode: 0o644, template: "etc/cdi/static-spec.yaml.j2", produced: "runtime.cdi.generator is static (AMD)", when: |c| c.cdi.is_static, each: None, post: None, impact: (Impact::Drain, "CDI specs are read when containers start; running pods keep their devices"), side: Side::Layer },
    Output { path: "etc/udev/rules.d/90-nodeimg-cdi-refresh.rules", mode: 0o644, template: "etc/udev/rules.d/90-nodeimg-cdi-refresh.rules.j2", produced: "CDI generated on the node and refreshed on driver change", when: |c| c.cdi.generate && c.cdi.on_driver_change, each: None, post: None, impact: (Impact::Live, "udevadm control --reload"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-trust.service", mode: 0o644, template: "etc/systemd/system/nodeimg-trust.service.j2", produced: "CA certificates in the trust store (registry CAs, system.certificates)", when: |c| c.trust_store, each: None, post: None, impact: (Impact::Live, "daemon-reload; runs at the next boot (or run it now)"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-swapoff.service", mode: 0o644, template: "etc/systemd/system/nodeimg-swapoff.service.j2", produced: "always, unless kubelet extraConfig sets failSwapOn: false", when: |c| c.kubelet.fields.get("failSwapOn") != Some(&serde_json::Value::Bool(false)), each: None, post: None, impact: (Impact::Live, "daemon-reload; swapoff --all"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-device-nodes.service", mode: 0o644, template: "etc/systemd/system/nodeimg-device-nodes.service.j2", produced: "NVIDIA CDI specs generated on the node", when: |c| c.startup.device_nodes, each: None, post: None, impact: (Impact::Live, "device nodes are created at the next boot"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-verify.service", mode: 0o644, template: "etc/systemd/system/nodeimg-verify.service.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Live, "verification at the next boot"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-verify-driver.service", mode: 0o644, template: "etc/systemd/system/nodeimg-verify-driver.service.j2", produced: "an operator owns the GPU driver", when: |c| c.startup.driver_phase.is_some(), each: None, post: None, impact: (Impact::Live, "driver-phase verification at the next boot (or start it now)"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-boot-trial.service", mode: 0o644, template: "etc/systemd/system/nodeimg-boot-trial.service.j2", produced: "always (boot assessment of an image applied in place)", when: always, each: None, post: None, impact: (Impact::Live, "counts boots of an image on trial from the next boot"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-boot-bless.service", mode: 0o644, template: "etc/systemd/system/nodeimg-boot-bless.service.j2", produced: "always (boot assessment of an image applied in place)", when: always, each: None, post: None, impact: (Impact::Live, "ends a trial after a good boot, from the next boot"), side: Side::Layer },
    Output { path: "etc/systemd/system/nodeimg-verify-failed.service", mode: 0o644, template: "etc/systemd/system/nodeimg-verify-failed.service.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Live, "runs when verification finally fails"), side: Side::Layer },
    Output { path: "etc/systemd/system/kubelet.service.d/10-nodeimg-verify.conf", mode: 0o644, template: "etc/systemd/system/kubelet.service.d/10-nodeimg-verify.conf.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Drain, "daemon-reload, restart kubelet"), side: Side::Layer },
    Output { path: "etc/systemd/system/containerd.service.d/50-nodeimg.conf", mode: 0o644, template: "etc/systemd/system/containerd.service.d/50-nodeimg.conf.j2", produced: "always (its mounts)", when: always, each: None, post: None, impact: (Impact::Drain, "daemon-reload, restart containerd"), side: Side::Layer },
    Output { path: "usr/lib/systemd/system-preset/50-nodeimg.preset", mode: 0o644, template: "usr/lib/systemd/system-preset/50-nodeimg.preset.j2", produced: "always", when: always, each: None, post: None, impact: (Impact::Live, "read by `systemctl preset` and first boot; the layer's links already enable the units"), side: Side::Layer },
    Output { path: "nfd-values.yaml", mode: 0o644, template: "cluster/nfd-values.yaml.j2", produced: "kubernetes.nfd.sources or kubernetes.taints set, or accelerators present (NFD taints the node a failure takes out of service), NFD not deployed by the GPU operator", when: |c| !c.nfd.operator_managed && (!c.nfd.sources.is_empty() || !c.tolerations.is_empty() || c.remediation.as_ref().is_some_and(|r| r.isolation.is_some())), each: None, post: None, impact: (Impact::Live, "cluster-side values: helm upgrade node-feature-discovery; nfd-worker restarts with the new ConfigMap"), side: Side::Cluster },
    Output { path: "nfd-platform-labels.yaml", mode: 0o644, template: "cluster/nfd-platform-labels.yaml.j2", produced: "kubernetes.nfd.platformLabels set", when: |c| !c.nfd.labels.is_empty(), each: None, post: None, impact: (Impact::Live, "cluster-side object: kubectl apply"), side: Side::Cluster },
    Output { path: "shm-policy.yaml", mode: 0o644, template: "cluster/shm-policy.yaml.j2", produced: "system.shmSize set (a Kyverno ClusterPolicy mounting a memory-backed emptyDir at pods' /dev/shm)", when: |c| c.shm.is_some(), each: None, post: None, impact: (Impact::Live, "cluster-side object: kubectl apply; applies to pods created afterwards (running pods keep their /dev/shm until recreated)"), side: Side::Cluster },
    Output { path: "node-problem-detector-values.yaml", mode: 0o644, template: "cluster/node-problem-detector-values.yaml.j2", produced: "accelerators present (NPD custom plugin running verify --phase health)", when: |c| c.npd.is_some(), each: None, post: None, impact: (Impact::Live, "cluster-side values: helm upgrade node-problem-detector; the DaemonSet rolls, the condition is re-evaluated at the next plugin run"), side: Side::Cluster },
    Output { path: "runtime-classes/{{ item.name }}.yaml", mode: 0o644, template: "cluster/runtime-class.yaml.j2", produced: "per containerd runtime handler beside runc (nvidia on NVIDIA nodes, runtime.containerd.extraRuntimes)", when: always, each: Some(|c| items(&c.runtime_classes)), post: None, impact: (Impact::Live, "cluster-side object: kubectl apply; Pods admitted afterwards get its scheduling"), side: Side::Cluster },
    Output { path: "gpu-operator-values.yaml", mode: 0o644, template: "cluster/gpu-operator-values.yaml.j2", produced: "an NVIDIA GPU operator is declared", when: |c| c.gpu.as_ref().is_some_and(|g| g.nvidia_operator()), each: None, post: None, impact: (Impact::Live, "cluster-side values: helm upgrade; the operator rolls what it owns (a driver change drains each node itself)"), side: Side::Cluster },
    Output { path: "amd-gpu-operator-values.yaml", mode: 0o644, template: "cluster/amd-gpu-operator-values.yaml.j2", produced: "an AMD GPU operator is declared", when: |c| c.gpu.as_ref().is_some_and(|g| g.amd_operator()), each: None, post: None, impact: (Impact::Live, "cluster-side values: helm upgrade; the operator rolls what it owns (a driver change drains each node itself)"), side: Side::Cluster },
    Output { path: "amd-deviceconfig.yaml", mode: 0o644, template: "cluster/amd-deviceconfig.yaml.j2", produced: "an AMD GPU operator before chart v1.3.0 (which renders no DeviceConfig from values)", when: |c| c.amd.as_ref().is_some_and(|a| !a.chart_renders_deviceconfig), each: None, post: None, impact: (Impact::Live, "cluster-side object: kubectl apply; the operator rolls what it owns (a driver change drains each node itself)"), side: Side::Cluster },
    Output { path: "amd-test-runner-config.yaml", mode: 0o644, template: "cluster/amd-test-runner-config.yaml.j2", produced: "an AMD GPU operator with the metrics exporter and acceptance.images.testRunner (the DeviceConfig's testRunner reads it)", when: |c| c.amd.as_ref().is_some_and(|a| a.test_runner.is_some()), each: None, post: None, impact: (Impact::Live, "cluster-side object: kubectl apply; the test runner reads it at its next run"), side: Side::Cluster },
    Output { path: "remediation/nodehealthcheck-{{ item.class }}.yaml", mode: 0o644, template: "cluster/remediation/nodehealthcheck.yaml.j2", produced: "accelerators present: driver-daemon and device-link (the reboot rung) by their checks, service with rollout.remediation.repair", when: |c| c.remediation.is_some(), each: Some(|c| c.remediation.as_ref().map(|r| items(&r.checks)).unwrap_or_default()), post: None, impact: (Impact::Live, "cluster-side object: kubectl apply"), side: Side::Cluster },
    Output { path: "remediation/isolation.yaml", mode: 0o644, template: "cluster/remediation/isolation.yaml.j2", produced: "accelerators present: an NFD NodeFeatureRule tainting a node whose failure needs a person", when: |c| c.remediation.as_ref().is_some_and(|r| r.isolation.is_some()), each: None, post: None, impact: (Impact::Live, "cluster-side object: kubectl apply"), side: Side::Cluster },
    Output { path: "remediation/readmission.yaml", mode: 0o644, template: "cluster/remediation/readmission.yaml.j2", produced: "acceptance workloads and remediation: the re-admission table", when: |c| c.readmission.is_some(), each: None, post: None, impact: (Impact::Live, "cluster-side object: kubectl apply"), side: Side::Cluster },
    Output { path: "remediation/readmission-dcgm.yaml", mode: 0o644, template: "cluster/acceptance/dcgm-diag-job.yaml.j2", produced: "re-admission of a GPU: DCGM diagnostics on the remediated node", when: |c| c.readmission.as_ref().is_some_and(|r| r.runs("dcgm")), each: Some(readmission), post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "remediation/readmission-test-runner.yaml", mode: 0o644, template: "cluster/acceptance/test-runner-job.yaml.j2", produced: "re-admission of an AMD GPU: the operator's test runner (RVS) on the remediated node", when: |c| c.readmission.as_ref().is_some_and(|r| r.runs("test-runner")), each: Some(readmission), post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "remediation/readmission-nvbandwidth.yaml", mode: 0o644, template: "cluster/acceptance/nvbandwidth-job.yaml.j2", produced: "re-admission of NVLink, NVSwitch or PCIe: nvbandwidth on the remediated node", when: |c| c.readmission.as_ref().is_some_and(|r| r.runs("nvbandwidth")), each: Some(readmission), post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "remediation/readmission-rocm-bandwidth.yaml", mode: 0o644, template: "cluster/acceptance/rocm-bandwidth-job.yaml.j2", produced: "re-admission of Infinity Fabric or PCIe on AMD: rocm-bandwidth-test on the remediated node", when: |c| c.readmission.as_ref().is_some_and(|r| r.runs("rocm-bandwidth")), each: Some(readmission), post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "remediation/readmission-nccl.yaml", mode: 0o644, template: "cluster/acceptance/nccl-job.yaml.j2", produced: "re-admission of NVLink or NVSwitch: single-node NCCL on the remediated node", when: |c| c.readmission.as_ref().is_some_and(|r| r.runs("nccl")), each: Some(readmission), post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "remediation/readmission-rdma.yaml", mode: 0o644, template: "cluster/acceptance/rdma-pair.yaml.j2", produced: "re-admission of a rail: ib_write_bw between the remediated node and a peer", when: |c| c.readmission.as_ref().is_some_and(|r| r.runs("rdma")), each: Some(readmission), post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/namespace.yaml", mode: 0o644, template: "cluster/acceptance/namespace.yaml.j2", produced: "an acceptance workload renders", when: |c| c.acceptance.as_ref().is_some_and(|a| a.any()), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/scripts.yaml", mode: 0o644, template: "cluster/acceptance/scripts.yaml.j2", produced: "an acceptance workload renders", when: |c| c.acceptance.as_ref().is_some_and(|a| a.any()), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/gpu-claim.yaml", mode: 0o644, template: "cluster/acceptance/gpu-claim.yaml.j2", produced: "an acceptance workload renders and devices come through DRA", when: |c| c.acceptance.as_ref().is_some_and(|a| a.any() && a.gpu.as_ref().is_some_and(|g| g.dra)), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/smoke-pod.yaml", mode: 0o644, template: "cluster/acceptance/smoke-pod.yaml.j2", produced: "acceptance with GPUs and images.framework (layer 3)", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.smoke), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/whole-gpus.sh", mode: 0o755, template: "cluster/acceptance/whole-gpus.sh.j2", produced: "acceptance on GPUs the device plugin shares (time-slicing, MPS) with a workload that asks for the node's GPUs: the window of whole GPUs it runs in", when: |c| c.acceptance.as_ref().is_some_and(|a| a.any_whole), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}dcgm-diag-job.yaml", mode: 0o644, template: "cluster/acceptance/dcgm-diag-job.yaml.j2", produced: "acceptance with NVIDIA GPUs and images.dcgm (layer 4); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.dcgm), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}nvbandwidth-job.yaml", mode: 0o644, template: "cluster/acceptance/nvbandwidth-job.yaml.j2", produced: "acceptance with NVIDIA GPUs and images.nvbandwidth (layer 4); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.nvbandwidth), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/test-runner-access.yaml", mode: 0o644, template: "cluster/acceptance/test-runner-access.yaml.j2", produced: "acceptance with AMD GPUs and images.testRunner: the runner's service account, allowed to write events in its namespace and label the node", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.test_runner), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/test-runner-job.yaml", mode: 0o644, template: "cluster/acceptance/test-runner-job.yaml.j2", produced: "acceptance with AMD GPUs and images.testRunner (layer 4: an RVS recipe through the AMD GPU Operator's test runner)", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.test_runner), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/rocm-bandwidth-job.yaml", mode: 0o644, template: "cluster/acceptance/rocm-bandwidth-job.yaml.j2", produced: "acceptance with AMD GPUs and images.rocmBandwidth (layer 4)", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.rocm_bandwidth), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}nccl-job.yaml", mode: 0o644, template: "cluster/acceptance/nccl-job.yaml.j2", produced: "acceptance with 2+ GPUs and images.collectives (layer 4); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.nccl), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.rdma_folder }}rdma-pair.yaml", mode: 0o644, template: "cluster/acceptance/rdma-pair.yaml.j2", produced: "acceptance with RDMA compute NICs and images.perftest (layer 4; MPIJob or JobSet); under whole-gpus/ where the device plugin shares the GPUs and GPUDirect is declared", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.rdma), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}nccl-multinode.yaml", mode: 0o644, template: "cluster/acceptance/nccl-multinode.yaml.j2", produced: "acceptance with RDMA compute NICs, images.collectives and the MPI Operator (layer 4); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.multi_node_nccl), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/storage-job.yaml", mode: 0o644, template: "cluster/acceptance/storage-job.yaml.j2", produced: "acceptance.storage and images.fio (layer 4, storage baseline)", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.storage), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}framework-job.yaml", mode: 0o644, template: "cluster/acceptance/framework-job.yaml.j2", produced: "acceptance with GPUs and images.framework (layer 5); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.framework), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}framework-jax-job.yaml", mode: 0o644, template: "cluster/acceptance/framework-jax-job.yaml.j2", produced: "acceptance with GPUs and images.jax (layer 5); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.jax), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}inference-job.yaml", mode: 0o644, template: "cluster/acceptance/inference-job.yaml.j2", produced: "acceptance with GPUs, acceptance.inference and images.inference (layer 5); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.inference), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}framework-multinode.yaml", mode: 0o644, template: "cluster/acceptance/framework-multinode.yaml.j2", produced: "acceptance with GPUs and images.framework (layer 5; MPIJob or JobSet); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.framework), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
    Output { path: "acceptance/{{ acceptance.gpu_folder }}framework-jax-multinode.yaml", mode: 0o644, template: "cluster/acceptance/framework-jax-multinode.yaml.j2", produced: "acceptance with GPUs and images.jax (layer 5; MPIJob or JobSet); under whole-gpus/ where the device plugin shares the GPUs", when: |c| c.acceptance.as_ref().is_some_and(|a| a.runs.jax), each: None, post: None, impact: ACCEPTANCE, side: Side::Cluster },
];
