//! AMD's copy bandwidth thresholds, `amd-copy-bandwidth.csv`: the pass line of each cell of
//! rocm-bandwidth-test's unidirectional matrix by GPU model and count, host↔device and
//! GPU↔GPU, with the peak of the link the cell crosses (Infinity Fabric per GPU pair, PCIe
//! for host copies). The lines are those a public health check runs the same command
//! against (Azure's NHC); the peaks say how far below the hardware they sit.

use crate::fault::table::{self, Meta, TableError};
use std::sync::OnceLock;

const TABLE: &str = include_str!("amd-copy-bandwidth.csv");
const COLUMNS: [&str; 5] = ["figure", "model", "gpus", "gbps", "peak_gbps"];

/// Which cells of the matrix a row's line holds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cells {
    /// CPU→GPU and GPU→CPU.
    HostDevice,
    /// GPU→GPU.
    DeviceDevice,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cells: Cells,
    pub model: String,
    pub gpus: u32,
    pub gbps: f64,
    pub peak_gbps: f64,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub meta: Meta,
    pub rows: Vec<Row>,
}

/// The built-in table, parsed once.
pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| parse(TABLE).expect("the built-in AMD copy bandwidth table parses (tested)"))
}

pub fn parse(text: &str) -> Result<Table, TableError> {
    let (meta, raw) = table::parse("amd-copy-bandwidth.csv", text, &COLUMNS)?;
    let mut rows = Vec::new();
    for r in raw {
        let cells = match r.field(0) {
            "host-device" => Cells::HostDevice,
            "device-device" => Cells::DeviceDevice,
            other => {
                return Err(r.error(
                    &meta,
                    format!("figure `{other}` is not host-device or device-device"),
                ));
            }
        };
        let gbps: f64 = r.parsed(&meta, 3, "gbps", "a number")?;
        let peak_gbps: f64 = r.parsed(&meta, 4, "peak_gbps", "a number")?;
        if !(gbps > 0.0 && gbps <= peak_gbps) {
            return Err(r.error(
                &meta,
                format!("gbps {gbps} is not above 0 and at most the peak {peak_gbps}"),
            ));
        }
        rows.push(Row {
            cells,
            model: r.field(1).to_owned(),
            gpus: r.parsed(&meta, 2, "gpus", "a GPU count")?,
            gbps,
            peak_gbps,
        });
    }
    Ok(Table { meta, rows })
}

/// The row for these cells of `gpus` GPUs of `model` (case-insensitive), and where the
/// table's facts come from, as a threshold's source reads.
pub fn find(cells: Cells, model: &str, gpus: u32) -> Option<(&'static Row, String)> {
    let t = table();
    t.rows
        .iter()
        .find(|r| r.cells == cells && r.gpus == gpus && r.model.eq_ignore_ascii_case(model))
        .map(|r| {
            let source = format!(
                "amd-copy-bandwidth.csv for {}× {} (link peak {} GB/s each way): {} ({})",
                r.gpus, r.model, r.peak_gbps, t.meta.source, t.meta.version
            );
            (r, source)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_refuses_a_line_above_its_peak() {
        let t = table();
        assert_eq!(t.rows.len(), 2);
        assert!(t.meta.source.contains("nd96isr_mi300x_v5.conf"));
        let bad = TABLE.replace(
            "device-device,MI300X,8,44,64",
            "device-device,MI300X,8,70,64",
        );
        let err = parse(&bad).unwrap_err();
        assert!(err.to_string().contains("at most the peak"), "{err}");
    }
}
