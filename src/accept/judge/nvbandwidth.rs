//! Layer 4, nvbandwidth (NVIDIA): host-to-device, device-to-host and device-to-device
//! copy bandwidth on every GPU, against the topology's thresholds, recorded as figures,
//! and the slowest GPU pair over NVLink named.

use super::context::{Ctx, F, at, fmt, not_run, round};
use crate::accept::input::{Input, Output};
use crate::accept::nvbandwidth::Nvbandwidth;
use crate::accept::threshold::Figure;
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

pub(super) fn nvbandwidth(
    ctx: &mut Ctx<'_>,
    inputs: &[Input],
) -> (Run<record::NvbandwidthResult>, Option<String>) {
    const GPUS: F = F {
        id: Cow::Borrowed("nvbandwidth.gpus"),
        layer: Layer::Interconnect,
        summary: "nvbandwidth measured every GPU of the blueprint",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const H2D: F = F {
        id: Cow::Borrowed("nvbandwidth.host-to-device"),
        layer: Layer::Interconnect,
        summary: "host→GPU copy bandwidth of every GPU",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const D2H: F = F {
        id: Cow::Borrowed("nvbandwidth.device-to-host"),
        layer: Layer::Interconnect,
        summary: "GPU→host copy bandwidth of every GPU",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const D2D: F = F {
        id: Cow::Borrowed("nvbandwidth.device-to-device"),
        layer: Layer::Interconnect,
        summary: "GPU→GPU copy bandwidth of every pair (NVLink)",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    for input in inputs {
        if let Output::P2p(p) = &input.output {
            for m in &p.matrices {
                if (m.title.starts_with("Unidirectional P2P=Enabled")
                    || m.title.starts_with("Bidirectional P2P=Enabled"))
                    && let Some((_, _, v)) = m.min()
                {
                    let key = if m.title.starts_with("Uni") {
                        "p2p.unidirectional.min"
                    } else {
                        "p2p.bidirectional.min"
                    };
                    ctx.figure(key.to_owned(), v, "GB/s", true, at(&input.path, m.line));
                }
            }
        }
    }
    let runs: Vec<(&Path, &Nvbandwidth)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Nvbandwidth(n) => Some((i.path.as_path(), n)),
            _ => None,
        })
        .collect();
    if runs.is_empty() {
        not_run(ctx, Test::Nvbandwidth, &H2D, "nvbandwidth");
        return (Run::not_run("no nvbandwidth output among the inputs"), None);
    }
    // Testcases may come from several runs (`nvbandwidth -t ...` per test): the last
    // output that has a testcase counts for it.
    let mut cases: BTreeMap<&str, (&Path, &crate::accept::nvbandwidth::Testcase)> = BTreeMap::new();
    for (path, nv) in &runs {
        for case in &nv.testcases {
            cases.insert(case.name.as_str(), (*path, case));
        }
    }
    let mut minimum = BTreeMap::new();
    let mut waived = Vec::new();
    for (name, (path, case)) in &cases {
        if case.waived {
            waived.push((*name).to_owned());
            continue;
        }
        if let Some((_, _, v)) = case.matrix().and_then(|m| m.min()) {
            minimum.insert((*name).to_owned(), round(v));
            let unit = if case.matrix().is_some_and(|m| m.title.ends_with("(ns)")) {
                "ns"
            } else {
                "GB/s"
            };
            ctx.figure(
                format!("nvbandwidth.{name}.min"),
                v,
                unit,
                unit != "ns",
                at(path, case.line),
            );
        }
    }
    // GPUs: the columns of any matrix (GPU columns in every testcase).
    let gpus = cases
        .values()
        .filter_map(|(_, c)| c.matrix())
        .map(|m| m.columns.len())
        .chain(runs.iter().map(|(_, n)| n.devices.len()))
        .max()
        .unwrap_or(0);
    let want = ctx.gpus() as usize;
    let first = at(runs[0].0, 1);
    ctx.push(
        &GPUS,
        None,
        if gpus >= want {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        format!("{want} GPUs"),
        format!("{gpus} GPUs measured"),
        vec![first.clone()],
    );
    for (f, name) in [
        (&H2D, "host_to_device_memcpy_ce"),
        (&D2H, "device_to_host_memcpy_ce"),
    ] {
        match cases.get(name) {
            Some((path, case)) if !case.waived => match case.matrix().and_then(|m| m.min()) {
                Some((_, gpu, v)) => ctx.bandwidth(
                    f,
                    Figure::NvbandwidthHostDevice,
                    Some(format!("GPU {gpu}")),
                    v,
                    1.0,
                    vec![at(path, case.line)],
                ),
                None => ctx.push(
                    f,
                    None,
                    Verdict::Incomplete,
                    "a measured value per GPU",
                    "no value",
                    vec![at(path, case.line)],
                ),
            },
            Some((path, case)) => ctx.push(
                f,
                None,
                Verdict::Incomplete,
                format!("{name} measured"),
                "waived",
                vec![at(path, case.line)],
            ),
            None => ctx.push(
                f,
                None,
                Verdict::Incomplete,
                format!("testcase {name}"),
                "not in the output",
                vec![first.clone()],
            ),
        }
    }
    let mut nvlink = None;
    if ctx.policy.topology.gpu_links && want >= 2 {
        // Azure's check reads device_to_device_memcpy_read_ce; the write test measures the
        // same links and counts when the read test was not run.
        let found = [
            "device_to_device_memcpy_read_ce",
            "device_to_device_memcpy_write_ce",
        ]
        .iter()
        .find_map(|n| cases.get(n).map(|c| (*n, *c)));
        match found {
            Some((name, (path, case))) if !case.waived => match case.matrix().and_then(|m| m.min())
            {
                Some((a, b, v)) => {
                    nvlink = Some(format!(
                        "slowest pair GPU {a} -> GPU {b}: {} GB/s (nvbandwidth {name})",
                        fmt(v)
                    ));
                    ctx.bandwidth(
                        &D2D,
                        Figure::NvbandwidthDeviceDevice,
                        Some(format!("GPU {a} -> GPU {b}")),
                        v,
                        1.0,
                        vec![at(path, case.line)],
                    );
                }
                None => ctx.push(
                    &D2D,
                    None,
                    Verdict::Incomplete,
                    "a value per GPU pair",
                    "no value",
                    vec![at(path, case.line)],
                ),
            },
            Some((name, (path, case))) => ctx.push(
                &D2D,
                None,
                Verdict::Incomplete,
                format!("{name} measured over NVLink"),
                "waived",
                vec![at(path, case.line)],
            ),
            None => ctx.push(
                &D2D,
                None,
                Verdict::Incomplete,
                "testcase device_to_device_memcpy_read_ce",
                "not in the output",
                vec![first],
            ),
        }
    }
    let record = record::NvbandwidthResult {
        version: runs.iter().find_map(|(_, n)| n.version.clone()),
        gpus,
        minimum_gbps: minimum,
        waived,
        evidence: runs.iter().map(|(p, _)| at(p, 1)).collect(),
    };
    (Run::Done(record), nvlink)
}
