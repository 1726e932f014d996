//! What changed since the node's last passing record, as reports show it (made by
//! [`crate::verify::last_good`]).

use serde::Serialize;

/// What changed since the node's last passing record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SinceLastGood {
    /// The last good record's file.
    pub record: String,
    /// When it was made.
    pub created_at: String,
    /// `what old → new`, for each identity, software or firmware value that differs.
    pub changed: Vec<String>,
    /// Checks (`id[subject]`) that passed then and do not now.
    pub failing_since: Vec<String>,
}

impl SinceLastGood {
    /// One line: the changes, then the checks that passed then.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if !self.changed.is_empty() {
            parts.push(self.changed.join(", "));
        } else {
            parts.push("nothing in the software or firmware changed".to_owned());
        }
        if !self.failing_since.is_empty() {
            parts.push(format!("passed then: {}", self.failing_since.join(", ")));
        }
        parts.join("; ")
    }
}
