//! The plan as system-upgrade-controller `Plan` objects (`upgrade.cattle.io/v1`), one file
//! per wave plus the rollback.
//!
//! Why system-upgrade-controller: it runs one Job per selected node, cordons and drains
//! first when asked (`cordon`, `drain`), limits how many nodes are worked on at once
//! (`concurrency`), mounts the host at `/host` for the upgrade container and uncordons
//! when the Job succeeds — exactly the per-node steps, with nothing of its own to learn
//! about images. Node replacement (Cluster API `MachineDeployment` rollouts) needs a
//! machine provider and rebuilds the node, which bare-metal GPU fleets with local state
//! and long burn-in do not want for a configuration change. The controller itself does not
//! know failure domains or acceptance; nodeimg expresses those by giving each wave its own
//! Plan, selecting exactly the wave's nodes by `kubernetes.io/hostname`, and by applying
//! the next wave's Plan only after `nodeimg rollout gate` said `proceed`.
//!
//! Semantics relied on (rancher/system-upgrade-controller `pkg/upgrade/job/job.go` and
//! `pkg/upgrade/container/container.go`): an image reference with a digest is used as
//! given (the Plan's version is appended only to a name without tag or digest); the
//! upgrade container runs privileged with `/host`, in the host's PID, IPC and network
//! namespaces (`hostPID`, `hostIPC`, `hostNetwork` on the Job's Pod); `secrets` are
//! mounted at their `path`; `postCompleteLabels` are set on the node when its Job
//! completed.
//!
//! The applier, by default, is the node image itself ([`Applier::Image`]): its layers
//! hold the `nodeimg` the units run, so the upgrade container is the image the wave
//! installs, running `nodeimg apply --in-place --root /host IMAGE` — the image pulled by
//! digest (and, with a trust policy, checked) by nodeimg, its files put in place under
//! the journal, the change's impact acted on through the host's systemd. The rollback
//! Plan runs the previous image the same way, which apply turns into the exact rollback.
//! A site with its own installer names it instead ([`Applier::Site`]).

use serde::Serialize;

use super::plan::{Plan, Steps, Wave};
use crate::blueprint::model::rollout::Engine;
use crate::render::context::{GATE_LABEL, GATE_VALUE};

/// The node label a completed Job sets: the first 12 hex digits of the image digest.
pub const IMAGE_LABEL: &str = "nodeimg.dev/image";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SucPlan {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Serialize)]
struct Metadata {
    name: String,
    namespace: String,
    labels: std::collections::BTreeMap<String, String>,
    annotations: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    concurrency: usize,
    version: String,
    node_selector: Selector,
    service_account_name: String,
    cordon: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    drain: Option<Drain>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    image_pull_secrets: Vec<LocalRef>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    secrets: Vec<SecretMount>,
    upgrade: Container,
    post_complete_labels: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Selector {
    match_expressions: Vec<Requirement>,
}

#[derive(Serialize)]
struct Requirement {
    key: String,
    operator: &'static str,
    values: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Drain {
    ignore_daemon_sets: bool,
    delete_emptydir_data: bool,
    force: bool,
    /// Passed to `kubectl drain --timeout` as written.
    timeout: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Container {
    image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    envs: Vec<Env>,
}

#[derive(Serialize)]
struct SecretMount {
    name: String,
    path: &'static str,
}

#[derive(Serialize)]
struct LocalRef {
    name: String,
}

/// Who installs the image on each node.
#[derive(Debug, Clone, Copy)]
pub enum Applier<'a> {
    /// The node image itself, running its own `nodeimg apply`.
    Image,
    /// The site's installer image, by digest.
    Site(&'a str),
}

/// Where the pull Secret is mounted in the upgrade container.
const PULL_SECRET_PATH: &str = "/run/nodeimg/pull-secret";

#[derive(Serialize)]
struct Env {
    name: &'static str,
    value: String,
}

/// The digest's first 12 hex digits (a label value and a short name).
pub fn short(image: &str) -> String {
    image
        .rsplit_once("@sha256:")
        .map_or("unpinned", |(_, d)| d)
        .chars()
        .take(12)
        .collect()
}

/// A label-safe version: the blueprint's, when it is one, else the short digest.
fn version(v: &str, image: &str) -> String {
    let ok = !v.is_empty()
        && v.len() <= 63
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && v.as_bytes()[0].is_ascii_alphanumeric()
        && v.as_bytes()[v.len() - 1].is_ascii_alphanumeric();
    if ok { v.to_owned() } else { short(image) }
}

fn name(plan: &Plan, suffix: &str) -> String {
    let base: String = plan
        .to
        .blueprint
        .chars()
        .take(63 - 14 - suffix.len())
        .collect();
    format!(
        "{}-{}-{suffix}",
        base.trim_end_matches('-'),
        short(&plan.to.image)
    )
}

fn object(
    (plan, engine, applier): (&Plan, &Engine, Applier<'_>),
    name: String,
    nodes: Selector,
    concurrency: usize,
    (to, from, steps): (&str, &str, Steps),
    notes: Vec<(&str, String)>,
) -> SucPlan {
    let impact = plan.impact.map_or("live", |i| i.as_str());
    SucPlan {
        api_version: "upgrade.cattle.io/v1",
        kind: "Plan",
        metadata: Metadata {
            name,
            namespace: engine.namespace.clone(),
            labels: [
                ("app.kubernetes.io/managed-by", "nodeimg"),
                ("nodeimg.dev/blueprint", plan.to.blueprint.as_str()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
            annotations: notes
                .into_iter()
                .map(|(k, v)| (format!("nodeimg.dev/{k}"), v))
                .collect(),
        },
        spec: Spec {
            concurrency: concurrency.max(1),
            version: version(
                if to == plan.to.image {
                    &plan.to.version
                } else {
                    &plan.from.version
                },
                to,
            ),
            node_selector: nodes,
            service_account_name: engine.service_account.clone(),
            cordon: steps.cordon,
            drain: steps.drain.then(|| Drain {
                ignore_daemon_sets: true,
                delete_emptydir_data: true,
                force: false,
                timeout: format!("{}s", engine.drain_timeout.as_secs()),
            }),
            image_pull_secrets: engine
                .pull_secret
                .iter()
                .map(|name| LocalRef { name: name.clone() })
                .collect(),
            secrets: match applier {
                Applier::Image => engine
                    .pull_secret
                    .iter()
                    .map(|name| SecretMount {
                        name: name.clone(),
                        path: PULL_SECRET_PATH,
                    })
                    .collect(),
                Applier::Site(_) => Vec::new(),
            },
            upgrade: Container {
                image: match applier {
                    Applier::Image => to.to_owned(),
                    Applier::Site(image) => image.to_owned(),
                },
                command: match applier {
                    Applier::Image => vec![format!("/{}", crate::package::verifier::NODE_PATH)],
                    Applier::Site(_) => Vec::new(),
                },
                args: match applier {
                    Applier::Image => ["apply", "--in-place", "--root", "/host", to]
                        .into_iter()
                        .map(str::to_owned)
                        .chain(engine.args.iter().cloned())
                        .collect(),
                    Applier::Site(_) => engine.args.clone(),
                },
                envs: vec![
                    Env {
                        name: "NODEIMG_IMAGE",
                        value: to.to_owned(),
                    },
                    Env {
                        name: "NODEIMG_PREVIOUS_IMAGE",
                        value: from.to_owned(),
                    },
                    Env {
                        name: "NODEIMG_IMPACT",
                        value: impact.to_owned(),
                    },
                ]
                .into_iter()
                .chain(
                    engine
                        .pull_secret
                        .iter()
                        .filter(|_| matches!(applier, Applier::Image))
                        .map(|_| Env {
                            name: "REGISTRY_AUTH_FILE",
                            value: format!("{PULL_SECRET_PATH}/.dockerconfigjson"),
                        }),
                )
                .collect(),
            },
            post_complete_labels: [
                (IMAGE_LABEL.to_owned(), short(to)),
                (GATE_LABEL.to_owned(), GATE_VALUE.to_owned()),
            ]
            .into_iter()
            .collect(),
        },
    }
}

fn wave_object(plan: &Plan, engine: &Engine, applier: Applier<'_>, wave: &Wave) -> SucPlan {
    let kind = if wave.canary { "canary" } else { "wave" };
    let next = if wave.index + 1 < plan.waves.len() {
        format!("wave-{:03}.yaml", wave.index + 1)
    } else {
        "none: the rollout is complete".to_owned()
    };
    object(
        (plan, engine, applier),
        name(plan, &format!("w{:03}", wave.index)),
        Selector {
            match_expressions: vec![Requirement {
                key: super::fleet::HOSTNAME_LABEL.to_owned(),
                operator: "In",
                values: wave.hostnames.clone(),
            }],
        },
        wave.nodes.len(),
        (&plan.to.image, &plan.from.image, plan.steps),
        vec![
            ("wave", format!("{} ({kind})", wave.index)),
            (
                "gate",
                format!(
                    "nodeimg rollout gate --plan plan.json --wave {} RECORDS... (exit 0: apply {next}; exit 1: halt, apply rollback.yaml)",
                    wave.index
                ),
            ),
            ("previous-image", plan.from.image.clone()),
        ],
    )
}

/// The rendered files: `wave-NNN.yaml` per wave and `rollback.yaml`, as (name, text).
pub fn render(
    plan: &Plan,
    engine: &Engine,
    applier: Applier<'_>,
) -> Result<Vec<(String, String)>, String> {
    // Block YAML from the renderer's escaping emitter (keys sorted, as `kubectl get -o
    // yaml` writes them; strings quoted whenever a YAML 1.1 or 1.2 reader could take them
    // for anything else).
    let yaml = |o: &SucPlan| {
        serde_json::to_value(o)
            .map(|v| crate::yaml_text::yaml_block_text(&v, 0))
            .map_err(|e| format!("cannot write a Plan as YAML: {e}"))
    };
    let mut out = Vec::new();
    for w in &plan.waves {
        let text = format!(
            "# Wave {} of {}{}: {} node(s). Apply only after the gate of the wave before said proceed.\n{}",
            w.index,
            plan.waves.len(),
            if w.canary { " (canary)" } else { "" },
            w.nodes.len(),
            yaml(&wave_object(plan, engine, applier, w))?
        );
        out.push((format!("wave-{:03}.yaml", w.index), text));
    }
    let smallest = plan.domains.iter().map(|d| d.budget).min().unwrap_or(1);
    let rollback = object(
        (plan, engine, applier),
        name(plan, "rollback"),
        Selector {
            match_expressions: vec![Requirement {
                key: IMAGE_LABEL.to_owned(),
                operator: "In",
                values: vec![short(&plan.to.image)],
            }],
        },
        smallest,
        (&plan.from.image, &plan.to.image, plan.steps),
        vec![(
            "rollback",
            format!("returns nodes on {} to {}", plan.to.image, plan.from.image),
        )],
    );
    out.push((
        "rollback.yaml".to_owned(),
        format!(
            "# Rollback: apply only when a gate halted the rollout. It returns every node that\n# completed a wave to the previous image, kept in the registry.\n{}",
            yaml(&rollback)?
        ),
    ));
    Ok(out)
}
