//! The text table `dcgmi diag -r N` prints.
//!
//! ```text
//! +---------------------------+------------------------------------------------+
//! | Diagnostic                | Result                                         |
//! +===========================+================================================+
//! |-----  Metadata  ----------+------------------------------------------------|
//! | DCGM Version              | 3.3.3                                          |
//! |-----  Deployment  --------+------------------------------------------------|
//! | Denylist                  | Pass                                           |
//! +-----  Hardware  ----------+------------------------------------------------+
//! | GPU Memory                | Fail - GPU: 3                                  |
//! | Warning                   | GPU 3 Error using CUDA API cudaMalloc ...      |
//! |                           | ... continued                                  |
//! +---------------------------+------------------------------------------------+
//! ```
//!
//! DCGM 4.x prints one `GPUn: Pass` row per GPU, continuing the test's row with an
//! empty name cell. A table is complete when its closing border follows the last row; a
//! row without its closing `|`, a table without its closing border, or a result word
//! DCGM does not print is refused with the line. Several tables in one file (one per
//! `srun` task) give several diagnostics.

use super::{DcgmDiag, DcgmFormat, DcgmResult, DcgmTest, GpuScope, Status, gpu_list};
use crate::accept::lines::each;
use crate::line_error::LineError;

#[derive(PartialEq)]
enum Last {
    Header,
    Row,
    Border,
}

struct Table {
    diag: DcgmDiag,
    category: String,
    start: usize,
    last: Last,
    rows: usize,
}

/// Parses every diagnostic table in the text.
pub fn parse(text: &str) -> Result<Vec<DcgmDiag>, LineError> {
    let mut tables: Vec<DcgmDiag> = Vec::new();
    let mut open: Option<Table> = None;
    let mut last_line = 0;
    for line in each(text) {
        let t = line.text.trim();
        if t.is_empty() {
            continue;
        }
        last_line = line.number;
        let structural = t.starts_with('+') || t.starts_with('|');
        if !structural {
            if let Some(table) = &open {
                return Err(LineError::new(
                    line.number,
                    format!(
                        "`{t}` interrupts the diagnostic table that starts at line {} before its closing border",
                        table.start
                    ),
                ));
            }
            continue;
        }
        if is_border(t) {
            match open.as_mut() {
                Some(table) => {
                    if table.last == Last::Row && table.rows > 0 && !t.contains('=') {
                        // Closing border: the table is complete.
                        let table = open.take().expect("open table");
                        tables.push(finish(table, line.number)?);
                    } else {
                        table.last = Last::Border;
                    }
                }
                None => {
                    open = Some(Table {
                        diag: DcgmDiag {
                            format: DcgmFormat::Text,
                            version: None,
                            driver: None,
                            gpu_device_ids: Vec::new(),
                            tests: Vec::new(),
                        },
                        category: String::new(),
                        start: line.number,
                        last: Last::Border,
                        rows: 0,
                    });
                }
            }
            continue;
        }
        let table = open.as_mut().ok_or_else(|| {
            LineError::new(
                line.number,
                format!("`{t}`: a table row before the table's top border"),
            )
        })?;
        if let Some(category) = section(t) {
            table.category = category;
            table.last = Last::Row;
            continue;
        }
        if !(t.starts_with('|') && t.ends_with('|') && t.len() >= 2) {
            return Err(LineError::new(
                line.number,
                format!("`{t}`: a table row without its closing `|`: truncated or damaged"),
            ));
        }
        let cells: Vec<&str> = t[1..t.len() - 1].split('|').map(str::trim).collect();
        let [name, value] = cells.as_slice() else {
            return Err(LineError::new(
                line.number,
                format!("`{t}`: {} cells, a diagnostic row has 2", cells.len()),
            ));
        };
        table.last = Last::Row;
        if *name == "Diagnostic" && *value == "Result" {
            table.last = Last::Header;
            continue;
        }
        table.rows += 1;
        row(table, name, value, line.number)?;
    }
    if let Some(table) = open {
        return Err(LineError::new(
            last_line,
            format!(
                "the diagnostic table that starts at line {} has no closing border: truncated?",
                table.start
            ),
        ));
    }
    if tables.is_empty() {
        return Err(LineError::new(
            last_line.max(1),
            "no dcgmi diag result table found",
        ));
    }
    Ok(tables)
}

fn finish(table: Table, line: usize) -> Result<DcgmDiag, LineError> {
    if table.diag.tests.is_empty() {
        return Err(LineError::new(
            line,
            format!(
                "the diagnostic table that starts at line {} lists no tests",
                table.start
            ),
        ));
    }
    if table.last != Last::Row && table.last != Last::Border {
        return Err(LineError::new(
            line,
            "the diagnostic table ends after its header",
        ));
    }
    Ok(table.diag)
}

/// `+----+----+` or `+====+====+`.
fn is_border(t: &str) -> bool {
    t.starts_with('+') && t.len() > 2 && t.bytes().all(|b| matches!(b, b'+' | b'-' | b'='))
}

/// `|-----  Deployment  --------+---...|` or `+-----  Stress  ----+---...+` → the name.
fn section(t: &str) -> Option<String> {
    let inner = t.get(1..)?;
    if !inner.starts_with("---") {
        return None;
    }
    let first = inner.split('+').next()?;
    let name = first.trim_matches(|c: char| c == '-' || c.is_whitespace());
    (!name.is_empty() && !name.contains('|')).then(|| name.to_owned())
}

fn row(table: &mut Table, name: &str, value: &str, line: usize) -> Result<(), LineError> {
    let diag = &mut table.diag;
    if table.category.eq_ignore_ascii_case("metadata") {
        match name {
            "DCGM Version" => diag.version = Some(value.to_owned()),
            "Driver Version Detected" => diag.driver = Some(value.to_owned()),
            "GPU Device IDs Detected" => {
                diag.gpu_device_ids = value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            _ => {}
        }
        return Ok(());
    }
    let attach = |diag: &mut DcgmDiag, text: &str| -> Result<(), LineError> {
        let result = diag
            .tests
            .last_mut()
            .and_then(|t| t.results.last_mut())
            .ok_or_else(|| LineError::new(line, format!("`{text}` before any test result")))?;
        result.detail.push(text.to_owned());
        Ok(())
    };
    match name {
        "Warning" | "Info" => attach(diag, value),
        "" => match result(value) {
            Some(result) => {
                let test = diag
                    .tests
                    .last_mut()
                    .ok_or_else(|| LineError::new(line, format!("`{value}` before any test")))?;
                test.results.push(result);
                Ok(())
            }
            None => {
                let last = diag
                    .tests
                    .last_mut()
                    .and_then(|t| t.results.last_mut())
                    .and_then(|r| r.detail.last_mut())
                    .ok_or_else(|| {
                        LineError::new(
                            line,
                            format!("`{value}`: not a result and nothing to continue"),
                        )
                    })?;
                last.push(' ');
                last.push_str(value);
                Ok(())
            }
        },
        _ => {
            let result = result(value).ok_or_else(|| {
                LineError::new(
                    line,
                    format!("`{name}`: `{value}` is not a DCGM result (Pass, Fail, Warn, Skip, Not Run, with `- All` or `- GPU: n`)"),
                )
            })?;
            diag.tests.push(DcgmTest {
                category: table.category.clone(),
                name: name.to_owned(),
                results: vec![result],
                line,
            });
            Ok(())
        }
    }
}

/// `Pass`, `Pass - All`, `Fail - GPU: 3`, `Pass - GPUs: 0, 1`, `GPU0: Pass`.
fn result(value: &str) -> Option<DcgmResult> {
    let known = |s: &Status| !matches!(s, Status::Unknown(_));
    if let Some((gpu, word)) = value.split_once(':')
        && let Some(id) = gpu
            .trim()
            .strip_prefix("GPU")
            .and_then(|n| n.trim().parse().ok())
    {
        let status = Status::parse(word);
        return known(&status).then(|| DcgmResult {
            gpus: GpuScope::Gpus(vec![id]),
            status,
            detail: Vec::new(),
        });
    }
    let (word, scope) = match value.split_once(" - ") {
        Some((word, scope)) => (word, Some(scope.trim())),
        None => (value, None),
    };
    let status = Status::parse(word);
    if !known(&status) {
        return None;
    }
    let gpus = match scope {
        None | Some("All") => GpuScope::All,
        Some(scope) => {
            let ids = scope
                .strip_prefix("GPUs:")
                .or_else(|| scope.strip_prefix("GPU:"))?;
            GpuScope::Gpus(gpu_list(ids)?)
        }
    };
    Some(DcgmResult {
        gpus,
        status,
        detail: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made by this project in the DCGM 3.x table layout: one failing GPU with a warning.
    const FAILING: &str = "\
Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 3.3.5                                          |
| Driver Version Detected   | 550.54.15                                      |
| GPU Device IDs Detected   | 2330,2330                                      |
|-----  Deployment  --------+------------------------------------------------|
| Denylist                  | Pass                                           |
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | Pass - GPUs: 0                                 |
|                           | Fail - GPU: 1                                  |
| Warning                   | GPU 1 Error using CUDA API cudaMalloc Check    |
|                           | DCGM and system logs for errors.               |
+---------------------------+------------------------------------------------+
";

    #[test]
    fn per_gpu_results_and_warnings() {
        let diag = &parse(FAILING).unwrap()[0];
        assert_eq!(diag.version.as_deref(), Some("3.3.5"));
        assert_eq!(diag.gpu_device_ids.len(), 2);
        let memory = &diag.tests[1];
        assert_eq!(memory.plugin(), "memory");
        assert_eq!(memory.status(), Status::Fail);
        assert_eq!(memory.failed_gpus(), [1]);
        assert_eq!(
            memory.results[1].detail,
            ["GPU 1 Error using CUDA API cudaMalloc Check DCGM and system logs for errors."]
        );
        assert_eq!(memory.line, 12);
    }

    #[test]
    fn dcgm4_rows_per_gpu() {
        let text = "\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| software                  | Pass                                           |
+-----  Hardware  ----------+------------------------------------------------+
| memory                    | GPU0: Pass                                     |
|                           | GPU1: Skip                                     |
+---------------------------+------------------------------------------------+
";
        let diag = &parse(text).unwrap()[0];
        assert_eq!(diag.tests[1].results.len(), 2);
        assert_eq!(diag.gpus(), [0, 1]);
        assert_eq!(diag.tests[1].status(), Status::Skip);
    }

    #[test]
    fn truncation_and_damage_are_located() {
        let cut: String = FAILING.lines().take(13).map(|l| format!("{l}\n")).collect();
        let err = parse(&cut).unwrap_err();
        assert_eq!(err.line, 13, "{err}");
        assert!(err.message.contains("closing border"), "{err}");
        let cut = &FAILING[..FAILING.find("Pass - GPUs: 0").unwrap() + 8];
        assert_eq!(parse(cut).unwrap_err().line, 12);
        let bad = FAILING.replace(
            "| Denylist                  | Pass  ",
            "| Denylist                  | Pxss  ",
        );
        let err = parse(&bad).unwrap_err();
        assert_eq!(err.line, 10);
        assert!(err.message.contains("Pxss"));
    }
}
