//! Layer 3's pod mapping (`smoke.mapping`): the GPUs a smoke Pod saw are the ones the
//! kubelet allocated to it, and no GPU went to more smoke Pods than it may.
//!
//! The smoke Pod prints the UUIDs it sees and its own name (probe step `devices`, `pod`,
//! `namespace`); dcgm-exporter, scraped while the Pod holds its GPUs, labels each GPU's
//! series with the pod the kubelet's pod-resources API says holds it
//! ([`dcgm_exporter`](crate::accept::dcgm_exporter)). The two sets must be equal: a Pod
//! that sees a GPU the kubelet gave another container, or misses one it was given, has
//! its devices injected by something other than the allocation (a runtime that exposes
//! every GPU, a stale CDI spec, `NVIDIA_VISIBLE_DEVICES=all` in the image) — a
//! `driver-daemon` fault, as a short count is.
//!
//! What one GPU may go to follows `accelerators.sharing`:
//!
//! - **none**: each UUID is seen by one smoke Pod of the inputs (run together) and
//!   attributed to one.
//! - **MIG**: the Pod sees `MIG-` UUIDs and prints each one's parent GPU and GPU instance;
//!   the page labels the instance's series (parent `UUID`, `GPU_I_ID`). Each instance goes
//!   to one Pod, as a whole GPU does.
//! - **time-slicing, MPS**: a GPU goes to at most `replicas` Pods (those the page names
//!   and the smoke Pods that saw it). The rendered values set dcgm-exporter's
//!   `KUBERNETES_VIRTUAL_GPUS`, so the page names every pod of a shared GPU; a page
//!   without it (no `vgpu` label) names one of them, and the judge keeps to what that
//!   shows: the GPUs attributed to the Pod are among those it sees, and a GPU it sees is
//!   allocated to some pod. A Pod the page names nowhere is then `incomplete`.
//!
//! The page is read as it was scraped; a scrape with no series for the Pod (taken after
//! the Pod ended, or an exporter without pod mapping) is `incomplete`, never a pass. On
//! NVIDIA nodes where the smoke test is required a missing page is `incomplete` too.

use super::context::{Ctx, F, at, probe_steps};
use crate::accept::dcgm_exporter::{PodRef, Scrape, Slot};
use crate::accept::input::{Input, Output};
use crate::accept::probe::{Device, Suite};
use crate::blueprint::model::acceptance::Test;
use crate::blueprint::model::{SharingMode, Vendor};
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{Layer, Verdict};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const MAPPING: F = F {
    id: Cow::Borrowed("smoke.mapping"),
    layer: Layer::DeviceContainer,
    summary: "the GPUs (MIG: GPU instances) the smoke Pod saw are those the kubelet allocated to it (dcgm-exporter's pod labels), each to one smoke Pod (time-slicing, MPS: to at most `replicas` Pods)",
    fault: FaultClass::DriverDaemon,
    action: Action::RestartDaemon,
};

/// What the smoke Pods saw: per Pod, its GPUs (or GPU instances) and where it said so.
struct Seen {
    pod: Option<PodRef>,
    slots: Vec<Slot>,
    /// Why some device names no slot: no UUID, or a MIG device without its parent GPU
    /// and GPU instance.
    unnamed: Option<&'static str>,
    evidence: String,
}

/// The slot a device the Pod saw stands for, as dcgm-exporter keys its series.
fn slot(d: &Device) -> Result<Slot, &'static str> {
    match (&d.uuid, &d.parent, d.gpu_instance) {
        (_, Some(parent), Some(gi)) => Ok(Slot {
            uuid: parent.clone(),
            instance: Some(gi),
        }),
        (Some(u), _, _) if u.starts_with("MIG-") => Err(
            "a MIG device without its parent GPU and GPU instance (nvidia-smi missing from the image, or a probe older than this check)",
        ),
        (Some(u), _, _) => Ok(Slot::gpu(u)),
        (None, _, _) => Err("the runtime gave no UUID for some devices"),
    }
}

fn names(slots: impl IntoIterator<Item = impl std::fmt::Display>) -> String {
    slots
        .into_iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn mapping(ctx: &mut Ctx<'_>, inputs: &[Input]) {
    let seen: Vec<Seen> = probe_steps(inputs, Suite::Smoke)
        .into_iter()
        .filter(|(_, s)| s.name == "devices")
        .map(|(path, s)| {
            let devices = s.devices.as_deref().unwrap_or_default();
            let named: Vec<Result<Slot, &'static str>> = devices.iter().map(slot).collect();
            Seen {
                pod: s
                    .pod
                    .clone()
                    .map(|p| (s.namespace.clone().unwrap_or_default(), p)),
                slots: named.iter().filter_map(|n| n.clone().ok()).collect(),
                unnamed: named.iter().find_map(|n| n.clone().err()),
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
    let (mode, per_gpu) = ctx.policy.sharing;
    let shared = matches!(mode, SharingMode::TimeSlicing | SharingMode::Mps);
    // Under sharing, a page without `vgpu` labels names one pod of each shared GPU.
    let one_pod_named = shared && !scrapes.iter().any(|(_, s)| s.virtual_gpus);
    // Which pods each GPU is attributed to, over every scrape, with the first line.
    let mut owners: BTreeMap<&Slot, (BTreeSet<&PodRef>, String)> = BTreeMap::new();
    for (path, scrape) in &scrapes {
        for (slot, gpu) in &scrape.gpus {
            let entry = owners
                .entry(slot)
                .or_insert_with(|| (BTreeSet::new(), at(path, gpu.line)));
            entry.0.extend(gpu.pods.iter());
        }
    }
    let smoke_pods: BTreeSet<&PodRef> = seen.iter().filter_map(|s| s.pod.as_ref()).collect();
    // The smoke Pods that saw each GPU.
    let mut seen_by: BTreeMap<&Slot, BTreeSet<&PodRef>> = BTreeMap::new();
    for s in &seen {
        if let Some(pod) = &s.pod {
            for slot in &s.slots {
                seen_by.entry(slot).or_default().insert(pod);
            }
        }
    }
    let what = if mode == SharingMode::Mig {
        "GPU instances"
    } else {
        "GPUs"
    };
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
        if let Some(why) = s.unnamed {
            ctx.push(
                &MAPPING,
                subject,
                Verdict::Incomplete,
                "a UUID for every device the Pod saw (and for a MIG device, its parent GPU and GPU instance)",
                why,
                vec![s.evidence.clone()],
            );
            continue;
        }
        let allocated: BTreeSet<&Slot> = owners
            .iter()
            .filter(|(_, (pods, _))| pods.contains(pod))
            .map(|(u, _)| *u)
            .collect();
        let saw: BTreeSet<&Slot> = s.slots.iter().collect();
        let mut evidence = vec![s.evidence.clone()];
        evidence.extend(
            owners
                .iter()
                .filter(|(u, (pods, _))| pods.contains(pod) || saw.contains(*u))
                .map(|(_, (_, e))| e.clone()),
        );
        if allocated.is_empty() {
            let observed = if one_pod_named {
                format!(
                    "none: under {} this dcgm-exporter names one pod per GPU (no `vgpu` label: KUBERNETES_VIRTUAL_GPUS is off), and it named others; or the page was scraped after the Pod ended",
                    mode.as_str()
                )
            } else {
                "none: the page was scraped after the Pod ended, or dcgm-exporter runs without pod mapping (--kubernetes)".to_owned()
            };
            ctx.push(
                &MAPPING,
                subject,
                Verdict::Incomplete,
                format!("dcgm-exporter series labelled pod=\"{}\"", pod.1),
                observed,
                evidence,
            );
            continue;
        }
        let mut wrong = Vec::new();
        // What the Pod sees beyond its allocation. A page that names one pod per shared
        // GPU shows only that a GPU no pod holds, or one not on the page, is foreign.
        let extra: Vec<&Slot> = saw
            .difference(&allocated)
            .copied()
            .filter(|u| !one_pod_named || owners.get(u).is_none_or(|(p, _)| p.is_empty()))
            .collect();
        if !extra.is_empty() {
            wrong.push(format!("sees {} not allocated to it", names(&extra)));
        }
        let short: Vec<&Slot> = allocated.difference(&saw).copied().collect();
        if !short.is_empty() {
            wrong.push(format!("was allocated {} it does not see", names(&short)));
        }
        for u in &saw {
            let holders: BTreeSet<&PodRef> = seen_by
                .get(u)
                .into_iter()
                .flatten()
                .copied()
                .chain(
                    owners
                        .get(u)
                        .into_iter()
                        .flat_map(|(p, _)| p.iter().copied()),
                )
                .collect();
            let show = |p: &&PodRef| format!("{}/{}", p.0, p.1);
            if per_gpu <= 1 {
                let others: Vec<String> = holders
                    .iter()
                    .filter(|p| ***p != *pod && smoke_pods.contains(**p))
                    .map(show)
                    .collect();
                if !others.is_empty() {
                    wrong.push(format!("{u} also went to {}", others.join(", ")));
                }
            } else if holders.len() > per_gpu as usize {
                wrong.push(format!(
                    "{u} went to {} Pods ({}), more than its {per_gpu} {} replicas",
                    holders.len(),
                    holders.iter().map(show).collect::<Vec<_>>().join(", "),
                    mode.as_str()
                ));
            }
        }
        let expected = if per_gpu <= 1 {
            format!(
                "the {what} allocated to it ({}), each to this Pod alone",
                allocated.len()
            )
        } else {
            format!(
                "the {what} allocated to it ({}), each to at most {per_gpu} Pods ({} replicas)",
                allocated.len(),
                mode.as_str()
            )
        };
        if wrong.is_empty() {
            let mut observed = format!("sees the {} {what} allocated to it", saw.len());
            if one_pod_named && allocated.len() < saw.len() {
                observed.push_str(&format!(
                    "; this dcgm-exporter names one pod per shared GPU (no `vgpu` label: KUBERNETES_VIRTUAL_GPUS is off), so {} of them were matched with the allocation",
                    allocated.len()
                ));
            }
            ctx.push(
                &MAPPING,
                subject,
                Verdict::Pass,
                expected,
                observed,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn device(uuid: Option<&str>, parent: Option<&str>, gi: Option<u32>) -> Device {
        Device {
            index: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            uuid: uuid.map(str::to_owned),
            bus: None,
            parent: parent.map(str::to_owned),
            gpu_instance: gi,
        }
    }

    /// A whole GPU is its UUID; a MIG device is its parent GPU and GPU instance, as
    /// dcgm-exporter keys the instance's series; a MIG device without them, or a device
    /// without a UUID, names nothing to match.
    #[test]
    fn a_device_is_matched_as_dcgm_exporter_keys_it() {
        assert_eq!(
            slot(&device(Some("GPU-1"), None, None)),
            Ok(Slot::gpu("GPU-1"))
        );
        assert_eq!(
            slot(&device(Some("MIG-9"), Some("GPU-1"), Some(3))),
            Ok(Slot {
                uuid: "GPU-1".into(),
                instance: Some(3)
            })
        );
        assert!(
            slot(&device(Some("MIG-9"), None, None))
                .unwrap_err()
                .contains("parent GPU")
        );
        assert!(
            slot(&device(Some("MIG-9"), Some("GPU-1"), None))
                .unwrap_err()
                .contains("GPU instance")
        );
        assert!(
            slot(&device(None, None, None))
                .unwrap_err()
                .contains("no UUID")
        );
    }
}
