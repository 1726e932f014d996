//! The device-by-device matrices GPU bandwidth tools print (nvbandwidth,
//! `p2pBandwidthLatencyTest`): a title, a header of column indices, then one row per
//! source device whose cells are numbers or `N/A`.
//!
//! ```text
//! memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)
//!            0         1
//!  0       N/A    395.08
//!  1    395.08       N/A
//! ```

use super::lines::{fields, number};
use crate::line_error::LineError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    /// As printed: `memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)`.
    pub title: String,
    /// Column labels (`0`, `1`, ...).
    pub columns: Vec<u32>,
    /// Row label and cells; `None` for `N/A`.
    pub rows: Vec<(u32, Vec<Option<f64>>)>,
    /// `SUM <testcase> <value>` printed after the matrix (newer nvbandwidth).
    pub sum: Option<f64>,
    /// Title line.
    pub line: usize,
}

impl Matrix {
    pub fn new(title: &str, line: usize) -> Self {
        Matrix {
            title: title.to_owned(),
            columns: Vec::new(),
            rows: Vec::new(),
            sum: None,
            line,
        }
    }

    /// Rows are devices too (`GPU(row)`, `D\D`), so the matrix must be square.
    pub fn square(&self) -> bool {
        !self.title.contains("CPU(row)")
    }

    /// Cells off the diagonal of a square matrix, every cell otherwise, with their
    /// (row, column); `N/A` cells are left out.
    pub fn cells(&self) -> Vec<(u32, u32, f64)> {
        let square = self.square();
        self.rows
            .iter()
            .flat_map(|(row, cells)| {
                self.columns.iter().zip(cells).filter_map(move |(col, v)| {
                    let v = (*v)?;
                    (!square || row != col).then_some((*row, *col, v))
                })
            })
            .collect()
    }

    /// The smallest measured cell (off the diagonal of a square matrix).
    pub fn min(&self) -> Option<(u32, u32, f64)> {
        self.cells().into_iter().min_by(|a, b| a.2.total_cmp(&b.2))
    }

    /// Reads a header line of column indices; `None` when the line is not one.
    /// `lead` is an optional first word (`D\D`, `GPU`, `CPU`).
    pub fn header(&mut self, text: &str, lead: &[&str]) -> bool {
        let mut tokens = fields(text);
        if tokens.first().is_some_and(|t| lead.contains(t)) {
            tokens.remove(0);
        }
        let columns: Option<Vec<u32>> = tokens.iter().map(|t| t.parse().ok()).collect();
        match columns {
            Some(c) if !c.is_empty() && c.iter().enumerate().all(|(i, v)| *v as usize == i) => {
                self.columns = c;
                true
            }
            _ => false,
        }
    }

    /// Reads a row line; errors name the line.
    pub fn row(&mut self, text: &str, line: usize) -> Result<(), LineError> {
        let tokens = fields(text);
        let label: u32 = tokens
            .first()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| LineError::new(line, format!("`{text}`: not a matrix row")))?;
        if tokens.len() != self.columns.len() + 1 {
            return Err(LineError::new(
                line,
                format!(
                    "`{}`: {} cells, the matrix `{}` (line {}) has {} columns: truncated or damaged",
                    text.trim(),
                    tokens.len() - 1,
                    self.title,
                    self.line,
                    self.columns.len()
                ),
            ));
        }
        if self.rows.last().is_some_and(|(last, _)| *last >= label) {
            return Err(LineError::new(
                line,
                format!("`{}`: row {label} out of order", text.trim()),
            ));
        }
        let cells = tokens[1..]
            .iter()
            .map(|t| match *t {
                "N/A" => Ok(None),
                v => number(v).map(Some).ok_or_else(|| {
                    LineError::new(line, format!("`{}`: `{v}` is not a number", text.trim()))
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.rows.push((label, cells));
        Ok(())
    }

    /// A matrix that ended at `line`: it needs rows, and all of them when it is square.
    pub fn complete(&self, line: usize) -> Result<(), LineError> {
        if self.columns.is_empty() || self.rows.is_empty() {
            return Err(LineError::new(
                line,
                format!(
                    "the matrix `{}` (line {}) has no rows: truncated?",
                    self.title, self.line
                ),
            ));
        }
        if self.square() && self.rows.len() != self.columns.len() {
            return Err(LineError::new(
                line,
                format!(
                    "the matrix `{}` (line {}) has {} of {} rows: truncated?",
                    self.title,
                    self.line,
                    self.rows.len(),
                    self.columns.len()
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_matrix_skips_its_diagonal() {
        let mut m = Matrix::new("memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", 1);
        assert!(m.header("          0         1", &[]));
        m.row(" 0       N/A    395.08", 3).unwrap();
        assert!(m.complete(3).is_err());
        m.row(" 1    390.00      0.00", 4).unwrap();
        m.complete(4).unwrap();
        assert_eq!(m.min(), Some((1, 0, 390.0)));
        assert!(m.row(" 2   1.0", 5).is_err());
        assert!(!m.header("1 0", &[]));
    }
}
