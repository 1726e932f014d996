//! Device events in the kernel log: NVIDIA Xid errors, NVSwitch SXid errors, GPUs fallen
//! off the bus, amdgpu RAS and GPU-reset messages, ECC errors and PCIe AER reports.
//!
//! The text may be `/dev/kmsg` records (`6,1234,5678901,-;message`, with continuation
//! lines starting with a space), `dmesg` output (`[  123.456789] message`) or plain
//! messages. Lines look like:
//! `NVRM: Xid (PCI:0000:cb:00): 79, pid=..., GPU has fallen off the bus.`,
//! `nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)`,
//! `NVRM: GPU 0000:b3:00.0: GPU has fallen off the bus.`,
//! `amdgpu 0000:c3:00.0: amdgpu: 2 uncorrectable hardware errors detected in umc block`,
//! `amdgpu 0000:c3:00.0: amdgpu: GPU reset(2) failed`,
//! `pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0`,
//! `EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#0`.
//!
//! Events are aggregated while the log is read: one [`KernelEvent`] per kind, device and
//! code, with the number of lines, the first and last time and sequence number, and the
//! first line (cut to [`MESSAGE_LIMIT`] bytes). A storm of 100,000 identical Xids is one
//! event with a count, so memory stays bounded by the number of distinct events, and that
//! is capped too ([`GROUP_LIMIT`]; the lines past it are counted in
//! [`KernelLog::dropped`]). With a [`Cursor`] (the health phase's position from its last
//! run), records at or before it are skipped: they were judged already.
//!
//! The Xid location is the kernel's `domain:bus:device` without a function number; it is
//! parsed into a [`PciAddress`] of function 0, the GPU's. [`KernelLog::by_device`] indexes
//! the GPU and switch events by device once, so per-device checks look up instead of
//! scanning the log.

use super::pci_address::PciAddress;
use crate::fault::amd_ras::Signal;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Bytes of a line kept as an event's message.
pub const MESSAGE_LIMIT: usize = 400;
/// Distinct events kept; further distinct ones are only counted.
pub const GROUP_LIMIT: usize = 4096;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelLog {
    pub events: Vec<KernelEvent>,
    /// Lines read, to tell an empty log from a log without events.
    pub lines: usize,
    /// Lines at or before the cursor, not judged again.
    pub before_cursor: usize,
    /// Event lines past [`GROUP_LIMIT`] distinct events: counted, not kept.
    pub dropped: usize,
    /// The position of the last record read: where the next health run starts.
    pub end: Cursor,
}

/// A position in the kernel log of one boot: the kmsg sequence number and the
/// timestamp (microseconds since boot) of a record, whichever the text carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micros: Option<u64>,
}

impl Cursor {
    /// Whether a record at `at` comes after this position.
    fn before(&self, at: &Cursor) -> bool {
        match (self.seq, at.seq, self.micros, at.micros) {
            (Some(mine), Some(theirs), _, _) => theirs > mine,
            (_, _, Some(mine), Some(theirs)) => theirs > mine,
            // Nothing to compare: judge it.
            _ => true,
        }
    }

    fn is_empty(&self) -> bool {
        self.seq.is_none() && self.micros.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelEvent {
    /// Seconds since boot of the first line, when it carries a timestamp.
    pub seconds: Option<f64>,
    /// Seconds since boot of the last line.
    pub last_seconds: Option<f64>,
    /// kmsg sequence numbers of the first and last line.
    pub first_seq: Option<u64>,
    pub last_seq: Option<u64>,
    /// Lines of this event (a storm is one event with a large count).
    pub count: u64,
    pub kind: KernelEventKind,
    /// The first line's message, cut to [`MESSAGE_LIMIT`] bytes.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum KernelEventKind {
    /// `NVRM: Xid (PCI:<domain:bus:device>): <code>, ...`; the location has no function
    /// number in the log and is function 0 here. `detail` keeps apart lines of one code
    /// that the catalog judges differently: Xid 154's new recovery action, and `Fatal` or
    /// `Nonfatal` of Xid 144-150.
    Xid {
        code: u32,
        pci: Option<PciAddress>,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// `nvidia-nvswitch<N>: SXid (PCI:<address>): <code>, <Fatal|Non-fatal>, Link <L> ...`.
    /// The driver's follow-up lines of the same SXid (`Data {...}`, `Severity ...`) are not
    /// events of their own.
    Sxid {
        code: u32,
        switch: Option<u32>,
        pci: Option<PciAddress>,
        fatal: Option<bool>,
        link: Option<u32>,
    },
    FallenOffBus {
        pci: Option<PciAddress>,
    },
    GpuEcc {
        pci: Option<PciAddress>,
    },
    /// An amdgpu RAS or GPU-reset message (`signal` is one of the `log-*` signals of the
    /// AMD RAS table), with the RAS block and error count where the line names them.
    AmdRas {
        signal: Signal,
        pci: Option<PciAddress>,
        #[serde(skip_serializing_if = "Option::is_none")]
        block: Option<String>,
    },
    HostMemoryEcc {
        uncorrectable: bool,
    },
    /// A machine check the kernel logged: corrected ones the CMCI/poll logs
    /// (`mce: [Hardware Error]: Machine check events logged`), uncorrected ones it
    /// survived (`Machine Check Exception`, `Uncorrected hardware memory error`,
    /// `Memory failure: …`, `Processor context corrupt`).
    MachineCheck {
        uncorrected: bool,
    },
    PcieAer {
        severity: AerSeverity,
        pci: Option<PciAddress>,
    },
}

impl KernelEventKind {
    /// The PCI device (function 0) a GPU or switch event belongs to.
    pub fn device(&self) -> Option<PciAddress> {
        match self {
            KernelEventKind::Xid { pci: Some(pci), .. }
            | KernelEventKind::FallenOffBus { pci: Some(pci) }
            | KernelEventKind::Sxid { pci: Some(pci), .. }
            | KernelEventKind::AmdRas { pci: Some(pci), .. } => Some(pci.device_slot()),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AerSeverity {
    Corrected,
    NonFatal,
    Fatal,
    Unknown,
}

/// The GPU and switch events of each PCI device (by function-0 address).
pub type DeviceEvents<'a> = BTreeMap<PciAddress, Vec<&'a KernelEvent>>;

impl KernelLog {
    /// The GPU and switch events (Xid, SXid, fallen off the bus, amdgpu RAS) by device,
    /// in log order.
    pub fn by_device(&self) -> DeviceEvents<'_> {
        let mut index: DeviceEvents<'_> = BTreeMap::new();
        for event in &self.events {
            if let Some(device) = event.kind.device() {
                index.entry(device).or_default().push(event);
            }
        }
        index
    }
}

/// Reads the whole log.
pub fn parse(text: &str) -> KernelLog {
    parse_since(text, None)
}

/// Reads the records after `since` (all of them without it).
pub fn parse_since(text: &str, since: Option<&Cursor>) -> KernelLog {
    let mut events: Vec<KernelEvent> = Vec::new();
    let mut index: HashMap<KernelEventKind, usize> = HashMap::new();
    let mut lines = 0;
    let mut before_cursor = 0;
    let mut dropped = 0;
    let mut end = Cursor::default();
    let since = since.filter(|c| !c.is_empty());
    // A storm repeats one message: the last message classified and its event, so that a
    // repeat is counted without being classified again.
    let mut last: Option<(&str, usize)> = None;
    for line in text.lines() {
        // kmsg continuation lines (` SUBSYSTEM=pci`) are metadata of the record above.
        if line.starts_with(' ') || line.trim().is_empty() {
            continue;
        }
        lines += 1;
        let (at, seconds, message) = split_prefix(line);
        if at.seq.is_some() || at.micros.is_some() {
            end = at;
        }
        if let Some(since) = since
            && !since.before(&at)
        {
            before_cursor += 1;
            continue;
        }
        if let Some((same, i)) = last
            && same == message
        {
            events[i].again(seconds, at.seq);
            continue;
        }
        let Some(kind) = classify(message) else {
            continue;
        };
        match index.get(&kind) {
            Some(&i) => {
                last = Some((message, i));
                events[i].again(seconds, at.seq);
            }
            None if events.len() >= GROUP_LIMIT => dropped += 1,
            None => {
                last = Some((message, events.len()));
                index.insert(kind.clone(), events.len());
                events.push(KernelEvent {
                    seconds,
                    last_seconds: seconds,
                    first_seq: at.seq,
                    last_seq: at.seq,
                    count: 1,
                    kind,
                    message: cut(message),
                });
            }
        }
    }
    KernelLog {
        events,
        lines,
        before_cursor,
        dropped,
        end,
    }
}

impl KernelEvent {
    /// One more occurrence, at `seconds` and record `seq`.
    fn again(&mut self, seconds: Option<f64>, seq: Option<u64>) {
        self.count += 1;
        self.last_seconds = seconds.or(self.last_seconds);
        self.last_seq = seq.or(self.last_seq);
    }
}

/// At most [`MESSAGE_LIMIT`] bytes, cut at a character boundary.
fn cut(message: &str) -> String {
    if message.len() <= MESSAGE_LIMIT {
        return message.to_owned();
    }
    let mut end = MESSAGE_LIMIT;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end])
}

/// The kernel's machine-check and memory-failure messages (arch/x86/kernel/cpu/mce,
/// mm/memory-failure.c).
fn machine_check(message: &str) -> Option<KernelEventKind> {
    const UNCORRECTED: [&str; 4] = [
        "Machine Check Exception",
        "Uncorrected hardware memory error",
        "Memory failure: ",
        "Processor context corrupt",
    ];
    if UNCORRECTED.iter().any(|m| message.contains(m)) {
        return Some(KernelEventKind::MachineCheck { uncorrected: true });
    }
    message
        .contains("Machine check events logged")
        .then_some(KernelEventKind::MachineCheck { uncorrected: false })
}

/// Removes a kmsg (`pri,seq,usec,flags;`) or dmesg (`[ seconds]`) prefix: the record's
/// position, its time in seconds, and the message.
fn split_prefix(line: &str) -> (Cursor, Option<f64>, &str) {
    if let Some(rest) = line.strip_prefix('[')
        && let Some((stamp, message)) = rest.split_once(']')
        && let Ok(seconds) = stamp.trim().parse::<f64>()
    {
        let micros = (seconds >= 0.0).then(|| (seconds * 1e6).round() as u64);
        return (
            Cursor { seq: None, micros },
            Some(seconds),
            message.trim_start(),
        );
    }
    if let Some((header, message)) = line.split_once(';') {
        let mut fields = header.split(',');
        let (pri, seq, usec) = (fields.next(), fields.next(), fields.next());
        fn digits(f: Option<&str>) -> Option<&str> {
            f.filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        }
        if let (Some(_), Some(seq), Some(usec)) = (digits(pri), digits(seq), digits(usec)) {
            let seq = seq.parse::<u64>().ok();
            let micros = usec.parse::<u64>().ok();
            return (
                Cursor { seq, micros },
                micros.map(|us| us as f64 / 1e6),
                message,
            );
        }
    }
    (Cursor::default(), None, line)
}

/// Every event [`classify`] knows names one of these words: a line without any is passed
/// over in one scan (most of a kernel log), not searched for each kind in turn.
static EVENT_WORDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"Xid \(|fallen off the bus|amdgpu|EDAC|NVRM|AER:|PCIe Bus Error|Machine [Cc]heck|Memory failure: |Uncorrected hardware memory error|Processor context corrupt",
    )
        .expect("a fixed pattern")
});

fn classify(message: &str) -> Option<KernelEventKind> {
    if !EVENT_WORDS.is_match(message) {
        return None;
    }
    if let Some(at) = message.find("NVRM: Xid (") {
        let rest = &message[at + "NVRM: Xid (".len()..];
        let (location, after) = rest.split_once(')')?;
        let pci = location
            .strip_prefix("PCI:")
            .and_then(|slot| PciAddress::parse(&format!("{slot}.0")).ok());
        let after = after.trim_start_matches(':').trim();
        let code: u32 = after
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()?;
        let detail = xid_detail(code, after);
        return Some(KernelEventKind::Xid { code, pci, detail });
    }
    if let Some(at) = message.find("SXid (") {
        return sxid(&message[..at], &message[at + "SXid (".len()..]);
    }
    if message.contains("fallen off the bus") {
        return Some(KernelEventKind::FallenOffBus {
            pci: first_pci_address(message),
        });
    }
    if (message.starts_with("amdgpu ") || message.contains(" amdgpu: "))
        && let Some(kind) = amdgpu(message)
    {
        return Some(kind);
    }
    if let Some(kind) = machine_check(message) {
        return Some(kind);
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

/// What of an Xid line its catalog row depends on: the recovery action Xid 154 changes to
/// (`... to 0x2 (Node Reboot Required)`), the `Fatal`/`Nonfatal` word of Xid 144-150.
fn xid_detail(code: u32, after_code: &str) -> Option<String> {
    match code {
        154 => {
            let (_, to) = after_code.rsplit_once(" to ")?;
            let open = to.find('(')?;
            let close = to[open..].find(')')? + open;
            Some(to[open + 1..close].trim().to_owned())
        }
        144..=150 => after_code
            .split(|c: char| c.is_whitespace() || c == ',')
            .find(|w| {
                matches!(
                    w.to_ascii_lowercase().as_str(),
                    "fatal" | "nonfatal" | "non-fatal"
                )
            })
            .map(str::to_owned),
        _ => None,
    }
}

/// An SXid line: `nvidia-nvswitch<N>: ` before, `PCI:<address>): <code>, <Fatal|Non-fatal>,
/// Link <L> <text>` after. Only the line that says Fatal or Non-fatal opens an event.
fn sxid(before: &str, after: &str) -> Option<KernelEventKind> {
    let (location, rest) = after.split_once(')')?;
    let pci = location
        .strip_prefix("PCI:")
        .and_then(|a| PciAddress::parse(a.trim()).ok());
    let rest = rest.trim_start_matches(':').trim();
    let (code, rest) = rest.split_once(',')?;
    let code: u32 = code.trim().parse().ok()?;
    let mut words = rest.split(',').map(str::trim);
    let fatal = match words.next()?.to_ascii_lowercase().as_str() {
        "fatal" => Some(true),
        "non-fatal" | "nonfatal" => Some(false),
        _ => return None,
    };
    let link = words
        .next()
        .and_then(|w| w.strip_prefix("Link "))
        .and_then(|w| w.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    let switch = before
        .trim_end()
        .trim_end_matches(':')
        .rsplit("nvidia-nvswitch")
        .next()
        .filter(|_| before.contains("nvidia-nvswitch"))
        .and_then(|n| n.trim().parse().ok());
    Some(KernelEventKind::Sxid {
        code,
        switch,
        pci,
        fatal,
        link,
    })
}

/// The amdgpu RAS and reset lines of the AMD RAS table.
fn amdgpu(message: &str) -> Option<KernelEventKind> {
    let signal = if message.contains("uncorrectable hardware error") {
        if message.contains(" no uncorrectable") || message.contains(": 0 uncorrectable") {
            return None;
        }
        Signal::LogUe
    } else if message.contains("deferred hardware error") {
        Signal::LogDe
    } else if message.contains("correctable hardware error") {
        Signal::LogCe
    } else if message.contains("reaches threshold value")
        || (message.contains("RAS records") && message.contains("exceed threshold"))
    {
        Signal::LogBadPageThreshold
    } else if message.contains("RAS records") && message.contains("of threshold") {
        Signal::LogBadPageNearThreshold
    } else if message.contains("GPU reset begin") {
        Signal::LogReset
    } else if message.contains("GPU reset") && message.contains("succeeded") {
        Signal::LogResetSucceeded
    } else if (message.contains("GPU reset") && message.contains("failed"))
        || message.contains("GPU Recovery Failed")
        || message.contains("Mode2 reset failed")
    {
        Signal::LogResetFailed
    } else if message.contains("GPU is throttled") {
        Signal::LogThrottled
    } else {
        return None;
    };
    let block = message
        .split_once(" detected in ")
        .and_then(|(_, after)| after.split_whitespace().next())
        .map(str::to_owned);
    Some(KernelEventKind::AmdRas {
        signal,
        pci: first_pci_address(message),
        block,
    })
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

    fn pci(s: &str) -> Option<PciAddress> {
        PciAddress::parse(s).ok()
    }

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
                pci: pci("0000:cb:00.0"),
                detail: None
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

    /// The SXid lines as the NVSwitch driver prints them: the Fatal or Non-fatal line opens
    /// the event; the `Severity` and `Data` lines of the same SXid do not.
    #[test]
    fn machine_checks_and_edac_lines() {
        let log = parse(
            "[  10.0] mce: [Hardware Error]: Machine check events logged\n\
             [  11.0] Memory failure: 0x3f0a1c: recovery action for dirty LRU page: Recovered\n\
             [  12.0] mce: Uncorrected hardware memory error in user-access at 3f0a1c000\n\
             [  13.0] EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#0\n\
             [  14.0] EDAC skx MC0: HANDLING MCE MEMORY ERROR\n",
        );
        let kinds: Vec<&KernelEventKind> = log.events.iter().map(|e| &e.kind).collect();
        assert_eq!(
            kinds,
            [
                &KernelEventKind::MachineCheck { uncorrected: false },
                &KernelEventKind::MachineCheck { uncorrected: true },
                &KernelEventKind::HostMemoryEcc {
                    uncorrectable: false
                },
            ]
        );
        assert_eq!(log.events[1].count, 2);
    }

    #[test]
    fn sxid_lines_name_the_switch_and_the_link() {
        let log = parse(
            "[111111.111] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)\n\
             [131453.740743] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 30 LTSSM Fault Up\n\
             [131453.740800] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Severity 1 Engine instance 30 Sub-engine instance 00\n\
             [131453.740900] nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 20034, Data {0x10000000, 0x10000000, 0x00000000}\n",
        );
        assert_eq!(log.events.len(), 2);
        assert_eq!(
            log.events[0].kind,
            KernelEventKind::Sxid {
                code: 12028,
                switch: Some(3),
                pci: pci("0000:05:00.0"),
                fatal: Some(false),
                link: Some(32)
            }
        );
        assert!(matches!(
            log.events[1].kind,
            KernelEventKind::Sxid {
                code: 20034,
                switch: Some(0),
                fatal: Some(true),
                link: Some(30),
                ..
            }
        ));
    }

    #[test]
    fn amdgpu_ras_and_reset_lines() {
        let log = parse(
            "3,2212,4053155111,-;amdgpu 0000:c3:00.0: amdgpu: 2 uncorrectable hardware errors detected in umc block\n\
             3,2213,4053155112,-;amdgpu 0000:c3:00.0: amdgpu: no uncorrectable hardware errors detected in umc block\n\
             4,2214,4053155113,-;amdgpu 0000:c3:00.0: amdgpu: GPU reset begin!\n\
             3,2215,4053155114,-;amdgpu 0000:c3:00.0: amdgpu: GPU reset(2) failed\n\
             4,2216,4053155115,-;amdgpu 0000:c3:00.0: Saved bad pages(128) reaches threshold value(128).\n",
        );
        let signals: Vec<_> = log
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                KernelEventKind::AmdRas { signal, block, .. } => Some((*signal, block.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            signals,
            vec![
                (Signal::LogUe, Some("umc".to_owned())),
                (Signal::LogReset, None),
                (Signal::LogResetFailed, None),
                (Signal::LogBadPageThreshold, None)
            ]
        );
        assert!(
            log.events
                .iter()
                .all(|e| e.kind.device() == pci("0000:c3:00.0"))
        );
    }

    /// A storm is one event with a count and its first and last time; the cursor skips
    /// what an earlier run judged.
    #[test]
    fn storms_are_aggregated_and_the_cursor_skips_the_judged() {
        let mut text = String::new();
        for i in 0..10_000u64 {
            text.push_str(&format!(
                "4,{},{},-;NVRM: Xid (PCI:0000:33:00): 13, pid=4242, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 1): Out Of Range Address\n",
                100 + i,
                5_000_000 + i * 1000
            ));
        }
        let log = parse(&text);
        assert_eq!(log.events.len(), 1);
        let e = &log.events[0];
        assert_eq!(
            (e.count, e.first_seq, e.last_seq),
            (10_000, Some(100), Some(10_099))
        );
        assert_eq!(log.end.seq, Some(10_099));
        let later = parse_since(
            &text,
            Some(&Cursor {
                seq: Some(10_000),
                micros: None,
            }),
        );
        assert_eq!(later.events[0].count, 99);
        assert_eq!(later.before_cursor, 9_901);
        let none = parse_since(&text, Some(&log.end));
        assert!(none.events.is_empty());
    }

    #[test]
    fn xid_154_and_nvlink5_keep_what_judges_them() {
        let log = parse(
            "NVRM: Xid (PCI:0000:c1:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)\n\
             NVRM: Xid (PCI:0000:c1:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 08 (0x004505c6 0x00000000)\n",
        );
        let details: Vec<_> = log
            .events
            .iter()
            .map(|e| match &e.kind {
                KernelEventKind::Xid { detail, .. } => detail.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(
            details,
            vec![
                Some("Node Reboot Required".to_owned()),
                Some("Fatal".to_owned())
            ]
        );
    }
}
