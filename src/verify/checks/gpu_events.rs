//! GPU and NVSwitch events in the kernel log and Fabric Manager's log, judged by the
//! vendors' catalogs ([`crate::fault`]): NVIDIA Xids per GPU (`gpu.xid`), NVSwitch SXids per
//! switch (`gpu.sxid`), amdgpu RAS and reset messages per AMD GPU (`gpu.ras.events`), the
//! fatal entries of Fabric Manager's log (`gpu.fabric-manager.log`), and every event the
//! catalogs do not list (`gpu.event.unknown`: a warning that names the code and keeps the
//! line, never a guessed action).
//!
//! Each event group (a storm of one code is one group, with its count) gets the site's
//! override if the matrix has one, otherwise its catalog row's judgement; in the health
//! phase, repeats escalate ([`crate::fault::escalation`]). A result carries the worst of
//! its findings. [`remember`] writes back what the health phase keeps for its next run.

use std::collections::BTreeMap;

use super::catalog::gpu::{EVENT_UNKNOWN, FABRIC_MANAGER_LOG, RAS_EVENTS, SXID, XID};
use super::{CheckResult, Inputs, Observation, Results};
use crate::fault::amd_ras::{self, Signal};
use crate::fault::escalation;
use crate::fault::overrides::{Catalog, Overrides};
use crate::fault::xid::{self, Verdict};
use crate::fault::{Action, FaultClass, Judgement, sxid};
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;
use crate::verify::facts::gpu::Gpu;
use crate::verify::facts::kernel_log::{Cursor, KernelEvent, KernelEventKind};
use crate::verify::facts::pci_address::PciAddress;
use crate::verify::history::{History, Memory};

const KMSG: &str = "/dev/kmsg";
/// Findings named in one result's observed text; more are counted.
const SHOWN: usize = 6;

/// One judged event group.
#[derive(Debug, Clone)]
struct Finding {
    label: String,
    count: u64,
    judgement: Judgement,
    /// A site override or an escalation that decided the judgement.
    note: Option<String>,
}

impl Finding {
    fn text(&self) -> String {
        let count = if self.count > 1 {
            format!(" ×{}", self.count)
        } else {
            String::new()
        };
        let note = self
            .note
            .as_ref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        format!("{}{count} ({}{note})", self.label, self.judgement.action)
    }
}

/// The key a finding is remembered by: `xid:94@0000:33:00.0`.
pub fn event_key(kind: &KernelEventKind) -> Option<String> {
    let device = kind.device().map(|d| d.to_string());
    match kind {
        KernelEventKind::Xid { code, detail, .. } => Some(format!(
            "xid:{code}{}@{}",
            detail
                .as_ref()
                .map(|d| format!("({d})"))
                .unwrap_or_default(),
            device.unwrap_or_default()
        )),
        KernelEventKind::Sxid { code, switch, .. } => Some(format!(
            "sxid:{code}@{}",
            device.unwrap_or_else(|| switch.map(|s| format!("nvswitch{s}")).unwrap_or_default())
        )),
        KernelEventKind::FallenOffBus { .. } => {
            Some(format!("xid:79@{}", device.unwrap_or_default()))
        }
        KernelEventKind::AmdRas { signal, .. } => {
            Some(format!("amd:{signal}@{}", device.unwrap_or_default()))
        }
        _ => None,
    }
}

/// An event group judged: its label, the judgement, and the override that decided it.
type Judged = (String, Judgement, Option<String>);

/// What an event group asks for: the site override, else the catalog; `Err` when neither
/// knows it. `solo`: no other Xid on the same GPU among the events judged together.
fn judge(event: &KernelEvent, solo: bool, overrides: &Overrides) -> Option<Result<Judged, String>> {
    let overridden = |catalog: Catalog, code: String, base: Option<Judgement>| {
        overrides
            .find(catalog, &code)
            .map(|o| (o.judgement(base), format!("site override: {}", o.source)))
    };
    Some(match &event.kind {
        KernelEventKind::Xid { .. } | KernelEventKind::FallenOffBus { .. } => {
            let code = code_of(event);
            let label = match xid::catalog().get(code) {
                Some(r) => format!("Xid {code} {}", r.mnemonic),
                None => format!("Xid {code}"),
            };
            let base = match xid::judge(code, &event.message, solo) {
                Verdict::Judged(j) => Ok(j),
                Verdict::Unknown(why) => Err(why),
            };
            match overridden(Catalog::NvidiaXid, code.to_string(), base.clone().ok()) {
                Some((j, note)) => Ok((label, j, Some(note))),
                None => base.map(|j| (label, j, None)),
            }
        }
        KernelEventKind::Sxid {
            code, link, fatal, ..
        } => {
            let name = sxid::catalog().get(*code).map(|r| r.name.clone());
            let mut label = format!("SXid {code}");
            if let Some(name) = &name {
                label.push(' ');
                label.push_str(name);
            }
            if let Some(link) = link {
                label.push_str(&format!(" link {link}"));
            }
            if *fatal == Some(true) {
                label.push_str(" (fatal)");
            }
            let base = sxid::judge(*code);
            match overridden(Catalog::NvidiaSxid, code.to_string(), base.clone().ok()) {
                Some((j, note)) => Ok((label, j, Some(note))),
                None => base.map(|j| (label, j, None)),
            }
        }
        KernelEventKind::AmdRas { signal, block, .. } => {
            let label = match block {
                Some(b) => format!("amdgpu {signal} ({b})"),
                None => format!("amdgpu {signal}"),
            };
            let base = amd_ras::judge(*signal);
            match overridden(Catalog::AmdRas, signal.to_string(), Some(base)) {
                Some((j, note)) => Ok((label, j, Some(note))),
                None => Ok((label, base, None)),
            }
        }
        _ => return None,
    })
}

/// 79 for a "fallen off the bus" line without its Xid.
fn code_of(event: &KernelEvent) -> u32 {
    match &event.kind {
        KernelEventKind::Xid { code, .. } => *code,
        KernelEventKind::FallenOffBus { .. } => 79,
        _ => 0,
    }
}

/// The earlier occurrences of a finding, without the one this event already made (an
/// event read again because the cursor was held back).
fn earlier<'h>(memory: &Memory<'h>, key: &str, last_seq: Option<u64>) -> &'h [u64] {
    let history: &'h History = memory.history;
    let times = history.earlier(key);
    let seen = match (history.judged_seq.get(key), last_seq) {
        (Some(judged), Some(seq)) => *judged >= seq,
        _ => false,
    };
    if seen && !times.is_empty() {
        &times[..times.len() - 1]
    } else {
        times
    }
}

/// Judges the events of one device into findings and unknown codes.
fn findings(
    events: &[&KernelEvent],
    overrides: &Overrides,
    memory: Option<&Memory<'_>>,
) -> (Vec<Finding>, Vec<String>) {
    let xid_codes: std::collections::BTreeSet<u32> = events
        .iter()
        .filter_map(|e| match &e.kind {
            KernelEventKind::Xid { code, .. } => Some(*code),
            _ => None,
        })
        .collect();
    let mut found = Vec::new();
    let mut unknown = Vec::new();
    for event in events {
        let solo = match &event.kind {
            KernelEventKind::Xid { code, .. } => xid_codes.iter().all(|c| c == code),
            _ => true,
        };
        match judge(event, solo, overrides) {
            None => {}
            Some(Err(why)) => unknown.push(format!("{why}: {}", event.message)),
            Some(Ok((label, judgement, note))) => {
                let mut finding = Finding {
                    label,
                    count: event.count,
                    judgement,
                    note,
                };
                if let (Some(memory), Some(key)) = (memory, event_key(&event.kind)) {
                    let before = earlier(memory, &key, event.last_seq);
                    let (action, rules) = escalate(judgement.action, before, memory.now);
                    if let Some(rule) = rules.last() {
                        finding.judgement = Judgement {
                            fault: judgement.fault,
                            action,
                            severity: judgement.severity.min(action.severity()),
                        };
                        finding.note = Some(format!(
                            "{} times within {} h: {}",
                            before.len() + 1,
                            rule.window_s / 3600,
                            rule.source
                        ));
                    }
                }
                found.push(finding);
            }
        }
    }
    (found, unknown)
}

fn escalate(action: Action, earlier: &[u64], now: u64) -> (Action, Vec<&'static escalation::Rule>) {
    escalation::escalate(action, earlier, now)
}

/// Records a result from findings: pass when there are none, else the worst judgement.
fn record_findings<'o>(
    out: &'o mut Results,
    spec: &'static super::Spec,
    subject: String,
    expected: &str,
    found: &[Finding],
    evidence: Vec<String>,
) -> &'o mut CheckResult {
    let observation = if found.is_empty() {
        Observation::value("none", true)
    } else {
        let mut sorted: Vec<&Finding> = found.iter().collect();
        sorted.sort_by_key(|f| std::cmp::Reverse(f.judgement.action));
        let mut text: Vec<String> = sorted.iter().take(SHOWN).map(|f| f.text()).collect();
        if sorted.len() > SHOWN {
            text.push(format!("and {} more", sorted.len() - SHOWN));
        }
        Observation::value(text.join(", "), false)
    };
    let worst = found.iter().map(|f| f.judgement).reduce(Judgement::worse);
    let result = out.record(spec, Some(subject), expected, observation, evidence);
    if let Some(worst) = worst {
        result.fault = worst.fault;
        result.action = worst.action;
        result.severity = worst.severity;
    }
    result
}

fn record_unknown(out: &mut Results, subject: String, unknown: &[String], log_known: bool) {
    let observation = if !log_known {
        Observation::unknown("the kernel log was not read")
    } else if unknown.is_empty() {
        Observation::value("none", true)
    } else {
        let mut text: Vec<String> = unknown.iter().take(3).cloned().collect();
        if unknown.len() > 3 {
            text.push(format!("and {} more", unknown.len() - 3));
        }
        Observation::value(text.join("; "), false)
    };
    let result = out.record(
        &EVENT_UNKNOWN,
        Some(subject),
        "every event in the vendor catalog",
        observation,
        vec![KMSG.to_owned()],
    );
    // An unreadable log is gpu.xid's error to report; this one only warns.
    result.severity = EVENT_UNKNOWN.severity;
}

/// The events of one device (function 0), or why there are none to look at.
fn device_events<'a>(input: &'a Inputs<'_>, device: PciAddress) -> Fact<Vec<&'a KernelEvent>> {
    input.device_events.as_ref().map(|index| {
        index
            .get(&device.device_slot())
            .map(|v| v.to_vec())
            .unwrap_or_default()
    })
}

/// `gpu.xid` and `gpu.event.unknown` of one NVIDIA GPU.
pub fn nvidia_gpu(input: &Inputs, out: &mut Results, gpu: &Gpu) {
    let events = device_events(input, gpu.address).map(|events| {
        events
            .into_iter()
            .filter(|e| match &e.kind {
                KernelEventKind::Xid { .. } => true,
                KernelEventKind::FallenOffBus { pci: Some(pci) } => *pci == gpu.address,
                _ => false,
            })
            .collect::<Vec<_>>()
    });
    let subject = gpu.address.to_string();
    let (found, unknown) = match &events {
        Fact::Known(events) => findings(events, &input.overrides, input.memory.as_ref()),
        Fact::Unknown { .. } => (Vec::new(), Vec::new()),
    };
    match &events {
        Fact::Unknown { reason } => {
            out.record(
                &XID,
                Some(subject.clone()),
                "none",
                Observation::unknown(reason.clone()),
                vec![KMSG.to_owned()],
            );
        }
        Fact::Known(_) => {
            record_findings(
                out,
                &XID,
                subject.clone(),
                "none",
                &found,
                vec![KMSG.to_owned()],
            );
        }
    }
    record_unknown(out, subject, &unknown, events.is_known());
}

/// `gpu.ras.events` and `gpu.event.unknown` of one AMD GPU.
pub fn amd_gpu(input: &Inputs, out: &mut Results, gpu: &Gpu) {
    let events = device_events(input, gpu.address).map(|events| {
        events
            .into_iter()
            .filter(|e| matches!(e.kind, KernelEventKind::AmdRas { .. }))
            .collect::<Vec<_>>()
    });
    let subject = gpu.address.to_string();
    match &events {
        Fact::Unknown { reason } => {
            out.record(
                &RAS_EVENTS,
                Some(subject.clone()),
                "none",
                Observation::unknown(reason.clone()),
                vec![KMSG.to_owned()],
            );
            record_unknown(out, subject, &[], false);
        }
        Fact::Known(events) => {
            let (found, unknown) = findings(events, &input.overrides, input.memory.as_ref());
            record_findings(
                out,
                &RAS_EVENTS,
                subject.clone(),
                "none",
                &found,
                vec![KMSG.to_owned()],
            );
            record_unknown(out, subject, &unknown, true);
        }
    }
}

/// `gpu.sxid` of every NVSwitch: those on the PCI bus (when the blueprint has them) and
/// any the kernel log names; SXids the switch catalog does not list go to the switch's
/// `gpu.event.unknown`.
pub fn switches(input: &Inputs, out: &mut Results, expect_switches: bool) {
    let mut by_switch: BTreeMap<String, Vec<&KernelEvent>> = BTreeMap::new();
    if expect_switches {
        for switch in &input.facts.gpus.nvswitches {
            by_switch.entry(switch.address.to_string()).or_default();
        }
    }
    let log = match &input.facts.kernel_log {
        Some(Fact::Known(log)) => Some(log),
        Some(Fact::Unknown { reason }) => {
            for subject in by_switch.keys() {
                out.record(
                    &SXID,
                    Some(subject.clone()),
                    "none",
                    Observation::unknown(reason.clone()),
                    vec![KMSG.to_owned()],
                );
            }
            return;
        }
        None => None,
    };
    for event in log.iter().flat_map(|l| l.events.iter()) {
        if let KernelEventKind::Sxid { pci, switch, .. } = &event.kind {
            let subject = match (pci, switch) {
                (Some(pci), _) => pci.device_slot().to_string(),
                (None, Some(n)) => format!("nvidia-nvswitch{n}"),
                (None, None) => "nvswitch".to_owned(),
            };
            by_switch.entry(subject).or_default().push(event);
        }
    }
    for (subject, events) in &by_switch {
        let (found, unknown) = findings(events, &input.overrides, input.memory.as_ref());
        record_findings(
            out,
            &SXID,
            subject.clone(),
            "none",
            &found,
            vec![KMSG.to_owned()],
        );
        if !unknown.is_empty() {
            record_unknown(out, subject.clone(), &unknown, true);
        }
    }
}

/// `gpu.fabric-manager.log`: the fatal entries of Fabric Manager's current run.
pub fn fabric_manager_log(input: &Inputs, out: &mut Results) {
    let evidence = vec![crate::verify::facts::FABRIC_MANAGER_LOG.to_owned()];
    let log = match &input.facts.fabric_manager_log {
        Fact::Unknown { reason } => {
            let result = out.record(
                &FABRIC_MANAGER_LOG,
                None,
                "no fatal entry",
                Observation::unknown(reason.clone()),
                evidence,
            );
            // A log too large or unreadable does not block: the unit's state and the
            // fabric state judge Fabric Manager itself.
            result.severity = crate::fault::Severity::Warning;
            return;
        }
        Fact::Known(None) => {
            out.record(
                &FABRIC_MANAGER_LOG,
                None,
                "no fatal entry",
                Observation::value("no log file", true),
                evidence,
            );
            return;
        }
        Fact::Known(Some(log)) => log,
    };
    let found: Vec<Finding> = log
        .fatal
        .iter()
        .map(|entry| match entry.sxid {
            Some(code) => {
                let base = sxid::judge(code).unwrap_or_else(|_| {
                    // The guide's fatal tables reset the fabric; an unlisted fatal SXid
                    // in Fabric Manager's log is fatal all the same.
                    Judgement::of(FaultClass::Link, Action::ResetFabric)
                });
                let (judgement, note) =
                    match input.overrides.find(Catalog::NvidiaSxid, &code.to_string()) {
                        Some(o) => (
                            o.judgement(Some(base)),
                            Some(format!("site override: {}", o.source)),
                        ),
                        None => (base, None),
                    };
                Finding {
                    label: format!("NVSwitch fatal error {code}"),
                    count: 1,
                    judgement,
                    note,
                }
            }
            None => Finding {
                label: "Fabric Manager aborted".to_owned(),
                count: 1,
                judgement: Judgement::of(FaultClass::DriverDaemon, Action::ResetFabric),
                note: Some(entry.line.clone()),
            },
        })
        .collect();
    let result = record_findings(
        out,
        &FABRIC_MANAGER_LOG,
        String::new(),
        "no fatal entry",
        &found,
        evidence,
    );
    result.subject = None;
}

/// Whether an event's finding stays open until the node reboots: the cursor is held
/// before it, so every run judges it again.
pub fn holds(event: &KernelEvent, overrides: &Overrides) -> bool {
    matches!(
        judge(event, true, overrides),
        Some(Ok((_, j, _))) if j.action >= Action::ResetGpu && j.severity == crate::fault::Severity::Critical
    )
}

/// Writes back what the next health run of `consumer` needs: the occurrences judged now,
/// the driver's own GPU resets (recovery attempts), the cursor (held before an event
/// whose finding stays open), the counters, and whether a finding asks for a reset or a
/// reboot.
pub fn remember(
    history: &mut History,
    consumer: &str,
    facts: &Facts,
    results: &[CheckResult],
    overrides: &Overrides,
    now: u64,
) {
    let previous = history.cursor(consumer).unwrap_or_default();
    let mut cursor = previous;
    if let Some(Fact::Known(log)) = &facts.kernel_log {
        let mut held: Option<Cursor> = None;
        for event in &log.events {
            let Some(key) = event_key(&event.kind) else {
                continue;
            };
            let new = match (history.judged_seq.get(&key), event.last_seq) {
                (Some(judged), Some(seq)) => seq > *judged,
                _ => true,
            };
            if new
                && matches!(
                    event.kind,
                    KernelEventKind::AmdRas {
                        signal: Signal::LogReset,
                        ..
                    }
                )
            {
                history.attempts.note_reset(now);
            }
            history.occurred(&key, event.last_seq, now);
            if holds(event, overrides) {
                let at = Cursor {
                    seq: event.first_seq.map(|s| s.saturating_sub(1)),
                    micros: event
                        .seconds
                        .map(|s| ((s * 1e6).round() as u64).saturating_sub(1)),
                };
                held = Some(match held {
                    Some(h) if h.seq <= at.seq && h.micros <= at.micros => h,
                    _ => at,
                });
            }
        }
        cursor = match held {
            Some(at) => at,
            None if log.end != Cursor::default() => log.end,
            None => previous,
        };
    }
    super::gpu_health::remember_counters(history, facts);
    let pending = results
        .iter()
        .any(|r| r.blocks() && (Action::ResetGpu..=Action::RebootNode).contains(&r.action));
    history.end(consumer, cursor, pending);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::facts::kernel_log;

    #[test]
    fn keys_name_the_code_and_the_device() {
        let log = kernel_log::parse(
            "NVRM: Xid (PCI:0000:33:00): 94, pid=1, name=x, Contained: CE User Channel (0x9). RST: No, D-RST: No\n\
             nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 37 LTSSM Fault Up\n",
        );
        let keys: Vec<_> = log
            .events
            .iter()
            .filter_map(|e| event_key(&e.kind))
            .collect();
        assert_eq!(keys, vec!["xid:94@0000:33:00.0", "sxid:20034@0000:07:00.0"]);
        assert!(!holds(&log.events[0], &Overrides::default()));
        assert!(holds(&log.events[1], &Overrides::default()));
    }
}
