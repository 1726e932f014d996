//! `nvidia-smi topo -m`: the PCIe/NVLink path between every pair of GPUs and NICs, and
//! each GPU's CPU and NUMA affinity, from which [`judge`](super::judge) tells whether each
//! GPU has an RDMA NIC close enough for GPUDirect RDMA.
//!
//! ```text
//!         GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
//! GPU0     X      NV18    PXB     SYS     0-55            0               N/A
//! GPU1    NV18     X      SYS     PXB     56-111          1               N/A
//! NIC0    PXB     SYS      X      SYS
//! NIC1    SYS     PXB     SYS      X
//!
//! Legend:
//!   X    = Self
//!   ...
//! NIC Legend:
//!   NIC0: mlx5_0
//! ```
//!
//! Cells are separated by tabs (with trailing tabs), or by spaces in copies; the header
//! may be underlined with ANSI escapes; older drivers name NIC columns `mlx5_0` directly
//! and have no NUMA columns. A matrix with fewer rows than columns, a short row or a cell
//! that is no link type is refused with the line.

use super::lines::each;
use crate::line_error::LineError;

/// The path between two devices, nearest first (nvidia-smi's legend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Link {
    /// `X`: the device itself.
    Own,
    /// `NV#`: a bonded set of # NVLinks.
    NvLink(u32),
    /// `PIX`: at most a single PCIe bridge.
    Pix,
    /// `PXB`: multiple PCIe bridges, without the host bridge.
    Pxb,
    /// `PHB`: a PCIe host bridge (the CPU).
    Phb,
    /// `NODE`: between PCIe host bridges within a NUMA node.
    Node,
    /// `SYS` (`SOC` in old drivers): across the SMP interconnect between NUMA nodes.
    Sys,
}

impl Link {
    fn parse(cell: &str) -> Option<Link> {
        Some(match cell {
            "X" => Link::Own,
            "PIX" => Link::Pix,
            "PXB" => Link::Pxb,
            "PHB" => Link::Phb,
            "NODE" => Link::Node,
            "SYS" | "SOC" => Link::Sys,
            _ => Link::NvLink(cell.strip_prefix("NV")?.parse().ok()?),
        })
    }

    pub fn as_str(self) -> String {
        match self {
            Link::Own => "X".into(),
            Link::NvLink(n) => format!("NV{n}"),
            Link::Pix => "PIX".into(),
            Link::Pxb => "PXB".into(),
            Link::Phb => "PHB".into(),
            Link::Node => "NODE".into(),
            Link::Sys => "SYS".into(),
        }
    }

    /// Behind the same PCIe switch: PIX or PXB, no host bridge on the path.
    pub fn same_pcie_switch(self) -> bool {
        matches!(self, Link::Pix | Link::Pxb)
    }

    /// Within one NUMA node: anything but SYS.
    pub fn same_numa(self) -> bool {
        self != Link::Sys
    }
}

/// A row and column of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// As the header names it: `GPU0`, `NIC0`, `mlx5_0`.
    pub name: String,
    /// The RDMA device: the NIC legend's `mlx5_0` for `NIC0`, or the column name.
    pub rdma: Option<String>,
    pub gpu: bool,
    /// `0-55` (GPUs only; `N/A` is none).
    pub cpu_affinity: Option<String>,
    pub numa: Option<u32>,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub devices: Vec<Device>,
    /// `links[row][column]`, in header order.
    pub links: Vec<Vec<Link>>,
    /// First and last line of the matrix.
    pub lines: (usize, usize),
}

impl Topology {
    pub fn gpus(&self) -> impl Iterator<Item = (usize, &Device)> {
        self.devices.iter().enumerate().filter(|(_, d)| d.gpu)
    }

    pub fn nics(&self) -> impl Iterator<Item = (usize, &Device)> {
        self.devices.iter().enumerate().filter(|(_, d)| !d.gpu)
    }
}

/// Removes ANSI SGR escapes (`ESC[4m`, `ESC[0m`).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Parses an `nvidia-smi topo -m` output.
pub fn parse(text: &str) -> Result<Topology, LineError> {
    let mut devices: Vec<Device> = Vec::new();
    let mut links: Vec<Vec<Link>> = Vec::new();
    let mut numa_columns = false;
    let mut header_line = 0;
    let mut last = 0;
    let mut rows_done = false;
    let mut in_nic_legend = false;
    for line in each(text) {
        let t = plain(line.text);
        let t = t.trim();
        if header_line == 0 {
            if t.contains("CPU Affinity") && t.starts_with("GPU") {
                let names: Vec<&str> = t
                    .split("CPU Affinity")
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .collect();
                if names.is_empty() {
                    return Err(LineError::new(
                        line.number,
                        "a header without device columns",
                    ));
                }
                numa_columns = t.contains("NUMA Affinity");
                devices = names
                    .iter()
                    .map(|n| Device {
                        name: (*n).to_owned(),
                        rdma: (!n.starts_with("GPU") && !n.starts_with("NIC"))
                            .then(|| (*n).to_owned()),
                        gpu: n.starts_with("GPU"),
                        cpu_affinity: None,
                        numa: None,
                        line: 0,
                    })
                    .collect();
                header_line = line.number;
                last = line.number;
            }
            continue;
        }
        if !rows_done {
            let cells: Vec<&str> = t.split_whitespace().collect();
            let Some(first) = cells.first() else {
                rows_done = true;
                continue;
            };
            let Some(row) = devices.iter().position(|d| d.name == *first) else {
                rows_done = true;
                continue;
            };
            if row != links.len() {
                return Err(LineError::new(
                    line.number,
                    format!(
                        "row {first} out of order: expected {}",
                        devices[links.len()].name
                    ),
                ));
            }
            let n = devices.len();
            if cells.len() < n + 1 {
                return Err(LineError::new(
                    line.number,
                    format!(
                        "row {first} has {} of {n} cells (a truncated output?)",
                        cells.len() - 1
                    ),
                ));
            }
            let mut parsed = Vec::with_capacity(n);
            for (col, cell) in cells[1..=n].iter().enumerate() {
                let link = Link::parse(cell).ok_or_else(|| {
                    LineError::new(
                        line.number,
                        format!(
                            "`{cell}` ({first} to {}) is not a link type of the legend",
                            devices[col].name
                        ),
                    )
                })?;
                if (link == Link::Own) != (col == row) {
                    return Err(LineError::new(
                        line.number,
                        format!(
                            "`{cell}` ({first} to {}) off the diagonal",
                            devices[col].name
                        ),
                    ));
                }
                parsed.push(link);
            }
            let rest = &cells[n + 1..];
            let device = &mut devices[row];
            device.line = line.number;
            if device.gpu {
                device.cpu_affinity = rest
                    .first()
                    .filter(|v| **v != "N/A")
                    .map(|v| (*v).to_owned());
                if numa_columns && let Some(v) = rest.get(1).filter(|v| **v != "N/A") {
                    device.numa = Some(v.parse().map_err(|_| {
                        LineError::new(
                            line.number,
                            format!("NUMA affinity `{v}` of {first} is not a number"),
                        )
                    })?);
                }
            }
            links.push(parsed);
            last = line.number;
            continue;
        }
        if t.starts_with("NIC Legend") {
            in_nic_legend = true;
            continue;
        }
        if in_nic_legend
            && let Some((nic, rdma)) = t.split_once(':')
            && let Some(d) = devices.iter_mut().find(|d| d.name == nic.trim())
        {
            d.rdma = Some(rdma.trim().to_owned());
            last = line.number;
        }
    }
    if header_line == 0 {
        return Err(LineError::new(
            0,
            "no matrix header (`GPU0 ... CPU Affinity`)",
        ));
    }
    if links.len() < devices.len() {
        return Err(LineError::new(
            last,
            format!(
                "{} row(s) for {} column(s): {} is missing (a truncated output?)",
                links.len(),
                devices.len(),
                devices[links.len()].name
            ),
        ));
    }
    Ok(Topology {
        devices,
        links,
        lines: (header_line, last),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOPO: &str = "\t\u{1b}[4mGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\u{1b}[0m\n\
GPU0\t X \tNV18\tPXB\tSYS\t0-55\t0\t\tN/A\n\
GPU1\tNV18\t X \tSYS\tPIX\t56-111\t1\t\tN/A\n\
NIC0\tPXB\tSYS\t X \tSYS\t\t\t\t\n\
NIC1\tSYS\tPIX\tSYS\t X \t\t\t\t\n\
\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_3\n";

    #[test]
    fn the_matrix_and_the_nic_legend_are_read() {
        let t = parse(TOPO).unwrap();
        let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["GPU0", "GPU1", "NIC0", "NIC1"]);
        assert_eq!(t.links[0][1], Link::NvLink(18));
        assert_eq!(t.links[1][3], Link::Pix);
        assert_eq!(t.devices[1].numa, Some(1));
        assert_eq!(t.devices[1].cpu_affinity.as_deref(), Some("56-111"));
        assert_eq!(t.devices[3].rdma.as_deref(), Some("mlx5_3"));
        assert_eq!(t.lines, (1, 14));
    }

    #[test]
    fn damaged_matrices_are_refused_with_the_line() {
        let short: String = TOPO.lines().take(4).map(|l| format!("{l}\n")).collect();
        let e = parse(&short).unwrap_err();
        assert!(e.message.contains("NIC1 is missing"), "{e}");
        let e = parse(&TOPO.replace("NV18\tPXB", "NV18\tPQB")).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let e =
            parse(&TOPO.replace("GPU1\tNV18\t X \tSYS\tPIX", "GPU1\tNV18\t X \tSYS")).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert_eq!(parse("no matrix").unwrap_err().line, 0);
    }
}
