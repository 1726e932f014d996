//! Which tool printed an output, from its content: a `kubectl logs` capture has no
//! telling name.
//!
//! Each format is known by a few marker strings (`busbw` and `algbw` in an nccl-tests
//! table header, `"DCGM GPU Diagnostic"` in `dcgmi diag -j`, ...). Recognition is one
//! multi-pattern pass over the text that stops at the first point where the markers seen
//! so far decide the format, so a large log costs at most one fast scan before its parser
//! reads it: an nccl-tests output with its preamble is decided on its first lines (`#
//! nThread`), a table-only copy behind megabytes of `NCCL_DEBUG=INFO` lines at its header.
//! A text that starts as JSON is a document read whole (DCGM, nvbandwidth, Kubernetes);
//! probe JSON lines are found wherever they start in a log, behind launcher prefixes too.

use super::lines::strip_launcher_prefix;
use super::probe;
use regex::Regex;
use std::sync::LazyLock;

/// The formats `nodeimg accept` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    DcgmJson,
    NvbandwidthJson,
    KubernetesNodes,
    KubernetesPods,
    KubernetesRuntimeClasses,
    /// `kubectl get events -o json` with the AMD GPU Operator's test runner's events.
    TestRunnerEvents,
    Probe,
    Nccl,
    DcgmText,
    Proftester,
    Perftest,
    P2p,
    NvbandwidthText,
    /// rocm-bandwidth-test's all-device copy matrices (`-a`, `-A`).
    RocmBandwidth,
    Ibstat,
    Topology,
    Fio,
    PowerSamples,
    DcgmExporter,
}

impl Format {
    pub fn describe(self) -> &'static str {
        match self {
            Format::DcgmJson => "dcgmi diag JSON",
            Format::NvbandwidthJson => "nvbandwidth JSON",
            Format::KubernetesNodes => "Kubernetes Node",
            Format::KubernetesPods => "Kubernetes Pods",
            Format::KubernetesRuntimeClasses => "Kubernetes RuntimeClasses",
            Format::TestRunnerEvents => "AMD test runner events",
            Format::Probe => "probe JSON lines",
            Format::Nccl => "nccl-tests/rccl-tests",
            Format::DcgmText => "dcgmi diag table",
            Format::Proftester => "dcgmproftester",
            Format::Perftest => "perftest",
            Format::P2p => "p2pBandwidthLatencyTest",
            Format::NvbandwidthText => "nvbandwidth",
            Format::RocmBandwidth => "rocm-bandwidth-test",
            Format::Ibstat => "ibstat/ibstatus",
            Format::Topology => "nvidia-smi topo -m",
            Format::Fio => "fio JSON",
            Format::PowerSamples => "nvidia-smi --query-gpu power samples",
            Format::DcgmExporter => "dcgm-exporter metrics",
        }
    }
}

/// A string that marks a format where it appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    /// `"DCGM GPU Diagnostic"` (DCGM 3) or `"DCGM Diagnostic"` (DCGM 4), the JSON root.
    DcgmRoot,
    NvbandwidthKey,
    TestcasesKey,
    /// `"nodeimg"` on a line that is a probe object (checked where it is found).
    ProbeLine,
    Busbw,
    Algbw,
    /// `# nThread 1 nGpus 8 minBytes ...` and `# nccl-tests version ...`: the first
    /// lines of every nccl-tests/rccl-tests run.
    NcclPreamble,
    DiagnosticColumn,
    ResultColumn,
    DeploymentRule,
    TestField,
    TestVerdict,
    PerftestHeader,
    PerftestTitle,
    P2pBanner,
    Running,
    MemcpyEngine,
    /// `RocmBandwidthTest Version: `, and the title of its copy matrices.
    RbtVersion,
    RbtCopyTitle,
    /// `CA type: ` and `Number of ports: `, the second and third lines of `ibstat`.
    IbstatCa,
    IbstatPorts,
    /// `Infiniband device '<name>' port <n> status:`, the first line of `ibstatus`.
    IbstatusDevice,
    /// The matrix header's `CPU Affinity` and the legend's `X    = Self` of
    /// `nvidia-smi topo -m`.
    TopoAffinity,
    TopoSelf,
    /// `"fio version"`, the first key of fio's JSON document (which notes may precede).
    FioVersion,
    /// `power.draw [W]`, a column of `nvidia-smi --query-gpu=… --format=csv`.
    PowerDraw,
    /// `# TYPE DCGM_FI_`, a metric family of dcgm-exporter's `/metrics` page.
    ExporterType,
}

/// Every marker string, once (the order does not matter: no two overlap).
const MARKERS: &[(&str, Marker)] = &[
    ("\"DCGM GPU Diagnostic\"", Marker::DcgmRoot),
    ("\"DCGM Diagnostic\"", Marker::DcgmRoot),
    ("\"nvbandwidth\"", Marker::NvbandwidthKey),
    ("\"testcases\"", Marker::TestcasesKey),
    ("\"nodeimg\"", Marker::ProbeLine),
    ("busbw", Marker::Busbw),
    ("algbw", Marker::Algbw),
    ("# nThread ", Marker::NcclPreamble),
    ("# nccl-tests version ", Marker::NcclPreamble),
    ("| Diagnostic", Marker::DiagnosticColumn),
    ("| Result", Marker::ResultColumn),
    ("-----  Deployment  ", Marker::DeploymentRule),
    (", TestField ", Marker::TestField),
    (" test PASSED", Marker::TestVerdict),
    (" test FAILED", Marker::TestVerdict),
    ("#bytes", Marker::PerftestHeader),
    ("BW Test", Marker::PerftestTitle),
    ("Latency Test", Marker::PerftestTitle),
    (
        "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]",
        Marker::P2pBanner,
    ),
    ("Running ", Marker::Running),
    ("memcpy CE", Marker::MemcpyEngine),
    ("memcpy SM", Marker::MemcpyEngine),
    ("nvbandwidth Version", Marker::MemcpyEngine),
    ("RocmBandwidthTest Version: ", Marker::RbtVersion),
    ("copy peak bandwidth GB/s", Marker::RbtCopyTitle),
    ("CA type: ", Marker::IbstatCa),
    ("Number of ports: ", Marker::IbstatPorts),
    ("Infiniband device '", Marker::IbstatusDevice),
    ("CPU Affinity", Marker::TopoAffinity),
    ("X    = Self", Marker::TopoSelf),
    ("\"fio version\"", Marker::FioVersion),
    ("power.draw [W]", Marker::PowerDraw),
    (super::dcgm_exporter::MARKER, Marker::ExporterType),
];

/// One automaton for all markers (a literal alternation: the regex crate searches it
/// with its SIMD multi-literal searcher, one pass for every marker together).
static SEARCH: LazyLock<Regex> = LazyLock::new(|| {
    let alternation: Vec<String> = MARKERS.iter().map(|(s, _)| regex::escape(s)).collect();
    Regex::new(&alternation.join("|")).expect("the markers are literals")
});

/// The markers seen so far.
#[derive(Debug, Default, Clone, Copy)]
struct Seen(u32);

impl Seen {
    /// Adds `m`; whether it is new.
    fn insert(&mut self, m: Marker) -> bool {
        let bit = 1 << m as u32;
        let new = self.0 & bit == 0;
        self.0 |= bit;
        new
    }

    fn has(self, m: Marker) -> bool {
        self.0 & (1 << m as u32) != 0
    }

    /// The format these markers decide, in order of precedence. A JSON document is only
    /// decided here by its own markers: whether it is a Kubernetes object needs it whole.
    fn decide(self, json: bool) -> Option<Format> {
        use Marker::*;
        if self.has(DcgmRoot) {
            return Some(Format::DcgmJson);
        }
        if json && self.has(NvbandwidthKey) && self.has(TestcasesKey) {
            return Some(Format::NvbandwidthJson);
        }
        if self.has(ProbeLine) {
            return Some(Format::Probe);
        }
        if self.has(FioVersion) {
            return Some(Format::Fio);
        }
        if json {
            return None;
        }
        self.decide_text()
    }

    fn decide_text(self) -> Option<Format> {
        use Marker::*;
        if (self.has(Busbw) && self.has(Algbw)) || self.has(NcclPreamble) {
            return Some(Format::Nccl);
        }
        if (self.has(DiagnosticColumn) && self.has(ResultColumn)) || self.has(DeploymentRule) {
            return Some(Format::DcgmText);
        }
        if self.has(TestField) && self.has(TestVerdict) {
            return Some(Format::Proftester);
        }
        if self.has(PerftestHeader) && self.has(PerftestTitle) {
            return Some(Format::Perftest);
        }
        if self.has(P2pBanner) {
            return Some(Format::P2p);
        }
        if self.has(Running) && self.has(MemcpyEngine) {
            return Some(Format::NvbandwidthText);
        }
        if self.has(RbtVersion) || self.has(RbtCopyTitle) {
            return Some(Format::RocmBandwidth);
        }
        if (self.has(IbstatCa) && self.has(IbstatPorts)) || self.has(IbstatusDevice) {
            return Some(Format::Ibstat);
        }
        if self.has(TopoAffinity) || self.has(TopoSelf) {
            return Some(Format::Topology);
        }
        if self.has(PowerDraw) {
            return Some(Format::PowerSamples);
        }
        if self.has(ExporterType) {
            return Some(Format::DcgmExporter);
        }
        None
    }
}

/// Whether the line around byte `at` is a probe object: `{` first (after a launcher
/// prefix), with the probe's format name.
fn probe_line(text: &str, at: usize) -> bool {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = strip_launcher_prefix(text[start..end].trim_start_matches('\u{feff}'));
    line.trim_start().starts_with('{') && line.contains(probe::FORMAT)
}

/// The format of an output, from its content.
pub fn recognise(text: &str) -> Option<Format> {
    let head = text.trim_start_matches('\u{feff}').trim_start();
    let json = head.starts_with('{') || head.starts_with('[');
    let mut seen = Seen::default();
    for found in SEARCH.find_iter(text) {
        let marker = MARKERS
            .iter()
            .find(|(s, _)| *s == found.as_str())
            .map(|(_, m)| *m)
            .expect("every match is a marker");
        if marker == Marker::ProbeLine && !probe_line(text, found.start()) {
            continue;
        }
        if seen.insert(marker)
            && let Some(format) = seen.decide(json)
        {
            return Some(format);
        }
    }
    if json && let Some(format) = kubernetes(text) {
        return Some(format);
    }
    seen.decide_text()
}

/// A Kubernetes Node, Pod, RuntimeClass or Event, a list of them, or a bare label map.
fn kubernetes(text: &str) -> Option<Format> {
    let value = serde_json::from_str::<serde_json::Value>(text).ok()?;
    let kind = value.get("kind").and_then(|k| k.as_str());
    let item_kind = value
        .get("items")
        .and_then(|i| i.get(0))
        .and_then(|i| i.get("kind"))
        .and_then(|k| k.as_str());
    match (kind, item_kind) {
        (Some("Node" | "NodeList"), _) | (Some("List"), Some("Node")) => {
            Some(Format::KubernetesNodes)
        }
        (Some("Pod" | "PodList"), _) | (Some("List"), Some("Pod")) => Some(Format::KubernetesPods),
        (Some("RuntimeClass" | "RuntimeClassList"), _) | (Some("List"), Some("RuntimeClass")) => {
            Some(Format::KubernetesRuntimeClasses)
        }
        (Some("Event" | "EventList"), _) | (Some("List"), Some("Event")) => {
            Some(Format::TestRunnerEvents)
        }
        // A bare label map (`kubectl get node -o json | jq .metadata.labels`).
        (None, _) if value.get("kubernetes.io/hostname").is_some() => Some(Format::KubernetesNodes),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_recognised_by_content() {
        assert_eq!(
            recognise("# Avg bus bandwidth\n#  size count type busbw algbw"),
            Some(Format::Nccl)
        );
        assert_eq!(
            recognise("Successfully ran\n{\"DCGM GPU Diagnostic\": {}}"),
            Some(Format::DcgmJson)
        );
        assert_eq!(
            recognise("{\"kind\": \"List\", \"items\": [{\"kind\": \"Node\"}]}"),
            Some(Format::KubernetesNodes)
        );
        assert_eq!(
            recognise("{\"kind\": \"PodList\", \"items\": []}"),
            Some(Format::KubernetesPods)
        );
        assert_eq!(
            recognise("{\"kind\": \"RuntimeClassList\", \"items\": []}"),
            Some(Format::KubernetesRuntimeClasses)
        );
        assert_eq!(
            recognise("{\"kubernetes.io/hostname\": \"a\"}"),
            Some(Format::KubernetesNodes)
        );
        assert_eq!(
            recognise("{\"kind\": \"List\", \"items\": [{\"kind\": \"Event\"}]}"),
            Some(Format::TestRunnerEvents)
        );
        assert_eq!(recognise("hello"), None);
        // A marker of a text format inside a JSON document does not make it that format.
        assert_eq!(
            recognise("{\"kind\": \"Node\", \"metadata\": {\"labels\": {\"x\": \"busbw algbw\"}}}"),
            Some(Format::KubernetesNodes)
        );
    }

    #[test]
    fn a_run_is_known_by_its_first_lines() {
        // The preamble decides before any table: a run cut before its table is then
        // refused by the nccl-tests parser with its line, not as an unknown file.
        assert_eq!(
            recognise(
                "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n"
            ),
            Some(Format::Nccl)
        );
    }

    #[test]
    fn probe_lines_are_found_anywhere_in_a_log() {
        let step =
            r#"{"nodeimg": "probe/v1", "suite": "framework", "step": "tensor", "status": "pass"}"#;
        let noise = "node-a:1:2 [0] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/CUMEM\n";
        // Behind a framework's NCCL_DEBUG=INFO lines, and behind an mpirun tag.
        let log = format!("{}{step}\n", noise.repeat(5000));
        assert_eq!(recognise(&log), Some(Format::Probe));
        let tagged = format!("{}[1,3]<stdout>:{step}\n", noise.repeat(300));
        assert_eq!(recognise(&tagged), Some(Format::Probe));
        // A mention of the key in prose is not a probe line.
        assert_eq!(recognise("see \"nodeimg\" probe/v1 docs\n"), None);
    }
}
