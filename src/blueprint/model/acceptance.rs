//! `acceptance`: what runs after join (acceptance layers 2–5) — the images of the
//! rendered workloads (pinned by digest), which tests must run, the DCGM level, the
//! multi-node engine, how the RDMA workloads reach the rails, threshold overrides and the
//! regression tolerance. Every field is optional; what is absent follows from the node's
//! topology.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::DnsLabel;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Acceptance {
    /// Images the rendered workloads run, each `registry/repository@sha256:<digest>`.
    #[serde(default)]
    pub images: Images,
    /// Tests that must run for the node to be accepted; default: every test that applies
    /// to the node (RDMA and multi-node tests with RDMA NICs, nvbandwidth and DCGM on
    /// NVIDIA, NCCL/RCCL with two or more GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<Test>>,
    #[serde(default)]
    pub dcgm: Dcgm,
    #[serde(default)]
    pub multi_node: MultiNode,
    #[serde(default)]
    pub rdma: Rdma,
    #[serde(default)]
    pub thresholds: Thresholds,
    /// The storage baseline (fio on a folder of the node); no storage test without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Storage>,
    /// The inference engine check (layer 5): the engine and the model shipped in
    /// `images.inference`; no inference check without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference: Option<Inference>,
    /// How much worse than the node's previous record a figure may be, in percent.
    #[serde(default = "default_tolerance")]
    pub regression_tolerance_percent: f64,
    /// Namespace of the rendered workloads.
    #[serde(default = "default_namespace")]
    pub namespace: String,
}

fn default_tolerance() -> f64 {
    5.0
}

fn default_namespace() -> String {
    "nodeimg-acceptance".to_owned()
}

/// The acceptance workloads' images.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Images {
    /// The production framework image (PyTorch) that runs the probe: smoke Pod and
    /// framework Job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// nccl-tests (NVIDIA) or rccl-tests (AMD) built with MPI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collectives: Option<String>,
    /// DCGM (`dcgmi diag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcgm: Option<String>,
    /// nvbandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvbandwidth: Option<String>,
    /// perftest (`ib_write_bw`) built with GPU memory support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perftest: Option<String>,
    /// fio (the storage baseline), any image with `fio` and `sh` on its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<String>,
    /// The production JAX image (JAX with its CUDA or ROCm plugin, `python3`) that runs
    /// the JAX probe (layer 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jax: Option<String>,
    /// The inference engine's image (vLLM's `vllm/vllm-openai`, SGLang's `lmsysorg/sglang`,
    /// TensorRT-LLM's `nvcr.io/nvidia/tensorrt-llm/release`) with the model of
    /// `acceptance.inference.model` inside it (layer 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference: Option<String>,
}

/// The inference engine check: the engine serves a model shipped in its image on the
/// node's GPUs and answers a fixed prompt; time to first token and tokens per second
/// are judged against `thresholds` and the node's previous record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Inference {
    #[serde(default)]
    pub engine: InferenceEngine,
    /// Absolute path of the model (a Hugging Face folder) inside `images.inference`, e.g.
    /// `/models/Qwen2.5-0.5B-Instruct`: no download at run time.
    pub model: String,
    /// Tokens generated for the fixed prompt.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
}

fn default_max_tokens() -> u32 {
    128
}

/// The engine's OpenAI-compatible server the check starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InferenceEngine {
    /// `vllm serve`.
    #[default]
    Vllm,
    /// `python3 -m sglang.launch_server`.
    Sglang,
    /// TensorRT-LLM's `trtllm-serve` (NVIDIA GPUs only; TensorRT-LLM 1.0 docs,
    /// `commands/trtllm-serve`).
    Trtllm,
}

impl InferenceEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            InferenceEngine::Vllm => "vllm",
            InferenceEngine::Sglang => "sglang",
            InferenceEngine::Trtllm => "trtllm",
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Layer 2: the Node object.
    Kubernetes,
    /// Layer 3: the smoke Pod.
    Smoke,
    /// Layer 4: DCGM diagnostics.
    Dcgm,
    /// Layer 4: nvbandwidth.
    Nvbandwidth,
    /// Layer 4: single-node NCCL/RCCL all-reduce on every GPU.
    Nccl,
    /// Layer 4: `ib_write_bw` on every RDMA rail.
    Rdma,
    /// Layer 4: multi-node NCCL/RCCL all-reduce.
    MultiNodeNccl,
    /// Layer 5: the framework Job.
    Framework,
    /// Layer 4: the storage baseline (fio), where `acceptance.storage` is declared.
    Storage,
    /// Layer 5: the JAX probe, where `images.jax` is given.
    Jax,
    /// Layer 5: the inference engine check, where `acceptance.inference` and
    /// `images.inference` are given.
    Inference,
}

impl Test {
    pub const ALL: [Test; 11] = [
        Test::Kubernetes,
        Test::Smoke,
        Test::Dcgm,
        Test::Nvbandwidth,
        Test::Nccl,
        Test::Rdma,
        Test::MultiNodeNccl,
        Test::Framework,
        Test::Storage,
        Test::Jax,
        Test::Inference,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Test::Kubernetes => "kubernetes",
            Test::Smoke => "smoke",
            Test::Dcgm => "dcgm",
            Test::Nvbandwidth => "nvbandwidth",
            Test::Nccl => "nccl",
            Test::Rdma => "rdma",
            Test::MultiNodeNccl => "multi-node-nccl",
            Test::Framework => "framework",
            Test::Storage => "storage",
            Test::Jax => "jax",
            Test::Inference => "inference",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Dcgm {
    /// `dcgmi diag -r` level: 1 quick, 2 medium (~2 min), 3 long (~15 min), 4 extended.
    #[serde(default = "default_level")]
    pub level: u8,
}

fn default_level() -> u8 {
    3
}

impl Default for Dcgm {
    fn default() -> Self {
        Dcgm {
            level: default_level(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MultiNode {
    #[serde(default)]
    pub engine: Engine,
    /// Nodes in the multi-node run (this node and its peers).
    #[serde(default = "default_nodes")]
    pub nodes: u32,
}

fn default_nodes() -> u32 {
    2
}

impl Default for MultiNode {
    fn default() -> Self {
        MultiNode {
            engine: Engine::default(),
            nodes: default_nodes(),
        }
    }
}

/// The engine that launches multi-node runs (never a launcher of nodeimg's own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// Kubeflow MPI Operator (`MPIJob`, kubeflow.org/v2beta1).
    #[default]
    MpiOperator,
    /// Kubernetes JobSet (jobset.x-k8s.io/v1alpha2).
    Jobset,
}

/// How the RDMA workloads (the `ib_write_bw` pair and the multi-node all-reduce) reach
/// the node's RDMA rails. A Pod in its own network namespace sees no rail unless
/// something hands it one: the node's namespace (`hostNetwork`, the default when no
/// resource is named), or an RDMA device plugin's resource (the NVIDIA Network Operator's
/// `k8s-rdma-shared-dev-plugin`, SR-IOV VFs) with, for RoCE, a Multus network per rail
/// that gives the Pod an address — RoCE v2 traffic is addressed by the IP-based GIDs of
/// the interface.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rdma {
    /// Run the RDMA Pods in the node's network namespace (`hostNetwork: true`,
    /// privileged for `/dev/infiniband`). Default: true unless `resources` are named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_network: Option<bool>,
    /// Extended resources that hand the rails to a Pod, requested by every RDMA Pod, e.g.
    /// `rdma/rdma_shared_device_a: 1` or `nvidia.com/sriov_rdma_vf: 8`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, u32>,
    /// Multus NetworkAttachmentDefinitions (`name` or `namespace/name`) attached to the
    /// RDMA Pods through `k8s.v1.cni.cncf.io/networks`, one per rail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<String>,
    /// The RoCE GID index (`ib_write_bw -x`, `NCCL_IB_GID_INDEX`). Default: the RoCE v2
    /// IPv4 GID of each port, looked up at run time (what `show_gids` lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gid_index: Option<u32>,
}

impl Rdma {
    /// The Pods run in the node's network namespace.
    pub fn host_network(&self) -> bool {
        self.host_network.unwrap_or(self.resources.is_empty())
    }
}

/// The storage baseline: fio's sequential and random reads and writes on a file in
/// `path` on the node (a hostPath), with direct I/O so the page cache does not measure
/// itself. There is no default threshold: what a node's disks deliver depends on its
/// drives and file system, which the blueprint does not describe; without thresholds
/// the figures are recorded and judged against the node's previous record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Storage {
    /// Absolute folder on the node the test file is written to, e.g. the local NVMe
    /// mount `/mnt/nvme` or `/var/lib/containerd`. The file is removed afterwards.
    pub path: String,
    /// Size of the test file, GiB (larger than the drive's cache gives steadier figures).
    #[serde(default = "default_storage_size")]
    pub size_gib: u32,
    /// Seconds each of the four workloads runs.
    #[serde(default = "default_storage_runtime")]
    pub runtime_seconds: u32,
    #[serde(default)]
    pub thresholds: StorageThresholds,
}

fn default_storage_size() -> u32 {
    4
}

fn default_storage_runtime() -> u32 {
    30
}

/// Pass thresholds of the four fio workloads (`seq-read`, `seq-write` at 1 MiB blocks,
/// `rand-read`, `rand-write` at 4 KiB blocks).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StorageThresholds {
    /// `seq-read` bandwidth, MiB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "seqReadMiBps"
    )]
    pub seq_read_mibps: Option<f64>,
    /// `seq-write` bandwidth, MiB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "seqWriteMiBps"
    )]
    pub seq_write_mibps: Option<f64>,
    /// `rand-read` IOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_read_iops: Option<f64>,
    /// `rand-write` IOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_write_iops: Option<f64>,
    /// `rand-read` completion latency at the 99th percentile, µs (at most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rand_read_p99_usec: Option<f64>,
}

/// Overrides of the topology defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Thresholds {
    /// Single-node all-reduce bus bandwidth at the largest message, GB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "ncclAllReduceBusbwGBps"
    )]
    pub nccl_all_reduce_busbw_gbps: Option<f64>,
    /// Multi-node all-reduce bus bandwidth at the largest message, GB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "ncclMultiNodeBusbwGBps"
    )]
    pub nccl_multi_node_busbw_gbps: Option<f64>,
    /// `ib_write_bw` average per rail at 8 MiB, Gb/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "rdmaWriteGbps"
    )]
    pub rdma_write_gbps: Option<f64>,
    /// nvbandwidth host↔device copy per GPU, GB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "nvbandwidthHostDeviceGBps"
    )]
    pub nvbandwidth_host_device_gbps: Option<f64>,
    /// nvbandwidth device→device copy per GPU pair, GB/s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "nvbandwidthDeviceDeviceGBps"
    )]
    pub nvbandwidth_device_device_gbps: Option<f64>,
    /// The inference engine's generation rate for the fixed prompt, tokens/s (at least).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_tokens_per_second: Option<f64>,
    /// The inference engine's time to the first token, ms (at most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference_ttft_ms: Option<f64>,
    /// The least share of its enforced power limit each GPU must draw under the matmul
    /// load (`power.peak`), above 0 and at most 1; default 0.75, DCGM's targeted power
    /// `target_power_min_ratio` (AMD publishes no such figure: the same default applies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_peak_fraction_of_limit: Option<f64>,
}

impl Acceptance {
    /// Problems with the values (ranges that serde cannot express), by field.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if !(1..=4).contains(&self.dcgm.level) {
            out.push((
                "acceptance.dcgm.level".into(),
                format!("{} is not a DCGM level (1-4)", self.dcgm.level),
            ));
        }
        if self.multi_node.nodes < 2 {
            out.push((
                "acceptance.multiNode.nodes".into(),
                "a multi-node run needs at least 2 nodes".into(),
            ));
        }
        if !(0.0..100.0).contains(&self.regression_tolerance_percent) {
            out.push((
                "acceptance.regressionTolerancePercent".into(),
                format!(
                    "{} is not a percentage below 100",
                    self.regression_tolerance_percent
                ),
            ));
        }
        let t = &self.thresholds;
        for (field, value) in [
            ("ncclAllReduceBusbwGBps", t.nccl_all_reduce_busbw_gbps),
            ("ncclMultiNodeBusbwGBps", t.nccl_multi_node_busbw_gbps),
            ("rdmaWriteGbps", t.rdma_write_gbps),
            ("nvbandwidthHostDeviceGBps", t.nvbandwidth_host_device_gbps),
            (
                "nvbandwidthDeviceDeviceGBps",
                t.nvbandwidth_device_device_gbps,
            ),
        ] {
            if let Some(v) = value.filter(|v| !v.is_finite() || *v <= 0.0) {
                out.push((
                    format!("acceptance.thresholds.{field}"),
                    format!("{v} is not a positive bandwidth"),
                ));
            }
        }
        for (field, value) in [
            ("inferenceTokensPerSecond", t.inference_tokens_per_second),
            ("inferenceTtftMs", t.inference_ttft_ms),
        ] {
            if let Some(v) = value.filter(|v| !v.is_finite() || *v <= 0.0) {
                out.push((
                    format!("acceptance.thresholds.{field}"),
                    format!("{v} is not a positive number"),
                ));
            }
        }
        if let Some(v) = t
            .power_peak_fraction_of_limit
            .filter(|v| !(v.is_finite() && *v > 0.0 && *v <= 1.0))
        {
            out.push((
                "acceptance.thresholds.powerPeakFractionOfLimit".into(),
                format!(
                    "{v} is not a fraction of the power limit above 0 and at most 1 (0.75 is 75 %)"
                ),
            ));
        }
        if let Some(inf) = &self.inference {
            let m = &inf.model;
            if !m.starts_with('/') || m.contains("..") || m.chars().any(char::is_control) {
                out.push((
                    "acceptance.inference.model".into(),
                    format!("`{m}` is not an absolute path without `..` inside the image"),
                ));
            }
            if inf.max_tokens < 2 {
                out.push((
                    "acceptance.inference.maxTokens".into(),
                    "at least 2 tokens: the rate is measured after the first".into(),
                ));
            }
        }
        if let Some(st) = &self.storage {
            if !st.path.starts_with('/') || st.path.contains("..") || st.path.contains('\n') {
                out.push((
                    "acceptance.storage.path".into(),
                    format!("`{}` is not an absolute folder without `..`", st.path),
                ));
            }
            if st.size_gib == 0 || st.runtime_seconds == 0 {
                out.push((
                    "acceptance.storage".into(),
                    "sizeGib and runtimeSeconds must be at least 1".into(),
                ));
            }
            let t = &st.thresholds;
            for (field, value) in [
                ("seqReadMiBps", t.seq_read_mibps),
                ("seqWriteMiBps", t.seq_write_mibps),
                ("randReadIops", t.rand_read_iops),
                ("randWriteIops", t.rand_write_iops),
                ("randReadP99Usec", t.rand_read_p99_usec),
            ] {
                if let Some(v) = value.filter(|v| !v.is_finite() || *v <= 0.0) {
                    out.push((
                        format!("acceptance.storage.thresholds.{field}"),
                        format!("{v} is not a positive number"),
                    ));
                }
            }
        }
        let r = &self.rdma;
        if r.host_network() && (!r.resources.is_empty() || !r.networks.is_empty()) {
            out.push((
                "acceptance.rdma.hostNetwork".into(),
                "a Pod in the node's network namespace sees every rail already: name \
                 `resources`/`networks` or `hostNetwork: true`, not both"
                    .into(),
            ));
        }
        if !r.host_network() && r.resources.is_empty() {
            out.push((
                "acceptance.rdma.resources".into(),
                "without hostNetwork a Pod sees no RDMA device: name the RDMA device \
                 plugin's resource (e.g. `rdma/rdma_shared_device_a: 1`)"
                    .into(),
            ));
        }
        for (name, count) in &r.resources {
            if *count == 0 || !extended_resource(name) {
                out.push((
                    "acceptance.rdma.resources".into(),
                    format!(
                        "`{name}: {count}` is not an extended resource request \
                         (`domain/name: N`, N at least 1)"
                    ),
                ));
            }
        }
        for (i, net) in r.networks.iter().enumerate() {
            if !network_name(net) {
                out.push((
                    format!("acceptance.rdma.networks[{i}]"),
                    format!(
                        "`{net}` is not a NetworkAttachmentDefinition (`name` or `namespace/name`)"
                    ),
                ));
            }
        }
        let i = &self.images;
        for (field, value) in [
            ("framework", &i.framework),
            ("collectives", &i.collectives),
            ("dcgm", &i.dcgm),
            ("nvbandwidth", &i.nvbandwidth),
            ("perftest", &i.perftest),
            ("fio", &i.fio),
            ("jax", &i.jax),
            ("inference", &i.inference),
        ] {
            if let Some(image) = value
                && let Err(why) = pinned(image)
            {
                out.push((format!("acceptance.images.{field}"), why));
            }
        }
        out
    }
}

/// `domain/name`: an extended resource (a device plugin's) is always prefixed.
fn extended_resource(s: &str) -> bool {
    s.split_once('/').is_some_and(|(domain, name)| {
        domain.split('.').all(DnsLabel::is_valid)
            && !name.is_empty()
            && name.len() <= 63
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    })
}

/// `name` or `namespace/name` of a Multus NetworkAttachmentDefinition.
fn network_name(s: &str) -> bool {
    match s.split_once('/') {
        Some((ns, name)) => DnsLabel::is_valid(ns) && DnsLabel::is_valid(name),
        None => DnsLabel::is_valid(s),
    }
}

/// `registry/repository@sha256:<64 hex>` (a tag may come before `@`).
pub fn pinned(image: &str) -> Result<(), String> {
    let Some((name, digest)) = image.rsplit_once('@') else {
        return Err(format!(
            "`{image}` is not pinned by digest: write it as name@sha256:<digest>"
        ));
    };
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| format!("`{image}`: the digest must be sha256:<64 hex digits>"))?;
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!(
            "`{image}`: the digest must be sha256:<64 lower-case hex digits>"
        ));
    }
    let valid_name = !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_lowercase()
                || b.is_ascii_digit()
                || matches!(b, b'.' | b'-' | b'_' | b'/' | b':')
        });
    if !valid_name {
        return Err(format!("`{name}` is not an image name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_must_be_pinned() {
        let d = "a".repeat(64);
        assert!(pinned(&format!("nvcr.io/nvidia/pytorch:25.10-py3@sha256:{d}")).is_ok());
        assert!(pinned("nvcr.io/nvidia/pytorch:25.10-py3").is_err());
        assert!(pinned(&format!("x@sha256:{}", "A".repeat(64))).is_err());
        assert!(pinned("x@sha256:abc").is_err());
    }

    #[test]
    fn defaults_and_ranges() {
        let a: Acceptance = serde_json::from_str("{}").unwrap();
        assert_eq!(a.dcgm.level, 3);
        assert_eq!(a.multi_node.nodes, 2);
        assert_eq!(a.regression_tolerance_percent, 5.0);
        assert!(a.problems().is_empty());
        let bad: Acceptance =
            serde_json::from_str(r#"{"dcgm": {"level": 7}, "thresholds": {"rdmaWriteGbps": -1}}"#)
                .unwrap();
        assert_eq!(bad.problems().len(), 2);
        assert!(serde_json::from_str::<Acceptance>(r#"{"dcgm": {"levle": 2}}"#).is_err());
        // The peak power share is a fraction: above 0, at most 1.
        let power = |v: &str| {
            serde_json::from_str::<Acceptance>(&format!(
                r#"{{"thresholds": {{"powerPeakFractionOfLimit": {v}}}}}"#
            ))
            .unwrap()
            .problems()
        };
        for ok in ["0.5", "0.95", "1"] {
            assert!(power(ok).is_empty(), "{ok}: {:?}", power(ok));
        }
        for bad in ["0", "-0.2", "1.01", "75"] {
            let p = power(bad);
            assert_eq!(p.len(), 1, "{bad}");
            assert_eq!(p[0].0, "acceptance.thresholds.powerPeakFractionOfLimit");
            assert!(p[0].1.contains(bad), "{}", p[0].1);
        }
    }

    #[test]
    fn rdma_access_is_one_way_or_the_other() {
        let a: Acceptance = serde_json::from_str("{}").unwrap();
        assert!(
            a.rdma.host_network(),
            "no resource named: the node's namespace"
        );
        let plugin: Acceptance = serde_json::from_str(
            r#"{"rdma": {"resources": {"rdma/rdma_shared_device_a": 1},
                         "networks": ["nodeimg-acceptance/rail-0", "rail-1"]}}"#,
        )
        .unwrap();
        assert!(!plugin.rdma.host_network());
        assert!(plugin.problems().is_empty(), "{:?}", plugin.problems());
        let fields = |json: &str| -> Vec<String> {
            serde_json::from_str::<Acceptance>(json)
                .unwrap()
                .problems()
                .into_iter()
                .map(|(f, _)| f)
                .collect()
        };
        assert_eq!(
            fields(r#"{"rdma": {"hostNetwork": true, "resources": {"rdma/a": 1}}}"#),
            ["acceptance.rdma.hostNetwork"]
        );
        assert_eq!(
            fields(r#"{"rdma": {"hostNetwork": false}}"#),
            ["acceptance.rdma.resources"]
        );
        assert_eq!(
            fields(r#"{"rdma": {"resources": {"rdma": 1, "rdma/b": 0}}}"#),
            ["acceptance.rdma.resources", "acceptance.rdma.resources"]
        );
        assert_eq!(
            fields(r#"{"rdma": {"resources": {"rdma/a": 1}, "networks": ["Rail_0"]}}"#),
            ["acceptance.rdma.networks[0]"]
        );
    }
}
