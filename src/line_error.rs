//! A parse failure at a line of a tool's output: what every parser of a tool's output
//! returns (acceptance outputs, `kubectl -o json` Node and Pod listings), so a caller
//! adds the file name and reports them alike. A leaf, below the parsers that use it.

use std::fmt;

/// A parse failure at a line of the input (the file name is added by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line number; 0 when the problem is the input as a whole.
    pub line: usize,
    pub message: String,
}

impl LineError {
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        LineError {
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for LineError {}
