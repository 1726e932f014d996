//! `nodeimg verify --phase cluster` (acceptance layer 2): the node's Node object — from
//! `--node FILE|-` (`kubectl get node NAME -o json`) or from the Kubernetes API — the
//! Pods on it and the cluster's RuntimeClasses, checked against the blueprint by
//! [`crate::accept::cluster`]: capacity and allocatable against the reservation
//! arithmetic, labels, taints, conditions, runtime handlers, RuntimeClasses and the device
//! components.
//!
//! With `--record FILE` the verdict goes into the node's acceptance record as its layer 2
//! (the record `verify` wrote at boot, or a new one without layer 1 when FILE does not
//! exist yet), written back atomically: the same record `nodeimg accept` completes.
//!
//! Exit code: 0 when every finding passed, 1 when one failed or could not be decided
//! (no Pod or RuntimeClass list, a Kubernetes too old to report runtime handlers), 2 when
//! the blueprint,
//! the Node, the Pods, the API, the record or the arguments are unusable.

use serde::Serialize;

use super::{Env, Exit, Failure, OrUnusable, Outcome, prepared};
use crate::accept::{cluster, input::MAX_FILE_BYTES, report};
use crate::cli::VerifyArgs;
use crate::k8s::{self, Node, Pod, RuntimeClass};
use crate::stdio::{Input, Output};
use crate::time::{Clock, SystemClock};
use crate::verify::checks::select;
use crate::verify::report::Format;
use crate::verify::report::record::{
    AcceptanceRecord, BlueprintIdentity, Finding, Kubernetes, Verdict,
};

/// The JSON report (`--format json`).
#[derive(Serialize)]
struct ClusterReport<'a> {
    phase: &'static str,
    node: &'a str,
    blueprint: &'a BlueprintIdentity,
    /// Where the Node came from: a file or the API server's URL.
    source: &'a str,
    result: Verdict,
    findings: &'a [Finding],
    kubernetes: &'a Kubernetes,
}

/// The Node, the Pods on it and the RuntimeClasses (when known) and where they came from.
struct Fetched {
    node: Node,
    pods: Option<Vec<Pod>>,
    runtime_classes: Option<Vec<RuntimeClass>>,
    evidence: Vec<String>,
}

/// Arguments of the node-side phases that mean nothing here are refused, not ignored.
fn refuse_node_side(args: &VerifyArgs) -> Result<(), Failure> {
    let s = &args.source;
    let given = [
        ("--root", s.root.is_some()),
        ("--snapshot", s.snapshot.is_some()),
        ("--nvidia-smi-xml", s.nvidia_smi_xml.is_some()),
        ("--output", !args.output.is_empty()),
        ("--evidence-on-fail", args.evidence_on_fail.is_some()),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, on)| *on) {
        return Err(Failure::unusable(format!(
            "{flag} does not apply to --phase cluster (the Node comes from --node or the API; \
             `nodeimg accept` folds the Node into the acceptance record)"
        )));
    }
    if args.record.as_ref().is_some_and(Output::is_stdout) {
        return Err(Failure::unusable(
            "--record - does not apply to --phase cluster: it adds layer 2 to the node's \
             record in a file (the one verify wrote at boot)",
        ));
    }
    if !matches!(args.format, Format::Text | Format::Json) {
        return Err(Failure::unusable(format!(
            "--phase cluster prints text or json, not {}",
            args.format.name()
        )));
    }
    Ok(())
}

fn read(input: &Input, what: &str) -> Result<String, Failure> {
    input
        .read_text(MAX_FILE_BYTES)
        .unusable_at(format_args!("{what} {input}"))
}

/// The Node named `name` (or the only one) among `nodes`.
fn choose(nodes: Vec<Node>, name: Option<&str>, source: &str) -> Result<Node, Failure> {
    let names = || {
        nodes
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(name) => {
            let listed = names();
            nodes.into_iter().find(|n| n.name == name).ok_or_else(|| {
                Failure::unusable(format!("{source}: no Node named {name} (found: {listed})"))
            })
        }
        None if nodes.len() == 1 => Ok(nodes.into_iter().next().expect("one node")),
        None => Err(Failure::unusable(format!(
            "{source}: {} Node objects ({}); name the node with --node-name",
            nodes.len(),
            names()
        ))),
    }
}

fn from_files(
    node: &Input,
    pods: Option<&Input>,
    classes: Option<&Input>,
    name: Option<&str>,
) -> Result<Fetched, Failure> {
    let text = read(node, "--node")?;
    let nodes = k8s::node::parse(&text).unusable_at(format_args!("--node {node}"))?;
    let node_obj = choose(nodes, name, &format!("--node {node}"))?;
    let mut evidence = vec![node.to_string()];
    let pods = match pods {
        Some(input) => {
            let text = read(input, "--pods")?;
            evidence.push(input.to_string());
            Some(k8s::pod::parse(&text).unusable_at(format_args!("--pods {input}"))?)
        }
        None => None,
    };
    let runtime_classes = match classes {
        Some(input) => {
            let text = read(input, "--runtime-classes")?;
            evidence.push(input.to_string());
            Some(
                k8s::runtime_class::parse(&text)
                    .unusable_at(format_args!("--runtime-classes {input}"))?,
            )
        }
        None => None,
    };
    Ok(Fetched {
        node: node_obj,
        pods,
        runtime_classes,
        evidence,
    })
}

#[cfg(feature = "kube")]
fn from_api(args: &VerifyArgs, env: &mut Env<'_>) -> Result<Fetched, Failure> {
    let name = args.node_name.as_deref().ok_or_else(|| {
        Failure::unusable(
            "--phase cluster: name the node with --node-name (or $NODE_NAME), or give --node FILE",
        )
    })?;
    let timeout = std::time::Duration::from_secs(args.source.timeout);
    let fetched = k8s::api::fetch(name, args.kubeconfig.as_deref(), timeout).unusable()?;
    env.detail(&format!(
        "Node {name} and its Pods read from {}",
        fetched.server
    ));
    let node_source = format!("{}api/v1/nodes/{name}", with_slash(&fetched.server));
    let pods_source = format!(
        "{}api/v1/pods?fieldSelector=spec.nodeName={name}",
        with_slash(&fetched.server)
    );
    let nodes = k8s::node::parse(&fetched.node).unusable_at(&node_source)?;
    let node = choose(nodes, Some(name), &node_source)?;
    let pods = k8s::pod::parse(&fetched.pods).unusable_at(&pods_source)?;
    let classes_source = format!(
        "{}apis/node.k8s.io/v1/runtimeclasses",
        with_slash(&fetched.server)
    );
    let runtime_classes =
        k8s::runtime_class::parse(&fetched.runtime_classes).unusable_at(&classes_source)?;
    Ok(Fetched {
        node,
        pods: Some(pods),
        runtime_classes: Some(runtime_classes),
        evidence: vec![node_source, pods_source, classes_source],
    })
}

#[cfg(feature = "kube")]
fn with_slash(url: &str) -> String {
    if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    }
}

#[cfg(not(feature = "kube"))]
fn from_api(_: &VerifyArgs, _: &mut Env<'_>) -> Result<Fetched, Failure> {
    Err(Failure::unusable(
        "this nodeimg is built without the Kubernetes API client: give the Node with --node FILE \
         (kubectl get node NAME -o json), the Pods with --pods FILE and the RuntimeClasses \
         with --runtime-classes FILE",
    ))
}

/// The node's acceptance record at `path`, or a new one without layer 1 when there is
/// none yet. A record of another blueprint or another node is refused, not overwritten.
fn node_record(
    path: &std::path::Path,
    identity: &BlueprintIdentity,
    node: &str,
    at: &str,
) -> Result<AcceptanceRecord, Failure> {
    let what = || format!("--record {}", path.display());
    let text = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(crate::accept::complete::without_layer1(
                identity.clone(),
                Some(node),
                at,
            ));
        }
        _ => Input::File(path.to_owned())
            .read_text(MAX_FILE_BYTES)
            .unusable_at(what())?,
    };
    let record = AcceptanceRecord::parse(&text, path).unusable_at(what())?;
    if record.blueprint.id != identity.id {
        return Err(Failure::unusable(format!(
            "{}: the record is of blueprint {} ({}), not {} ({}): the node runs another image",
            what(),
            record.blueprint.name,
            record.blueprint.id,
            identity.name,
            identity.id
        )));
    }
    if let Some(host) = record.hostname.known().filter(|h| *h != node) {
        return Err(Failure::unusable(format!(
            "{}: the record is of node {host}, not of {node}",
            what()
        )));
    }
    Ok(record)
}

pub fn run(args: &VerifyArgs, env: &mut Env<'_>) -> Outcome {
    refuse_node_side(args)?;
    let matrix = prepared::matrix(&args.matrix, env)?;
    let blueprint = prepared::judged_against(&args.blueprint, &matrix)?;
    let spec = blueprint.spec();
    let identity = BlueprintIdentity {
        name: blueprint.name().to_owned(),
        version: spec.metadata.version.to_string(),
        id: blueprint.id().to_owned(),
        file: args.blueprint.to_string(),
    };
    let fetched = match &args.node {
        Some(node) => from_files(
            node,
            args.pods.as_ref(),
            args.runtime_classes.as_ref(),
            args.node_name.as_deref(),
        )?,
        None => from_api(args, env)?,
    };
    let (mut findings, kubernetes) = cluster::check(
        spec,
        &fetched.node,
        fetched.pods.as_deref(),
        fetched.runtime_classes.as_deref(),
        &fetched.evidence,
    );
    let patterns: Vec<&str> = args.checks.iter().map(|p| p.trim()).collect();
    if !patterns.is_empty() {
        findings.retain(|f| {
            let (exclude, include): (Vec<&&str>, Vec<&&str>) =
                patterns.iter().partition(|p| p.starts_with('!'));
            (include.is_empty() || include.iter().any(|p| select::glob(p, &f.id)))
                && !exclude.iter().any(|p| select::glob(&p[1..], &f.id))
        });
        if findings.is_empty() {
            return Err(Failure::unusable(format!(
                "--checks {}: no cluster check matches (their ids start with `cluster.`)",
                patterns.join(",")
            )));
        }
    }
    let refs: Vec<&Finding> = findings.iter().collect();
    let result = match crate::accept::complete::worst(&refs) {
        Verdict::NotRun => Verdict::Incomplete,
        v => v,
    };
    let source = fetched.evidence.first().map_or("", String::as_str);
    if let Some(Output::File(path)) = &args.record {
        let at = SystemClock.rfc3339();
        let mut record = node_record(path, &identity, &fetched.node.name, &at)?;
        record.set_kubernetes_layer(kubernetes.clone(), findings.clone(), &at);
        let text = record
            .render_for(path)
            .unusable_at(format_args!("--record {}", path.display()))?;
        Output::File(path.clone())
            .write(text.as_bytes(), env.out)
            .unusable_at(format_args!("--record {}", path.display()))?;
        env.detail(&format!(
            "layer 2 written to {} (record result: {})",
            path.display(),
            record.result.as_str()
        ));
    }
    let text = match args.format {
        Format::Json => {
            let report = ClusterReport {
                phase: "cluster",
                node: &fetched.node.name,
                blueprint: &identity,
                source,
                result,
                findings: &findings,
                kubernetes: &kubernetes,
            };
            let mut json = serde_json::to_string_pretty(&report).unusable()?;
            json.push('\n');
            json
        }
        _ => {
            let count = |v: Verdict| findings.iter().filter(|f| f.verdict == v).count();
            format!(
                "nodeimg verify --phase cluster: {} against {} {} ({})\nsource: {source}\n{}\nresult: {} ({} passed, {} failed, {} incomplete)\n",
                fetched.node.name,
                identity.name,
                identity.version,
                identity.id,
                report::findings(&findings, env.verbose > 0),
                result.as_str(),
                count(Verdict::Pass),
                count(Verdict::Fail),
                count(Verdict::Incomplete) + count(Verdict::NotRun),
            )
        }
    };
    env.out
        .write_all(text.as_bytes())
        .unusable_at("cannot write the report")?;
    Ok(if result == Verdict::Pass {
        Exit::Ok
    } else {
        Exit::Negative
    })
}
