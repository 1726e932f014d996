//! Layer 3, the device in a container: the smoke Pod's probe report judged. The Pod
//! received every device it requested, each once (`smoke.devices`), ran a kernel on them
//! (`smoke.kernel`), and, where the blueprint sets `system.shmSize`, saw a `/dev/shm` at
//! least that large (`smoke.shm`: the rendered shm policy reached the Pod). A device
//! plugin or runtime that hands out fewer devices is a `driver-daemon` fault.
//!
//! Under time-slicing or MPS the device plugin refuses a request for more than one
//! replica, so the smoke test is GPUs × replicas Pods of one replica each, run together:
//! each received one device and each GPU went to exactly `replicas` of them, and every
//! Pod's kernel ran.

use super::context::{Ctx, F, at, not_run, probe_steps, step_verdict};
use crate::accept::input::Input;
use crate::accept::probe::{Step, StepStatus, Suite};
use crate::blueprint::model::SharingMode;
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

pub(super) fn smoke(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<record::DeviceContainer> {
    const DEVICES: F = F {
        id: Cow::Borrowed("smoke.devices"),
        layer: Layer::DeviceContainer,
        summary: "the smoke Pod received every device it requested, each once",
        fault: FaultClass::DriverDaemon,
        action: Action::RestartDaemon,
    };
    const KERNEL: F = F {
        id: Cow::Borrowed("smoke.kernel"),
        layer: Layer::DeviceContainer,
        summary: "the smoke Pod ran a kernel on its devices",
        fault: FaultClass::DriverDaemon,
        action: Action::RestartDaemon,
    };
    const SHM: F = F {
        id: Cow::Borrowed("smoke.shm"),
        layer: Layer::DeviceContainer,
        summary: "the smoke Pod's /dev/shm is at least system.shmSize (the rendered shm policy applied)",
        fault: FaultClass::DriverDaemon,
        action: Action::RestartDaemon,
    };
    let steps = probe_steps(inputs, Suite::Smoke);
    if steps.is_empty() {
        not_run(
            ctx,
            Test::Smoke,
            &DEVICES,
            "the smoke Pod (probe suite smoke)",
        );
        return Run::not_run("no smoke Pod output among the inputs");
    }
    let evidence: Vec<String> = steps.iter().map(|(p, s)| at(p, s.line)).collect();
    let devices = steps.iter().find(|(_, s)| s.name == "devices");
    let (mode, replicas) = ctx.policy.sharing;
    let (requested, received) = if matches!(mode, SharingMode::TimeSlicing | SharingMode::Mps) {
        shared(ctx, &DEVICES, &steps, mode, replicas)
    } else {
        whole(ctx, &DEVICES, devices, &evidence)
    };
    // Every smoke Pod's kernel counts (GPUs × replicas Pods under sharing): the worst
    // one is the verdict, its line the evidence.
    let tensors: Vec<&(&Path, &Step)> = steps.iter().filter(|(_, s)| s.name == "tensor").collect();
    let kernel = [StepStatus::Fail, StepStatus::Skip, StepStatus::Pass]
        .iter()
        .find_map(|want| tensors.iter().find(|(_, s)| s.status == *want))
        .copied();
    let kernel_status = match kernel {
        None => {
            ctx.push(
                &KERNEL,
                None,
                Verdict::Incomplete,
                "a `tensor` step",
                "the smoke output has none",
                evidence.clone(),
            );
            "not run".to_owned()
        }
        Some((path, step)) => {
            let (verdict, observed) = step_verdict(step);
            ctx.push(
                &KERNEL,
                None,
                verdict,
                "pass",
                observed,
                vec![at(path, step.line)],
            );
            format!("{:?}", step.status).to_lowercase()
        }
    };
    if let Some(want) = ctx.policy.shm_bytes {
        shm(ctx, &SHM, &steps, want, &evidence);
    }
    Run::Done(record::DeviceContainer {
        requested,
        received,
        kernel: kernel_status,
        evidence,
    })
}

/// Whole GPUs (and MIG devices): one Pod asked for every GPU of the node and received
/// that many, each once.
fn whole(
    ctx: &mut Ctx<'_>,
    f: &F,
    devices: Option<&(&Path, &Step)>,
    evidence: &[String],
) -> (Option<u32>, Vec<record::ReceivedDevice>) {
    let mut requested = None;
    let mut received = Vec::new();
    match devices {
        None => ctx.push(
            f,
            None,
            Verdict::Incomplete,
            "a `devices` step",
            "the smoke output has none",
            evidence.to_vec(),
        ),
        Some((path, step)) => {
            let list = step.devices.clone().unwrap_or_default();
            requested = step.requested;
            received = record_of(&list);
            let mut ids: Vec<&str> = list
                .iter()
                .map(|d| d.uuid.as_deref().unwrap_or(&d.name))
                .collect();
            ids.sort_unstable();
            let unique =
                ids.windows(2).all(|w| w[0] != w[1]) || list.iter().all(|d| d.uuid.is_none());
            let ev = vec![at(path, step.line)];
            let want = ctx.gpus();
            match step.requested {
                None => ctx.push(
                    f,
                    None,
                    Verdict::Incomplete,
                    format!("{want} devices requested"),
                    "the output does not say how many were requested",
                    ev,
                ),
                Some(r) if r < want => ctx.push(
                    f,
                    None,
                    Verdict::Incomplete,
                    format!("the Pod requests all {want} GPUs of the node"),
                    format!("requested {r}"),
                    ev,
                ),
                Some(r) if list.len() as u32 != r || !unique || step.status == StepStatus::Fail => {
                    ctx.push(
                        f,
                        None,
                        Verdict::Fail,
                        format!("{r} distinct devices"),
                        format!(
                            "received {}{}{}",
                            list.len(),
                            if unique { "" } else { ", some more than once" },
                            step.error
                                .as_deref()
                                .map(|e| format!(": {e}"))
                                .unwrap_or_default()
                        ),
                        ev,
                    )
                }
                Some(r) => ctx.push(
                    f,
                    None,
                    Verdict::Pass,
                    format!("{r} distinct devices"),
                    format!("received {}", list.len()),
                    ev,
                ),
            }
        }
    }
    (requested, received)
}

/// The devices a Pod printed, as the record keeps them.
fn record_of(list: &[crate::accept::probe::Device]) -> Vec<record::ReceivedDevice> {
    list.iter()
        .map(|d| record::ReceivedDevice {
            index: d.index,
            name: d.name.clone(),
            uuid: d.uuid.clone(),
            bus: d.bus.clone(),
        })
        .collect()
}

/// Time-slicing and MPS: the device plugin (v0.18.1, `internal/rm/rm.go`
/// `ValidateRequest`) refuses a request for more than one replica, so the smoke test is
/// GPUs × replicas Pods of one replica each, run together (`smoke-pod.yaml`): the node's
/// whole shared capacity. Each Pod received one device, and each GPU went to exactly
/// `replicas` of them; a GPU in more is a replica handed out twice, a GPU in none one
/// the plugin does not serve.
fn shared(
    ctx: &mut Ctx<'_>,
    f: &F,
    steps: &[(&Path, &Step)],
    mode: SharingMode,
    replicas: u32,
) -> (Option<u32>, Vec<record::ReceivedDevice>) {
    let pods: Vec<&(&Path, &Step)> = steps.iter().filter(|(_, s)| s.name == "devices").collect();
    let gpus = ctx.gpus();
    let want = gpus * replicas;
    let ev: Vec<String> = pods.iter().map(|(p, s)| at(p, s.line)).collect();
    let received: Vec<record::ReceivedDevice> = pods
        .iter()
        .flat_map(|(_, s)| record_of(s.devices.as_deref().unwrap_or_default()))
        .collect();
    let requested = pods.iter().map(|(_, s)| s.requested).sum::<Option<u32>>();
    let name = |(p, s): &(&Path, &Step)| s.pod.clone().unwrap_or_else(|| p.display().to_string());
    let plan = format!(
        "{want} smoke Pods ({gpus} GPUs × {replicas} {} replicas), one replica each, each GPU in {replicas}",
        mode.as_str()
    );
    let asked_more: Vec<String> = pods
        .iter()
        .filter(|(_, s)| s.requested != Some(1))
        .map(|p| {
            format!(
                "{} requested {}",
                name(p),
                p.1.requested
                    .map_or("an unsaid number".into(), |r| r.to_string())
            )
        })
        .collect();
    if !asked_more.is_empty() {
        ctx.push(
            f,
            None,
            Verdict::Incomplete,
            format!("{plan}: the device plugin refuses a shared request for more than one"),
            asked_more.join("; "),
            ev,
        );
        return (requested, received);
    }
    let bad: Vec<String> = pods
        .iter()
        .filter(|(_, s)| {
            s.status == StepStatus::Fail || s.devices.as_ref().is_none_or(|d| d.len() != 1)
        })
        .map(|p| {
            format!(
                "{} received {}{}",
                name(p),
                p.1.devices.as_ref().map_or(0, Vec::len),
                p.1.error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    if !bad.is_empty() {
        ctx.push(f, None, Verdict::Fail, plan, bad.join("; "), ev);
        return (requested, received);
    }
    if pods.len() as u32 != want {
        ctx.push(
            f,
            None,
            Verdict::Incomplete,
            plan,
            format!("{} smoke Pods' output", pods.len()),
            ev,
        );
        return (requested, received);
    }
    if received.iter().any(|d| d.uuid.is_none()) {
        ctx.push(
            f,
            None,
            Verdict::Incomplete,
            plan,
            "the runtime gave no UUID for some devices",
            ev,
        );
        return (requested, received);
    }
    let mut per_gpu: BTreeMap<&str, u32> = BTreeMap::new();
    for d in &received {
        *per_gpu
            .entry(d.uuid.as_deref().unwrap_or_default())
            .or_default() += 1;
    }
    let over: Vec<String> = per_gpu
        .iter()
        .filter(|(_, n)| **n != replicas)
        .map(|(u, n)| format!("{u} in {n}"))
        .collect();
    if over.is_empty() && per_gpu.len() as u32 == gpus {
        ctx.push(
            f,
            None,
            Verdict::Pass,
            plan,
            format!(
                "{} replicas of {} GPUs, {replicas} each",
                received.len(),
                per_gpu.len()
            ),
            ev,
        );
    } else {
        ctx.push(
            f,
            None,
            Verdict::Fail,
            plan,
            format!(
                "{} distinct GPUs{}{}",
                per_gpu.len(),
                if over.is_empty() { "" } else { "; " },
                over.join(", ")
            ),
            ev,
        );
    }
    (requested, received)
}

/// The smoke Pod's `shm` step: the size of its `/dev/shm` (statvfs inside the container).
/// Where the blueprint sets `system.shmSize`, the rendered Kyverno policy mounts a
/// memory-backed emptyDir of that size there; a smaller one (the sandbox's own 64 MiB
/// tmpfs) means the policy did not reach the Pod. A memory-backed emptyDir is sized
/// the least of its `sizeLimit`, the Pod's memory limit and the node's allocatable
/// memory (EmptyDirVolumeSource.sizeLimit in the Kubernetes API), and the smoke Pod sets
/// no memory limit.
fn shm(ctx: &mut Ctx<'_>, f: &F, steps: &[(&Path, &Step)], want: u64, evidence: &[String]) {
    let expected = format!("/dev/shm of {want} bytes or more (system.shmSize)");
    let Some((path, step)) = steps.iter().find(|(_, s)| s.name == "shm") else {
        ctx.push(
            f,
            None,
            Verdict::Fail,
            expected,
            "the smoke output has no `shm` step: its probe does not report /dev/shm",
            evidence.to_vec(),
        );
        return;
    };
    let ev = vec![at(path, step.line)];
    let observed = step.metrics.get("bytes").copied();
    let (verdict, observed) = match (step.status, observed) {
        (StepStatus::Pass, Some(bytes)) if bytes >= want as f64 => {
            (Verdict::Pass, format!("{bytes} bytes"))
        }
        (StepStatus::Pass, Some(bytes)) => (
            Verdict::Fail,
            format!(
                "{bytes} bytes: the shm policy did not apply to the Pod (is Kyverno running and the policy applied?)"
            ),
        ),
        (_, _) => (
            Verdict::Fail,
            format!(
                "no size: {}",
                step.error
                    .as_deref()
                    .unwrap_or("the step reports no `bytes`")
            ),
        ),
    };
    ctx.push(f, None, verdict, expected, observed, ev);
}
