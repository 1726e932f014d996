//! Field names the escape hatches (`kubelet.extraConfig`,
//! `containerd.extraConfig`) may use, per pinned version, and the names the
//! typed blueprint fields own.
//!
//! An escape hatch that accepts anything would let a typo pass review and
//! fail on the node; one that accepts typed fields would let two places in
//! a blueprint disagree. So each key is checked against these lists.

use super::value::Version;

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

/// Settings (after the plugin id) that typed fields render, for each CRI plugin.
const CONTAINERD_PROTECTED: &[(&str, &str)] = &[
    ("enable_cdi", "runtime.cdi.enabled"),
    ("cdi_spec_dirs", "runtime.cdi.specDirs"),
    (
        "containerd.default_runtime_name",
        "runtime.containerd.defaultRuntime",
    ),
    (
        "containerd.runtimes",
        "runtime.containerd.defaultRuntime / extraRuntimes",
    ),
    ("default_runtime_name", "runtime.containerd.defaultRuntime"),
    (
        "runtimes",
        "runtime.containerd.defaultRuntime / extraRuntimes",
    ),
    ("registry.config_path", "runtime.containerd.registries"),
    ("registry.mirrors", "runtime.containerd.registries"),
    ("registry.configs", "runtime.containerd.registries"),
    ("config_path", "runtime.containerd.registries"),
];

/// Splits `plugins."io.containerd.grpc.v1.cri".enable_cdi` into its keys.
pub fn split_toml_key(key: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut just_closed = false;
    for c in key.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                just_closed = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') if cur.is_empty() => quote = Some(c),
            (None, '.') => {
                if cur.is_empty() && !just_closed {
                    return Err(format!("`{key}` has an empty key part"));
                }
                parts.push(std::mem::take(&mut cur));
                just_closed = false;
            }
            (None, c) if c.is_ascii_alphanumeric() || c == '_' || c == '-' => cur.push(c),
            (None, c) => return Err(format!("`{key}` has `{c}` outside quotes")),
        }
    }
    if quote.is_some() {
        return Err(format!("`{key}` has an unclosed quote"));
    }
    if cur.is_empty() && !just_closed {
        return Err(format!("`{key}` has an empty key part"));
    }
    parts.push(cur);
    Ok(parts)
}

/// Why a containerd key is refused, or `None` when it may be used.
pub fn containerd_key_problem(key: &str, containerd: &Version) -> Option<(String, Option<String>)> {
    let parts = match split_toml_key(key) {
        Ok(p) => p,
        Err(e) => {
            return Some((
                e,
                Some("quote plugin ids: plugins.\"io.containerd.grpc.v1.cri\".key".into()),
            ));
        }
    };
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
        let hint = super::diagnostic::suggest(plugin, plugins.iter().copied())
            .map(|s| format!("did you mean `{s}`?"));
        return Some((
            format!(
                "`{plugin}` is not a plugin of containerd {} (config version {})",
                containerd,
                if v3 { 3 } else { 2 }
            ),
            hint,
        ));
    }
    let rest = parts[2..].join(".");
    if plugin.contains(".cri") {
        for (prefix, owner) in CONTAINERD_PROTECTED {
            if rest == *prefix || rest.starts_with(&format!("{prefix}.")) {
                return Some((
                    format!("`{rest}` is owned by a typed field; set {owner} instead"),
                    None,
                ));
            }
        }
    }
    None
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

    #[test]
    fn containerd_keys() {
        let v17 = v("1.7.22");
        let v20 = v("2.0.4");
        assert!(
            containerd_key_problem(
                "plugins.\"io.containerd.grpc.v1.cri\".max_concurrent_downloads",
                &v17
            )
            .is_none()
        );
        assert!(
            containerd_key_problem(
                "plugins.'io.containerd.cri.v1.images'.max_concurrent_downloads",
                &v20
            )
            .is_none()
        );
        let (m, _) =
            containerd_key_problem("plugins.\"io.containerd.cri.v1.images\".x", &v17).unwrap();
        assert!(m.contains("not a plugin of containerd 1.7.22 (config version 2)"));
        let (m, _) =
            containerd_key_problem("plugins.\"io.containerd.grpc.v1.cri\".enable_cdi", &v17)
                .unwrap();
        assert!(m.contains("runtime.cdi.enabled"));
        assert!(containerd_key_problem("root", &v17).is_some());
        assert_eq!(
            split_toml_key("a.\"b.c\".d").unwrap(),
            vec!["a", "b.c", "d"]
        );
        assert!(split_toml_key("a..b").is_err());
    }
}
