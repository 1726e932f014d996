//! nvbandwidth's `-j` JSON: `{"nvbandwidth": {"CUDA Runtime Version", "Driver Version",
//! "version", "testcases": [{"name", "status", "bandwidth_description",
//! "bandwidth_matrix": [["12.39", "N/A"]], "sum", ...}]}}`. Matrix cells are strings.

use super::{Nvbandwidth, Testcase};
use crate::accept::lines::number;
use crate::accept::matrix::Matrix;
use crate::line_error::LineError;
use serde::Deserialize;

#[derive(Deserialize)]
struct Document {
    nvbandwidth: Body,
}

#[derive(Deserialize)]
struct Body {
    #[serde(rename = "CUDA Runtime Version")]
    cuda_runtime: Option<serde_json::Value>,
    #[serde(rename = "Driver Version")]
    driver: Option<String>,
    version: Option<String>,
    testcases: Vec<RawCase>,
}

#[derive(Deserialize)]
struct RawCase {
    name: String,
    status: String,
    bandwidth_description: Option<String>,
    bandwidth_matrix: Option<Vec<Vec<String>>>,
    sum: Option<f64>,
}

/// Parses nvbandwidth's JSON output.
pub fn parse(text: &str) -> Result<Nvbandwidth, LineError> {
    let doc: Document = serde_json::from_str(text)
        .map_err(|e| LineError::new(e.line(), format!("not an nvbandwidth JSON document: {e}")))?;
    let line_of = |name: &str| {
        let needle = format!("\"{name}\"");
        // One substring search and a count of the newlines before it, not a split
        // of every line per testcase.
        text.find(&needle).map_or(1, |at| {
            text.as_bytes()[..at]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        })
    };
    let mut testcases = Vec::new();
    for case in doc.nvbandwidth.testcases {
        let line = line_of(&case.name);
        let waived = match case.status.as_str() {
            "Passed" => false,
            "Waived" => true,
            other => {
                return Err(LineError::new(
                    line,
                    format!(
                        "testcase `{}`: status `{other}` is neither Passed nor Waived",
                        case.name
                    ),
                ));
            }
        };
        let mut matrices = Vec::new();
        if !waived {
            let cells = case.bandwidth_matrix.ok_or_else(|| {
                LineError::new(
                    line,
                    format!("testcase `{}` passed without a bandwidth_matrix", case.name),
                )
            })?;
            let title = case.bandwidth_description.unwrap_or_default();
            let mut matrix = Matrix::new(title.trim(), line);
            let width = cells.first().map_or(0, Vec::len);
            matrix.columns = (0..u32::try_from(width).unwrap_or(0)).collect();
            for (i, row) in cells.iter().enumerate() {
                let text = format!("{i} {}", row.join(" "));
                matrix.row(&text, line)?;
            }
            matrix.complete(line)?;
            matrix.sum = case.sum.filter(|s| number(&s.to_string()).is_some());
            matrices.push(matrix);
        }
        testcases.push(Testcase {
            name: case.name,
            waived,
            matrices,
            line,
        });
    }
    if testcases.is_empty() {
        return Err(LineError::new(1, "the document lists no testcases"));
    }
    let body_version = doc.nvbandwidth.version;
    Ok(Nvbandwidth {
        version: body_version,
        driver: doc.nvbandwidth.driver,
        cuda_runtime: doc.nvbandwidth.cuda_runtime.map(|v| match v {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        }),
        devices: Vec::new(),
        testcases,
    })
}
