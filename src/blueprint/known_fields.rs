//! Field names the escape hatches (`kubelet.extraConfig`,
//! `containerd.extraConfig`) may use, per pinned version, and the names the
//! typed blueprint fields own.
//!
//! An escape hatch that accepts anything would let a typo pass review and
//! fail on the node; one that accepts typed fields would let two places in
//! a blueprint disagree. So each key is checked against these lists.

use super::value::{TomlKeyPath, Version};

/// KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields and the
/// Kubernetes minor release that introduced the newer ones.
const KUBELET_FIELDS: &[(&str, u64)] = &[
    ("address", 0),
    ("allowedUnsafeSysctls", 0),
    ("authentication", 0),
    ("authorization", 0),
    ("cgroupRoot", 0),
    ("cgroupsPerQOS", 0),
    ("clusterDNS", 0),
    ("clusterDomain", 0),
    ("configMapAndSecretChangeDetectionStrategy", 0),
    ("containerLogMaxFiles", 0),
    ("containerLogMaxSize", 0),
    ("containerLogMaxWorkers", 30),
    ("containerLogMonitorInterval", 30),
    ("contentType", 0),
    ("cpuCFSQuota", 0),
    ("cpuCFSQuotaPeriod", 0),
    ("cpuManagerPolicyOptions", 0),
    ("cpuManagerReconcilePeriod", 0),
    ("crashLoopBackOff", 32),
    ("enableControllerAttachDetach", 0),
    ("enableContentionProfiling", 0),
    ("enableDebugFlagsHandler", 0),
    ("enableDebuggingHandlers", 0),
    ("enableProfilingHandler", 0),
    ("enableServer", 0),
    ("enableSystemLogHandler", 0),
    ("enableSystemLogQuery", 0),
    ("enforceNodeAllocatable", 0),
    ("eventBurst", 0),
    ("eventRecordQPS", 0),
    ("evictionMaxPodGracePeriod", 0),
    ("evictionMinimumReclaim", 0),
    ("evictionPressureTransitionPeriod", 0),
    ("evictionSoft", 0),
    ("evictionSoftGracePeriod", 0),
    ("failSwapOn", 0),
    ("featureGates", 0),
    ("fileCheckFrequency", 0),
    ("hairpinMode", 0),
    ("healthzBindAddress", 0),
    ("healthzPort", 0),
    ("httpCheckFrequency", 0),
    ("imageGCHighThresholdPercent", 0),
    ("imageGCLowThresholdPercent", 0),
    ("imageMaximumGCAge", 29),
    ("imageMinimumGCAge", 0),
    ("imagePullCredentialsVerificationPolicy", 33),
    ("imageServiceEndpoint", 27),
    ("iptablesDropBit", 0),
    ("iptablesMasqueradeBit", 0),
    ("kernelMemcgNotification", 0),
    ("kubeAPIBurst", 0),
    ("kubeAPIQPS", 0),
    ("kubeReservedCgroup", 0),
    ("kubeletCgroups", 0),
    ("localStorageCapacityIsolation", 25),
    ("logging", 0),
    ("makeIPTablesUtilChains", 0),
    ("maxOpenFiles", 0),
    ("maxParallelImagePulls", 27),
    ("memorySwap", 0),
    ("memoryThrottlingFactor", 0),
    ("mergeDefaultEvictionSettings", 34),
    ("nodeLeaseDurationSeconds", 0),
    ("nodeStatusMaxImages", 0),
    ("nodeStatusReportFrequency", 0),
    ("nodeStatusUpdateFrequency", 0),
    ("oomScoreAdj", 0),
    ("podCIDR", 0),
    ("podLogsDir", 29),
    ("podPidsLimit", 0),
    ("podsPerCore", 0),
    ("port", 0),
    ("preloadedImagesVerificationAllowlist", 33),
    ("protectKernelDefaults", 0),
    ("providerID", 0),
    ("qosReserved", 0),
    ("readOnlyPort", 0),
    ("registerNode", 0),
    ("registryBurst", 0),
    ("registryPullQPS", 0),
    ("reservedSystemCPUs", 0),
    ("resolvConf", 0),
    ("rotateCertificates", 0),
    ("runOnce", 0),
    ("runtimeRequestTimeout", 0),
    ("seccompDefault", 0),
    ("serializeImagePulls", 0),
    ("serverTLSBootstrap", 0),
    ("showHiddenMetricsForVersion", 0),
    ("shutdownGracePeriod", 0),
    ("shutdownGracePeriodByPodPriority", 0),
    ("shutdownGracePeriodCriticalPods", 0),
    ("singleProcessOOMKill", 32),
    ("staticPodPath", 0),
    ("staticPodURL", 0),
    ("staticPodURLHeader", 0),
    ("streamingConnectionIdleTimeout", 0),
    ("syncFrequency", 0),
    ("systemCgroups", 0),
    ("systemReservedCgroup", 0),
    ("tlsCertFile", 0),
    ("tlsCipherSuites", 0),
    ("tlsMinVersion", 0),
    ("tlsPrivateKeyFile", 0),
    ("topologyManagerPolicyOptions", 0),
    ("tracing", 0),
    ("userNamespaces", 30),
    ("volumePluginDir", 0),
    ("volumeStatsAggPeriod", 0),
];

/// KubeletConfiguration fields that typed blueprint fields render.
const KUBELET_PROTECTED: &[(&str, &str)] = &[
    ("apiVersion", "rendered by nodeimg"),
    ("kind", "rendered by nodeimg"),
    ("maxPods", "kubernetes.kubelet.maxPods"),
    ("kubeReserved", "kubernetes.kubelet.kubeReserved"),
    ("systemReserved", "kubernetes.kubelet.systemReserved"),
    ("evictionHard", "kubernetes.kubelet.evictionHard"),
    ("cgroupDriver", "kubernetes.kubelet.cgroupDriver"),
    ("cpuManagerPolicy", "kubernetes.kubelet.cpuManagerPolicy"),
    (
        "topologyManagerPolicy",
        "kubernetes.kubelet.topologyManagerPolicy",
    ),
    (
        "topologyManagerScope",
        "kubernetes.kubelet.topologyManagerScope",
    ),
    (
        "memoryManagerPolicy",
        "kubernetes.kubelet.memoryManagerPolicy",
    ),
    (
        "reservedMemory",
        "kubernetes.kubelet.memoryManagerPolicy (computed)",
    ),
    ("registerWithTaints", "kubernetes.taints"),
    ("clusterDNS", "kubernetes.kubelet.clusterDNS"),
    ("clusterDomain", "kubernetes.kubelet.clusterDomain"),
    ("failCgroupV1", "os.cgroup"),
    ("containerRuntimeEndpoint", "runtime.containerd.state"),
];

/// Why a key is refused, or `None` when it may be used.
pub fn kubelet_key_problem(key: &str, kubernetes: &Version) -> Option<(String, Option<String>)> {
    if let Some((_, owner)) = KUBELET_PROTECTED.iter().find(|(k, _)| *k == key) {
        return Some((
            format!("`{key}` is owned by a typed field; set {owner} instead"),
            None,
        ));
    }
    match KUBELET_FIELDS.iter().find(|(k, _)| *k == key) {
        Some((_, since)) if *since > kubernetes.minor() && kubernetes.major() == 1 => Some((
            format!(
                "`{key}` needs Kubernetes 1.{since} or later; this blueprint pins {kubernetes}"
            ),
            None,
        )),
        Some(_) => None,
        None => {
            let names = KUBELET_FIELDS.iter().map(|(k, _)| *k);
            let hint =
                super::diagnostic::suggest(key, names).map(|s| format!("did you mean `{s}`?"));
            Some((format!("`{key}` is not a KubeletConfiguration field"), hint))
        }
    }
}

/// Top-level keys of containerd's config.toml (versions 2 and 3).
const CONTAINERD_TOP: &[&str] = &[
    "cgroup",
    "debug",
    "disabled_plugins",
    "grpc",
    "imports",
    "metrics",
    "oom_score",
    "plugin_dir",
    "plugins",
    "proxy_plugins",
    "required_plugins",
    "stream_processors",
    "temp",
    "timeouts",
    "ttrpc",
];

/// Plugin ids of containerd 1.6/1.7 (config version 2).
const CONTAINERD_V2_PLUGINS: &[&str] = &[
    "io.containerd.gc.v1.scheduler",
    "io.containerd.grpc.v1.cri",
    "io.containerd.internal.v1.opt",
    "io.containerd.internal.v1.restart",
    "io.containerd.internal.v1.tracing",
    "io.containerd.metadata.v1.bolt",
    "io.containerd.monitor.v1.cgroups",
    "io.containerd.nri.v1.nri",
    "io.containerd.runtime.v1.linux",
    "io.containerd.runtime.v2.task",
    "io.containerd.service.v1.diff-service",
    "io.containerd.service.v1.tasks-service",
    "io.containerd.snapshotter.v1.aufs",
    "io.containerd.snapshotter.v1.blockfile",
    "io.containerd.snapshotter.v1.btrfs",
    "io.containerd.snapshotter.v1.devmapper",
    "io.containerd.snapshotter.v1.native",
    "io.containerd.snapshotter.v1.overlayfs",
    "io.containerd.snapshotter.v1.zfs",
    "io.containerd.tracing.processor.v1.otlp",
    "io.containerd.transfer.v1.local",
];

/// Plugin ids of containerd 2.x (config version 3).
const CONTAINERD_V3_PLUGINS: &[&str] = &[
    "io.containerd.cri.v1.images",
    "io.containerd.cri.v1.runtime",
    "io.containerd.gc.v1.scheduler",
    "io.containerd.grpc.v1.cri",
    "io.containerd.internal.v1.opt",
    "io.containerd.internal.v1.restart",
    "io.containerd.internal.v1.tracing",
    "io.containerd.metadata.v1.bolt",
    "io.containerd.monitor.task.v1.cgroups",
    "io.containerd.nri.v1.nri",
    "io.containerd.runtime.v2.task",
    "io.containerd.service.v1.diff-service",
    "io.containerd.service.v1.tasks-service",
    "io.containerd.shim.v1.manager",
    "io.containerd.snapshotter.v1.blockfile",
    "io.containerd.snapshotter.v1.btrfs",
    "io.containerd.snapshotter.v1.devmapper",
    "io.containerd.snapshotter.v1.erofs",
    "io.containerd.snapshotter.v1.native",
    "io.containerd.snapshotter.v1.overlayfs",
    "io.containerd.snapshotter.v1.zfs",
    "io.containerd.tracing.processor.v1.otlp",
    "io.containerd.transfer.v1.local",
];

/// A CRI plugin's settings: keys, and for sub-tables the keys inside them
/// (`None`: free-form names, such as runtime handlers or registry hosts).
struct CriPlugin {
    id: &'static str,
    keys: &'static [&'static str],
    tables: &'static [(&'static str, Option<&'static [&'static str]>)],
}

// From `containerd config default` of 1.6 and 1.7 and the "Full
// configuration" examples of containerd's docs/cri/config.md.
#[rustfmt::skip]
const V2_CRI: CriPlugin = CriPlugin {
    id: "io.containerd.grpc.v1.cri",
    keys: &[
        "cdi_spec_dirs", "cni", "containerd", "device_ownership_from_security_context",
        "disable_apparmor", "disable_cgroup", "disable_hugetlb_controller", "disable_proc_mount",
        "disable_tcp_service", "drain_exec_sync_io_timeout", "enable_cdi", "enable_selinux",
        "enable_tls_streaming", "enable_unprivileged_icmp", "enable_unprivileged_ports",
        "ignore_image_defined_volumes", "image_decryption", "image_pull_progress_timeout",
        "max_concurrent_downloads", "max_container_log_line_size", "netns_mounts_under_state_dir",
        "registry", "restrict_oom_score_adj", "sandbox_image", "selinux_category_range",
        "stats_collect_period", "stream_idle_timeout", "stream_server_address",
        "stream_server_port", "systemd_cgroup", "tolerate_missing_hugetlb_controller",
        "unset_seccomp_profile", "x509_key_pair_streaming",
    ],
    tables: &[
        ("cni", Some(&["bin_dir", "conf_dir", "conf_template", "ip_pref", "max_conf_num", "setup_serially", "use_internal_loopback"])),
        ("containerd", Some(&[
            "default_runtime", "default_runtime_name", "disable_snapshot_annotations",
            "discard_unpacked_layers", "ignore_blockio_not_enabled_errors",
            "ignore_rdt_not_enabled_errors", "no_pivot", "runtimes", "snapshotter",
            "untrusted_workload_runtime",
        ])),
        ("image_decryption", Some(&["key_model"])),
        ("registry", Some(&["auths", "config_path", "configs", "headers", "mirrors"])),
        ("x509_key_pair_streaming", Some(&["tls_cert_file", "tls_key_file"])),
    ],
};

#[rustfmt::skip]
const V3_IMAGES: CriPlugin = CriPlugin {
    id: "io.containerd.cri.v1.images",
    keys: &[
        "disable_snapshot_annotations", "discard_unpacked_layers", "image_decryption",
        "image_pull_progress_timeout", "image_pull_with_sync_fs", "max_concurrent_downloads",
        "pinned_images", "registry", "snapshotter", "stats_collect_period", "use_local_image_pull",
    ],
    tables: &[
        ("pinned_images", Some(&["sandbox"])),
        ("registry", Some(&["auths", "config_path", "configs", "headers", "mirrors"])),
        ("image_decryption", Some(&["key_model"])),
    ],
};

#[rustfmt::skip]
const V3_RUNTIME: CriPlugin = CriPlugin {
    id: "io.containerd.cri.v1.runtime",
    keys: &[
        "cdi_spec_dirs", "cni", "containerd", "device_ownership_from_security_context",
        "disable_apparmor", "disable_cgroup", "disable_hugetlb_controller", "disable_proc_mount",
        "drain_exec_sync_io_timeout", "enable_cdi", "enable_criu", "enable_selinux",
        "enable_unprivileged_icmp", "enable_unprivileged_ports", "ignore_deprecation_warnings",
        "ignore_image_defined_volumes", "max_container_log_line_size",
        "netns_mounts_under_state_dir", "restrict_oom_score_adj", "selinux_category_range",
        "stats_collect_period", "stats_retention_period", "tolerate_missing_hugetlb_controller",
        "unset_seccomp_profile",
    ],
    tables: &[
        ("containerd", Some(&[
            "default_runtime_name", "ignore_blockio_not_enabled_errors",
            "ignore_rdt_not_enabled_errors", "runtimes",
        ])),
        ("cni", Some(&[
            "bin_dir", "bin_dirs", "conf_dir", "conf_template", "ip_pref", "max_conf_num",
            "setup_serially", "use_internal_loopback",
        ])),
    ],
};

#[rustfmt::skip]
const V3_GRPC: CriPlugin = CriPlugin {
    id: "io.containerd.grpc.v1.cri",
    keys: &[
        "disable_tcp_service", "enable_tls_streaming", "stream_idle_timeout",
        "stream_server_address", "stream_server_port", "x509_key_pair_streaming",
    ],
    tables: &[("x509_key_pair_streaming", Some(&["tls_cert_file", "tls_key_file"]))],
};

/// Settings typed fields render, as key paths from the top of config.toml,
/// per config version. A key that names one of them, lies inside one, or
/// names a table holding one (and so would replace it) is refused.
#[rustfmt::skip]
const PROTECTED_V2: &[(&[&str], &str)] = &[
    (&["plugins", "io.containerd.grpc.v1.cri", "enable_cdi"], "runtime.cdi.enabled"),
    (&["plugins", "io.containerd.grpc.v1.cri", "cdi_spec_dirs"], "runtime.cdi.specDirs"),
    (&["plugins", "io.containerd.grpc.v1.cri", "containerd", "default_runtime_name"], "runtime.containerd.defaultRuntime"),
    (&["plugins", "io.containerd.grpc.v1.cri", "containerd", "default_runtime"], "runtime.containerd.defaultRuntime"),
    (&["plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes"], "runtime.containerd.defaultRuntime / extraRuntimes"),
    (&["plugins", "io.containerd.grpc.v1.cri", "registry", "config_path"], "runtime.containerd.registries"),
    (&["plugins", "io.containerd.grpc.v1.cri", "registry", "mirrors"], "runtime.containerd.registries"),
    (&["plugins", "io.containerd.grpc.v1.cri", "registry", "configs"], "runtime.containerd.registries"),
];

#[rustfmt::skip]
const PROTECTED_V3: &[(&[&str], &str)] = &[
    (&["plugins", "io.containerd.cri.v1.runtime", "enable_cdi"], "runtime.cdi.enabled"),
    (&["plugins", "io.containerd.cri.v1.runtime", "cdi_spec_dirs"], "runtime.cdi.specDirs"),
    (&["plugins", "io.containerd.cri.v1.runtime", "containerd", "default_runtime_name"], "runtime.containerd.defaultRuntime"),
    (&["plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes"], "runtime.containerd.defaultRuntime / extraRuntimes"),
    (&["plugins", "io.containerd.cri.v1.images", "registry", "config_path"], "runtime.containerd.registries"),
    (&["plugins", "io.containerd.cri.v1.images", "registry", "mirrors"], "runtime.containerd.registries"),
    (&["plugins", "io.containerd.cri.v1.images", "registry", "configs"], "runtime.containerd.registries"),
];

/// `plugins."<id>".a.b` as TOML writes it.
fn spelled(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| toml_edit::Key::new(*p).display_repr().into_owned())
        .collect::<Vec<_>>()
        .join(".")
}

/// Every key path `key = value` writes: the key itself, and for a table
/// value the paths of its entries (a table value replaces the whole table).
fn written(key: &[String], value: &serde_json::Value, out: &mut Vec<Vec<String>>) {
    match value {
        serde_json::Value::Object(o) if !o.is_empty() => {
            for (k, v) in o {
                let mut path = key.to_vec();
                path.push(k.clone());
                written(&path, v, out);
            }
        }
        _ => out.push(key.to_vec()),
    }
}

/// Why a containerd key (with its value) is refused, or `None` when it may
/// be used with `containerd` (whose major version picks the config version).
pub fn containerd_key_problem(
    key: &TomlKeyPath,
    value: &serde_json::Value,
    containerd: &Version,
) -> Option<(String, Option<String>)> {
    let parts = key.parts();
    let top = parts[0].as_str();
    if ["version", "root", "state"].contains(&top) {
        return Some((
            format!("`{top}` is owned by a typed field; set runtime.containerd.{top} instead"),
            None,
        ));
    }
    if !CONTAINERD_TOP.contains(&top) {
        let hint = super::diagnostic::suggest(top, CONTAINERD_TOP.iter().copied())
            .map(|s| format!("did you mean `{s}`?"));
        return Some((format!("`{top}` is not a containerd config key"), hint));
    }
    if top != "plugins" {
        return None;
    }
    let v3 = containerd.major() >= 2;
    let config = if v3 { 3 } else { 2 };
    let protected = if v3 { PROTECTED_V3 } else { PROTECTED_V2 };
    for (path, owner) in protected {
        let inside = key.starts_with(path);
        let holds =
            !inside && path.len() > parts.len() && path.iter().zip(parts).all(|(a, b)| a == b);
        if inside || holds {
            let what = if inside {
                format!("`{}` is owned by a typed field", spelled(path))
            } else {
                format!(
                    "`{key}` is a table that holds `{}`, which a typed field owns; setting the table would replace it",
                    spelled(path)
                )
            };
            return Some((
                format!("{what}; set {owner} instead"),
                (!inside)
                    .then(|| "set the individual settings beside it instead, one key each".into()),
            ));
        }
    }
    let plugins = if v3 {
        CONTAINERD_V3_PLUGINS
    } else {
        CONTAINERD_V2_PLUGINS
    };
    let Some(plugin) = parts.get(1) else {
        return Some((
            "set keys inside a plugin, not the whole `plugins` table".into(),
            None,
        ));
    };
    if !plugins.contains(&plugin.as_str()) {
        let hint = if !v3 && plugin.starts_with("io.containerd.cri.v1.") {
            Some(format!(
                "config version 2 keeps every CRI setting under plugins.\"io.containerd.grpc.v1.cri\"; `{plugin}` arrived with containerd 2.0"
            ))
        } else {
            super::diagnostic::suggest(plugin, plugins.iter().copied())
                .map(|s| format!("did you mean `{s}`?"))
        };
        return Some((
            format!(
                "`{plugin}` is not a plugin of containerd {containerd} (config version {config})"
            ),
            hint,
        ));
    }
    let cri: &[&CriPlugin] = if v3 {
        &[&V3_IMAGES, &V3_RUNTIME, &V3_GRPC]
    } else {
        &[&V2_CRI]
    };
    let cri = cri.iter().find(|c| c.id == plugin)?;
    let mut paths = Vec::new();
    written(&parts[2..], value, &mut paths);
    paths
        .iter()
        .find_map(|rest| cri_setting_problem(cri, rest, containerd, config))
}

/// Checks one setting path below a CRI plugin against that plugin's keys.
fn cri_setting_problem(
    cri: &CriPlugin,
    rest: &[String],
    containerd: &Version,
    config: u32,
) -> Option<(String, Option<String>)> {
    let first = rest.first()?.as_str();
    let unknown = |name: &str, known: &[&str]| {
        if config == 3
            && cri.id == V3_GRPC.id
            && let Some(to) = moved_to_v3(rest)
        {
            return Some((
                format!(
                    "`{}` is a config version 2 (containerd 1.x) setting of io.containerd.grpc.v1.cri; containerd {containerd} reads config version 3, where it moved",
                    rest.join(".")
                ),
                Some(format!("write {to}")),
            ));
        }
        let hint = super::diagnostic::suggest(name, known.iter().copied())
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| {
                format!(
                    "known here in config version {config}: {} (containerd docs/cri/config.md)",
                    known.join(", ")
                )
            });
        Some((
            format!(
                "`{name}` is not a setting of {} in containerd {containerd} (config version {config})",
                cri.id
            ),
            Some(hint),
        ))
    };
    if !cri.keys.contains(&first) {
        return unknown(first, cri.keys);
    }
    let (Some(second), Some((_, Some(known)))) =
        (rest.get(1), cri.tables.iter().find(|(t, _)| *t == first))
    else {
        return None;
    };
    if !known.contains(&second.as_str()) {
        return unknown(second, known);
    }
    None
}

/// Where a version 2 CRI setting lives in version 3.
fn moved_to_v3(rest: &[String]) -> Option<String> {
    let r: Vec<&str> = rest.iter().map(String::as_str).collect();
    let under = |plugin: &'static str, tail: &[&str]| {
        let mut p = vec!["plugins", plugin];
        p.extend_from_slice(tail);
        spelled(&p)
    };
    Some(match r.as_slice() {
        ["sandbox_image"] => under(V3_IMAGES.id, &["pinned_images", "sandbox"]),
        ["containerd", k, ..] if V3_IMAGES.keys.contains(k) => under(V3_IMAGES.id, &r[1..]),
        ["containerd", ..] => under(V3_RUNTIME.id, &r),
        [k, ..] if V3_IMAGES.keys.contains(k) => under(V3_IMAGES.id, &r),
        [k, ..] if V3_RUNTIME.keys.contains(k) => under(V3_RUNTIME.id, &r),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn kubelet_keys() {
        assert!(kubelet_key_problem("serializeImagePulls", &v("1.31.4")).is_none());
        let (m, _) = kubelet_key_problem("maxPods", &v("1.31.4")).unwrap();
        assert!(m.contains("kubernetes.kubelet.maxPods"));
        let (m, hint) = kubelet_key_problem("serializeImagePull", &v("1.31.4")).unwrap();
        assert!(m.contains("not a KubeletConfiguration field"));
        assert_eq!(hint.as_deref(), Some("did you mean `serializeImagePulls`?"));
        let (m, _) = kubelet_key_problem("mergeDefaultEvictionSettings", &v("1.31.4")).unwrap();
        assert!(m.contains("needs Kubernetes 1.34"));
    }

    fn key(s: &str) -> TomlKeyPath {
        s.parse().unwrap()
    }

    fn problem(k: &str, value: serde_json::Value, version: &str) -> Option<String> {
        containerd_key_problem(&key(k), &value, &v(version))
            .map(|(m, h)| format!("{m} | {}", h.unwrap_or_default()))
    }

    #[test]
    fn containerd_keys() {
        let n = serde_json::json!(8);
        assert_eq!(
            problem(
                "plugins.\"io.containerd.grpc.v1.cri\".max_concurrent_downloads",
                n.clone(),
                "1.7.22"
            ),
            None
        );
        assert_eq!(
            problem(
                "plugins.'io.containerd.cri.v1.images'.max_concurrent_downloads",
                n.clone(),
                "2.0.4"
            ),
            None
        );
        let m = problem(
            "plugins.\"io.containerd.cri.v1.images\".x",
            n.clone(),
            "1.7.22",
        )
        .unwrap();
        assert!(
            m.contains("not a plugin of containerd 1.7.22 (config version 2)"),
            "{m}"
        );
        assert!(m.contains("arrived with containerd 2.0"), "{m}");
        let m = problem(
            "plugins.\"io.containerd.grpc.v1.cri\".enable_cdi",
            n.clone(),
            "1.7.22",
        )
        .unwrap();
        assert!(m.contains("runtime.cdi.enabled"), "{m}");
        assert!(problem("root", n.clone(), "1.7.22").is_some());
    }

    #[test]
    fn v2_settings_under_config_version_3_point_to_their_new_home() {
        let m = problem(
            "plugins.\"io.containerd.grpc.v1.cri\".max_concurrent_downloads",
            serde_json::json!(8),
            "2.0.5",
        )
        .unwrap();
        assert!(
            m.contains("config version 2 (containerd 1.x) setting"),
            "{m}"
        );
        assert!(
            m.contains("write plugins.\"io.containerd.cri.v1.images\".max_concurrent_downloads"),
            "{m}"
        );
        let m = problem(
            "plugins.\"io.containerd.grpc.v1.cri\".sandbox_image",
            serde_json::json!("pause:3.10"),
            "2.1.4",
        )
        .unwrap();
        assert!(m.contains("pinned_images.sandbox"), "{m}");
        // Unknown keys inside a known sub-table, with a suggestion.
        let m = problem(
            "plugins.\"io.containerd.cri.v1.runtime\".cni.bin_dri",
            serde_json::json!("/x"),
            "2.1.4",
        )
        .unwrap();
        assert!(m.contains("did you mean `bin_dir`?"), "{m}");
        // Runtime options are free-form.
        assert_eq!(
            problem(
                "plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options",
                serde_json::json!({"X": 1}),
                "2.1.4"
            )
            .map(|m| m.contains("owned by a typed field")),
            Some(true)
        );
    }

    #[test]
    fn a_parent_table_cannot_override_what_typed_fields_own() {
        let value = serde_json::json!({"default_runtime_name": "nvidia", "runtimes": {"nvidia": {"options": {"BinaryName": "/tmp/evil"}}}});
        let m = problem(
            "plugins.\"io.containerd.cri.v1.runtime\".containerd",
            value,
            "2.1.4",
        )
        .unwrap();
        assert!(m.contains("is a table that holds"), "{m}");
        let m = problem(
            "plugins.\"io.containerd.cri.v1.images\".registry",
            serde_json::json!({"config_path": "/tmp/evil-certs"}),
            "2.1.4",
        )
        .unwrap();
        assert!(
            m.contains("set runtime.containerd.registries instead"),
            "{m}"
        );
        let m = problem(
            "plugins.\"io.containerd.cri.v1.runtime\"",
            serde_json::json!({"enable_cdi": false}),
            "2.1.4",
        )
        .unwrap();
        assert!(m.contains("is a table that holds"), "{m}");
        let m = problem(
            "plugins.\"io.containerd.grpc.v1.cri\".containerd",
            serde_json::json!({"snapshotter": "zfs"}),
            "1.7.22",
        )
        .unwrap();
        assert!(m.contains("is a table that holds"), "{m}");
        // A sibling table beside the owned settings is fine.
        assert_eq!(
            problem(
                "plugins.\"io.containerd.cri.v1.images\".pinned_images",
                serde_json::json!({"sandbox": "registry.k8s.io/pause:3.10"}),
                "2.1.4"
            ),
            None
        );
    }
}
