//! Layer 3, the device in a container: the smoke Pod's probe report judged. The Pod
//! received every device it requested, each once (`smoke.devices`), ran a kernel on them
//! (`smoke.kernel`), and, where the blueprint sets `system.shmSize`, saw a `/dev/shm` at
//! least that large (`smoke.shm`: the rendered shm policy reached the Pod). A device
//! plugin or runtime that hands out fewer devices is a `driver-daemon` fault.

use super::context::{Ctx, F, at, not_run, probe_steps};
use crate::accept::input::Input;
use crate::accept::probe::{Step, StepStatus, Suite};
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
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
    let mut requested = None;
    let mut received = Vec::new();
    match devices {
        None => ctx.push(
            &DEVICES,
            None,
            Verdict::Incomplete,
            "a `devices` step",
            "the smoke output has none",
            evidence.clone(),
        ),
        Some((path, step)) => {
            let list = step.devices.clone().unwrap_or_default();
            requested = step.requested;
            received = list
                .iter()
                .map(|d| record::ReceivedDevice {
                    index: d.index,
                    name: d.name.clone(),
                    uuid: d.uuid.clone(),
                    bus: d.bus.clone(),
                })
                .collect();
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
                    &DEVICES,
                    None,
                    Verdict::Incomplete,
                    format!("{want} devices requested"),
                    "the output does not say how many were requested",
                    ev,
                ),
                Some(r) if r < want => ctx.push(
                    &DEVICES,
                    None,
                    Verdict::Incomplete,
                    format!("the Pod requests all {want} GPUs of the node"),
                    format!("requested {r}"),
                    ev,
                ),
                Some(r) if list.len() as u32 != r || !unique || step.status == StepStatus::Fail => {
                    ctx.push(
                        &DEVICES,
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
                    &DEVICES,
                    None,
                    Verdict::Pass,
                    format!("{r} distinct devices"),
                    format!("received {}", list.len()),
                    ev,
                ),
            }
        }
    }
    let kernel = steps.iter().find(|(_, s)| s.name == "tensor");
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
            let (verdict, observed) = match step.status {
                StepStatus::Pass => (Verdict::Pass, "pass".to_owned()),
                StepStatus::Skip => (Verdict::Incomplete, "skipped".to_owned()),
                StepStatus::Fail => (
                    Verdict::Fail,
                    format!(
                        "fail: {}",
                        step.error.as_deref().unwrap_or("no reason given")
                    ),
                ),
            };
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
