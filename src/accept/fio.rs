//! fio's `--output-format=json`: per job, the read and write bandwidth, IOPS and
//! completion-latency percentiles the storage baseline records.
//!
//! ```text
//! {"fio version": "fio-3.33", "jobs": [{"jobname": "seq-read", "error": 0,
//!   "read": {"io_bytes": 589299712, "bw_bytes": 588123465, "iops": 560.87, "runtime": 1002,
//!            "clat_ns": {"mean": 1779.2, "N": 562, "percentile": {"99.000000": 4016, ...}}},
//!   "write": {...}, "trim": {...}}]}
//! ```
//!
//! fio prints notes (`note: both iodepth >= 1 and synchronous I/O engine are selected`)
//! on standard output before the document in some versions, and `kubectl logs` mixes the
//! two streams: the document starts at the first line that is `{` and ends where it
//! closes (error lines may follow). A document without
//! jobs, a job without its name or without a direction's figures is refused; fio 2.x's
//! `clat` in microseconds is read as well as fio 3's `clat_ns`.

use crate::line_error::LineError;
use serde_json::Value;

/// One direction of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Direction {
    pub io_bytes: u64,
    /// MiB/s (fio's `bw_bytes` / 2^20).
    pub mib_s: f64,
    pub iops: f64,
    /// Completion latency percentiles, µs: (percentile, value).
    pub clat_usec: Vec<(f64, f64)>,
}

impl Direction {
    /// The completion latency at `percentile` (99.0), µs.
    pub fn clat(&self, percentile: f64) -> Option<f64> {
        self.clat_usec
            .iter()
            .find(|(p, _)| (p - percentile).abs() < 1e-6)
            .map(|(_, v)| *v)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub name: String,
    /// fio's `error` (errno); 0 when the job ran cleanly.
    pub error: i64,
    /// Directions that moved data.
    pub read: Option<Direction>,
    pub write: Option<Direction>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FioRun {
    /// `fio-3.33`.
    pub version: String,
    pub jobs: Vec<Job>,
    /// The line the document starts on.
    pub line: usize,
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64().filter(|n| n.is_finite() && *n >= 0.0)
}

fn direction(
    job: &Value,
    key: &str,
    name: &str,
    line: usize,
) -> Result<Option<Direction>, LineError> {
    let Some(d) = job.get(key) else {
        return Ok(None);
    };
    let bad = |what: &str| {
        LineError::new(
            line,
            format!("job `{name}`: {key}.{what} is missing or not a number"),
        )
    };
    let io_bytes = d
        .get("io_bytes")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("io_bytes"))?;
    if io_bytes == 0 {
        return Ok(None);
    }
    let bw_bytes = match d.get("bw_bytes") {
        Some(v) => number(v).ok_or_else(|| bad("bw_bytes"))?,
        // fio 2.x: `bw` in KiB/s only.
        None => number(d.get("bw").unwrap_or(&Value::Null)).ok_or_else(|| bad("bw"))? * 1024.0,
    };
    let iops = number(d.get("iops").unwrap_or(&Value::Null)).ok_or_else(|| bad("iops"))?;
    let (clat, scale) = match (d.get("clat_ns"), d.get("clat")) {
        (Some(c), _) => (c, 1e-3),
        (None, Some(c)) => (c, 1.0),
        (None, None) => return Err(bad("clat_ns")),
    };
    let mut clat_usec = Vec::new();
    if let Some(p) = clat.get("percentile").and_then(Value::as_object) {
        for (k, v) in p {
            let pct: f64 = k.parse().map_err(|_| bad("clat_ns.percentile"))?;
            let value = number(v).ok_or_else(|| bad("clat_ns.percentile"))?;
            clat_usec.push((pct, value * scale));
        }
    }
    clat_usec.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(Some(Direction {
        io_bytes,
        mib_s: bw_bytes / (1024.0 * 1024.0),
        iops,
        clat_usec,
    }))
}

/// Parses fio's JSON output (notes before the document are skipped).
pub fn parse(text: &str) -> Result<FioRun, LineError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut offset = 0;
    let mut line = 1;
    for l in text.split_inclusive('\n') {
        if l.trim_end() == "{" || l.trim_start().starts_with("{\"") {
            break;
        }
        offset += l.len();
        line += 1;
    }
    if offset >= text.len() {
        return Err(LineError::new(
            0,
            "no JSON document (fio --output-format=json)",
        ));
    }
    // The first document only: fio's error lines (stderr, mixed in by `kubectl logs`) may
    // follow it.
    let doc: Value = serde_json::Deserializer::from_str(&text[offset..])
        .into_iter::<Value>()
        .next()
        .expect("the text starts with `{`")
        .map_err(|e| LineError::new(line + e.line() - 1, format!("not fio's JSON: {e}")))?;
    let version = doc
        .get("fio version")
        .and_then(Value::as_str)
        .ok_or_else(|| LineError::new(line, "no \"fio version\""))?
        .to_owned();
    let jobs = doc
        .get("jobs")
        .and_then(Value::as_array)
        .filter(|j| !j.is_empty())
        .ok_or_else(|| LineError::new(line, "no jobs (a truncated output?)"))?;
    let mut out = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .ok_or_else(|| LineError::new(line, format!("jobs[{i}] has no jobname")))?
            .to_owned();
        let error = job
            .get("error")
            .and_then(Value::as_i64)
            .ok_or_else(|| LineError::new(line, format!("job `{name}` has no error field")))?;
        out.push(Job {
            read: direction(job, "read", &name, line)?,
            write: direction(job, "write", &name, line)?,
            name,
            error,
        });
    }
    Ok(FioRun {
        version,
        jobs: out,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {
      "jobname" : "seq-read",
      "error" : 0,
      "read" : {"io_bytes" : 1048576, "bw_bytes" : 2097152, "bw" : 2048, "iops" : 2.0,
                "clat_ns" : {"N" : 2, "percentile" : {"50.000000" : 1000, "99.000000" : 250000}}},
      "write" : {"io_bytes" : 0, "bw_bytes" : 0, "iops" : 0.0, "clat_ns" : {"N" : 0}}
    }
  ]
}
"#;

    #[test]
    fn figures_are_read_behind_notes() {
        let run = parse(RUN).unwrap();
        assert_eq!((run.version.as_str(), run.line), ("fio-3.33", 2));
        let job = &run.jobs[0];
        assert_eq!(job.name, "seq-read");
        let read = job.read.as_ref().unwrap();
        assert_eq!(read.mib_s, 2.0);
        assert_eq!(read.clat(99.0), Some(250.0));
        assert!(
            job.write.is_none(),
            "a direction that moved nothing is none"
        );
    }

    #[test]
    fn truncated_and_damaged_documents_are_refused() {
        let cut = &RUN[..RUN.find("\"write\"").unwrap()];
        let e = parse(cut).unwrap_err();
        assert!(e.line >= 9, "{e}");
        let e =
            parse(&RUN.replace("\"bw_bytes\" : 2097152", "\"bw_bytes\" : \"fast\"")).unwrap_err();
        assert!(e.message.contains("read.bw_bytes"), "{e}");
        assert_eq!(parse("note: nothing\n").unwrap_err().line, 0);
        let e = parse("{\"fio version\": \"fio-3.33\", \"jobs\": []}").unwrap_err();
        assert!(e.message.contains("no jobs"), "{e}");
    }
}
