//! dcgm-exporter's metrics page (`/metrics`, the Prometheus text exposition format 0.0.4):
//! which pod the kubelet allocated each GPU to.
//!
//! With pod mapping on (`--kubernetes`, the GPU Operator's default) dcgm-exporter asks the
//! kubelet's pod-resources API which container holds each GPU at every scrape and labels
//! that GPU's series with it:
//!
//! ```text
//! # HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
//! # TYPE DCGM_FI_DEV_SM_CLOCK gauge
//! DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",container="foo",namespace="bar",pod="baz"} 139
//! ```
//!
//! (the dcgm-exporter README's sample, and the Kubernetes device-monitoring proposal's,
//! `kubernetes/community` `compute-device-assignment.md`). A GPU no container holds has
//! empty `pod` and `namespace` labels or none. Only the series that carry a `UUID` label
//! are kept; `# HELP`/`# TYPE` and other comments are skipped. A sample line that does not
//! follow the format (an unclosed label value, a missing value, an unknown escape) is
//! refused with its line: a page cut mid-line is a broken scrape, not fewer GPUs.

use super::lines::each;
use crate::line_error::LineError;
use std::collections::{BTreeMap, BTreeSet};

/// A `(namespace, pod)` that holds a GPU.
pub type PodRef = (String, String);

/// One scrape of a node's dcgm-exporter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scrape {
    /// Every GPU UUID the page has a series of, with the pods its series name (none when
    /// no container holds the GPU), and the first line it appears on.
    pub gpus: BTreeMap<String, Gpu>,
    /// The `Hostname` label, when the series carry one (the node's name under the GPU
    /// Operator).
    pub hostname: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gpu {
    pub pods: BTreeSet<PodRef>,
    pub line: usize,
}

impl Scrape {
    /// The GPUs the page attributes to `pod`, with the line of each.
    pub fn allocated_to(&self, pod: &PodRef) -> BTreeMap<&str, usize> {
        self.gpus
            .iter()
            .filter(|(_, g)| g.pods.contains(pod))
            .map(|(u, g)| (u.as_str(), g.line))
            .collect()
    }
}

/// Whether a text is a dcgm-exporter page: the `# TYPE` line of a DCGM field.
pub const MARKER: &str = "# TYPE DCGM_FI_";

/// Parses a metrics page.
pub fn parse(text: &str) -> Result<Scrape, LineError> {
    let mut scrape = Scrape::default();
    let mut series = 0usize;
    for line in each(text) {
        let t = line.text.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let labels = sample(t)
            .map_err(|m| LineError::new(line.number, format!("not a metric sample: {m}")))?;
        series += 1;
        let get = |k: &str| {
            labels
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
        };
        let Some(uuid) = get("UUID") else { continue };
        let gpu = scrape.gpus.entry(uuid.to_owned()).or_insert_with(|| Gpu {
            pods: BTreeSet::new(),
            line: line.number,
        });
        if let Some(pod) = get("pod") {
            gpu.pods.insert((
                get("namespace").unwrap_or_default().to_owned(),
                pod.to_owned(),
            ));
        }
        if scrape.hostname.is_none() {
            scrape.hostname = get("Hostname").map(str::to_owned);
        }
    }
    if series == 0 {
        return Err(LineError::new(
            1,
            "no metric sample: an empty dcgm-exporter page (no GPU, or the scrape was cut)",
        ));
    }
    if scrape.gpus.is_empty() {
        return Err(LineError::new(
            1,
            "no series carries a `UUID` label: not dcgm-exporter's GPU metrics",
        ));
    }
    Ok(scrape)
}

/// One sample line: `name{label="value", ...} value [timestamp]`; its labels.
fn sample(line: &str) -> Result<Vec<(String, String)>, String> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    if name_end == 0 {
        return Err("no metric name".into());
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(body) = rest.strip_prefix('{') {
        let mut s = body;
        loop {
            s = s.trim_start();
            if let Some(after) = s.strip_prefix('}') {
                rest = after;
                break;
            }
            let eq = s.find('=').ok_or("a label without `=`")?;
            let name = s[..eq].trim();
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!("label name `{name}`"));
            }
            s = s[eq + 1..].trim_start();
            s = s
                .strip_prefix('"')
                .ok_or_else(|| format!("label `{name}`: its value is not quoted"))?;
            let mut value = String::new();
            let mut chars = s.char_indices();
            let end = loop {
                match chars.next() {
                    None => return Err(format!("label `{name}`: its value is not closed")),
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, '\\')) => value.push('\\'),
                        Some((_, '"')) => value.push('"'),
                        Some((_, 'n')) => value.push('\n'),
                        other => {
                            return Err(format!(
                                "label `{name}`: escape `\\{}` (only \\\\, \\\" and \\n are defined)",
                                other.map_or(String::new(), |(_, c)| c.to_string())
                            ));
                        }
                    },
                    Some((_, c)) => value.push(c),
                }
            };
            labels.push((name.to_owned(), value));
            s = s[end + 1..].trim_start();
            if let Some(after) = s.strip_prefix(',') {
                s = after;
            } else if !s.starts_with('}') {
                return Err(format!("after label `{name}`: `,` or `}}` expected"));
            }
        }
    }
    let mut fields = rest.split_whitespace();
    let value = fields.next().ok_or("no value")?;
    value
        .parse::<f64>()
        .map_err(|_| format!("value `{value}` is not a number"))?;
    if let Some(ts) = fields.next() {
        ts.parse::<i64>()
            .map_err(|_| format!("timestamp `{ts}` is not an integer"))?;
    }
    if let Some(extra) = fields.next() {
        return Err(format!("`{extra}` after the value and timestamp"));
    }
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dcgm-exporter README's page, with pod mapping (the labels dcgm-exporter adds
    /// under `--kubernetes`), a GPU no pod holds, and the exporter's own series.
    const PAGE: &str = "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n\
# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n\
# HELP DCGM_FI_DEV_MEM_CLOCK Memory clock frequency (in MHz).\n\
# TYPE DCGM_FI_DEV_MEM_CLOCK gauge\n\
DCGM_FI_DEV_SM_CLOCK{gpu=\"0\", UUID=\"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52\",container=\"foo\",namespace=\"bar\",pod=\"baz\"} 139\n\
DCGM_FI_DEV_MEM_CLOCK{gpu=\"0\", UUID=\"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52\",container=\"foo\",namespace=\"bar\",pod=\"baz\"} 405\n\
DCGM_FI_DEV_MEMORY_TEMP{gpu=\"0\", UUID=\"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52\",container=\"foo\",namespace=\"bar\",pod=\"baz\"} 9223372036854775794\n\
DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",UUID=\"GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba\",device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-node-01\",container=\"\",namespace=\"\",pod=\"\"} 1980 1733400000000\n\
dcgm_exporter_last_scrape_seconds 0.02\n";

    #[test]
    fn pods_are_read_per_gpu() {
        let s = parse(PAGE).unwrap();
        assert_eq!(s.gpus.len(), 2);
        let baz = ("bar".to_owned(), "baz".to_owned());
        let held = s.allocated_to(&baz);
        assert_eq!(
            held.into_iter().collect::<Vec<_>>(),
            vec![("GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", 5)]
        );
        assert!(
            s.gpus["GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba"]
                .pods
                .is_empty()
        );
        assert_eq!(s.hostname.as_deref(), Some("gpu-node-01"));
    }

    #[test]
    fn escapes_are_decoded() {
        let s = parse("m{UUID=\"GPU-1\",pod=\"a\\\"b\\\\c\",namespace=\"n\",} 1\n").unwrap();
        assert!(
            s.gpus["GPU-1"]
                .pods
                .contains(&("n".into(), "a\"b\\c".into()))
        );
    }

    #[test]
    fn a_broken_page_is_refused_with_its_line() {
        for (bad, why) in [
            ("m{UUID=\"GPU-1\",pod=\"a} 1\n", "not closed"),
            ("m{UUID=\"GPU-1\"}\n", "no value"),
            ("m{UUID=\"GPU-1\"} one\n", "not a number"),
            ("m{UUID=GPU-1} 1\n", "not quoted"),
            ("m{UUID=\"GPU-\\t1\"} 1\n", "escape"),
            ("m{UUID=\"GPU-1\" pod=\"a\"} 1\n", "`,` or `}`"),
        ] {
            let text = format!("# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n{bad}");
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, 2, "{bad}");
            assert!(e.message.contains(why), "{bad}: {}", e.message);
        }
        assert!(parse("# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n").is_err());
        assert!(
            parse("dcgm_exporter_last_scrape_seconds 0.02\n")
                .unwrap_err()
                .message
                .contains("UUID")
        );
    }
}
