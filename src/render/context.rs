//! The values templates see, computed once from a checked blueprint.
//!
//! Templates stay declarative: every decision (which containerd config
//! version, which runtimes, the merged kubelet fields, unit names, trust
//! store paths) is made here in Rust, where it is typed and tested, and
//! templates only lay values out and escape them.

use serde_json::{Map, Value, json};

use crate::blueprint::cmdline;
use crate::blueprint::model::*;
use crate::blueprint::{Blueprint, resolve};

/// Where nodeimg lives on the node and what it writes there.
pub const NODEIMG_BIN: &str = "/usr/local/bin/nodeimg";
pub const LOCK_PATH: &str = "/etc/nodeimg/blueprint.lock.json";
pub const RECORD_PATH: &str = "/var/lib/nodeimg/acceptance.yaml";
pub const EVIDENCE_DIR: &str = "/var/lib/nodeimg/evidence";
pub const BREAK_GLASS: &str = "/etc/nodeimg/break-glass";
pub const CERTS_DIR: &str = "/etc/containerd/certs.d";

pub fn build(bp: &Blueprint) -> Value {
    let s = bp.spec();
    let spec = serde_json::to_value(s).expect("a blueprint serialises");
    json!({
        "bp": spec,
        "name": bp.name(),
        "id": bp.id(),
        "version": s.metadata.version,
        "distro": distro(s),
        "cmdline": cmdline::full(s).iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "gpu": gpu(s),
        "rdma": s.network.nics.iter().any(|n| n.rdma),
        "containerd": containerd(s),
        "kubelet": kubelet(bp),
        "cdi": cdi(s),
        "system": system(s),
        "security": security(s),
        "nfd": nfd(s),
        "verify": json!({
            "bin": NODEIMG_BIN,
            "lock": LOCK_PATH,
            "record": RECORD_PATH,
            "evidence": EVIDENCE_DIR,
            "break_glass": BREAK_GLASS,
        }),
    })
}

fn distro(s: &RawBlueprint) -> Value {
    let rhel = s.os.distro.is_rhel_family();
    json!({
        "name": s.os.distro.as_str(),
        "family": if rhel { "rhel" } else { "debian" },
        "version": s.os.version.to_string(),
        "chrony_conf": if rhel { "etc/chrony.conf" } else { "etc/chrony/chrony.conf" },
        "trust_dir": if rhel { "etc/pki/ca-trust/source/anchors" } else { "usr/local/share/ca-certificates" },
        "trust_ext": if rhel { "pem" } else { "crt" },
    })
}

fn gpu(s: &RawBlueprint) -> Value {
    let Some(a) = &s.accelerators else {
        return Value::Null;
    };
    let nvidia = a.vendor == Vendor::Nvidia;
    let preinstalled = a.driver.authority == DriverAuthority::Preinstalled;
    let manages = |c| a.operator.as_ref().is_some_and(|o| o.manages.contains(&c));
    json!({
        "vendor": a.vendor.as_str(),
        "nvidia": nvidia,
        "amd": !nvidia,
        "model": a.model,
        "count": a.count,
        "driver": a.driver.version.to_string(),
        "preinstalled": preinstalled,
        "open_module": a.driver.kernel_module == Some(KernelModule::Open),
        "cuda": a.cuda.as_ref().map(|v| v.to_string()),
        "rocm": a.rocm.as_ref().map(|v| v.to_string()),
        "toolkit": a.container_toolkit.as_ref().map(|v| v.to_string()),
        "persistence": a.persistence,
        "nvswitch": a.interconnect.nvswitch,
        "fabric_manager": a.interconnect.fabric_manager.as_ref().map(|f| f.version.to_string()),
        "operator": a.operator.as_ref().map(|o| json!({
            "name": serde_json::to_value(o.name).expect("enum"),
            "version": o.version.to_string(),
            "driver": manages(OperatorComponent::Driver),
            "toolkit": manages(OperatorComponent::Toolkit),
            "device_plugin": manages(OperatorComponent::DevicePlugin),
            "dra_driver": manages(OperatorComponent::DraDriver),
            "dcgm_exporter": manages(OperatorComponent::DcgmExporter),
            "metrics_exporter": manages(OperatorComponent::MetricsExporter),
            "mig_manager": manages(OperatorComponent::MigManager),
            "nfd": manages(OperatorComponent::NodeFeatureDiscovery),
            "gfd": manages(OperatorComponent::GpuFeatureDiscovery),
        })),
        "sharing": serde_json::to_value(&a.sharing).expect("sharing serialises"),
    })
}

fn containerd(s: &RawBlueprint) -> Value {
    let c = &s.runtime.containerd;
    let v3 = c.version.major() >= 2;
    let cdi_supported = c.version >= "1.7".parse().expect("literal");
    let systemd = s.kubernetes.kubelet.cgroup_driver == CgroupDriver::Systemd;
    let mut runtimes = vec![
        json!({"name": "runc", "type": "io.containerd.runc.v2", "binary": null, "systemd_cgroup": systemd}),
    ];
    if s.accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        runtimes.push(json!({"name": "nvidia", "type": "io.containerd.runc.v2", "binary": "/usr/bin/nvidia-container-runtime", "systemd_cgroup": systemd}));
    }
    for r in &c.extra_runtimes {
        runtimes.push(match r {
            ExtraRuntime::Kata => json!({"name": "kata", "type": "io.containerd.kata.v2", "binary": null, "systemd_cgroup": null}),
            ExtraRuntime::Gvisor => json!({"name": "runsc", "type": "io.containerd.runsc.v1", "binary": null, "systemd_cgroup": null}),
        });
    }
    let default = match c.default_runtime {
        DefaultRuntime::Runc => "runc",
        DefaultRuntime::Nvidia => "nvidia",
    };
    let registries: Vec<Value> = c
        .registries
        .iter()
        .map(|r| {
            // docker.io is served from registry-1.docker.io.
            let server = if r.host == "docker.io" {
                "https://registry-1.docker.io".to_string()
            } else {
                format!("https://{}", r.host)
            };
            json!({
                "host": r.host,
                "server": server,
                "mirrors": r.mirrors,
                "ca": r.ca_file.as_ref().map(|_| format!("{CERTS_DIR}/{}/ca.crt", r.host)),
            })
        })
        .collect();
    json!({
        "version": c.version.to_string(),
        "config_version": if v3 { 3 } else { 2 },
        "root": c.root.as_str(),
        "state": c.state.as_str(),
        "default_runtime": default,
        "runtimes": runtimes,
        "cdi_enabled": s.runtime.cdi.enabled && cdi_supported,
        "cdi_dirs": s.runtime.cdi.spec_dirs.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
        "certs_dir": CERTS_DIR,
        "registries": registries,
    })
}

/// KubeletConfiguration fields in output order: fixed defaults, then typed
/// fields, then `extraConfig` (which may override the defaults, never the
/// typed fields — validation refuses those keys).
fn kubelet(bp: &Blueprint) -> Value {
    let s = bp.spec();
    let k = &s.kubernetes.kubelet;
    let r = resolve::kubelet(s);
    let mut f: Map<String, Value> = Map::new();
    let mut put = |key: &str, v: Value| {
        f.insert(key.to_string(), v);
    };
    // Secure defaults a production node wants; extraConfig may override them.
    put(
        "authentication",
        json!({"anonymous": {"enabled": false}, "webhook": {"enabled": true}, "x509": {"clientCAFile": "/etc/kubernetes/pki/ca.crt"}}),
    );
    put("authorization", json!({"mode": "Webhook"}));
    put("readOnlyPort", json!(0));
    put("rotateCertificates", json!(true));
    put("serverTLSBootstrap", json!(true));
    put("protectKernelDefaults", json!(true));
    put(
        "containerRuntimeEndpoint",
        json!(format!(
            "unix://{}/containerd.sock",
            s.runtime.containerd.state
        )),
    );
    put(
        "cgroupDriver",
        serde_json::to_value(k.cgroup_driver).expect("enum"),
    );
    put("maxPods", json!(r.max_pods));
    let reserved = |res: &crate::blueprint::reservation::Resolved| {
        let mut m = Map::new();
        if let Some(c) = &res.cpu {
            m.insert("cpu".into(), json!(c.value.to_string()));
        }
        if let Some(c) = &res.memory {
            m.insert("memory".into(), json!(c.value.to_string()));
        }
        if let Some(c) = &res.ephemeral_storage {
            m.insert("ephemeral-storage".into(), json!(c.value.to_string()));
        }
        if let Some(p) = res.pid {
            m.insert("pid".into(), json!(p.to_string()));
        }
        Value::Object(m)
    };
    let kr = reserved(&r.kube_reserved);
    let sr = reserved(&r.system_reserved);
    if !kr.as_object().is_some_and(Map::is_empty) {
        put("kubeReserved", kr);
    }
    if !sr.as_object().is_some_and(Map::is_empty) {
        put("systemReserved", sr);
    }
    let eviction: Map<String, Value> = r
        .eviction_hard
        .iter()
        .map(|(sig, t, _)| (sig.as_str().to_string(), json!(t.to_string())))
        .collect();
    put("evictionHard", Value::Object(eviction));
    put(
        "cpuManagerPolicy",
        serde_json::to_value(k.cpu_manager_policy).expect("enum"),
    );
    put(
        "topologyManagerPolicy",
        serde_json::to_value(k.topology_manager_policy).expect("enum"),
    );
    put(
        "topologyManagerScope",
        serde_json::to_value(k.topology_manager_scope).expect("enum"),
    );
    put(
        "memoryManagerPolicy",
        serde_json::to_value(k.memory_manager_policy).expect("enum"),
    );
    if k.cpu_manager_policy == CpuManagerPolicy::Static
        || k.memory_manager_policy == MemoryManagerPolicy::Static
    {
        put("enforceNodeAllocatable", json!(["pods"]));
    }
    if s.os.cgroup == CgroupMode::V1 {
        put("failCgroupV1", json!(false));
    }
    if !s.kubernetes.taints.is_empty() {
        let taints: Vec<Value> = s
            .kubernetes
            .taints
            .iter()
            .map(|t| {
                let mut m = Map::new();
                m.insert("key".into(), json!(t.key.as_str()));
                if let Some(v) = &t.value {
                    m.insert("value".into(), json!(v.as_str()));
                }
                m.insert("effect".into(), json!(format!("{:?}", t.effect)));
                Value::Object(m)
            })
            .collect();
        put("registerWithTaints", Value::Array(taints));
    }
    if s.kubernetes.device_injection.mode == InjectionMode::Dra && s.kubernetes.version.minor() < 34
    {
        put("featureGates", json!({"DynamicResourceAllocation": true}));
    }
    for (key, v) in &k.extra_config {
        if key == "featureGates"
            && let (Some(Value::Object(have)), Value::Object(add)) =
                (f.get("featureGates").cloned(), v)
        {
            let mut merged = have;
            merged.extend(add.clone());
            f.insert(key.clone(), Value::Object(merged));
            continue;
        }
        f.insert(key.clone(), v.clone());
    }
    json!({ "fields": Value::Object(f), "version": s.kubernetes.version.to_string() })
}

fn cdi(s: &RawBlueprint) -> Value {
    let c = &s.runtime.cdi;
    let generator = match c.generator {
        CdiGenerator::NvidiaCtk => Some(("nvidia", "/usr/bin/nvidia-ctk")),
        CdiGenerator::AmdCtk => Some(("amd", "/usr/bin/amd-ctk")),
        CdiGenerator::Operator | CdiGenerator::None | CdiGenerator::Static => None,
    };
    let is_static = c.enabled && c.generator == CdiGenerator::Static;
    let static_dir = c
        .spec_dirs
        .iter()
        .find(|d| d.as_str() == "/etc/cdi")
        .or(c.spec_dirs.first());
    let count = s.accelerators.as_ref().map_or(0, |a| a.count);
    let static_devices: Vec<Value> = (0..count)
        .map(|i| json!({"name": i.to_string(), "render": format!("/dev/dri/renderD{}", 128 + i)}))
        .collect();
    let dir = c
        .spec_dirs
        .iter()
        .find(|d| d.as_str() == "/var/run/cdi")
        .or(c.spec_dirs.first());
    json!({
        "enabled": c.enabled,
        "generate": c.enabled && generator.is_some(),
        "vendor": generator.map(|g| g.0),
        "ctk": generator.map(|g| g.1),
        "output": dir.map(|d| format!("{}/{}.yaml", d.as_str(), generator.map_or("gpu", |g| g.0))),
        "on_boot": c.refresh_on.contains(&CdiRefresh::Boot),
        "on_driver_change": c.refresh_on.contains(&CdiRefresh::DriverChange),
        "keep_previous": c.rollback == CdiRollback::KeepPrevious,
        "static": is_static,
        "static_file": static_dir.map(|d| format!("{}/amd.com-gpu.yaml", d.in_layer())),
        "static_devices": static_devices,
        "module": match s.accelerators.as_ref().map(|a| a.vendor) {
            Some(Vendor::Nvidia) => "nvidia",
            Some(Vendor::Amd) => "amdgpu",
            None => "",
        },
    })
}

fn bytes(q: &crate::blueprint::value::Quantity) -> String {
    q.units_ceil().to_string()
}

fn system(s: &RawBlueprint) -> Value {
    let sys = &s.system;
    let partitions: Vec<Value> = sys
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({
                "index": format!("{:02}", 50 + i),
                "label": p.label.as_str(),
                "mount_point": p.mount_point.as_str(),
                "filesystem": serde_json::to_value(p.filesystem).expect("enum"),
                "size_bytes": p.size.as_ref().map(bytes),
            })
        })
        .collect();
    let rotate: Vec<Value> = sys
        .logs
        .rotate
        .iter()
        .map(|r| {
            json!({
                "name": r.name.as_str(),
                "path": r.path,
                "frequency": serde_json::to_value(r.frequency).expect("enum"),
                "keep": r.keep,
                "max_size_bytes": r.max_size.as_ref().map(bytes),
            })
        })
        .collect();
    let make_step = sys
        .time_sync
        .as_ref()
        .and_then(|t| t.make_step.as_ref())
        .map(|d| {
            let secs = d.nanos() as f64 / 1e9;
            format!("{secs}")
        });
    json!({
        "time_sync": sys.time_sync.as_ref().map(|t| json!({"servers": t.servers, "pools": t.pools, "make_step": make_step})),
        "dns": sys.dns.as_ref().map(|d| json!({"servers": d.servers.iter().map(|a| a.to_string()).collect::<Vec<_>>(), "domains": d.search_domains})),
        "certificates": sys.certificates.iter().map(|c| json!({"name": c.name.as_str()})).collect::<Vec<_>>(),
        "partitions": partitions,
        "cache": sys.cache.as_ref().map(|c| json!({"path": c.path.as_str(), "high": c.high_watermark.value(), "low": c.low_watermark.value()})),
        "journal_max_use": sys.logs.journal_max_use.as_ref().map(bytes),
        "journal_retention_s": sys.logs.journal_max_retention.as_ref().map(|d| d.as_secs().to_string()),
        "rotate": rotate,
        "shm_bytes": sys.shm_size.as_ref().map(bytes),
    })
}

fn security(s: &RawBlueprint) -> Value {
    let sec = &s.security;
    let root_login = match sec.ssh.permit_root_login {
        RootLogin::No => "no",
        RootLogin::ProhibitPassword => "prohibit-password",
        RootLogin::Yes => "yes",
    };
    json!({
        "ssh": {
            "enabled": sec.ssh.enabled,
            "port": sec.ssh.port,
            "permit_root_login": root_login,
            "password_authentication": if sec.ssh.password_authentication { "yes" } else { "no" },
            "allow_users": sec.ssh.allow_users,
            "allow_groups": sec.ssh.allow_groups,
            "max_auth_tries": sec.ssh.max_auth_tries,
        },
        "audit": sec.audit.iter().map(|w| json!({"path": w.path.as_str(), "perms": w.permissions, "key": w.key})).collect::<Vec<_>>(),
        "sysctls": sec.sysctls.iter().map(|(k, v)| json!({"key": k, "value": v.to_string()})).collect::<Vec<_>>(),
    })
}

fn nfd(s: &RawBlueprint) -> Value {
    let n = &s.kubernetes.nfd;
    json!({
        "sources": n.sources.iter().map(|x| serde_json::to_value(x).expect("enum")).collect::<Vec<_>>(),
        "labels": n.platform_labels.iter().map(|l| {
            // NFD groups expressions by feature: one matchFeatures entry each.
            let mut by_feature: serde_json::Map<String, Value> = serde_json::Map::new();
            for m in &l.when {
                let mut e = serde_json::Map::new();
                e.insert("op".into(), serde_json::to_value(m.op).expect("enum"));
                if !m.values.is_empty() {
                    e.insert("value".into(), json!(m.values));
                }
                by_feature
                    .entry(m.feature.clone())
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
                    .expect("object")
                    .insert(m.attribute.clone(), Value::Object(e));
            }
            let match_features: Vec<Value> = by_feature
                .into_iter()
                .map(|(f, exprs)| json!({"feature": f, "matchExpressions": exprs}))
                .collect();
            json!({
                "name": format!("{}={}", l.to.as_str(), l.value.as_str()),
                "labels": {l.to.as_str(): l.value.as_str()},
                "matchFeatures": match_features,
            })
        }).collect::<Vec<_>>(),
    })
}
