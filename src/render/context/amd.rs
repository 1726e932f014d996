//! `amd`: the AMD GPU Operator's DeviceConfig (driver, device plugin, node
//! labeller, metrics exporter) and chart values.
//!
//! Where the DeviceConfig goes depends on the pinned chart: the chart
//! renders `deviceConfig.spec` into a default DeviceConfig only from
//! v1.4.0 (`helm-charts-k8s/templates/default-deviceconfig.yaml`); v1.2.0's
//! values have no `deviceConfig` key and Helm ignores unknown values, so
//! for older charts the DeviceConfig is rendered as its own CR
//! (`cluster/amd-deviceconfig.yaml`, `kubectl apply` after the chart).
//!
//! The spec carries what an operator-built out-of-tree driver needs
//! (ROCm/gpu-operator `docs/drivers/installation.md`, `secure-boot.md`):
//! `blacklist: true` (the inbox amdgpu breaks the install; the layer also
//! blacklists it on the host), the image repository KMM pushes to, the
//! signing Secrets when Secure Boot enforces module signing, and
//! tolerations for the node's taints on every DaemonSet (the operator sets
//! none by default: `internal/plugin/plugin.go`).

use crate::blueprint::Spec;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Toleration;
use crate::blueprint::model::*;

/// The namespace the AMD GPU Operator's documentation installs into.
pub const NAMESPACE: &str = "kube-amd-gpu";

/// The label the chart's default NFD rule sets on AMD GPU nodes.
const GPU_LABEL: &str = "feature.node.kubernetes.io/amd-gpu";

#[derive(Debug, Clone, Serialize)]
pub struct Amd {
    /// The pinned chart renders `deviceConfig.spec` (v1.4.0 and later).
    pub chart_renders_deviceconfig: bool,
    pub namespace: &'static str,
    /// The DeviceConfig's name.
    pub name: String,
    /// The DeviceConfig `spec`.
    pub spec: Value,
}

pub(super) fn of(s: &Spec, tolerations: &[Toleration]) -> Option<Amd> {
    let a = s.accelerators.as_ref()?;
    let o = a.operator.as_ref()?;
    if a.vendor != Vendor::Amd {
        return None;
    }
    let manages = |c| o.manages.contains(&c);
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
        driver.insert("tolerations".into(), tol.clone());
    }
    let spec = json!({
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
    Some(Amd {
        chart_renders_deviceconfig: o.version.numbers() >= vec![1, 4],
        namespace: NAMESPACE,
        name: "nodeimg-".to_string() + s.metadata.name.as_str(),
        spec,
    })
}
