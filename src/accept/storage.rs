//! The storage baseline: fio's four workloads (rendered as the storage Job) judged
//! against `acceptance.storage.thresholds` and recorded as figures for the next
//! record's regression check. There is no default threshold (the blueprint does not
//! describe the node's drives); without one a figure is recorded and the finding says
//! it is judged against the previous record only.

use super::fio::{Direction, FioRun};
use super::input::{Input, Output};
use super::judge::context::{Ctx, F, at, fmt};
use crate::blueprint::model::acceptance::{Acceptance, Test};
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::path::Path;

/// The workloads the rendered storage Job runs, in order.
pub const JOBS: &[&str] = &["seq-read", "seq-write", "rand-read", "rand-write"];

const RAN: F = F {
    id: Cow::Borrowed("storage.jobs"),
    layer: Layer::Interconnect,
    summary: "fio ran the four storage workloads without an error",
    fault: FaultClass::OsMemoryDisk,
    action: Action::Service,
};

/// A figure of a workload and the threshold that applies to it.
struct Limit {
    job: &'static str,
    what: &'static str,
    unit: &'static str,
    /// At least (bandwidth, IOPS) or at most (latency).
    at_least: bool,
    field: &'static str,
    value: Option<f64>,
    measure: fn(&Direction) -> Option<f64>,
    read: bool,
}

fn limits(settings: &Acceptance) -> Vec<Limit> {
    let t = settings
        .storage
        .as_ref()
        .map(|s| s.thresholds.clone())
        .unwrap_or_default();
    vec![
        Limit {
            job: "seq-read",
            what: "read bandwidth",
            unit: "MiB/s",
            at_least: true,
            field: "seqReadMiBps",
            value: t.seq_read_mibps,
            measure: |d| Some(d.mib_s),
            read: true,
        },
        Limit {
            job: "seq-write",
            what: "write bandwidth",
            unit: "MiB/s",
            at_least: true,
            field: "seqWriteMiBps",
            value: t.seq_write_mibps,
            measure: |d| Some(d.mib_s),
            read: false,
        },
        Limit {
            job: "rand-read",
            what: "read IOPS",
            unit: "IOPS",
            at_least: true,
            field: "randReadIops",
            value: t.rand_read_iops,
            measure: |d| Some(d.iops),
            read: true,
        },
        Limit {
            job: "rand-write",
            what: "write IOPS",
            unit: "IOPS",
            at_least: true,
            field: "randWriteIops",
            value: t.rand_write_iops,
            measure: |d| Some(d.iops),
            read: false,
        },
        Limit {
            job: "rand-read",
            what: "read completion latency p99",
            unit: "us",
            at_least: false,
            field: "randReadP99Usec",
            value: t.rand_read_p99_usec,
            measure: |d| d.clat(99.0),
            read: true,
        },
    ]
}

/// Judges the fio outputs; the record's `baseline.storage`.
pub(super) fn judge(
    ctx: &mut Ctx<'_>,
    inputs: &[Input],
    settings: &Acceptance,
) -> Run<Vec<record::StorageResult>> {
    let runs: Vec<(&Path, &FioRun)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Fio(r) => Some((i.path.as_path(), r)),
            _ => None,
        })
        .collect();
    let required = ctx.policy.required.contains(&Test::Storage);
    if runs.is_empty() {
        if required {
            ctx.push(
                &RAN,
                None,
                Verdict::NotRun,
                "an output of fio (the storage Job)",
                "none among the inputs",
                Vec::new(),
            );
            return Run::not_run("no fio output among the inputs");
        }
        return Run::not_run(if settings.storage.is_none() {
            "acceptance.storage is not declared: no storage baseline for this node class"
        } else {
            "no fio output among the inputs"
        });
    }
    let mut results = Vec::new();
    let mut seen = Vec::new();
    let mut failed = Vec::new();
    let mut evidence = Vec::new();
    for (path, run) in &runs {
        let ev = at(path, run.line);
        evidence.push(ev.clone());
        for job in &run.jobs {
            seen.push(job.name.clone());
            if job.error != 0 {
                failed.push(format!("{} (error {})", job.name, job.error));
            }
            let p99 = |d: &Option<Direction>| d.as_ref().and_then(|d| d.clat(99.0));
            results.push(record::StorageResult {
                job: job.name.clone(),
                read_mib_s: job.read.as_ref().map(|d| d.mib_s),
                write_mib_s: job.write.as_ref().map(|d| d.mib_s),
                read_iops: job.read.as_ref().map(|d| d.iops),
                write_iops: job.write.as_ref().map(|d| d.iops),
                read_clat_p99_usec: p99(&job.read),
                write_clat_p99_usec: p99(&job.write),
                fio: Some(run.version.clone()),
                evidence: ev.clone(),
            });
            for (dir, d) in [("read", &job.read), ("write", &job.write)] {
                let Some(d) = d else { continue };
                let key = format!("storage.{}.{dir}", job.name);
                ctx.figure(format!("{key}-mibps"), d.mib_s, "MiB/s", true, ev.clone());
                ctx.figure(format!("{key}-iops"), d.iops, "IOPS", true, ev.clone());
                if let Some(p) = d.clat(99.0) {
                    ctx.figure(format!("{key}-clat-p99"), p, "us", false, ev.clone());
                }
            }
        }
    }
    let missing: Vec<&str> = JOBS
        .iter()
        .copied()
        .filter(|j| !seen.iter().any(|s| s == j))
        .collect();
    let (verdict, observed) = if !failed.is_empty() {
        (
            Verdict::Fail,
            format!("fio reported: {}", failed.join(", ")),
        )
    } else if !missing.is_empty() {
        (
            Verdict::Incomplete,
            format!("missing: {}", missing.join(", ")),
        )
    } else {
        (Verdict::Pass, format!("ran: {}", seen.join(", ")))
    };
    ctx.push(
        &RAN,
        None,
        verdict,
        JOBS.join(", "),
        observed,
        evidence.clone(),
    );
    for limit in limits(settings) {
        let measured = runs.iter().find_map(|(path, run)| {
            let job = run.jobs.iter().find(|j| j.name == limit.job)?;
            let dir = if limit.read { &job.read } else { &job.write };
            dir.as_ref()
                .and_then(limit.measure)
                .map(|v| (v, at(path, run.line)))
        });
        let Some((value, ev)) = measured else {
            continue;
        };
        let f = F {
            id: Cow::Owned(format!("storage.{}", limit.job)),
            layer: Layer::Interconnect,
            summary: "a storage workload reached the blueprint's threshold",
            fault: FaultClass::OsMemoryDisk,
            action: Action::RebootNode,
        };
        let subject = Some(limit.what.to_owned());
        match limit.value {
            Some(want) => {
                let ok = if limit.at_least { value >= want } else { value <= want };
                ctx.push(
                    &f,
                    subject,
                    if ok { Verdict::Pass } else { Verdict::Fail },
                    format!(
                        "{} {} {} (acceptance.storage.thresholds.{})",
                        if limit.at_least { ">=" } else { "<=" },
                        fmt(want),
                        limit.unit,
                        limit.field
                    ),
                    format!("{} {}", fmt(value), limit.unit),
                    vec![ev],
                );
            }
            None => ctx.push(
                &f,
                subject,
                Verdict::Pass,
                format!(
                    "no absolute threshold (set acceptance.storage.thresholds.{}); judged against the previous record",
                    limit.field
                ),
                format!("{} {}", fmt(value), limit.unit),
                vec![ev],
            ),
        }
    }
    Run::Done(results)
}
