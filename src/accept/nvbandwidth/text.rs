//! nvbandwidth's text output.
//!
//! ```text
//! nvbandwidth Version: v0.10.0
//! Driver Version: 595.71.05
//! Device 0: NVIDIA H100 80GB HBM3 (00000000:19:00)
//!
//! Running device_to_device_memcpy_read_ce.
//! memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)
//!            0         1
//!  0       N/A    395.08
//!  1    395.08       N/A
//!
//! SUM device_to_device_memcpy_read_ce 790.16
//! ```
//!
//! Older versions print `0.00` on the diagonal and no `SUM` lines. A testcase that starts
//! and shows no matrix (nor `Waived`), a square matrix with missing rows, a damaged cell,
//! or — when the output prints `SUM` lines at all — a testcase without its `SUM` line, is
//! refused with the line.

use super::{Nvbandwidth, Testcase};
use crate::accept::lines::{each, fields, number};
use crate::accept::matrix::Matrix;
use crate::line_error::LineError;

enum State {
    /// Between matrices.
    Idle,
    /// A title was read; the column header comes next.
    Title,
    /// Reading rows.
    Rows,
}

/// Parses nvbandwidth's text output.
pub fn parse(text: &str) -> Result<Nvbandwidth, LineError> {
    let mut out = Nvbandwidth {
        version: None,
        driver: None,
        cuda_runtime: None,
        devices: Vec::new(),
        testcases: Vec::new(),
    };
    let mut state = State::Idle;
    let mut saw_sum = false;
    let mut last = 0;
    for line in each(text) {
        let t = line.text.trim();
        last = line.number;
        if t.is_empty() {
            if let State::Rows = state {
                end_matrix(&mut out, line.number)?;
            }
            state = State::Idle;
            continue;
        }
        if let Some(v) = t.strip_prefix("nvbandwidth Version:") {
            out.version.get_or_insert(v.trim().to_owned());
            continue;
        }
        if let Some(v) = t.strip_prefix("Driver Version:") {
            out.driver.get_or_insert(v.trim().to_owned());
            continue;
        }
        if let Some(v) = t.strip_prefix("CUDA Runtime Version:") {
            out.cuda_runtime.get_or_insert(v.trim().to_owned());
            continue;
        }
        if t.starts_with("Device ") && t.contains(": ") && out.testcases.is_empty() {
            if let Some((_, name)) = t.split_once(": ") {
                out.devices.push(name.to_owned());
            }
            continue;
        }
        if let Some(name) = t.strip_prefix("Running ") {
            if let State::Rows = state {
                end_matrix(&mut out, line.number)?;
            }
            state = State::Idle;
            close_testcase(&out, line.number, saw_sum)?;
            out.testcases.push(Testcase {
                name: name.trim_end_matches('.').trim().to_owned(),
                waived: false,
                matrices: Vec::new(),
                line: line.number,
            });
            continue;
        }
        if t.starts_with("Waived") {
            let case = out.testcases.last_mut().ok_or_else(|| {
                LineError::new(
                    line.number,
                    "`Waived` before any `Running <testcase>.` line",
                )
            })?;
            case.waived = true;
            continue;
        }
        if let Some(rest) = t.strip_prefix("SUM ") {
            if let State::Rows = state {
                end_matrix(&mut out, line.number)?;
            }
            state = State::Idle;
            saw_sum = true;
            let words = fields(rest);
            let value = words
                .last()
                .and_then(|v| number(v))
                .ok_or_else(|| LineError::new(line.number, format!("`{t}`: no value")))?;
            let matrix = out
                .testcases
                .last_mut()
                .and_then(|c| c.matrices.last_mut())
                .ok_or_else(|| LineError::new(line.number, format!("`{t}` before any matrix")))?;
            matrix.sum = Some(value);
            continue;
        }
        if is_title(t) {
            if let State::Rows = state {
                end_matrix(&mut out, line.number)?;
            }
            let case = out.testcases.last_mut().ok_or_else(|| {
                LineError::new(
                    line.number,
                    format!("`{t}` before any `Running <testcase>.` line"),
                )
            })?;
            case.matrices.push(Matrix::new(t, line.number));
            state = State::Title;
            continue;
        }
        match state {
            State::Title => {
                let matrix = current(&mut out);
                if !matrix.header(t, &[]) {
                    return Err(LineError::new(
                        line.number,
                        format!(
                            "`{t}`: expected the column header of the matrix at line {}",
                            matrix.line
                        ),
                    ));
                }
                state = State::Rows;
            }
            State::Rows => {
                if fields(t).first().is_some_and(|f| f.parse::<u32>().is_ok()) {
                    current(&mut out).row(t, line.number)?;
                } else {
                    end_matrix(&mut out, line.number)?;
                    state = State::Idle;
                }
            }
            State::Idle => {}
        }
    }
    if let State::Rows | State::Title = state {
        end_matrix(&mut out, last)?;
    }
    close_testcase(&out, last, saw_sum)?;
    if out.testcases.is_empty() {
        return Err(LineError::new(
            last.max(1),
            "no `Running <testcase>.` line: not nvbandwidth output",
        ));
    }
    Ok(out)
}

fn current(out: &mut Nvbandwidth) -> &mut Matrix {
    out.testcases
        .last_mut()
        .and_then(|c| c.matrices.last_mut())
        .expect("a matrix is open")
}

fn end_matrix(out: &mut Nvbandwidth, line: usize) -> Result<(), LineError> {
    current(out).complete(line)
}

/// The last testcase must show a result; with `SUM` lines in the output, its matrices
/// must each have one.
fn close_testcase(out: &Nvbandwidth, line: usize, saw_sum: bool) -> Result<(), LineError> {
    let Some(case) = out.testcases.last() else {
        return Ok(());
    };
    if case.waived {
        return Ok(());
    }
    if case.matrices.is_empty() {
        return Err(LineError::new(
            line,
            format!(
                "testcase `{}` (line {}) shows no matrix: truncated?",
                case.name, case.line
            ),
        ));
    }
    if saw_sum && let Some(m) = case.matrices.iter().find(|m| m.sum.is_none()) {
        return Err(LineError::new(
            line,
            format!(
                "testcase `{}`: the matrix at line {} has no `SUM` line: truncated?",
                case.name, m.line
            ),
        ));
    }
    Ok(())
}

/// `memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)`, `memory latency SM ... (ns)`.
fn is_title(t: &str) -> bool {
    (t.starts_with("memcpy ") || t.starts_with("memory latency"))
        && (t.ends_with("(GB/s)") || t.ends_with("(ns)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made by this project in nvbandwidth 0.10's layout, 2 GPUs.
    const TWO: &str = "\
nvbandwidth Version: v0.10.0
Driver Version: 595.71.05

Device 0: NVIDIA H100 80GB HBM3 (00000000:19:00)
Device 1: NVIDIA H100 80GB HBM3 (00000000:3b:00)

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     55.17     54.02

SUM host_to_device_memcpy_ce 109.19

Running device_to_device_memcpy_read_ce.
memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0       N/A    340.55
 1    339.87       N/A

SUM device_to_device_memcpy_read_ce 680.42
COEFFICIENT_OF_VARIATION device_to_device_memcpy_read_ce 0.00
";

    #[test]
    fn testcases_matrices_and_sums() {
        let nv = parse(TWO).unwrap();
        assert_eq!(nv.version.as_deref(), Some("v0.10.0"));
        assert_eq!(nv.devices.len(), 2);
        let d2d = nv.testcase("device_to_device_memcpy_read_ce").unwrap();
        let m = d2d.matrix().unwrap();
        assert_eq!(m.sum, Some(680.42));
        assert_eq!(m.min(), Some((1, 0, 339.87)));
        assert_eq!(
            nv.testcase("host_to_device_memcpy_ce")
                .unwrap()
                .matrix()
                .unwrap()
                .min(),
            Some((0, 1, 54.02))
        );
    }

    #[test]
    fn cut_outputs_are_refused() {
        let cut: String = TWO.lines().take(17).map(|l| format!("{l}\n")).collect();
        let err = parse(&cut).unwrap_err();
        assert_eq!(err.line, 18, "{err}");
        let cut: String = TWO.lines().take(19).map(|l| format!("{l}\n")).collect();
        let err = parse(&cut).unwrap_err();
        assert!(err.message.contains("SUM"), "{err}");
        let bad = TWO.replace("339.87", "33g.87");
        assert_eq!(parse(&bad).unwrap_err().line, 18);
    }
}
