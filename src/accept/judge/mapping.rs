//! Layer 3's pod mapping (`smoke.mapping`): the GPUs a smoke Pod saw are the ones the
//! kubelet allocated to it, and no GPU went to two smoke Pods.
//!
//! The smoke Pod prints the UUIDs it sees and its own name (probe step `devices`, `pod`,
//! `namespace`); dcgm-exporter, scraped while the Pod holds its GPUs, labels each GPU's
//! series with the pod the kubelet's pod-resources API says holds it
//! ([`dcgm_exporter`](crate::accept::dcgm_exporter)). The two sets must be equal: a Pod
//! that sees a GPU the kubelet gave another container, or misses one it was given, has
//! its devices injected by something other than the allocation (a runtime that exposes
//! every GPU, a stale CDI spec, `NVIDIA_VISIBLE_DEVICES=all` in the image) — a
//! `driver-daemon` fault, as a short count is. Across the smoke Pods of the inputs (run
//! together), each UUID is seen by one Pod and attributed to one.
//!
//! The page is read as it was scraped; a scrape with no series for the Pod (taken after
//! the Pod ended, or an exporter without pod mapping) is `incomplete`, never a pass. On
//! NVIDIA nodes where the smoke test is required a missing page is `incomplete` too.

use super::context::{Ctx, F, at, probe_steps};
use crate::accept::dcgm_exporter::{PodRef, Scrape};
use crate::accept::input::{Input, Output};
use crate::accept::probe::Suite;
use crate::blueprint::model::Vendor;
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{Layer, Verdict};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const MAPPING: F = F {
    id: Cow::Borrowed("smoke.mapping"),
    layer: Layer::DeviceContainer,
    summary: "the GPUs the smoke Pod saw are those the kubelet allocated to it (dcgm-exporter's pod labels), each to one smoke Pod",
    fault: FaultClass::DriverDaemon,
    action: Action::RestartDaemon,
};

/// What the smoke Pods saw: per Pod, its UUIDs and where it said so.
struct Seen<'a> {
    pod: Option<PodRef>,
    uuids: Vec<&'a str>,
    missing_uuid: bool,
    evidence: String,
}

pub(super) fn mapping(ctx: &mut Ctx<'_>, inputs: &[Input]) {
    let seen: Vec<Seen<'_>> = probe_steps(inputs, Suite::Smoke)
        .into_iter()
        .filter(|(_, s)| s.name == "devices")
        .map(|(path, s)| {
            let devices = s.devices.as_deref().unwrap_or_default();
            Seen {
                pod: s
                    .pod
                    .clone()
                    .map(|p| (s.namespace.clone().unwrap_or_default(), p)),
                uuids: devices.iter().filter_map(|d| d.uuid.as_deref()).collect(),
                missing_uuid: devices.iter().any(|d| d.uuid.is_none()),
                evidence: at(path, s.line),
            }
        })
        .collect();
    if seen.is_empty() {
        // No smoke output: `smoke.devices` already says the test did not run.
        return;
    }
    let scrapes: Vec<(&Path, &Scrape)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Exporter(s) => Some((i.path.as_path(), s)),
            _ => None,
        })
        .collect();
    if scrapes.is_empty() {
        if ctx.policy.topology.vendor == Some(Vendor::Nvidia) && ctx.required(Test::Smoke) {
            ctx.push(
                &MAPPING,
                None,
                Verdict::Incomplete,
                "dcgm-exporter's /metrics scraped while the smoke Pod held its GPUs",
                "none among the inputs",
                seen.iter().map(|s| s.evidence.clone()).collect(),
            );
        }
        return;
    }
    // Which pods each GPU is attributed to, over every scrape, with the first line.
    let mut owners: BTreeMap<&str, (BTreeSet<&PodRef>, String)> = BTreeMap::new();
    for (path, scrape) in &scrapes {
        for (uuid, gpu) in &scrape.gpus {
            let entry = owners
                .entry(uuid.as_str())
                .or_insert_with(|| (BTreeSet::new(), at(path, gpu.line)));
            entry.0.extend(gpu.pods.iter());
        }
    }
    let smoke_pods: BTreeSet<&PodRef> = seen.iter().filter_map(|s| s.pod.as_ref()).collect();
    // A UUID seen by two smoke Pods, or attributed to two of them.
    let mut seen_by: BTreeMap<&str, Vec<&PodRef>> = BTreeMap::new();
    for s in &seen {
        if let Some(pod) = &s.pod {
            for u in &s.uuids {
                seen_by.entry(u).or_default().push(pod);
            }
        }
    }
    for s in &seen {
        let Some(pod) = &s.pod else {
            ctx.push(
                &MAPPING,
                None,
                Verdict::Incomplete,
                "the smoke Pod names itself (`pod`, `namespace` in its devices step)",
                "the devices step has no `pod`: a probe older than this check",
                vec![s.evidence.clone()],
            );
            continue;
        };
        let subject = Some(format!("{}/{}", pod.0, pod.1));
        if s.missing_uuid {
            ctx.push(
                &MAPPING,
                subject,
                Verdict::Incomplete,
                "a UUID for every device the Pod saw",
                "the runtime gave no UUID for some devices",
                vec![s.evidence.clone()],
            );
            continue;
        }
        let allocated: BTreeSet<&str> = owners
            .iter()
            .filter(|(_, (pods, _))| pods.contains(pod))
            .map(|(u, _)| *u)
            .collect();
        let mut evidence = vec![s.evidence.clone()];
        evidence.extend(
            owners
                .iter()
                .filter(|(u, (pods, _))| pods.contains(pod) || s.uuids.contains(u))
                .map(|(_, (_, e))| e.clone()),
        );
        if allocated.is_empty() {
            ctx.push(
                &MAPPING,
                subject,
                Verdict::Incomplete,
                format!("dcgm-exporter series labelled pod=\"{}\"", pod.1),
                "none: the page was scraped after the Pod ended, or dcgm-exporter runs without pod mapping (--kubernetes)",
                evidence,
            );
            continue;
        }
        let saw: BTreeSet<&str> = s.uuids.iter().copied().collect();
        let mut wrong = Vec::new();
        let extra: Vec<&str> = saw.difference(&allocated).copied().collect();
        if !extra.is_empty() {
            wrong.push(format!("sees {} not allocated to it", extra.join(", ")));
        }
        let short: Vec<&str> = allocated.difference(&saw).copied().collect();
        if !short.is_empty() {
            wrong.push(format!(
                "was allocated {} it does not see",
                short.join(", ")
            ));
        }
        for u in &saw {
            let others: Vec<String> = seen_by
                .get(u)
                .into_iter()
                .flatten()
                .chain(owners.get(u).into_iter().flat_map(|(p, _)| p.iter()))
                .filter(|p| **p != pod && smoke_pods.contains(*p))
                .map(|p| format!("{}/{}", p.0, p.1))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if !others.is_empty() {
                wrong.push(format!("{u} also went to {}", others.join(", ")));
            }
        }
        let expected = format!(
            "the UUIDs allocated to it ({}), each to this Pod alone",
            allocated.len()
        );
        if wrong.is_empty() {
            ctx.push(
                &MAPPING,
                subject,
                Verdict::Pass,
                expected,
                format!("sees the {} GPUs allocated to it", saw.len()),
                evidence,
            );
        } else {
            ctx.push(
                &MAPPING,
                subject,
                Verdict::Fail,
                expected,
                wrong.join("; "),
                evidence,
            );
        }
    }
}
