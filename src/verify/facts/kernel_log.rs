//! Device events in the kernel log: NVIDIA Xid errors, GPUs fallen off the bus, ECC errors
//! and PCIe AER reports.
//!
//! The text may be `/dev/kmsg` records (`6,1234,5678901,-;message`, with continuation
//! lines starting with a space), `dmesg` output (`[  123.456789] message`) or plain
//! messages. Lines look like:
//! `NVRM: Xid (PCI:0000:cb:00): 79, pid=..., GPU has fallen off the bus.`,
//! `NVRM: GPU 0000:b3:00.0: GPU has fallen off the bus.`,
//! `pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0`,
//! `EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#0`.
//! Xid numbers drive the restart-or-repair decision, so each event keeps its line.
//!
//! The Xid location is the kernel's `domain:bus:device` without a function number; it is
//! parsed into a [`PciAddress`] of function 0, the GPU's. [`KernelLog::by_device`] indexes
//! the GPU events by device once, so per-GPU checks look up instead of scanning the log.

use super::pci_address::PciAddress;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelLog {
    pub events: Vec<KernelEvent>,
    /// Lines read, to tell an empty log from a log without events.
    pub lines: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelEvent {
    /// Seconds since boot, when the line carries a timestamp.
    pub seconds: Option<f64>,
    pub kind: KernelEventKind,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum KernelEventKind {
    /// `NVRM: Xid (PCI:<domain:bus:device>): <code>, ...`; the location has no function
    /// number in the log and is function 0 here.
    Xid {
        code: u32,
        pci: Option<PciAddress>,
    },
    FallenOffBus {
        pci: Option<PciAddress>,
    },
    GpuEcc {
        pci: Option<PciAddress>,
    },
    HostMemoryEcc {
        uncorrectable: bool,
    },
    PcieAer {
        severity: AerSeverity,
        pci: Option<PciAddress>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AerSeverity {
    Corrected,
    NonFatal,
    Fatal,
    Unknown,
}

/// The Xid and fallen-off-the-bus events of each PCI device (by function-0 address).
pub type DeviceEvents<'a> = BTreeMap<PciAddress, Vec<&'a KernelEvent>>;

impl KernelLog {
    /// The GPU events (Xid, fallen off the bus) by device, in log order.
    pub fn by_device(&self) -> DeviceEvents<'_> {
        let mut index: DeviceEvents<'_> = BTreeMap::new();
        for event in &self.events {
            let pci = match &event.kind {
                KernelEventKind::Xid { pci: Some(pci), .. }
                | KernelEventKind::FallenOffBus { pci: Some(pci) } => pci,
                _ => continue,
            };
            index.entry(pci.device_slot()).or_default().push(event);
        }
        index
    }
}

pub fn parse(text: &str) -> KernelLog {
    let mut events = Vec::new();
    let mut lines = 0;
    for line in text.lines() {
        // kmsg continuation lines (` SUBSYSTEM=pci`) are metadata of the record above.
        if line.starts_with(' ') || line.trim().is_empty() {
            continue;
        }
        lines += 1;
        let (seconds, message) = split_prefix(line);
        if let Some(kind) = classify(message) {
            events.push(KernelEvent {
                seconds,
                kind,
                message: message.to_owned(),
            });
        }
    }
    KernelLog { events, lines }
}

/// Removes a kmsg (`pri,seq,usec,flags;`) or dmesg (`[ seconds]`) prefix.
fn split_prefix(line: &str) -> (Option<f64>, &str) {
    if let Some(rest) = line.strip_prefix('[')
        && let Some((stamp, message)) = rest.split_once(']')
        && let Ok(seconds) = stamp.trim().parse::<f64>()
    {
        return (Some(seconds), message.trim_start());
    }
    if let Some((header, message)) = line.split_once(';') {
        let fields: Vec<&str> = header.split(',').collect();
        if fields.len() >= 3
            && fields[..3]
                .iter()
                .all(|f| f.chars().all(|c| c.is_ascii_digit()))
        {
            let seconds = fields[2].parse::<u64>().ok().map(|us| us as f64 / 1e6);
            return (seconds, message);
        }
    }
    (None, line)
}

fn classify(message: &str) -> Option<KernelEventKind> {
    if let Some(at) = message.find("NVRM: Xid (") {
        let rest = &message[at + "NVRM: Xid (".len()..];
        let (location, after) = rest.split_once(')')?;
        let pci = location
            .strip_prefix("PCI:")
            .and_then(|slot| PciAddress::parse(&format!("{slot}.0")).ok());
        let code = after
            .trim_start_matches(':')
            .trim()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        return Some(KernelEventKind::Xid { code, pci });
    }
    if message.contains("fallen off the bus") {
        return Some(KernelEventKind::FallenOffBus {
            pci: first_pci_address(message),
        });
    }
    if message.contains("EDAC") && (message.contains(" CE ") || message.contains(" UE ")) {
        return Some(KernelEventKind::HostMemoryEcc {
            uncorrectable: message.contains(" UE "),
        });
    }
    if message.contains("NVRM") && message.contains("ECC") {
        return Some(KernelEventKind::GpuEcc {
            pci: first_pci_address(message),
        });
    }
    if message.contains("AER:") || message.contains("PCIe Bus Error") {
        let severity = if message.contains("Corrected") {
            AerSeverity::Corrected
        } else if message.contains("Non-Fatal") || message.contains("Uncorrected (Non-Fatal)") {
            AerSeverity::NonFatal
        } else if message.contains("Fatal") {
            AerSeverity::Fatal
        } else {
            AerSeverity::Unknown
        };
        // The reporting device follows "received:"; otherwise the port that printed it.
        let pci = message
            .split_once("received:")
            .and_then(|(_, after)| first_pci_address(after))
            .or_else(|| first_pci_address(message));
        return Some(KernelEventKind::PcieAer { severity, pci });
    }
    None
}

fn first_pci_address(text: &str) -> Option<PciAddress> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .map(|word| word.trim_end_matches(':'))
        .filter(|word| word.len() >= 7 && word.contains(':') && word.contains('.'))
        .find_map(|word| PciAddress::parse(word).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_xid_aer_and_fallen_off_bus() {
        let log = parse(
            "4,1021,51234567,-;NVRM: Xid (PCI:0000:CB:00): 79, pid=1797828, name=pt_main_thread, GPU has fallen off the bus.\n SUBSYSTEM=pci\n\
             [  812.000001] NVRM: GPU 0000:b3:00.0: GPU has fallen off the bus.\n\
             [  900.5] pcieport 0000:00:01.0: AER: Multiple Uncorrected (Non-Fatal) error received: 0000:01:00.0\n\
             [  901.0] pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0\n\
             EDAC MC0: 1 UE memory read error on CPU_SrcID#0\n\
             [  1.0] Linux version 6.8.0\n",
        );
        assert_eq!(log.lines, 6);
        assert_eq!(log.events.len(), 5);
        assert_eq!(
            log.events[0].kind,
            KernelEventKind::Xid {
                code: 79,
                pci: PciAddress::parse("0000:cb:00.0").ok()
            }
        );
        let index = log.by_device();
        let cb = PciAddress::parse("0000:cb:00.0").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(index.get(&cb).map(Vec::len), Some(1));
        assert_eq!(index.len(), 2);
        assert_eq!(log.events[0].seconds, Some(51.234567));
        assert!(matches!(
            log.events[1].kind,
            KernelEventKind::FallenOffBus { pci: Some(a) } if a.to_string() == "0000:b3:00.0"
        ));
        assert!(matches!(
            log.events[2].kind,
            KernelEventKind::PcieAer { severity: AerSeverity::NonFatal, pci: Some(a) } if a.to_string() == "0000:01:00.0"
        ));
        assert!(matches!(
            log.events[3].kind,
            KernelEventKind::PcieAer {
                severity: AerSeverity::Corrected,
                ..
            }
        ));
        assert_eq!(
            log.events[4].kind,
            KernelEventKind::HostMemoryEcc {
                uncorrectable: true
            }
        );
    }
}
