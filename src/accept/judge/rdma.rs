//! Layer 4, RDMA: perftest's `ib_write_bw` on every RDMA rail, its bandwidth per rail at
//! the message size the threshold is defined at (from GPU memory where GPUDirect is
//! declared) against the rail threshold, and, where GPUDirect goes through DMA-BUF, that
//! perftest registered its GPU buffers that way.

use super::context::{Ctx, F, at, fmt, not_run};
use crate::accept::input::{Input, Output};
use crate::accept::perftest::{Kind, PerftestRun};
use crate::accept::threshold::Figure;
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::Path;

/// The per-rail threshold is defined at 8 MiB (`ib_write_bw -s 8388608`).
pub const RDMA_MIN_BYTES: u64 = 8 << 20;

pub(super) fn rdma(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<Vec<record::RdmaResult>> {
    const RAILS: F = F {
        id: Cow::Borrowed("rdma.rails"),
        layer: Layer::Interconnect,
        summary: "ib_write_bw measured every RDMA rail",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const BW: F = F {
        id: Cow::Borrowed("rdma.bandwidth"),
        layer: Layer::Interconnect,
        summary: "ib_write_bw bandwidth per rail at 8 MiB (GPU memory where GPUDirect is declared)",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const DMA_BUF: F = F {
        id: Cow::Borrowed("rdma.dma-buf"),
        layer: Layer::Interconnect,
        summary: "perftest registered its GPU buffers through DMA-BUF (NVIDIA without OFED: no nvidia_peermem)",
        fault: FaultClass::DriverDaemon,
        action: Action::Service,
    };
    let runs: Vec<(&Path, &PerftestRun)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Perftest(r) => Some(r.iter().map(move |r| (i.path.as_path(), r))),
            _ => None,
        })
        .flatten()
        .collect();
    if runs.is_empty() {
        not_run(
            ctx,
            Test::Rdma,
            &RAILS,
            "perftest ib_write_bw on every rail",
        );
        return Run::not_run("no perftest output among the inputs");
    }
    let mut records = Vec::new();
    let mut rails = BTreeSet::new();
    for (path, run) in &runs {
        let device = run.device.clone().unwrap_or_else(|| "unknown".into());
        let op = run
            .title
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches("RDMA_")
            .to_ascii_lowercase();
        let ev = at(path, run.lines.1);
        // Without OFED, GPU memory reaches the NIC only through DMA-BUF: perftest prints
        // "using DMA-BUF for GPU buffer ..." when it registered the buffer with
        // ibv_reg_dmabuf_mr (`--use_cuda_dmabuf`); a CUDA run without it went another way
        // (nvidia_peermem, which this image does not load), or used host memory after all.
        if ctx.policy.dma_buf
            && let Some(gpu) = run.gpu.as_ref().filter(|g| g.api == "cuda")
        {
            let (verdict, observed) = if gpu.dmabuf {
                (Verdict::Pass, "using DMA-BUF".to_owned())
            } else {
                (
                    Verdict::Fail,
                    "CUDA buffers without a `using DMA-BUF` line: not registered through DMA-BUF (run ib_write_bw with --use_cuda_dmabuf; the open kernel modules and a DMA-BUF kernel are needed)".to_owned(),
                )
            };
            ctx.push(
                &DMA_BUF,
                Some(format!("{device} {}", run.title)),
                verdict,
                "GPU buffers registered through DMA-BUF (`using DMA-BUF`)",
                observed,
                vec![at(path, run.lines.0)],
            );
        }
        match run.kind {
            Kind::Bandwidth => {
                let Some(row) = run.largest() else { continue };
                let dir = if run.bidirectional { "-bidir" } else { "" };
                ctx.figure(
                    format!("rdma.{device}.{op}{dir}"),
                    row.average_gbps,
                    "Gb/s",
                    true,
                    at(path, row.line),
                );
                records.push(record::RdmaResult {
                    device: run.device.clone(),
                    test: run.title.clone(),
                    bidirectional: run.bidirectional,
                    gpu_memory: run.gpu.as_ref().map(|g| g.api.clone()),
                    bytes: row.bytes,
                    average_gbps: Some(row.average_gbps),
                    latency_usec: None,
                    evidence: ev.clone(),
                });
                if op != "write" {
                    continue;
                }
                rails.insert(device.clone());
                let row_ev = vec![at(path, row.line)];
                if row.bytes < RDMA_MIN_BYTES {
                    ctx.push(
                        &BW,
                        Some(device),
                        Verdict::Incomplete,
                        format!("a message of {} MiB or more", RDMA_MIN_BYTES >> 20),
                        format!("largest message {} bytes", row.bytes),
                        row_ev,
                    );
                } else if ctx.policy.gpudirect && run.gpu.is_none() {
                    ctx.push(
                        &BW,
                        Some(device),
                        Verdict::Incomplete,
                        "buffers in GPU memory (GPUDirect RDMA is declared: network.affinity.gpuNicSamePcieSwitch)",
                        format!("host memory, {} Gb/s", fmt(row.average_gbps)),
                        row_ev,
                    );
                } else {
                    // Bidirectional runs report both directions together.
                    let scale = if run.bidirectional { 2.0 } else { 1.0 };
                    ctx.bandwidth(
                        &BW,
                        Figure::RdmaWrite,
                        Some(device),
                        row.average_gbps,
                        scale,
                        row_ev,
                    );
                }
            }
            Kind::Latency => {
                let Some(row) = run.smallest_latency() else {
                    continue;
                };
                ctx.figure(
                    format!("rdma.{device}.{op}-latency"),
                    row.usec[2],
                    "us",
                    false,
                    at(path, row.line),
                );
                records.push(record::RdmaResult {
                    device: run.device.clone(),
                    test: run.title.clone(),
                    bidirectional: false,
                    gpu_memory: run.gpu.as_ref().map(|g| g.api.clone()),
                    bytes: row.bytes,
                    average_gbps: None,
                    latency_usec: Some(row.usec[2]),
                    evidence: ev,
                });
            }
        }
    }
    let want = ctx.policy.topology.rail_count() as usize;
    if want > 0 {
        let verdict = if rails.len() >= want {
            Verdict::Pass
        } else {
            Verdict::Incomplete
        };
        ctx.push(
            &RAILS,
            None,
            verdict,
            format!("ib_write_bw on each of {want} rails"),
            format!(
                "{} rail(s): {}",
                rails.len(),
                rails.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            runs.iter().map(|(p, r)| at(p, r.lines.0)).collect(),
        );
    }
    Run::Done(records)
}
