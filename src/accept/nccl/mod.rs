//! An nccl-tests or rccl-tests run (`all_reduce_perf`, `all_gather_perf`, ...) as the
//! judge reads it: the suite and library, the run's size parameters, its ranks and the
//! hosts they ran on, each row's out-of-place and in-place measures and result checks,
//! the out-of-bounds line and the average bus bandwidth. [`parse`] reads them from the
//! suites' text output (`text.rs`).

mod text;

pub use text::parse;

use serde::{Deserialize, Serialize};

/// Which test suite printed the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Suite {
    NcclTests,
    RcclTests,
}

/// One test run: its parameters, ranks and result table.
#[derive(Debug, Clone, PartialEq)]
pub struct NcclRun {
    pub suite: Suite,
    /// `2.17.6` from `# nccl-tests version 2.17.6 ...`, or rccl-tests' `Version` line.
    pub tests_version: Option<String>,
    /// NCCL or RCCL library version, when the output names it.
    pub library_version: Option<String>,
    /// `all_reduce`, `all_gather`, ... : from the output, the file name, or the table.
    pub collective: Option<String>,
    pub params: Option<Params>,
    /// The `# Rank` lines; empty for a table-only copy.
    pub ranks: Vec<Rank>,
    pub rows: Vec<Row>,
    pub out_of_bounds: Option<OutOfBounds>,
    /// `# Avg bus bandwidth`, GB/s.
    pub avg_busbw: f64,
    /// Lines of the table, for evidence: header line and the `Avg` line.
    pub lines: (usize, usize),
}

/// `# nThread 1 nGpus 8 minBytes 1 maxBytes 8589934592 step: 2(factor) ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub threads: u32,
    pub gpus_per_thread: u32,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub step: Step,
    pub iters: Option<u32>,
    /// `validation` (`-c`): whether results were checked.
    pub validation: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Factor(u64),
    Bytes(u64),
}

/// `#  Rank  0 Group  0 Pid 1234 on node-a device  0 [0000:0f:00] NVIDIA H100 80GB HBM3`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rank {
    pub rank: u32,
    pub host: String,
    pub device: u32,
    /// The bus id as printed (`0x0f`, `0000:0f:00`, `0000:05:00.0`).
    pub bus: String,
    /// Device name; newer rccl-tests omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One message size.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub line: usize,
    pub size: u64,
    pub count: u64,
    pub dtype: String,
    /// `sum`, `none`; absent when the column is blank (old alltoall).
    pub redop: Option<String>,
    pub root: Option<i64>,
    pub out_of_place: Measure,
    pub in_place: Option<Measure>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    pub time_us: f64,
    /// GB/s.
    pub algbw: f64,
    /// GB/s.
    pub busbw: f64,
    pub check: Check,
}

/// The `#wrong` (or old `error`) column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Check {
    /// `N/A`: the run did not validate results.
    NotChecked,
    /// Number of wrong elements.
    Wrong(u64),
    /// Old format: the largest error, and whether it exceeded the threshold (`*`).
    Error { value: f64, exceeded: bool },
}

impl Check {
    /// The results were checked and found wrong.
    pub fn is_wrong(self) -> bool {
        match self {
            Check::NotChecked => false,
            Check::Wrong(n) => n > 0,
            Check::Error { exceeded, .. } => exceeded,
        }
    }
}

/// `# Out of bounds values : 0 OK`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfBounds {
    pub count: u64,
    pub ok: bool,
}

impl NcclRun {
    /// The row with the largest message size (the last one of the largest size).
    pub fn largest(&self) -> Option<&Row> {
        self.rows.iter().max_by_key(|r| r.size)
    }

    /// Out-of-place bus bandwidth at the largest message size, GB/s.
    pub fn peak_busbw(&self) -> Option<f64> {
        self.largest().map(|r| r.out_of_place.busbw)
    }

    /// Distinct hosts in the rank lines.
    pub fn hosts(&self) -> Vec<&str> {
        let mut hosts: Vec<&str> = self.ranks.iter().map(|r| r.host.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts
    }

    /// Rows whose results were checked and found wrong, or an out-of-bounds failure.
    pub fn data_errors(&self) -> usize {
        let rows = self
            .rows
            .iter()
            .filter(|r| {
                r.out_of_place.check.is_wrong()
                    || r.in_place.as_ref().is_some_and(|m| m.check.is_wrong())
            })
            .count();
        let bounds = self
            .out_of_bounds
            .map_or(0, |o| usize::try_from(o.count).unwrap_or(usize::MAX));
        rows.max(bounds)
    }
}

impl Params {
    /// How many sizes the run measures (nccl-tests steps from minBytes up to maxBytes).
    pub fn expected_sizes(&self) -> u64 {
        match self.step {
            Step::Factor(f) => {
                let mut n = 1;
                let mut size = self.min_bytes.max(1);
                while let Some(next) = size.checked_mul(f) {
                    if next > self.max_bytes {
                        break;
                    }
                    size = next;
                    n += 1;
                }
                n
            }
            Step::Bytes(b) => (self.max_bytes - self.min_bytes) / b + 1,
        }
    }
}
