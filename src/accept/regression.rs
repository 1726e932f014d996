//! The node against its own previous record: every figure both records carry is
//! compared, and one that got worse by more than the tolerance fails even when it is above
//! the absolute threshold — a driver or firmware change can cost bandwidth with the same
//! API, and a slow node that passes every threshold still slows a large job.
//!
//! The fault class says what changed: when the driver or the blueprint differs between
//! the two records, the new software is the suspect (`driver-daemon`, no automatic
//! action: halt the rollout); otherwise the hardware is (the figure's own class, e.g.
//! `link` for bandwidth).

use crate::fault::{Action, FaultClass};
use crate::verify::report::record::{AcceptanceRecord, FigureValue, Finding, Layer, Verdict};
use std::collections::BTreeMap;

/// The fault class and layer of a figure, by its key.
pub fn class_of(key: &str) -> (FaultClass, Action, Layer) {
    let family = key.split('.').next().unwrap_or("");
    match family {
        "nccl" | "rdma" | "nvbandwidth" | "p2p" => {
            (FaultClass::Link, Action::RebootNode, Layer::Interconnect)
        }
        "dcgm" => (FaultClass::Device, Action::Service, Layer::Interconnect),
        // Less power or lower clocks under the same load: the cooling or the power feed.
        "power" => (
            FaultClass::Device,
            Action::CheckCoolingPower,
            Layer::Interconnect,
        ),
        "storage" => (
            FaultClass::OsMemoryDisk,
            Action::Service,
            Layer::Interconnect,
        ),
        _ => (
            FaultClass::TransientApplication,
            Action::RestartDaemon,
            Layer::Framework,
        ),
    }
}

/// What differs in the software between the previous record and now, if anything.
pub fn software_change(
    previous: &AcceptanceRecord,
    driver: Option<&str>,
    blueprint_id: &str,
) -> Option<String> {
    let mut changes = Vec::new();
    if previous.blueprint.id != blueprint_id {
        changes.push(format!(
            "blueprint {} → {}",
            previous.blueprint.id, blueprint_id
        ));
    }
    if let (Some(old), Some(new)) = (previous.gpu.driver.known(), driver)
        && old != new
    {
        changes.push(format!("driver {old} → {new}"));
    }
    (!changes.is_empty()).then(|| changes.join(", "))
}

/// One finding per figure both records carry.
pub fn compare(
    current: &BTreeMap<String, FigureValue>,
    previous: &BTreeMap<String, FigureValue>,
    tolerance_percent: f64,
    software: Option<&str>,
    previous_at: &str,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (key, now) in current {
        let Some(before) = previous.get(key) else {
            continue;
        };
        if before.unit != now.unit
            || before.higher_is_better != now.higher_is_better
            || before.value <= 0.0
        {
            continue;
        }
        let change = (now.value - before.value) / before.value * 100.0;
        let worse_by = if now.higher_is_better {
            -change
        } else {
            change
        };
        let regressed = worse_by > tolerance_percent;
        let (fault, action, layer) = match software {
            Some(_) => (FaultClass::DriverDaemon, Action::None, class_of(key).2),
            None => class_of(key),
        };
        let direction = if now.higher_is_better {
            "at least"
        } else {
            "at most"
        };
        let bound = if now.higher_is_better {
            before.value * (1.0 - tolerance_percent / 100.0)
        } else {
            before.value * (1.0 + tolerance_percent / 100.0)
        };
        out.push(Finding {
            id: "regression".to_owned(),
            layer,
            subject: Some(key.clone()),
            summary: "no worse than the node's previous record beyond the tolerance".to_owned(),
            verdict: if regressed { Verdict::Fail } else { Verdict::Pass },
            expected: format!(
                "{direction} {:.2} {} (previous {} {} of {previous_at}, tolerance {tolerance_percent} %)",
                bound, now.unit, before.value, now.unit
            ),
            observed: format!(
                "{} {} ({:+.1} %){}",
                now.value,
                now.unit,
                change,
                software.map(|s| format!("; software changed: {s}")).unwrap_or_default()
            ),
            evidence: vec![now.evidence.clone()],
            fault,
            action: if regressed { action } else { Action::None },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(v: f64, higher: bool) -> FigureValue {
        FigureValue {
            value: v,
            unit: "GB/s".into(),
            higher_is_better: higher,
            evidence: "x:1".into(),
        }
    }

    #[test]
    fn worse_beyond_the_tolerance_fails() {
        let prev = BTreeMap::from([
            ("nccl.all_reduce.busbw".to_owned(), fig(480.0, true)),
            ("framework.tensor.seconds".to_owned(), fig(10.0, false)),
        ]);
        let now = BTreeMap::from([
            ("nccl.all_reduce.busbw".to_owned(), fig(470.0, true)),
            ("framework.tensor.seconds".to_owned(), fig(10.6, false)),
        ]);
        let f = compare(&now, &prev, 5.0, None, "2026-01-01");
        let busbw = f
            .iter()
            .find(|x| x.subject.as_deref() == Some("nccl.all_reduce.busbw"))
            .unwrap();
        assert_eq!(busbw.verdict, Verdict::Pass, "-2.1 % is within 5 %");
        let slow = f
            .iter()
            .find(|x| x.subject.as_deref() == Some("framework.tensor.seconds"))
            .unwrap();
        assert_eq!(slow.verdict, Verdict::Fail, "+6 % time");
        assert_eq!(slow.fault, FaultClass::TransientApplication);
        let now = BTreeMap::from([("nccl.all_reduce.busbw".to_owned(), fig(450.0, true))]);
        let f = compare(&now, &prev, 5.0, None, "t");
        assert_eq!(
            (f[0].verdict, f[0].fault, f[0].action),
            (Verdict::Fail, FaultClass::Link, Action::RebootNode)
        );
        let f = compare(&now, &prev, 5.0, Some("driver 570 → 580"), "t");
        assert_eq!(
            (f[0].fault, f[0].action),
            (FaultClass::DriverDaemon, Action::None)
        );
        assert!(f[0].observed.contains("driver 570"));
    }
}
