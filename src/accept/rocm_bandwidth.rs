//! rocm-bandwidth-test's all-device copy runs (`-a` unidirectional, `-A` bidirectional): the
//! device list and the peak bandwidth matrix between every pair of devices, CPUs (NUMA
//! nodes) and GPUs alike.
//!
//! The layout, from ROCm/rocm_bandwidth_test `rocm_bandwidth_test_report.cpp` (commit
//! 6bd5c1a, as of rocm-6.3): `RocmBandwidthTest Version: V`, one `Device: N,  NAME` line per
//! device (a GPU adds `,  UUID,  BDF`), link property matrices (`Inter-Device Access`,
//! `... Link Type`, `... Numa Distance`: not bandwidth, left aside), then the title
//! (`Unidirectional copy peak bandwidth GB/s`, `Bidirectional ...`), a `D/D 0 1 ...` header
//! and one row per source device, each followed by a blank line, `N/A` where no copy ran.
//! Without the device lines (a copy of the matrix alone), devices are told apart as the
//! runtime enumerates them, CPU agents first ([`RocmBandwidth::gpu_ids`]).

use super::lines::numbered;
use super::matrix::Matrix;
use crate::line_error::LineError;

/// The matrix titles that carry copy bandwidth.
const COPY_TITLES: [&str; 4] = [
    "Unidirectional copy peak bandwidth GB/s",
    "Bidirectional copy peak bandwidth GB/s",
    "Unidirectional copy average bandwidth GB/s",
    "Bidirectional copy average bandwidth GB/s",
];

/// Titles of the link property matrices printed before the copy matrix.
const PROPERTY_TITLES: [&str; 4] = [
    "Inter-Device Access",
    "Inter-Device Link Type",
    "Inter-Device Link Hops",
    "Inter-Device Numa Distance",
];

#[derive(Debug, Clone, PartialEq)]
pub struct RocmBandwidth {
    pub version: Option<String>,
    /// `Device: N` lines: the id and whether it is a GPU.
    pub devices: Vec<(u32, bool)>,
    pub matrices: Vec<Matrix>,
}

impl RocmBandwidth {
    /// The unidirectional (`true`) or bidirectional peak matrix.
    pub fn peak(&self, unidirectional: bool) -> Option<&Matrix> {
        let title = COPY_TITLES[if unidirectional { 0 } else { 1 }];
        self.matrices.iter().find(|m| m.title == title)
    }

    /// The GPUs' device ids: from the device lines, else the last `expected` ids of a
    /// matrix (the runtime lists its CPU agents first).
    pub fn gpu_ids(&self, expected: usize) -> Vec<u32> {
        if !self.devices.is_empty() {
            return self
                .devices
                .iter()
                .filter(|(_, gpu)| *gpu)
                .map(|(id, _)| *id)
                .collect();
        }
        let columns = self
            .matrices
            .first()
            .map(|m| m.columns.clone())
            .unwrap_or_default();
        columns[columns.len().saturating_sub(expected)..].to_vec()
    }
}

enum State {
    Outside,
    /// After a copy title: its header, then rows.
    Copy(Matrix),
    /// After a property title: skipped to the next title.
    Property,
}

/// Parses the output of `rocm-bandwidth-test -a` and/or `-A` (one run or both in one log).
pub fn parse(text: &str) -> Result<RocmBandwidth, LineError> {
    let mut out = RocmBandwidth {
        version: None,
        devices: Vec::new(),
        matrices: Vec::new(),
    };
    let mut state = State::Outside;
    let lines = numbered(text);
    let last = lines.last().map_or(1, |l| l.number);
    for l in &lines {
        let t = l.text.trim();
        if let Some(v) = t.strip_prefix("RocmBandwidthTest Version:") {
            out.version = Some(v.trim().to_owned());
            continue;
        }
        let title = COPY_TITLES.iter().find(|c| t == **c);
        let property = PROPERTY_TITLES.iter().any(|p| t.starts_with(p));
        if title.is_some() || property {
            if let State::Copy(m) = std::mem::replace(&mut state, State::Outside) {
                m.complete(l.number)?;
                out.matrices.push(m);
            }
            state = match title {
                Some(title) => State::Copy(Matrix::new(title, l.number)),
                None => State::Property,
            };
            continue;
        }
        if let Some(rest) = t.strip_prefix("Device:") {
            let parts: Vec<&str> = rest.split(",  ").collect();
            let id = parts[0].trim().parse::<u32>().map_err(|_| {
                LineError::new(l.number, format!("`{t}`: `Device:` without a device id"))
            })?;
            // A GPU's line names its UUID and PCI address after its name.
            out.devices.push((id, parts.len() >= 4));
            continue;
        }
        match &mut state {
            State::Copy(m) if m.columns.is_empty() => {
                if t.is_empty() {
                    continue;
                }
                if !m.header(t, &["D/D"]) {
                    return Err(LineError::new(
                        l.number,
                        format!("`{t}`: not the `D/D` header of `{}`", m.title),
                    ));
                }
            }
            State::Copy(m) => {
                if t.is_empty() {
                    continue;
                }
                if t.split_whitespace()
                    .next()
                    .is_some_and(|w| w.parse::<u32>().is_ok())
                {
                    m.row(t, l.number)?;
                } else {
                    let State::Copy(m) = std::mem::replace(&mut state, State::Outside) else {
                        unreachable!("matched above")
                    };
                    m.complete(l.number)?;
                    out.matrices.push(m);
                }
            }
            State::Property | State::Outside => {}
        }
    }
    if let State::Copy(m) = state {
        m.complete(last)?;
        out.matrices.push(m);
    }
    if out.matrices.is_empty() {
        return Err(LineError::new(
            last,
            "no copy bandwidth matrix (`rocm-bandwidth-test -a` or `-A`): cut before it?",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rocm-bandwidth-test -A` on 2 CPUs and 8 GPUs, from ROCm/gpu-cluster-networking
    /// `docs/how-to/single-node-config.rst` (commit 0d26d8c), the matrix as printed.
    pub(crate) const BIDIR: &str =
        include_str!("../../tests/fixtures/accept/rocm-bandwidth-test-A.txt");

    #[test]
    fn the_documented_matrix_is_read_whole() {
        let r = parse(BIDIR).unwrap();
        let m = r.peak(false).unwrap();
        assert!(r.peak(true).is_none());
        assert_eq!(m.columns.len(), 10);
        assert_eq!(m.rows.len(), 10);
        assert_eq!(m.rows[0].1[0], None, "CPU to CPU is N/A");
        assert_eq!(m.rows[2].1[3], Some(101.458));
        // No device lines in the copy: the last eight ids are the GPUs.
        assert_eq!(r.gpu_ids(8), (2..10).collect::<Vec<u32>>());
        let at = BIDIR
            .lines()
            .position(|l| l.contains("Bidirectional copy peak bandwidth GB/s"))
            .unwrap()
            + 1;
        assert_eq!(m.line, at);
    }

    #[test]
    fn device_lines_name_the_gpus_and_damage_is_refused() {
        let text = format!(
            "RocmBandwidthTest Version: 2.6.0\n\n          Device: 0,  AMD EPYC 9654 96-Core Processor\n          Device: 1,  AMD Instinct MI300X,  GPU-1a2b3c4d5e6f7a8b,  05:00.0\n\n{BIDIR}"
        );
        let r = parse(&text).unwrap();
        assert_eq!(r.version.as_deref(), Some("2.6.0"));
        assert_eq!(r.devices, vec![(0, false), (1, true)]);
        assert_eq!(r.gpu_ids(8), vec![1]);
        // A row cut short, and a run cut before its matrix.
        let cut = BIDIR.replacen("101.458     80.902", "101.458", 1);
        let err = parse(&cut).unwrap_err();
        assert!(err.message.contains("cells"), "{err}");
        let head = &BIDIR[..BIDIR.find("D/D").unwrap()];
        assert!(parse(head).is_err());
        let err = parse("RocmBandwidthTest Version: 2.6.0\n").unwrap_err();
        assert!(err.message.contains("no copy bandwidth matrix"), "{err}");
    }
}
