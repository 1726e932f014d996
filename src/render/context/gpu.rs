//! `gpu`: the accelerators, for the modprobe and modules-load files, the
//! operator values and the node-problem-detector plugin.

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::model::*;

#[derive(Debug, Clone, Serialize)]
pub struct Gpu<'a> {
    pub vendor: &'static str,
    pub nvidia: bool,
    pub amd: bool,
    pub model: &'a str,
    pub count: u32,
    pub driver: String,
    pub preinstalled: bool,
    pub open_module: bool,
    pub cuda: Option<String>,
    pub rocm: Option<String>,
    pub toolkit: Option<String>,
    pub persistence: bool,
    pub nvswitch: bool,
    pub fabric_manager: Option<String>,
    pub operator: Option<Operator>,
    pub sharing: &'a Sharing,
    /// The NVIDIA device plugin's configuration for time-slicing or MPS
    /// (its `version: v1` file, `sharing.timeSlicing` or `sharing.mps`),
    /// carried in the ConfigMap the operator's values create.
    pub device_plugin_sharing: Option<serde_json::Value>,
    /// Beside it, under [`WHOLE_GPUS_CONFIG`] (the same key and text in
    /// every sharing class's values, so `helm -f A -f B` merges them), the
    /// configuration that shares nothing: a node switched to it for the
    /// acceptance workloads that need whole GPUs gets them back.
    pub device_plugin_whole: Option<WholeGpusConfig>,
}

/// The device plugin's configuration without sharing, and its ConfigMap key.
#[derive(Debug, Clone, Serialize)]
pub struct WholeGpusConfig {
    pub key: &'static str,
    pub config: serde_json::Value,
}

/// The GPU operator and which components it manages.
#[derive(Debug, Clone, Serialize)]
pub struct Operator {
    pub name: OperatorName,
    pub version: String,
    pub driver: bool,
    pub toolkit: bool,
    pub device_plugin: bool,
    pub dra_driver: bool,
    pub dcgm_exporter: bool,
    pub metrics_exporter: bool,
    pub mig_manager: bool,
    pub nfd: bool,
    pub gfd: bool,
    /// Image tags the operator deploys, pinned to what the blueprint pins
    /// (NVIDIA tags its driver images `580.105.08`, its device plugin
    /// images `v0.18.1`): the driver (exact versions only; validation
    /// refuses a constraint for an operator-installed driver) and the device
    /// plugin (whose image GFD shares). An operator-deployed toolkit has no
    /// version in the blueprint (`containerToolkit` pins the image's own):
    /// the chart's default applies.
    pub driver_tag: Option<String>,
    pub device_plugin_tag: Option<String>,
    /// How the operator rolls a driver change over the nodes it owns the driver
    /// of (`driver.upgradePolicy`), within the rollout's budgets.
    pub upgrade: Option<UpgradePolicy>,
}

/// The GPU operator's driver upgrade policy (NVIDIA's `driver.upgradePolicy`, AMD's
/// DeviceConfig `spec.driver.upgradePolicy`), bounded like an image rollout:
/// the operator knows no failure domains, so at most one domain's wave
/// budget of nodes at a time (a share of a domain counts as one node), each
/// drained first within the rollout's drain timeout.
#[derive(Debug, Clone, Serialize)]
pub struct UpgradePolicy {
    pub max_parallel: u32,
    pub drain_timeout_s: u64,
    /// Where the numbers come from, for the values file's comment.
    pub from: String,
}

pub(super) fn upgrade_policy(s: &Spec) -> UpgradePolicy {
    let rollout = s.rollout.clone().unwrap_or_default();
    let per_domain = match &rollout.wave_budget {
        rollout::Budget::Nodes(n) => *n,
        rollout::Budget::Percent(_) => 1,
    };
    let max_parallel = rollout
        .max_wave_size
        .map_or(per_domain, |w| w.min(per_domain))
        .max(1);
    UpgradePolicy {
        max_parallel,
        drain_timeout_s: u64::try_from(rollout.engine.drain_timeout.as_secs()).unwrap_or(u64::MAX),
        from: format!(
            "rollout.waveBudget {}{}, rollout.engine.drainTimeout {}",
            rollout.wave_budget,
            rollout
                .max_wave_size
                .map(|w| format!(", maxWaveSize {w}"))
                .unwrap_or_default(),
            rollout.engine.drain_timeout
        ),
    }
}

impl Gpu<'_> {
    /// An NVIDIA GPU operator is declared.
    pub fn nvidia_operator(&self) -> bool {
        self.nvidia && self.operator.is_some()
    }

    /// An AMD GPU operator is declared.
    pub fn amd_operator(&self) -> bool {
        self.amd && self.operator.is_some()
    }
}

pub(super) fn of(s: &Spec) -> Option<Gpu<'_>> {
    let a = s.accelerators.as_ref()?;
    let nvidia = a.vendor == Vendor::Nvidia;
    let manages = |c| a.operator.as_ref().is_some_and(|o| o.manages.contains(&c));
    Some(Gpu {
        vendor: a.vendor.as_str(),
        nvidia,
        amd: !nvidia,
        model: &a.model,
        count: a.count,
        driver: a.driver.version.to_string(),
        preinstalled: a.driver.authority == DriverAuthority::Preinstalled,
        open_module: a.driver.kernel_module == Some(KernelModule::Open),
        cuda: a.cuda.as_ref().map(|v| v.to_string()),
        rocm: a.rocm.as_ref().map(|v| v.to_string()),
        toolkit: a.container_toolkit.as_ref().map(|v| v.to_string()),
        persistence: a.persistence,
        nvswitch: a.interconnect.nvswitch,
        fabric_manager: a
            .interconnect
            .fabric_manager
            .as_ref()
            .map(|f| f.version.to_string()),
        operator: a.operator.as_ref().map(|o| Operator {
            name: o.name,
            version: o.version.to_string(),
            driver: manages(OperatorComponent::Driver),
            toolkit: manages(OperatorComponent::Toolkit),
            device_plugin: manages(OperatorComponent::DevicePlugin),
            dra_driver: manages(OperatorComponent::DraDriver),
            dcgm_exporter: manages(OperatorComponent::DcgmExporter),
            metrics_exporter: manages(OperatorComponent::MetricsExporter),
            mig_manager: manages(OperatorComponent::MigManager),
            nfd: manages(OperatorComponent::NodeFeatureDiscovery),
            gfd: manages(OperatorComponent::GpuFeatureDiscovery),
            driver_tag: a.driver.version.exact().map(|v| v.to_string()),
            device_plugin_tag: s
                .kubernetes
                .device_injection
                .version
                .as_ref()
                .map(|v| format!("v{v}")),
            upgrade: manages(OperatorComponent::Driver).then(|| upgrade_policy(s)),
        }),
        sharing: &a.sharing,
        device_plugin_sharing: device_plugin_sharing(&a.sharing),
        device_plugin_whole: device_plugin_sharing(&a.sharing).map(|_| WholeGpusConfig {
            key: WHOLE_GPUS_CONFIG,
            config: device_plugin_whole(),
        }),
    })
}

/// The device plugin's sharing configuration (k8s-device-plugin's config
/// file, `version: v1`): `replicas` shares of each GPU under the
/// unrenamed `nvidia.com/gpu` resource, so a pod's request and the node's
/// capacity keep their meaning (capacity = GPUs × replicas). A request for
/// more than one replica is refused (`failRequestsGreaterThanOne`): the
/// plugin hands replicas out "indiscriminately", so two could be the same
/// GPU, and its README (v0.18.1, "With CUDA Time-Slicing") recommends the
/// flag; under MPS the plugin sets it whatever is written
/// (`api/config/v1/config.go`, `internal/rm/rm.go` `ValidateRequest`).
fn device_plugin_sharing(sharing: &Sharing) -> Option<serde_json::Value> {
    let (key, replicas) = match sharing {
        Sharing::TimeSlicing { replicas } => ("timeSlicing", replicas.get()),
        Sharing::Mps { replicas } => ("mps", replicas.get()),
        Sharing::None {} | Sharing::Mig { .. } => return None,
    };
    Some(serde_json::json!({
        "version": "v1",
        "sharing": {
            key: {
                "failRequestsGreaterThanOne": true,
                "resources": [{"name": "nvidia.com/gpu", "replicas": replicas}],
            },
        },
    }))
}

/// The device plugin's configuration that shares nothing: `version: v1` and
/// no `sharing` (k8s-device-plugin v0.18.1 `api/config/v1/config.go`: an
/// absent `sharing` leaves both `timeSlicing` and `mps` empty, so every GPU
/// is one `nvidia.com/gpu` and `failRequestsGreaterThanOne` does not apply;
/// the command-line flags the operator sets still fill `flags`). The
/// config-manager (`cmd/config-manager`) links the key the node label names
/// and signals the plugin, which re-registers with the kubelet.
fn device_plugin_whole() -> serde_json::Value {
    serde_json::json!({ "version": "v1" })
}
