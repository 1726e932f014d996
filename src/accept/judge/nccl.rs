//! Layer 4, NCCL / RCCL collectives (nccl-tests, rccl-tests): the single-node all-reduce
//! on every GPU and the multi-node one on every GPU of this node and enough nodes, each
//! with its results validated and correct, messages as large as the threshold is defined
//! at, and the bus bandwidth against the threshold, recorded as figures; other
//! collectives are judged for correct results only.

use super::context::{Ctx, F, at, not_run};
use crate::accept::input::{Input, Output};
use crate::accept::nccl::NcclRun;
use crate::accept::threshold::Figure;
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::path::Path;

/// The all-reduce threshold is defined at 8–16 GiB messages (Azure NHC runs 8G and 16G).
pub const NCCL_MIN_BYTES: u64 = 8 << 30;

fn scope(run: &NcclRun) -> &'static str {
    match run.hosts().len() {
        0 => "unknown",
        1 => "single-node",
        _ => "multi-node",
    }
}

pub(super) fn nccl(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<Vec<record::NcclResult>> {
    const RANKS: F = F {
        id: Cow::Borrowed("nccl.all-reduce.ranks"),
        layer: Layer::Interconnect,
        summary: "single-node all-reduce ran on every GPU",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const DATA: F = F {
        id: Cow::Borrowed("nccl.all-reduce.data"),
        layer: Layer::Interconnect,
        summary: "single-node all-reduce results were validated and correct",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const BUSBW: F = F {
        id: Cow::Borrowed("nccl.all-reduce.busbw"),
        layer: Layer::Interconnect,
        summary: "single-node all-reduce bus bandwidth at 8 GiB or more",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const M_RANKS: F = F {
        id: Cow::Borrowed("nccl.multi-node.ranks"),
        layer: Layer::Interconnect,
        summary: "multi-node all-reduce ran on every GPU of this node and enough nodes",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const M_DATA: F = F {
        id: Cow::Borrowed("nccl.multi-node.data"),
        layer: Layer::Interconnect,
        summary: "multi-node all-reduce results were validated and correct",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const M_BUSBW: F = F {
        id: Cow::Borrowed("nccl.multi-node.busbw"),
        layer: Layer::Interconnect,
        summary: "multi-node all-reduce bus bandwidth at 8 GiB or more",
        fault: FaultClass::Link,
        action: Action::RebootNode,
    };
    const OTHER: F = F {
        id: Cow::Borrowed("nccl.collective.data"),
        layer: Layer::Interconnect,
        summary: "other collectives' results were correct",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    let runs: Vec<(&Path, &NcclRun)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Nccl(r) => Some(r.iter().map(move |r| (i.path.as_path(), r))),
            _ => None,
        })
        .flatten()
        .collect();
    let mut records = Vec::new();
    let mut single = None;
    let mut multi = None;
    let mut unplaced = None;
    for (path, run) in &runs {
        let scope = scope(run);
        let collective = run.collective.clone();
        let largest = run.largest().map_or(0, |r| r.size);
        let busbw = run.peak_busbw().unwrap_or(0.0);
        let evidence = at(path, run.lines.1);
        let name = collective.clone().unwrap_or_else(|| "unknown".into());
        let prefix = if scope == "multi-node" {
            "nccl.multi-node"
        } else {
            "nccl"
        };
        if scope != "unknown" {
            ctx.figure(
                format!("{prefix}.{name}.busbw"),
                busbw,
                "GB/s",
                true,
                evidence.clone(),
            );
        }
        records.push(record::NcclResult {
            suite: match run.suite {
                crate::accept::nccl::Suite::NcclTests => "nccl-tests".into(),
                crate::accept::nccl::Suite::RcclTests => "rccl-tests".into(),
            },
            collective: collective.clone(),
            scope: scope.into(),
            ranks: run.ranks.len(),
            hosts: run.hosts().into_iter().map(str::to_owned).collect(),
            largest_bytes: largest,
            busbw_gbps: busbw,
            avg_busbw_gbps: run.avg_busbw,
            data_errors: run.data_errors(),
            library: run.library_version.clone(),
            evidence: evidence.clone(),
        });
        let all_reduce = collective.as_deref() == Some("all_reduce");
        match (scope, all_reduce) {
            ("single-node", true) => single = Some((*path, *run)),
            ("multi-node", true) => multi = Some((*path, *run)),
            ("unknown", true) => unplaced = Some((*path, *run)),
            _ => {
                if run.data_errors() > 0 {
                    ctx.push(
                        &OTHER,
                        Some(name),
                        Verdict::Fail,
                        "0 wrong values",
                        format!("{} wrong values", run.data_errors()),
                        vec![evidence],
                    );
                }
            }
        }
    }
    let want = ctx.gpus() as usize;
    match single {
        Some((path, run)) => {
            let ev = vec![at(path, run.lines.1)];
            let ranks = run.ranks.len();
            let verdict = match ranks.cmp(&want) {
                std::cmp::Ordering::Equal => Verdict::Pass,
                std::cmp::Ordering::Less => Verdict::Fail,
                std::cmp::Ordering::Greater => Verdict::Incomplete,
            };
            ctx.push(&RANKS, None, verdict, format!("{want} ranks, one per GPU"), format!("{ranks} ranks on {}", run.hosts().join(", ")), ev.clone());
            data_check(ctx, &DATA, run, ev.clone());
            size_and_bandwidth(ctx, &BUSBW, Figure::NcclAllReduceBusbw, run, ev);
        }
        None => match unplaced {
            Some((path, run)) if ctx.required(Test::Nccl) => ctx.push(
                &RANKS,
                None,
                Verdict::Incomplete,
                format!("{want} ranks, one per GPU"),
                "the output lists no `# Rank` lines (a table-only copy): which GPUs took part is unknown",
                vec![at(path, run.lines.0)],
            ),
            _ => {
                not_run(ctx, Test::Nccl, &BUSBW, "nccl-tests/rccl-tests all_reduce_perf on one node");
            }
        },
    }
    match multi {
        Some((path, run)) => {
            let ev = vec![at(path, run.lines.1)];
            let hosts = run.hosts();
            let mine = match ctx.node {
                Some(node) => run.ranks.iter().filter(|r| r.host == node).count(),
                None => hosts
                    .iter()
                    .map(|h| run.ranks.iter().filter(|r| r.host == *h).count())
                    .min()
                    .unwrap_or(0),
            };
            let enough_nodes = hosts.len() as u32 >= ctx.policy.multi_node_nodes;
            let verdict = if ctx.node.is_some() && mine == 0 {
                Verdict::Incomplete
            } else if mine < want {
                Verdict::Fail
            } else if !enough_nodes {
                Verdict::Incomplete
            } else {
                Verdict::Pass
            };
            ctx.push(
                &M_RANKS,
                ctx.node.map(str::to_owned),
                verdict,
                format!(
                    "{want} ranks on this node, {} nodes or more",
                    ctx.policy.multi_node_nodes
                ),
                format!(
                    "{mine} ranks on this node, {} nodes ({})",
                    hosts.len(),
                    hosts.join(", ")
                ),
                ev.clone(),
            );
            data_check(ctx, &M_DATA, run, ev.clone());
            size_and_bandwidth(ctx, &M_BUSBW, Figure::NcclMultiNodeBusbw, run, ev);
        }
        None => {
            not_run(
                ctx,
                Test::MultiNodeNccl,
                &M_BUSBW,
                "a multi-node nccl-tests/rccl-tests all_reduce_perf (MPIJob or JobSet)",
            );
        }
    }
    if runs.is_empty() {
        return Run::not_run("no nccl-tests/rccl-tests output among the inputs");
    }
    Run::Done(records)
}

fn data_check(ctx: &mut Ctx<'_>, f: &F, run: &NcclRun, ev: Vec<String>) {
    let errors = run.data_errors();
    let validated = run.params.as_ref().and_then(|p| p.validation) != Some(false)
        && run
            .rows
            .iter()
            .any(|r| !matches!(r.out_of_place.check, crate::accept::nccl::Check::NotChecked));
    if errors > 0 {
        ctx.push(
            f,
            None,
            Verdict::Fail,
            "0 wrong values",
            format!("{errors} wrong values"),
            ev,
        );
    } else if !validated {
        ctx.push(
            f,
            None,
            Verdict::Incomplete,
            "results validated (nccl-tests -c 1)",
            "not validated (validation: 0): wrong results would go unseen",
            ev,
        );
    } else {
        ctx.push(
            f,
            None,
            Verdict::Pass,
            "0 wrong values",
            "0 wrong values",
            ev,
        );
    }
}

fn size_and_bandwidth(ctx: &mut Ctx<'_>, f: &F, figure: Figure, run: &NcclRun, ev: Vec<String>) {
    let Some(row) = run.largest() else {
        return;
    };
    if row.size < NCCL_MIN_BYTES {
        ctx.push(
            f,
            None,
            Verdict::Incomplete,
            format!("messages up to {} GiB or more", NCCL_MIN_BYTES >> 30),
            format!(
                "largest message {} bytes: bus bandwidth there is not comparable",
                row.size
            ),
            ev,
        );
        return;
    }
    let ev = vec![
        ev.first()
            .map(|e| {
                e.rsplit_once(':')
                    .map_or(e.clone(), |(p, _)| format!("{p}:{}", row.line))
            })
            .unwrap_or_default(),
    ];
    ctx.bandwidth(f, figure, None, row.out_of_place.busbw, 1.0, ev);
}
