//! CUDA samples' `p2pBandwidthLatencyTest`: the peer-access matrix and the P2P
//! bandwidth and latency matrices, with peer access disabled and enabled.
//!
//! ```text
//! [P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
//! Device: 0, NVIDIA RTX 6000 Ada Generation, pciBusID: 1, pciDeviceID: 0, pciDomainID:0
//! Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
//!    D\D     0      1
//!      0 802.93  26.33
//!      1  26.32 833.33
//! P2P=Disabled Latency Matrix (us)
//!    GPU     0      1
//!      0   1.37  10.73
//!      1  10.27   1.37
//!
//!    CPU     0      1
//! ```
//!
//! A matrix with missing rows or a damaged cell is refused with the line; a copy trimmed
//! to fewer matrices is not (the judge asks for the matrix it needs).

use super::lines::each;
use super::matrix::Matrix;
use crate::line_error::LineError;

#[derive(Debug, Clone, PartialEq)]
pub struct P2pTest {
    /// `NVIDIA RTX 6000 Ada Generation`, per device.
    pub devices: Vec<String>,
    pub matrices: Vec<Matrix>,
}

impl P2pTest {
    /// The matrix whose title starts with `prefix` (`Unidirectional P2P=Enabled`).
    pub fn matrix(&self, prefix: &str) -> Option<&Matrix> {
        self.matrices.iter().find(|m| m.title.starts_with(prefix))
    }
}

/// Parses a `p2pBandwidthLatencyTest` output.
pub fn parse(text: &str) -> Result<P2pTest, LineError> {
    let mut out = P2pTest {
        devices: Vec::new(),
        matrices: Vec::new(),
    };
    let mut started = false;
    let mut title: Option<(String, usize)> = None;
    let mut reading = false;
    let mut last = 0;
    for line in each(text) {
        let t = line.text.trim();
        last = line.number;
        if t.starts_with("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]") {
            started = true;
            continue;
        }
        if !started {
            continue;
        }
        if let Some(rest) = t.strip_prefix("Device: ") {
            if let Some(name) = rest.split(',').nth(1) {
                out.devices.push(name.trim().to_owned());
            }
            continue;
        }
        let is_title = t.ends_with("Matrix") || t.ends_with("(GB/s)") || t.ends_with("(us)");
        if is_title && !t.starts_with("***") {
            if reading {
                finish(&out, line.number)?;
            }
            reading = false;
            title = Some((t.to_owned(), line.number));
            continue;
        }
        let Some((name, title_line)) = &title else {
            continue;
        };
        let mut header = Matrix::new(name, *title_line);
        if header.header(t, &["D\\D", "GPU", "CPU"]) {
            if reading {
                finish(&out, line.number)?;
            }
            // The latency matrices print a GPU and a CPU block under one title.
            let lead = t.split_whitespace().next().unwrap_or("");
            if lead == "CPU" {
                header.title = format!("{name} [CPU]");
            }
            out.matrices.push(header);
            reading = true;
            continue;
        }
        if reading {
            if t.split_whitespace()
                .next()
                .is_some_and(|f| f.parse::<u32>().is_ok())
            {
                out.matrices
                    .last_mut()
                    .expect("reading")
                    .row(t, line.number)?;
            } else {
                finish(&out, line.number)?;
                reading = false;
            }
        }
    }
    if reading {
        finish(&out, last)?;
    }
    if !started {
        return Err(LineError::new(
            1,
            "no `[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]` line",
        ));
    }
    if out.matrices.is_empty() {
        return Err(LineError::new(last.max(1), "no matrix: truncated?"));
    }
    Ok(out)
}

fn finish(out: &P2pTest, line: usize) -> Result<(), LineError> {
    let m = out.matrices.last().expect("a matrix");
    // Rows of a device-by-device matrix are devices: it must be square.
    if m.rows.len() != m.columns.len() {
        return Err(LineError::new(
            line,
            format!(
                "the matrix `{}` (line {}) has {} of {} rows: truncated?",
                m.title,
                m.line,
                m.rows.len(),
                m.columns.len()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "\
$ ./p2pBandwidthLatencyTest
[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
Device: 0, NVIDIA RTX 6000 Ada Generation, pciBusID: 1, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA RTX 6000 Ada Generation, pciBusID: 41, pciDeviceID: 0, pciDomainID:0
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 802.93  26.33
     1  26.32 833.33
P2P=Disabled Latency Matrix (us)
   GPU     0      1
     0   1.37  10.73
     1  10.27   1.37

   CPU     0      1
     0   1.86   5.27
     1   5.24   1.73
";

    #[test]
    fn matrices_by_title() {
        let p = parse(OUT).unwrap();
        assert_eq!(p.devices.len(), 2);
        assert_eq!(p.matrices.len(), 3);
        let uni = p.matrix("Unidirectional P2P=Enabled").unwrap();
        assert_eq!(uni.min(), Some((1, 0, 26.32)));
        assert_eq!(
            p.matrices[2].title,
            "P2P=Disabled Latency Matrix (us) [CPU]"
        );
        let cut: String = OUT.lines().take(7).map(|l| format!("{l}\n")).collect();
        assert!(parse(&cut).unwrap_err().message.contains("1 of 2 rows"));
    }
}
