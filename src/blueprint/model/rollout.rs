//! `rollout`: how a new image of this node class reaches the fleet and how a node that
//! goes bad is handled — which node labels name failure domains and the hardware SKU, how
//! many nodes a wave may take from one domain, the canaries, the engine that applies the
//! image (system-upgrade-controller), and the remediation limits (NodeHealthCheck).
//! Every field is optional; nothing here changes what runs on the node.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{AbsPath, DnsLabel, Duration, LabelKey, Percent};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rollout {
    /// Node label keys whose values are failure domains (zone, rack, NVLink or IB
    /// domain); a wave takes at most `waveBudget` nodes from each value of each key.
    /// A node without the label counts in one shared domain of that key.
    #[serde(default = "default_domains")]
    pub failure_domains: Vec<LabelKey>,
    /// Node label keys whose values name the hardware SKU (GPU Feature Discovery's
    /// `nvidia.com/gpu.product`, the AMD labeller's `amd.com/gpu.product-name`); the first
    /// one a node carries wins. Canaries are picked per SKU.
    #[serde(default = "default_sku_labels")]
    pub sku_labels: Vec<LabelKey>,
    /// Canary nodes per SKU, upgraded and accepted before any other node.
    #[serde(default = "one")]
    pub canaries_per_sku: u32,
    /// Most nodes one wave takes from any one failure domain: a count (`1`) or a share of
    /// the domain (`25%`, rounded down, at least one node).
    #[serde(default = "default_budget")]
    pub wave_budget: Budget,
    /// Most nodes in one wave, whatever the domains allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wave_size: Option<u32>,
    #[serde(default)]
    pub engine: Engine,
    #[serde(default)]
    pub remediation: Remediation,
    /// Boots an image applied in place may fail its verify before the node goes back to
    /// the previous image by itself (`nodeimg apply`'s boot assessment; systemd-boot and
    /// greenboot count 3).
    #[serde(default = "three")]
    #[schemars(range(min = 1, max = 10))]
    pub boot_attempts: u32,
}

impl Default for Rollout {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every rollout field has a default")
    }
}

/// A number of nodes or a share of a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Budget {
    Nodes(u32),
    Percent(Percent),
}

impl Budget {
    /// The budget in nodes for a group of `size` nodes (a share rounds down, at least 1).
    pub fn of(&self, size: usize) -> usize {
        match self {
            Budget::Nodes(n) => *n as usize,
            Budget::Percent(p) => ((size as f64 * p.value() / 100.0).floor() as usize).max(1),
        }
    }

    /// As NodeHealthCheck's `maxUnhealthy` writes it (`3`, `10%`).
    pub fn to_int_or_percent(&self) -> serde_json::Value {
        match self {
            Budget::Nodes(n) => serde_json::Value::from(*n),
            Budget::Percent(p) => serde_json::Value::from(format!("{}%", p.value().floor())),
        }
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Nodes(n) => write!(f, "{n} node(s)"),
            Budget::Percent(p) => write!(f, "{p}"),
        }
    }
}

/// system-upgrade-controller: one `Plan` per wave runs the applier on each node of the
/// wave (cordon and drain first unless the change is live-only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Engine {
    /// Namespace system-upgrade-controller runs in (its Plans live there).
    #[serde(default = "default_engine_namespace")]
    pub namespace: String,
    /// Service account of the upgrade Jobs.
    #[serde(default = "default_engine_namespace")]
    pub service_account: String,
    /// The site's own image that applies a node image to the host (`/host` in its
    /// container), pinned by digest: bootc, an A/B updater, a reimage hook. It gets the
    /// new image in `NODEIMG_IMAGE`, the one to keep for rollback in
    /// `NODEIMG_PREVIOUS_IMAGE` and `live`, `drain` or `reboot` in `NODEIMG_IMPACT`, and
    /// reboots when that says `reboot`. Without it the node image applies itself: the
    /// Plans run the new image (the rollback Plan the previous one) with its own
    /// `nodeimg apply --in-place --root /host IMAGE`, which needs the image's verifier to
    /// be a static build with registry access (`nodeimg build` says whether it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applier: Option<String>,
    /// Arguments of the site's applier (default: its entrypoint's); with the default
    /// applier, more arguments of `nodeimg apply` (e.g. `--skip`, `--insecure`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// A `kubernetes.io/dockerconfigjson` Secret in the engine's namespace for a private
    /// registry: the kubelet pulls the Plans' image with it (`imagePullSecrets`), and it
    /// is mounted for the default applier, whose `nodeimg apply` pulls the node image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_secret: Option<String>,
    /// How long draining one node may take before the upgrade Job fails.
    #[serde(default = "default_drain_timeout")]
    pub drain_timeout: Duration,
}

impl Default for Engine {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every engine field has a default")
    }
}

/// NodeHealthCheck (medik8s) acting on the per-fault-class conditions that
/// node-problem-detector sets from `nodeimg verify --phase health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Remediation {
    /// Fleet-wide: remediation starts only while no more nodes of this class than this
    /// are unhealthy (NodeHealthCheck `maxUnhealthy`: a count or a share).
    #[serde(default = "default_max_unhealthy")]
    pub max_unhealthy: Budget,
    /// How long a driver or daemon problem may last before the node is rebooted: systemd
    /// (`Restart=`) and the operators' DaemonSets restart the daemon within it.
    #[serde(default = "default_restart_window")]
    pub daemon_restart_window: Duration,
    /// How long a reboot may take to clear the problem before the remediation is failed
    /// and the node stays out of service for a person.
    #[serde(default = "default_reboot_timeout")]
    pub reboot_timeout: Duration,
    /// The remediation template that reboots a node (driver and daemon faults).
    #[serde(default = "default_reboot_template")]
    pub reboot: TemplateRef,
    /// The remediation template of the repair queue (device and link faults): it must
    /// not reboot (no automatic reboot loop on broken hardware). Without it no
    /// NodeHealthCheck is rendered for what needs a person; the node still leaves
    /// scheduling through the NFD taint `nodeimg.dev/service-required`
    /// (`cluster/remediation/isolation.yaml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<TemplateRef>,
    /// Reboots a node gets for a device or link fault within `ladderWindow` before it goes
    /// to service and stays cordoned (the recovery ladder: restart, reset, reboot,
    /// service). Default 2, gpud's `DefaultRebootThreshold`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 10))]
    pub max_reboots: Option<u32>,
    /// How far back the ladder counts reboots. Default `72h`, gpud's event lookback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder_window: Option<Duration>,
    /// Folder on the node where the health plugin keeps the capture and the record of a
    /// failing verdict; the condition's message names the files.
    #[serde(default = "default_evidence_dir")]
    pub evidence_dir: AbsPath,
}

impl Default for Remediation {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every remediation field has a default")
    }
}

impl Remediation {
    /// The recovery ladder's limits: the blueprint's, or the cited defaults.
    pub fn ladder(&self) -> crate::fault::ladder::Limits {
        let d = crate::fault::ladder::Limits::default();
        crate::fault::ladder::Limits {
            reboots: self.max_reboots.unwrap_or(d.reboots),
            window_s: self.ladder_window.as_ref().map_or(d.window_s, |w| {
                u64::try_from(w.as_secs()).unwrap_or(u64::MAX)
            }),
        }
    }
}

/// A remediation template (NodeHealthCheck `remediationTemplate`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplateRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

fn default_domains() -> Vec<LabelKey> {
    vec!["topology.kubernetes.io/zone".parse().expect("a label key")]
}

fn default_sku_labels() -> Vec<LabelKey> {
    ["nvidia.com/gpu.product", "amd.com/gpu.product-name"]
        .iter()
        .map(|k| k.parse().expect("a label key"))
        .collect()
}

fn one() -> u32 {
    1
}

fn three() -> u32 {
    3
}

fn default_budget() -> Budget {
    Budget::Nodes(1)
}

/// 5 % of the nodes a NodeHealthCheck selects: a share, which NodeHealthCheck accepts
/// (`maxUnhealthy` is an integer or a percentage, CRD v0.12.0), grows with the fleet. A
/// fixed count does not: with 1, on a 2,000-node fleet (`rollout simulate`, seed 7) the
/// nodes in multi-day repair keep counting as unhealthy and 109 nodes were never
/// remediated; with 5 %, none.
fn default_max_unhealthy() -> Budget {
    Budget::Percent("5%".parse().expect("a share"))
}

fn default_engine_namespace() -> String {
    "system-upgrade".to_owned()
}

fn default_drain_timeout() -> Duration {
    "30m".parse().expect("a duration")
}

fn default_restart_window() -> Duration {
    "10m".parse().expect("a duration")
}

fn default_reboot_timeout() -> Duration {
    "30m".parse().expect("a duration")
}

/// Self Node Remediation's automatic strategy: the template its operator creates.
fn default_reboot_template() -> TemplateRef {
    TemplateRef {
        api_version: "self-node-remediation.medik8s.io/v1alpha1".to_owned(),
        kind: "SelfNodeRemediationTemplate".to_owned(),
        name: "self-node-remediation-automatic-strategy-template".to_owned(),
        namespace: "medik8s".to_owned(),
    }
}

fn default_evidence_dir() -> AbsPath {
    "/var/lib/nodeimg/evidence"
        .parse()
        .expect("an absolute path")
}

impl Rollout {
    /// Problems with the values (ranges and relations serde cannot express), by field.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if self.failure_domains.is_empty() {
            out.push((
                "rollout.failureDomains".into(),
                "name at least one failure-domain label (e.g. topology.kubernetes.io/zone)".into(),
            ));
        }
        if self.canaries_per_sku == 0 {
            out.push((
                "rollout.canariesPerSku".into(),
                "at least one canary per SKU goes first".into(),
            ));
        }
        if self.wave_budget == Budget::Nodes(0) {
            out.push((
                "rollout.waveBudget".into(),
                "a budget of 0 nodes never upgrades anything".into(),
            ));
        }
        if self.max_wave_size == Some(0) {
            out.push((
                "rollout.maxWaveSize".into(),
                "a wave of 0 nodes never upgrades anything".into(),
            ));
        }
        if let Some(image) = &self.engine.applier
            && let Err(why) = super::acceptance::pinned(image)
        {
            out.push(("rollout.engine.applier".into(), why));
        }
        if let Some(name) = &self.engine.pull_secret
            && !dns_subdomain(name)
        {
            out.push((
                "rollout.engine.pullSecret".into(),
                format!("`{name}` is not a Secret name (a DNS-1123 subdomain)"),
            ));
        }
        for (field, value) in [
            ("namespace", &self.engine.namespace),
            ("serviceAccount", &self.engine.service_account),
        ] {
            if !DnsLabel::is_valid(value) {
                out.push((
                    format!("rollout.engine.{field}"),
                    format!("`{value}` is not a DNS-1123 label"),
                ));
            }
        }
        let r = &self.remediation;
        if r.daemon_restart_window.as_secs() < 60 {
            out.push((
                "rollout.remediation.daemonRestartWindow".into(),
                "give systemd and the operators at least 1m to restart a daemon".into(),
            ));
        }
        if r.reboot_timeout.as_secs() < 60 {
            out.push((
                "rollout.remediation.rebootTimeout".into(),
                "NodeHealthCheck enforces at least 60s per remediation".into(),
            ));
        }
        if let Some(repair) = &r.repair
            && (repair == &r.reboot || repair.kind == "SelfNodeRemediationTemplate")
        {
            out.push((
                "rollout.remediation.repair".into(),
                format!(
                    "`{}` reboots the node: device and link faults go to a repair queue, \
                     never into an automatic reboot loop",
                    repair.kind
                ),
            ));
        }
        for (field, t) in
            std::iter::once(("reboot", &r.reboot)).chain(r.repair.as_ref().map(|t| ("repair", t)))
        {
            if !DnsLabel::is_valid(&t.namespace) || t.name.is_empty() || t.kind.is_empty() {
                out.push((
                    format!("rollout.remediation.{field}"),
                    "a template needs apiVersion, kind, name and a DNS-1123 namespace".into(),
                ));
            }
        }
        out
    }
}

/// A DNS-1123 subdomain (the name of a Secret): labels joined by dots, 253 at most.
fn dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(DnsLabel::is_valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_problems() {
        let r = Rollout::default();
        assert_eq!(r.failure_domains.len(), 1);
        assert_eq!(r.wave_budget, Budget::Nodes(1));
        assert!(r.problems().is_empty(), "{:?}", r.problems());
        let bad: Rollout = serde_json::from_str(
            r#"{"canariesPerSku": 0, "waveBudget": 0, "engine": {"applier": "x:latest"},
                "remediation": {"repair": {"apiVersion": "a/v1", "kind": "SelfNodeRemediationTemplate",
                "name": "n", "namespace": "medik8s"}}}"#,
        )
        .unwrap();
        let fields: Vec<String> = bad.problems().into_iter().map(|p| p.0).collect();
        assert_eq!(
            fields,
            [
                "rollout.canariesPerSku",
                "rollout.waveBudget",
                "rollout.engine.applier",
                "rollout.remediation.repair"
            ]
        );
        assert!(serde_json::from_str::<Rollout>(r#"{"waveBudgt": 1}"#).is_err());
    }

    #[test]
    fn budgets() {
        let pct: Budget = serde_json::from_str(r#""25%""#).unwrap();
        assert_eq!(pct.of(16), 4);
        assert_eq!(pct.of(3), 1, "at least one node");
        assert_eq!(Budget::Nodes(2).of(100), 2);
        assert_eq!(pct.to_int_or_percent(), serde_json::json!("25%"));
    }
}
