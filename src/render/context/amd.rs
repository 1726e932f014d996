//! `amd`: the AMD GPU Operator's DeviceConfig (driver, device plugin, node
//! labeller, metrics exporter) and chart values.
//!
//! Where the DeviceConfig goes depends on the pinned chart: the chart
//! renders `deviceConfig.spec` into a default DeviceConfig only from
//! v1.3.0 (`helm-charts-k8s/templates/default-deviceconfig.yaml`), on
//! `helm install` and, with `crds.defaultCR.upgrade` (rendered true: the
//! values are the DeviceConfig's source), on `helm upgrade` too; v1.2.0's
//! values have no `deviceConfig` key and Helm ignores unknown values, so
//! for older charts the DeviceConfig is rendered as its own CR
//! (`cluster/amd-deviceconfig.yaml`, `kubectl apply` after the chart).
//! Which release has what is a table with its source:
//! `src/blueprint/amd-chart.csv`.
//!
//! The spec carries what an operator-built out-of-tree driver needs
//! (ROCm/gpu-operator `docs/drivers/installation.md`, `secure-boot.md`):
//! `blacklist: true` (the inbox amdgpu breaks the install; the layer also
//! blacklists it on the host), the image repository KMM pushes to, the
//! signing Secrets when Secure Boot enforces module signing, and
//! tolerations for the node's taints on every DaemonSet (the operator sets
//! none by default: `internal/plugin/plugin.go`) — on the driver's KMM
//! pods only from chart v1.3.1, the first CRD with `spec.driver.tolerations`.
//!
//! A driver change rolls by `spec.driver.upgradePolicy` (in the CRD from v1.2.0) within
//! the rollout's budgets, as the NVIDIA values do ([`super::gpu::UpgradePolicy`]): at most
//! one failure domain's wave budget of nodes at a time (`maxParallelUpgrades`), and
//! `maxUnavailableNodes` the same number, since the upgrade manager starts no more than
//! `min(maxParallelUpgrades, maxUnavailableNodes - failed)` at once (its default, 25% of
//! the selected nodes, could exceed a domain's budget, and it stops after that many
//! failures); each node drained first (`nodeDrainPolicy`, which takes precedence over
//! `podDeletionPolicy`, so that is not written) within the rollout's drain timeout, not
//! forced, each pod given its own grace period (`gracePeriodSeconds: -1`, in the CRD from
//! v1.2.2, as the wave's drain does); and rebooted after the install (`rebootRequired`,
//! unset meaning no reboot before v1.3.0): the operator's driver upgrade guide
//! (`docs/drivers/upgrading.md`) warns that a ROCm 6.3 or older driver may not finish
//! loading without one. The upgrade manager has no per-node hold (v1.5.1
//! `internal/controllers/upgrademgr.go`: every selected, schedulable, ready node is a
//! candidate), so `rollout plan` cannot stage it by its waves and says so.
//!
//! Where the acceptance names the test runner's image and the operator runs the metrics
//! exporter (whose GPU health the runner watches), the spec enables `testRunner` (in the
//! CRD from v1.2.0): a DaemonSet that runs the blueprint's RVS recipe on a GPU the
//! exporter reports unhealthy, configured by its own ConfigMap
//! (`cluster/amd-test-runner-config.yaml`), logs kept on the node under
//! [`TEST_RUNNER_LOGS`], results as Kubernetes events.

use crate::blueprint::Spec;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Toleration;
use crate::blueprint::amd_chart::{self, Feature};
use crate::blueprint::model::*;

/// The namespace the AMD GPU Operator's documentation installs into.
pub const NAMESPACE: &str = "kube-amd-gpu";

/// Where the test runner writes its compressed logs, in its container and on the node
/// (the CRD's default for both, stated so the node's path is on record).
pub const TEST_RUNNER_LOGS: &str = "/var/log/amd-test-runner";

/// The label the chart's default NFD rule sets on AMD GPU nodes.
const GPU_LABEL: &str = "feature.node.kubernetes.io/amd-gpu";

#[derive(Debug, Clone, Serialize)]
pub struct Amd {
    /// The pinned chart renders `deviceConfig.spec` (v1.3.0 and later).
    pub chart_renders_deviceconfig: bool,
    /// The first chart release that does (for the files' comments).
    pub deviceconfig_values_since: String,
    pub namespace: &'static str,
    /// The DeviceConfig's name.
    pub name: String,
    /// The DeviceConfig `spec`.
    pub spec: Value,
    /// How the operator rolls a driver change, where the pinned chart's CRD has the policy
    /// and the operator owns the driver (for the files' comments; the spec carries it).
    pub upgrade: Option<super::gpu::UpgradePolicy>,
    /// The test runner's ConfigMap (name, `config.json` for its unhealthy-GPU watch),
    /// when the spec enables it.
    pub test_runner: Option<TestRunnerConfig>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestRunnerConfig {
    pub name: String,
    pub config: String,
}

pub(super) fn of(s: &Spec, tolerations: &[Toleration]) -> Option<Amd> {
    let a = s.accelerators.as_ref()?;
    let o = a.operator.as_ref()?;
    if a.vendor != Vendor::Amd {
        return None;
    }
    let manages = |c| o.manages.contains(&c);
    let chart = amd_chart::table();
    let tol = serde_json::to_value(tolerations).expect("tolerations serialise");
    let mut driver = Map::new();
    driver.insert("enable".into(), json!(manages(OperatorComponent::Driver)));
    if manages(OperatorComponent::Driver) {
        driver.insert("blacklist".into(), json!(true));
        if let Some(v) = a.driver.version.exact() {
            driver.insert("version".into(), json!(v.to_string()));
        }
        if let Some(image) = &o.driver_image {
            driver.insert("image".into(), json!(image.as_str()));
        }
        if let Some(sign) = &o.module_signing {
            driver.insert(
                "imageSign".into(),
                json!({
                    "keySecret": {"name": sign.key_secret.as_str()},
                    "certSecret": {"name": sign.cert_secret.as_str()},
                }),
            );
        }
        // Only where the pinned chart's CRD has the field (`validate` refuses a
        // tainted node whose chart lacks it: the driver would never load).
        if chart.has(&o.version, Feature::DriverTolerations) {
            driver.insert("tolerations".into(), tol.clone());
        }
    }
    let upgrade = (manages(OperatorComponent::Driver)
        && chart.has(&o.version, Feature::DriverUpgradePolicy))
    .then(|| super::gpu::upgrade_policy(s));
    if let Some(u) = &upgrade {
        let mut drain = json!({"force": false, "timeoutSeconds": u.drain_timeout_s});
        if chart.has(&o.version, Feature::DriverDrainGracePeriod) {
            drain["gracePeriodSeconds"] = json!(-1);
        }
        driver.insert(
            "upgradePolicy".into(),
            json!({
                "enable": true,
                "maxParallelUpgrades": u.max_parallel,
                "maxUnavailableNodes": u.max_parallel,
                "nodeDrainPolicy": drain,
                "rebootRequired": true,
            }),
        );
    }
    let name = "nodeimg-".to_string() + s.metadata.name.as_str();
    let image = s
        .acceptance
        .as_ref()
        .and_then(|acc| acc.images.test_runner.as_ref());
    let test_runner = image
        .filter(|_| {
            manages(OperatorComponent::MetricsExporter)
                && chart.has(&o.version, Feature::TestRunner)
        })
        .map(|image| {
            let settings = s
                .acceptance
                .as_ref()
                .map(|acc| acc.test_runner.clone())
                .unwrap_or_default();
            (
                image,
                TestRunnerConfig {
                    name: name.clone() + "-test-runner",
                    config: super::test_runner::config_json(&settings, super::test_runner::AUTO),
                },
            )
        });
    let mut spec = json!({
        "driver": driver,
        "devicePlugin": {
            "enableNodeLabeller": manages(OperatorComponent::DevicePlugin),
            "devicePluginTolerations": tol,
            "nodeLabellerTolerations": tol,
        },
        "metricsExporter": {
            "enable": manages(OperatorComponent::MetricsExporter),
            "tolerations": tol,
        },
        "selector": {GPU_LABEL: "true"},
    });
    if let Some((image, config)) = &test_runner {
        spec["testRunner"] = json!({
            "enable": true,
            "image": image,
            "config": {"name": config.name},
            "logsLocation": {"mountPath": TEST_RUNNER_LOGS, "hostPath": TEST_RUNNER_LOGS},
            "tolerations": tol,
            "upgradePolicy": {"upgradeStrategy": "RollingUpdate", "maxUnavailable": 1},
        });
    }
    Some(Amd {
        chart_renders_deviceconfig: chart.has(&o.version, Feature::DeviceconfigValues),
        deviceconfig_values_since: chart.since(Feature::DeviceconfigValues).version.to_string(),
        namespace: NAMESPACE,
        name,
        spec,
        upgrade,
        test_runner: test_runner.map(|(_, c)| c),
    })
}
