//! perftest output (`ib_write_bw`, `ib_read_bw`, `ib_send_bw`, `ib_*_lat`), client or
//! server side, host or GPU memory (`--use_cuda`, `--use_rocm`).
//!
//! A run is a title (`RDMA_Write BW Test`), a block of `key : value` settings (device,
//! QPs, link type, MTU), and a table closed by a dashed line. Bandwidth is reported in
//! Gb/s (`--report_gbits`) or in MB/sec, which perftest computes with 2^20-byte megabytes
//! (`format_factor = 0x100000` in perftest's `print_report_bw`); both are kept in Gb/s
//! here. Bidirectional tests report the sum of both directions.
//!
//! Server and client output concatenated in one file, or interleaved line by line, give
//! the same rows twice: identical runs and repeated identical rows are kept once. A table
//! ends at its dashed line, or where the next process's output begins (a `*` banner or a
//! new title); at the end of the file it must have been closed. A table cut off at the end,
//! a row with missing or non-numeric fields, or a stray line inside a table is refused
//! with its line.

use super::lines::{each, fields, number};
use crate::line_error::LineError;
use regex::Regex;
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bandwidth,
    Latency,
}

/// GPU memory used for the buffers (GPUDirect RDMA).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuBuffer {
    /// `cuda` or `rocm`.
    pub api: String,
    pub device: Option<u32>,
    pub dmabuf: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PerftestRun {
    /// As printed: `RDMA_Write BW Test`, `RDMA_Read Latency Test`.
    pub title: String,
    pub kind: Kind,
    pub bidirectional: bool,
    /// `mlx5_0`, `ib0`, ...
    pub device: Option<String>,
    /// `IB` or `Ethernet` (RoCE).
    pub link_type: Option<String>,
    pub qps: Option<u32>,
    pub mtu: Option<u32>,
    pub gpu: Option<GpuBuffer>,
    pub bandwidth: Vec<BwRow>,
    pub latency: Vec<LatRow>,
    /// Title line and closing line.
    pub lines: (usize, usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct BwRow {
    pub bytes: u64,
    pub iterations: u64,
    /// Gb/s.
    pub peak_gbps: f64,
    /// Gb/s.
    pub average_gbps: f64,
    pub msg_rate_mpps: f64,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LatRow {
    pub bytes: u64,
    pub iterations: u64,
    /// Microseconds: min, max, typical, average, stdev, 99th and 99.9th percentile.
    pub usec: [f64; 7],
    pub line: usize,
}

impl PerftestRun {
    /// The bandwidth row of the largest message.
    pub fn largest(&self) -> Option<&BwRow> {
        self.bandwidth.iter().max_by_key(|r| r.bytes)
    }

    /// The latency row of the smallest message.
    pub fn smallest_latency(&self) -> Option<&LatRow> {
        self.latency.iter().min_by_key(|r| r.bytes)
    }
}

/// Bandwidth column unit.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Gbps,
    /// perftest's MB/sec: 2^20 bytes per second.
    MiBps,
}

impl Unit {
    fn to_gbps(self, value: f64) -> f64 {
        match self {
            Unit::Gbps => value,
            Unit::MiBps => value * 1_048_576.0 * 8.0 / 1e9,
        }
    }
}

struct Open {
    run: PerftestRun,
    table: Option<(Kind, Unit, usize)>,
    closed: bool,
}

static SETTING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(Device|Number of qps|Link type|Mtu|Transport type)\s*:\s*(\S+)").expect("valid")
});

/// Parses every run in a perftest output.
pub fn parse(text: &str) -> Result<Vec<PerftestRun>, LineError> {
    let mut runs: Vec<PerftestRun> = Vec::new();
    let mut open: Option<Open> = None;
    let mut gpu: Option<GpuBuffer> = None;
    let mut last = 0;
    for line in each(text) {
        let t = line.text.trim();
        if t.is_empty() {
            continue;
        }
        last = line.number;
        // GPU buffer preamble (printed before the title).
        if t == "initializing CUDA" || t.starts_with("initializing ROCm") {
            gpu = Some(GpuBuffer {
                api: if t.contains("CUDA") { "cuda" } else { "rocm" }.to_owned(),
                device: None,
                dmabuf: false,
            });
            continue;
        }
        if let Some(n) = t.strip_prefix("Picking device No. ") {
            if let Some(g) = gpu.as_mut() {
                g.device = n.trim().parse().ok();
            }
            continue;
        }
        if t.starts_with("using DMA-BUF") {
            if let Some(g) = gpu.as_mut() {
                g.dmabuf = true;
            }
            continue;
        }
        if let Some(kind) = title_kind(t) {
            match &open {
                // Interleaved server/client output repeats the title before any table.
                Some(o) if o.run.title == t && o.table.is_none() && !o.closed => continue,
                Some(o)
                    if !o.closed
                        && o.table.is_some()
                        && o.run.bandwidth.is_empty()
                        && o.run.latency.is_empty() =>
                {
                    return Err(LineError::new(
                        line.number,
                        format!(
                            "a new test starts before the table of the test at line {} was closed: truncated?",
                            o.run.lines.0
                        ),
                    ));
                }
                _ => {}
            }
            if let Some(o) = open.take() {
                push(&mut runs, o);
            }
            open = Some(Open {
                run: PerftestRun {
                    title: t.to_owned(),
                    kind,
                    bidirectional: t.contains("Bidirectional"),
                    device: None,
                    link_type: None,
                    qps: None,
                    mtu: None,
                    gpu: gpu.clone(),
                    bandwidth: Vec::new(),
                    latency: Vec::new(),
                    lines: (line.number, line.number),
                },
                table: None,
                closed: false,
            });
            continue;
        }
        let Some(o) = open.as_mut() else {
            continue;
        };
        if t.starts_with("---") && t.bytes().all(|b| b == b'-') {
            if let Some(_table) = o.table
                && !o.closed
                && (!o.run.bandwidth.is_empty() || !o.run.latency.is_empty())
            {
                o.closed = true;
                o.run.lines.1 = line.number;
            }
            continue;
        }
        if t.starts_with("#bytes") {
            let (kind, unit) = header(t).ok_or_else(|| {
                LineError::new(line.number, format!("`{t}`: not a perftest table header"))
            })?;
            match o.table {
                Some(_) if o.closed => {
                    return Err(LineError::new(
                        line.number,
                        "a second table header after the test's table closed",
                    ));
                }
                Some(_) if !o.run.bandwidth.is_empty() || !o.run.latency.is_empty() => {
                    return Err(LineError::new(
                        line.number,
                        "a table header inside the table",
                    ));
                }
                _ => o.table = Some((kind, unit, line.number)),
            }
            if kind != o.run.kind {
                return Err(LineError::new(
                    line.number,
                    format!("`{t}` does not fit the test `{}`", o.run.title),
                ));
            }
            continue;
        }
        if o.table.is_none() {
            for cap in SETTING.captures_iter(t) {
                let value = cap[2].to_owned();
                match &cap[1] {
                    "Device" => o.run.device = Some(value),
                    "Number of qps" => o.run.qps = value.parse().ok(),
                    "Link type" => o.run.link_type = Some(value),
                    "Mtu" => o.run.mtu = value.trim_end_matches("[B]").parse().ok(),
                    _ => {}
                }
            }
            continue;
        }
        let (kind, unit, header_line) = o.table.expect("checked");
        let tokens = fields(t);
        let starts_numeric = tokens[0].bytes().all(|b| b.is_ascii_digit());
        if o.closed {
            // Server output repeats the last row after the table; keep it once.
            if starts_numeric && same_as_a_row(o, &tokens, unit) {
                continue;
            }
            if starts_numeric {
                return Err(LineError::new(
                    line.number,
                    format!("`{t}`: a result row after the table closed"),
                ));
            }
            continue;
        }
        if !starts_numeric
            && t.starts_with('*')
            && (!o.run.bandwidth.is_empty() || !o.run.latency.is_empty())
        {
            // Another process's banner (`* Waiting for client to connect... *`) follows a
            // server's rows in concatenated server+client output: the table ended there.
            o.closed = true;
            o.run.lines.1 = line.number - 1;
            continue;
        }
        if !starts_numeric {
            return Err(LineError::new(
                line.number,
                format!(
                    "`{t}`: not a result row inside the table that starts at line {header_line}"
                ),
            ));
        }
        let want = match kind {
            Kind::Bandwidth => 5,
            Kind::Latency => 9,
        };
        let bad = |why: String| LineError::new(line.number, format!("`{t}`: {why}"));
        if tokens.len() != want {
            return Err(bad(format!(
                "{} fields, the table header (line {header_line}) has {want}",
                tokens.len()
            )));
        }
        let bytes: u64 = tokens[0]
            .parse()
            .map_err(|_| bad("size is not a number".into()))?;
        let iterations: u64 = tokens[1]
            .parse()
            .map_err(|_| bad(format!("iterations `{}` is not a whole number", tokens[1])))?;
        let values = tokens[2..]
            .iter()
            .map(|v| number(v).ok_or_else(|| bad(format!("`{v}` is not a number"))))
            .collect::<Result<Vec<f64>, _>>()?;
        if let Some(prev) = o.run.bandwidth.last().map(|r| r.bytes).or(o
            .run
            .latency
            .last()
            .map(|r| r.bytes))
        {
            if bytes == prev && same_as_a_row(o, &tokens, unit) {
                continue;
            }
            if bytes <= prev {
                return Err(bad(format!(
                    "size {bytes} after size {prev}: rows out of order or damaged"
                )));
            }
        }
        match kind {
            Kind::Bandwidth => o.run.bandwidth.push(BwRow {
                bytes,
                iterations,
                peak_gbps: unit.to_gbps(values[0]),
                average_gbps: unit.to_gbps(values[1]),
                msg_rate_mpps: values[2],
                line: line.number,
            }),
            Kind::Latency => o.run.latency.push(LatRow {
                bytes,
                iterations,
                usec: [
                    values[0], values[1], values[2], values[3], values[4], values[5], values[6],
                ],
                line: line.number,
            }),
        }
    }
    if let Some(o) = open {
        if o.table.is_some() && !o.closed {
            return Err(LineError::new(
                last,
                format!(
                    "the table of the test at line {} has no closing dashed line: truncated?",
                    o.run.lines.0
                ),
            ));
        }
        push(&mut runs, o);
    }
    if runs.is_empty() {
        return Err(LineError::new(
            last.max(1),
            "no perftest result table found",
        ));
    }
    Ok(runs)
}

fn push(runs: &mut Vec<PerftestRun>, o: Open) {
    if o.table.is_none() {
        // A title without a table: the other side's banner (e.g. the server waiting).
        return;
    }
    let duplicate = runs
        .iter()
        .any(|r| r.title == o.run.title && r.device == o.run.device && same_rows(r, &o.run));
    if !duplicate {
        runs.push(o.run);
    }
}

fn same_rows(a: &PerftestRun, b: &PerftestRun) -> bool {
    let bw = |r: &PerftestRun| {
        r.bandwidth
            .iter()
            .map(|x| (x.bytes, x.peak_gbps, x.average_gbps))
            .collect::<Vec<_>>()
    };
    let lat = |r: &PerftestRun| {
        r.latency
            .iter()
            .map(|x| (x.bytes, x.usec))
            .collect::<Vec<_>>()
    };
    bw(a) == bw(b) && lat(a) == lat(b)
}

fn same_as_a_row(o: &Open, tokens: &[&str], unit: Unit) -> bool {
    let Ok(bytes) = tokens[0].parse::<u64>() else {
        return false;
    };
    let values: Option<Vec<f64>> = tokens[2..].iter().map(|v| number(v)).collect();
    let Some(values) = values else {
        return false;
    };
    match o.run.kind {
        Kind::Bandwidth => o.run.bandwidth.iter().any(|r| {
            values.len() == 3
                && r.bytes == bytes
                && r.peak_gbps == unit.to_gbps(values[0])
                && r.average_gbps == unit.to_gbps(values[1])
        }),
        Kind::Latency => o
            .run
            .latency
            .iter()
            .any(|r| values.len() == 7 && r.bytes == bytes && r.usec[..] == values[..]),
    }
}

/// The test kind of a title line: `RDMA_Write BW Test`, `Send Latency Test`, ...
fn title_kind(t: &str) -> Option<Kind> {
    let words = fields(t);
    let known_op = words.first().is_some_and(|w| {
        w.starts_with("RDMA_") || matches!(*w, "Send" | "Atomic" | "Raw" | "Write" | "Read")
    });
    if !known_op || words.last() != Some(&"Test") {
        return None;
    }
    if t.ends_with("BW Test") {
        Some(Kind::Bandwidth)
    } else if t.ends_with("Latency Test") {
        Some(Kind::Latency)
    } else {
        None
    }
}

fn header(t: &str) -> Option<(Kind, Unit)> {
    if t.contains("t_min") {
        return Some((Kind::Latency, Unit::Gbps));
    }
    if t.contains("BW peak[Gb/sec]") && t.contains("BW average[Gb/sec]") {
        Some((Kind::Bandwidth, Unit::Gbps))
    } else if t.contains("BW peak[MB/sec]") && t.contains("BW average[MB/sec]") {
        Some((Kind::Bandwidth, Unit::MiBps))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made by this project after perftest 4.5's client output.
    const CLIENT: &str = "\
initializing CUDA
Picking device No. 3
using DMA-BUF for GPU buffer address at 0x7fa156800000
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_3
 Number of qps   : 1\t\tTransport type : IB
 Mtu             : 4096[B]
 Link type       : IB
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             390.10             389.95              0.743774
 8388608    5000             392.44             392.41              0.005848
---------------------------------------------------------------------------------------
deallocating GPU buffer 00007fa156800000
";

    #[test]
    fn client_run_with_gpu_buffers() {
        let runs = parse(CLIENT).unwrap();
        assert_eq!(runs.len(), 1);
        let run = &runs[0];
        assert_eq!(run.kind, Kind::Bandwidth);
        assert_eq!(run.device.as_deref(), Some("mlx5_3"));
        assert_eq!(run.link_type.as_deref(), Some("IB"));
        assert_eq!(run.qps, Some(1));
        assert_eq!(run.mtu, Some(4096));
        assert_eq!(
            run.gpu,
            Some(GpuBuffer {
                api: "cuda".into(),
                device: Some(3),
                dmabuf: true
            })
        );
        assert_eq!(run.largest().unwrap().average_gbps, 392.41);
        assert_eq!(run.lines, (5, 14));
    }

    #[test]
    fn megabytes_are_mebibytes() {
        let text = CLIENT
            .replace("[Gb/sec]", "[MB/sec]")
            .replace("392.41", "46780.50");
        let row = parse(&text).unwrap()[0].largest().unwrap().clone();
        assert!(
            (row.average_gbps - 392.42).abs() < 0.01,
            "{}",
            row.average_gbps
        );
    }

    #[test]
    fn cut_and_damaged_tables_are_located() {
        let cut: String = CLIENT.lines().take(13).map(|l| format!("{l}\n")).collect();
        assert_eq!(parse(&cut).unwrap_err().line, 13);
        let bad = CLIENT.replace("392.44             392.41", "392.44             392,41");
        assert_eq!(parse(&bad).unwrap_err().line, 13);
        let bad = CLIENT.replace(" 65536      5000 ", " 65536      5000  x ");
        assert_eq!(parse(&bad).unwrap_err().line, 12);
    }

    #[test]
    fn server_and_client_copies_count_once() {
        let both = format!("{CLIENT}************\n* Waiting for client to connect... *\n{CLIENT}");
        assert_eq!(parse(&both).unwrap().len(), 1);
    }
}
