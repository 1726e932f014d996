//! Layer 4, rocm-bandwidth-test (AMD, nvbandwidth's counterpart): the unidirectional
//! all-device matrix of `-a` judged cell by cell class — host→GPU, GPU→host, GPU→GPU over
//! Infinity Fabric — by its slowest cell against `amd-copy-bandwidth.csv` (or the
//! blueprint's override), every minimum recorded as a figure for the regression check, and
//! the bidirectional matrix of `-A`, where given, recorded alongside.

use super::context::{Ctx, F, at, not_run};
use crate::accept::input::{Input, Output};
use crate::accept::matrix::Matrix;
use crate::accept::rocm_bandwidth::RocmBandwidth;
use crate::accept::threshold::Figure;
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{Layer, Verdict};
use std::borrow::Cow;
use std::path::Path;

/// Which cells of the matrix a finding reads.
#[derive(Clone, Copy)]
enum Cells {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

/// The slowest cell of a class: (source device, destination device, GB/s).
fn slowest(m: &Matrix, gpus: &[u32], cells: Cells) -> Option<(u32, u32, f64)> {
    let gpu = |d: &u32| gpus.contains(d);
    m.cells()
        .into_iter()
        .filter(|(src, dst, _)| match cells {
            Cells::HostToDevice => !gpu(src) && gpu(dst),
            Cells::DeviceToHost => gpu(src) && !gpu(dst),
            Cells::DeviceToDevice => gpu(src) && gpu(dst),
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
}

/// A device as findings name it: `GPU 3 (device 5)`, `CPU 1`.
fn name(id: u32, gpus: &[u32]) -> String {
    match gpus.iter().position(|g| *g == id) {
        Some(i) => format!("GPU {i} (device {id})"),
        None => format!("CPU {id}"),
    }
}

pub(super) fn rocm_bandwidth(ctx: &mut Ctx<'_>, inputs: &[Input]) {
    const GPUS: F = F {
        id: Cow::Borrowed("rocm-bandwidth.gpus"),
        layer: Layer::Interconnect,
        summary: "rocm-bandwidth-test measured every GPU of the blueprint",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const H2D: F = F {
        id: Cow::Borrowed("rocm-bandwidth.host-to-device"),
        layer: Layer::Interconnect,
        summary: "host→GPU copy bandwidth of every GPU (rocm-bandwidth-test -a)",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const D2H: F = F {
        id: Cow::Borrowed("rocm-bandwidth.device-to-host"),
        layer: Layer::Interconnect,
        summary: "GPU→host copy bandwidth of every GPU (rocm-bandwidth-test -a)",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const D2D: F = F {
        id: Cow::Borrowed("rocm-bandwidth.device-to-device"),
        layer: Layer::Interconnect,
        summary: "GPU→GPU copy bandwidth of every pair over Infinity Fabric (rocm-bandwidth-test -a)",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    let runs: Vec<(&Path, &RocmBandwidth)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::RocmBandwidth(r) => Some((i.path.as_path(), r)),
            _ => None,
        })
        .collect();
    if runs.is_empty() {
        not_run(ctx, Test::RocmBandwidth, &D2D, "rocm-bandwidth-test -a");
        return;
    }
    let want = ctx.gpus() as usize;
    // The last run that has each matrix counts for it.
    let find = |uni: bool| {
        runs.iter()
            .rev()
            .find_map(|(p, r)| r.peak(uni).map(|m| (*p, *r, m)))
    };
    if let Some((path, run, m)) = find(false) {
        let gpus = run.gpu_ids(want);
        if let Some((_, _, v)) = slowest(m, &gpus, Cells::DeviceToDevice) {
            ctx.figure(
                "rocm-bandwidth.bidirectional.device-to-device.min".to_owned(),
                v,
                "GB/s",
                true,
                at(path, m.line),
            );
        }
    }
    let Some((path, run, m)) = find(true) else {
        ctx.push(
            &D2D,
            None,
            Verdict::Incomplete,
            "the unidirectional matrix of `rocm-bandwidth-test -a` (the thresholds are defined on it)",
            "a bidirectional matrix only",
            runs.iter().map(|(p, _)| at(p, 1)).collect(),
        );
        return;
    };
    let evidence = vec![at(path, m.line)];
    let gpus = run.gpu_ids(want);
    ctx.push(
        &GPUS,
        None,
        if gpus.len() >= want {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        format!("{want} GPUs"),
        format!("{} GPUs measured", gpus.len()),
        evidence.clone(),
    );
    for (f, cells, figure, key) in [
        (
            &H2D,
            Cells::HostToDevice,
            Figure::RocmBandwidthHostDevice,
            "host-to-device",
        ),
        (
            &D2H,
            Cells::DeviceToHost,
            Figure::RocmBandwidthHostDevice,
            "device-to-host",
        ),
        (
            &D2D,
            Cells::DeviceToDevice,
            Figure::RocmBandwidthDeviceDevice,
            "device-to-device",
        ),
    ] {
        match slowest(m, &gpus, cells) {
            Some((src, dst, v)) => {
                ctx.figure(
                    format!("rocm-bandwidth.unidirectional.{key}.min"),
                    v,
                    "GB/s",
                    true,
                    evidence[0].clone(),
                );
                ctx.bandwidth(
                    f,
                    figure,
                    Some(format!("{} → {}", name(src, &gpus), name(dst, &gpus))),
                    v,
                    1.0,
                    evidence.clone(),
                );
            }
            None => ctx.push(
                f,
                None,
                Verdict::Incomplete,
                "a measured cell",
                "none of this kind in the matrix (N/A, or no such devices)",
                evidence.clone(),
            ),
        }
    }
}
