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
//!
//! Two layouts follow from dcgm-exporter's own code (`internal/pkg/rendermetrics/
//! render_metrics.go` and `internal/pkg/transformation/kubernetes.go`, tag 4.4.2-4.7.0, the
//! GPU Operator v25.10.1 chart's):
//!
//! - **MIG.** A GPU instance's series carry the parent GPU's `UUID` with
//!   `GPU_I_PROFILE="1g.10gb",GPU_I_ID="3"`, and the pod the kubelet gave that MIG device
//!   is set on them (the exporter keys its pod map by `<gpu>-<GPU_I_ID>`). The page is
//!   therefore read per [`Slot`]: a GPU, or one GPU instance of it.
//! - **Shared GPUs** (time-slicing, MPS: the device plugin hands out `<UUID>::<replica>`).
//!   By default the exporter keeps one pod per GPU (the last container the pod-resources
//!   API lists wins); with `KUBERNETES_VIRTUAL_GPUS=true` (`--kubernetes-virtual-gpus`,
//!   since 4.1.1-4.0.3, NVIDIA/dcgm-exporter#432) it writes one copy of each series per
//!   pod sharing the GPU, with the replica in a `vgpu` label.
//!   [`Scrape::virtual_gpus`] says which: a page with a `vgpu` label names every pod.
//!
//! The node's name is the `Hostname` label (`hostname` after NVIDIA/dcgm-exporter#655);
//! either is read.

use super::lines::each;
use crate::line_error::LineError;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A `(namespace, pod)` that holds a GPU.
pub type PodRef = (String, String);

/// What the kubelet allocates and dcgm-exporter labels: a whole GPU (its UUID), or under
/// MIG one GPU instance of it (the parent GPU's UUID and `GPU_I_ID`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    pub uuid: String,
    pub instance: Option<u32>,
}

impl Slot {
    pub fn gpu(uuid: &str) -> Slot {
        Slot {
            uuid: uuid.to_owned(),
            instance: None,
        }
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.instance {
            None => f.write_str(&self.uuid),
            Some(gi) => write!(f, "{} GPU instance {gi}", self.uuid),
        }
    }
}

/// One scrape of a node's dcgm-exporter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scrape {
    /// Every GPU (or GPU instance) the page has a series of, with the pods its series
    /// name (none when no container holds it), and the first line it appears on.
    pub gpus: BTreeMap<Slot, Gpu>,
    /// The `Hostname` label, when the series carry one (the node's name under the GPU
    /// Operator).
    pub hostname: Option<String>,
    /// Some series carry a `vgpu` label: the exporter runs with `KUBERNETES_VIRTUAL_GPUS`
    /// and names every pod that shares a GPU, not only one.
    pub virtual_gpus: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gpu {
    pub pods: BTreeSet<PodRef>,
    pub line: usize,
}

impl Scrape {
    /// The GPUs the page attributes to `pod`, with the line of each.
    pub fn allocated_to(&self, pod: &PodRef) -> BTreeMap<&Slot, usize> {
        self.gpus
            .iter()
            .filter(|(_, g)| g.pods.contains(pod))
            .map(|(u, g)| (u, g.line))
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
        let instance = match get("GPU_I_ID") {
            None => None,
            Some(gi) => Some(gi.parse::<u32>().map_err(|_| {
                LineError::new(
                    line.number,
                    format!("label `GPU_I_ID`: `{gi}` is not a GPU instance id"),
                )
            })?),
        };
        let slot = Slot {
            uuid: uuid.to_owned(),
            instance,
        };
        let gpu = scrape.gpus.entry(slot).or_insert_with(|| Gpu {
            pods: BTreeSet::new(),
            line: line.number,
        });
        scrape.virtual_gpus |= get("vgpu").is_some();
        if let Some(pod) = get("pod") {
            gpu.pods.insert((
                get("namespace").unwrap_or_default().to_owned(),
                pod.to_owned(),
            ));
        }
        if scrape.hostname.is_none() {
            scrape.hostname = get("Hostname")
                .or_else(|| get("hostname"))
                .map(str::to_owned);
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
            vec![(&Slot::gpu("GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"), 5)]
        );
        assert!(
            s.gpus[&Slot::gpu("GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba")]
                .pods
                .is_empty()
        );
        assert_eq!(s.hostname.as_deref(), Some("gpu-node-01"));
        assert!(!s.virtual_gpus);
    }

    /// MIG: dcgm-exporter's GPU line with `GPU_I_PROFILE` and `GPU_I_ID`
    /// (`render_metrics.go`'s template), the values of its own MIG test
    /// (`kubernetes_mig_test.go`: GPU 0 with instances 11 and 13), one held by a pod.
    #[test]
    fn mig_instances_are_read_apart() {
        let page = "# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-be839661-c0f5-7452-284b-b875666df60c\",pci_bus_id=\"00000000:1B:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"11\",Hostname=\"localhost\",container=\"probe\",namespace=\"ns\",pod=\"a\"} 9969
DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-be839661-c0f5-7452-284b-b875666df60c\",pci_bus_id=\"00000000:1B:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"13\",Hostname=\"localhost\"} 9969
";
        let s = parse(page).unwrap();
        let uuid = "GPU-be839661-c0f5-7452-284b-b875666df60c";
        let gi = |i| Slot {
            uuid: uuid.into(),
            instance: Some(i),
        };
        assert_eq!(s.gpus.len(), 2);
        assert_eq!(
            s.allocated_to(&("ns".into(), "a".into()))
                .into_keys()
                .collect::<Vec<_>>(),
            vec![&gi(11)]
        );
        assert!(s.gpus[&gi(13)].pods.is_empty());
        assert_eq!(gi(11).to_string(), format!("{uuid} GPU instance 11"));
        let bad = page.replace("GPU_I_ID=\"13\"", "GPU_I_ID=\"x\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("GPU_I_ID"), "{}", e.message);
    }

    /// Time-slicing with `KUBERNETES_VIRTUAL_GPUS`: one series per pod sharing the GPU,
    /// the replica in `vgpu` (`kubernetes.go`'s `vgpuAttribute`); the later exporters'
    /// lower-case `hostname` is the node's name too.
    #[test]
    fn every_pod_of_a_shared_gpu_is_read() {
        let page = "# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",hostname=\"n1\",container=\"c\",namespace=\"ns\",pod=\"a\",vgpu=\"0\"} 50
DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",hostname=\"n1\",container=\"c\",namespace=\"ns\",pod=\"b\",vgpu=\"3\"} 50
";
        let s = parse(page).unwrap();
        assert!(s.virtual_gpus);
        assert_eq!(s.gpus[&Slot::gpu("GPU-1")].pods.len(), 2);
        assert_eq!(s.hostname.as_deref(), Some("n1"));
    }

    #[test]
    fn escapes_are_decoded() {
        let s = parse("m{UUID=\"GPU-1\",pod=\"a\\\"b\\\\c\",namespace=\"n\",} 1\n").unwrap();
        assert!(
            s.gpus[&Slot::gpu("GPU-1")]
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
