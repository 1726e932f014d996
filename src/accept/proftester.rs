//! `dcgmproftester` output: a load generator for one profiling field at a time
//! (1004 tensor-core activity, 1005 DRAM utilisation, ...), ending each field with
//! `GPU 0, TestField 1004 test PASSED.`. The peak rate each worker reported
//! (`(25963.4 gflops)`, `(282.6 GiB/sec)`) is kept as a figure.
//!
//! Worker lines for a field that never reaches its `TestField ... test` verdict mean the
//! output was cut: refused with the line.

use super::lines::each;
use crate::line_error::LineError;

#[derive(Debug, Clone, PartialEq)]
pub struct FieldRun {
    pub gpu: u32,
    pub field: u32,
    /// `TensorEngineActive`, `DramUtil`, ... when a worker line names it.
    pub name: Option<String>,
    pub passed: bool,
    /// Highest rate a worker reported, with its unit (`gflops`, `GiB/sec`).
    pub peak: Option<(f64, String)>,
    pub line: usize,
}

/// A field being exercised: id, name, peak rate so far, first worker line.
type Pending = (u32, Option<String>, Option<(f64, String)>, usize);

/// Parses every field run of a dcgmproftester output.
pub fn parse(text: &str) -> Result<Vec<FieldRun>, LineError> {
    let mut runs = Vec::new();
    // Field id → (name, peak, first worker line) while a field is being exercised.
    let mut open: Vec<Pending> = Vec::new();
    let mut last = 0;
    for line in each(text) {
        let t = line.text.trim();
        if t.is_empty() {
            continue;
        }
        last = line.number;
        if let Some(rest) = t.strip_prefix("Worker ") {
            let Some((field, body)) = worker(rest) else {
                return Err(LineError::new(
                    line.number,
                    format!("`{t}`: not a worker line"),
                ));
            };
            let entry = match open.iter_mut().find(|o| o.0 == field) {
                Some(e) => e,
                None => {
                    open.push((field, None, None, line.number));
                    open.last_mut().expect("pushed")
                }
            };
            let name = body.split([':', ' ']).next().filter(|n| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric()) && *n != "Message"
            });
            if entry.1.is_none() {
                entry.1 = name.map(str::to_owned);
            }
            if let Some(rate) = rate(body)
                && entry.2.as_ref().is_none_or(|(p, _)| rate.0 > *p)
            {
                entry.2 = Some(rate);
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("GPU ")
            && let Some((gpu, field, passed)) = verdict(rest)
        {
            let (name, peak) = match open.iter().position(|o| o.0 == field) {
                Some(i) => {
                    let (_, name, peak, _) = open.remove(i);
                    (name, peak)
                }
                None => (None, None),
            };
            runs.push(FieldRun {
                gpu,
                field,
                name,
                passed,
                peak,
                line: line.number,
            });
        }
    }
    if let Some((field, _, _, first)) = open.first() {
        return Err(LineError::new(
            last,
            format!(
                "field {field} (worker output from line {first}) never reaches its `TestField {field} test` verdict: truncated?"
            ),
        ));
    }
    if runs.is_empty() {
        return Err(LineError::new(
            last.max(1),
            "no `GPU n, TestField N test PASSED|FAILED` line",
        ));
    }
    Ok(runs)
}

/// `0:0[1004]: TensorEngineActive: ...` → (1004, the text after `]: `).
fn worker(rest: &str) -> Option<(u32, &str)> {
    let open = rest.find('[')?;
    let close = rest[open..].find(']')? + open;
    let field = rest[open + 1..close].parse().ok()?;
    let body = rest[close + 1..].strip_prefix(':')?.trim_start();
    Some((field, body))
}

/// The last `(<number> <unit>)` of a worker line.
fn rate(body: &str) -> Option<(f64, String)> {
    let open = body.rfind('(')?;
    let close = body[open..].find(')')? + open;
    let inner = &body[open + 1..close];
    let (value, unit) = inner.split_once(' ')?;
    let value: f64 = value.parse().ok()?;
    value.is_finite().then(|| (value, unit.trim().to_owned()))
}

/// `0, TestField 1004 test PASSED.` → (gpu, field, passed).
fn verdict(rest: &str) -> Option<(u32, u32, bool)> {
    let (gpu, rest) = rest.split_once(',')?;
    let rest = rest.trim().strip_prefix("TestField ")?;
    let (field, rest) = rest.split_once(' ')?;
    let word = rest.strip_prefix("test ")?.trim_end_matches('.');
    let passed = match word {
        "PASSED" => true,
        "FAILED" => false,
        _ => return None,
    };
    Some((gpu.trim().parse().ok()?, field.parse().ok()?, passed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made by this project after the dcgmproftester layout.
    const OUT: &str = "\u{feff}Skipping CreateDcgmGroups() since DCGM validation is disabled
Worker 0:0[1004]: TensorEngineActive: generated ???, dcgm 0.000 (0.0 gflops).
Worker 0:0[1004]: TensorEngineActive: generated ???, dcgm 0.000 (25963.4 gflops).
Worker 0:0[1004]: Message: DCGM CudaContext Init completed successfully.
GPU 0, TestField 1004 test PASSED.
Worker 0:0[1005]: DramUtil generated 0.883/0.883, dcgm 0.000 (282.6 GiB/sec), bandwidthDivisor 1.000.
GPU 0, TestField 1005 test FAILED.
";

    #[test]
    fn fields_peaks_and_verdicts() {
        let runs = parse(OUT).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].name.as_deref(), Some("TensorEngineActive"));
        assert_eq!(runs[0].peak, Some((25963.4, "gflops".to_owned())));
        assert!(runs[0].passed);
        assert_eq!(runs[1].name.as_deref(), Some("DramUtil"));
        assert_eq!(runs[1].peak, Some((282.6, "GiB/sec".to_owned())));
        assert!(!runs[1].passed);
        let cut: String = OUT.lines().take(6).map(|l| format!("{l}\n")).collect();
        assert_eq!(parse(&cut).unwrap_err().line, 6);
    }
}
