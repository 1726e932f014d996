//! Layer 4, DCGM diagnostics (NVIDIA): `dcgmi diag` at the level the blueprint asks for,
//! on every GPU, each test's failure given the fault class and action its plugin points at
//! (memory and stress tests are `device`, PCIe/NVLink are `link`, software checks are the
//! driver's, a page-retirement or row-remap one is a device to repair), and dcgmproftester's
//! field test where it ran.

use super::context::{Ctx, F, at, not_run};
use crate::accept::dcgm::{DcgmDiag, DcgmTest, Status};
use crate::accept::input::{Input, Output};
use crate::blueprint::model::acceptance::Test;
use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{self, Layer, Run, Verdict};
use std::borrow::Cow;
use std::path::Path;

/// Fault class and action of a failing DCGM test.
fn dcgm_fault(test: &DcgmTest) -> (FaultClass, Action) {
    let name = test.name.to_ascii_lowercase();
    match test.plugin().as_str() {
        "software"
            if name.contains("page retirement")
                || name.contains("row remap")
                || name.contains("inforom") =>
        {
            (FaultClass::Device, Action::Service)
        }
        "software" if name.contains("graphics processes") => {
            (FaultClass::TransientApplication, Action::RestartApp)
        }
        "software" => (FaultClass::DriverDaemon, Action::RestartDaemon),
        "pcie" | "nvlink" | "nvbandwidth" => (FaultClass::Link, Action::RebootNode),
        _ => (FaultClass::Device, Action::Service),
    }
}

pub(super) fn dcgm(ctx: &mut Ctx<'_>, inputs: &[Input]) -> Run<record::Dcgm> {
    const LEVEL: F = F {
        id: Cow::Borrowed("dcgm.level"),
        layer: Layer::Interconnect,
        summary: "DCGM diagnostics reached the blueprint's level",
        fault: FaultClass::Device,
        action: Action::None,
    };
    const GPUS: F = F {
        id: Cow::Borrowed("dcgm.gpus"),
        layer: Layer::Interconnect,
        summary: "DCGM diagnosed every GPU of the blueprint",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    const PROF: F = F {
        id: Cow::Borrowed("dcgm.proftester"),
        layer: Layer::Interconnect,
        summary: "dcgmproftester's field test passed",
        fault: FaultClass::Device,
        action: Action::Service,
    };
    for input in inputs {
        if let Output::Proftester(runs) = &input.output {
            for run in runs {
                let subject = format!("GPU {} field {}", run.gpu, run.field);
                let verdict = if run.passed {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                };
                ctx.push(
                    &PROF,
                    Some(subject),
                    verdict,
                    "PASSED",
                    if run.passed { "PASSED" } else { "FAILED" },
                    vec![at(&input.path, run.line)],
                );
                if let Some((value, unit)) = &run.peak {
                    let name = run.name.clone().unwrap_or_else(|| run.field.to_string());
                    ctx.figure(
                        format!("dcgm.proftester.gpu{}.{name}", run.gpu),
                        *value,
                        unit,
                        true,
                        at(&input.path, run.line),
                    );
                }
            }
        }
    }
    let diags: Vec<(&Path, &DcgmDiag)> = inputs
        .iter()
        .filter_map(|i| match &i.output {
            Output::Dcgm(d) => Some(d.iter().map(move |d| (i.path.as_path(), d))),
            _ => None,
        })
        .flatten()
        .collect();
    if diags.is_empty() {
        not_run(ctx, Test::Dcgm, &LEVEL, "dcgmi diag");
        return Run::not_run("no dcgmi diag output among the inputs");
    }
    // Several tables (one per task) count together.
    let merged = DcgmDiag {
        format: diags[0].1.format,
        version: diags.iter().find_map(|(_, d)| d.version.clone()),
        driver: diags.iter().find_map(|(_, d)| d.driver.clone()),
        gpu_device_ids: diags
            .iter()
            .map(|(_, d)| d.gpu_device_ids.clone())
            .max_by_key(Vec::len)
            .unwrap_or_default(),
        tests: diags.iter().flat_map(|(_, d)| d.tests.clone()).collect(),
    };
    let path_of = |test: &DcgmTest| {
        diags
            .iter()
            .find(|(_, d)| {
                d.tests
                    .iter()
                    .any(|t| std::ptr::eq(t, test) || (t.name == test.name && t.line == test.line))
            })
            .map_or(diags[0].0, |(p, _)| p)
    };
    let evidence: Vec<String> = diags
        .iter()
        .map(|(p, d)| at(p, d.tests.first().map_or(1, |t| t.line)))
        .collect();
    let level = merged.level();
    let want = ctx.policy.dcgm_level;
    let missing = merged.missing_for(want);
    if missing.is_empty() {
        ctx.push(
            &LEVEL,
            None,
            Verdict::Pass,
            format!("level {want}"),
            format!("level {level}"),
            evidence.clone(),
        );
    } else {
        ctx.push(
            &LEVEL,
            None,
            Verdict::Incomplete,
            format!(
                "level {want}: {}",
                crate::accept::dcgm::LEVELS
                    .iter()
                    .filter(|(_, l)| *l <= want)
                    .map(|(p, _)| *p)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!(
                "level {level}; without a result (or skipped): {}",
                missing.join(", ")
            ),
            evidence.clone(),
        );
    }
    let gpu_count = merged.gpu_device_ids.len().max(merged.gpus().len());
    let want_gpus = ctx.gpus() as usize;
    if gpu_count > 0 || want_gpus > 0 {
        let verdict = if gpu_count >= want_gpus {
            Verdict::Pass
        } else {
            Verdict::Fail
        };
        ctx.push(
            &GPUS,
            None,
            verdict,
            format!("{want_gpus} GPUs"),
            format!("{gpu_count} GPUs in the results"),
            evidence.clone(),
        );
    }
    let mut tests = Vec::new();
    for test in &merged.tests {
        let status = test.status();
        let plugin = test.plugin();
        let (fault, action) = dcgm_fault(test);
        let f = F {
            id: Cow::Owned(format!("dcgm.{plugin}")),
            layer: Layer::Interconnect,
            summary: "a DCGM plugin passed on every GPU",
            fault,
            action,
        };
        let required = crate::accept::dcgm::LEVELS
            .iter()
            .any(|(p, l)| *p == plugin && *l <= want);
        let verdict = match &status {
            Status::Pass | Status::Warn => Verdict::Pass,
            Status::Fail => Verdict::Fail,
            Status::Skip | Status::NotRun if required => Verdict::Incomplete,
            Status::Skip | Status::NotRun => Verdict::Pass,
            Status::Unknown(_) => Verdict::Incomplete,
        };
        let failed = test.failed_gpus();
        let details: Vec<&str> = test
            .results
            .iter()
            .flat_map(|r| r.detail.iter().map(String::as_str))
            .collect();
        let mut observed = status.as_str().to_owned();
        if !failed.is_empty() {
            observed.push_str(&format!(
                " on GPU {}",
                failed
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if verdict != Verdict::Pass && !details.is_empty() {
            observed.push_str(&format!(": {}", details.join("; ")));
        }
        let expected = if required {
            "pass"
        } else {
            "pass or skip (optional at this level)"
        };
        ctx.push(
            &f,
            Some(test.name.clone()),
            verdict,
            expected,
            observed,
            vec![at(path_of(test), test.line)],
        );
        tests.push(record::DcgmTestResult {
            category: test.category.clone(),
            name: test.name.clone(),
            plugin,
            status: status.as_str().to_owned(),
            failed_gpus: failed,
        });
    }
    Run::Done(record::Dcgm {
        version: merged.version.clone(),
        driver: merged.driver.clone(),
        level,
        required_level: want,
        gpus: gpu_count,
        tests,
        evidence,
    })
}
