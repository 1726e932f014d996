//! Fabric Manager's log (`/var/log/fabricmanager.log`, its `LOG_FILE_NAME` default): the
//! fatal entries of its current run. Lines read
//! `[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on
//! NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33`; Fabric Manager appends to
//! the file across restarts, so only the lines after the last start (`Fabric Manager
//! version ... is running`) are its current run's. The fatal entries are an NVSwitch fatal
//! error (an SXid, judged by the switch catalog) and Fabric Manager giving up (`aborting`,
//! the topology not matching a supported system); at most [`KEEP`] are kept.

use serde::Serialize;

/// Fatal entries kept; more are counted.
pub const KEEP: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FabricManagerLog {
    pub fatal: Vec<FatalEntry>,
    /// Fatal entries past [`KEEP`].
    pub more: usize,
    /// Lines of the current run.
    pub lines: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FatalEntry {
    /// The SXid of `detected NVSwitch fatal error <code>`; `None` when Fabric Manager gave up.
    pub sxid: Option<u32>,
    /// The line, cut to 300 bytes.
    pub line: String,
}

pub fn parse(text: &str) -> FabricManagerLog {
    let start = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("Fabric Manager version") && l.contains("is running"))
        .map(|(i, _)| i)
        .last()
        .unwrap_or(0);
    let mut log = FabricManagerLog {
        fatal: Vec::new(),
        more: 0,
        lines: 0,
    };
    for line in text.lines().skip(start) {
        log.lines += 1;
        let error = line.contains("[ERROR]") || line.contains("[FATAL]");
        let sxid = line
            .split_once("detected NVSwitch fatal error ")
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .and_then(|code| code.parse::<u32>().ok());
        let gave_up = line.contains("aborting fabric manager")
            || line.contains("don't match with any supported system topology");
        if !(error && (sxid.is_some() || gave_up)) {
            continue;
        }
        if log.fatal.len() >= KEEP {
            log.more += 1;
            continue;
        }
        let mut cut = line.len().min(300);
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        log.fatal.push(FatalEntry {
            sxid,
            line: line[..cut].to_owned(),
        });
    }
    log
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatal_entries_of_the_current_run() {
        let log = parse(
            "[Jul 22 2024 07:00:00] [ERROR] [tid 1] detected NVSwitch fatal error 12020 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 1\n\
             [Jul 23 2024 07:50:00] [INFO] [tid 2] Fabric Manager version 535.161.08 is running with the following configuration options\n\
             [Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33\n\
             [Jul 09 2024 18:14:07] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61\n\
             [Jul 23 2024 07:54:00] [ERROR] [tid 3] detected number of NVSwitches don't match with any supported system topology, aborting fabric manager\n",
        );
        assert_eq!(log.lines, 4);
        let sxids: Vec<_> = log.fatal.iter().map(|e| e.sxid).collect();
        assert_eq!(sxids, vec![Some(20034), None]);
    }
}
