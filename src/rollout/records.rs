//! Acceptance records read for a gate or a fleet comparison: files, or folders whose
//! `.json`, `.yaml` and `.yml` files are read in name order. Each is parsed once; a damaged
//! record is an error naming its file, never skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::verify::report::record::AcceptanceRecord;

/// Most records read in one run.
pub const MAX_RECORDS: usize = 100_000;

/// A record and the file it came from.
#[derive(Debug, Clone)]
pub struct Read {
    pub path: PathBuf,
    pub record: AcceptanceRecord,
}

fn is_record_file(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "json" | "yaml" | "yml"))
}

/// Every record under `inputs`.
pub fn load(inputs: &[PathBuf]) -> Result<Vec<Read>, String> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|e| format!("{}: {e}", input.display()))?;
        if meta.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| format!("{}: {e}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && is_record_file(p))
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(input.clone());
        }
        if files.len() > MAX_RECORDS {
            return Err(format!("more than {MAX_RECORDS} records"));
        }
    }
    files
        .into_iter()
        .map(|path| {
            let record = AcceptanceRecord::read_file(&path)?
                .ok_or_else(|| format!("{}: no such file", path.display()))?;
            Ok(Read { path, record })
        })
        .collect()
}

/// The newest record of each node (by `createdAt`), by host name; records without a known
/// host name are returned apart.
pub fn by_node(reads: Vec<Read>) -> (BTreeMap<String, Read>, Vec<PathBuf>) {
    let mut out: BTreeMap<String, Read> = BTreeMap::new();
    let mut nameless = Vec::new();
    for r in reads {
        let Some(host) = r.record.hostname.known().cloned() else {
            nameless.push(r.path);
            continue;
        };
        match out.get(&host) {
            Some(have) if have.record.created_at >= r.record.created_at => {}
            _ => {
                out.insert(host, r);
            }
        }
    }
    (out, nameless)
}
