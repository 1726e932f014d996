//! nvbandwidth: memcpy bandwidth between host and GPUs and between GPUs, by copy engine
//! (`_ce`) or SM kernel (`_sm`). The text output ([`text`]) and `-j` JSON ([`json`]) give
//! the same testcases: a name, a status (`Passed`, `Waived` when the machine cannot run
//! it, e.g. device-to-device on one GPU) and one or more matrices.

pub mod json;
pub mod text;

use super::matrix::Matrix;

#[derive(Debug, Clone, PartialEq)]
pub struct Nvbandwidth {
    /// `v0.5`, `v0.10.0`.
    pub version: Option<String>,
    pub driver: Option<String>,
    pub cuda_runtime: Option<String>,
    /// `Device 0: NVIDIA H100 80GB HBM3 (00000000:19:00)` lines (text output only).
    pub devices: Vec<String>,
    pub testcases: Vec<Testcase>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Testcase {
    /// `device_to_device_memcpy_read_ce`, ...
    pub name: String,
    pub waived: bool,
    /// Bidirectional device tests print one matrix per direction and a total.
    pub matrices: Vec<Matrix>,
    pub line: usize,
}

impl Testcase {
    /// The testcase's main matrix (the total of a bidirectional test).
    pub fn matrix(&self) -> Option<&Matrix> {
        self.matrices
            .iter()
            .find(|m| m.title.to_ascii_lowercase().contains("total"))
            .or_else(|| self.matrices.first())
    }
}

impl Nvbandwidth {
    pub fn testcase(&self, name: &str) -> Option<&Testcase> {
        self.testcases.iter().find(|t| t.name == name)
    }
}
