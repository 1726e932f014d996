//! `acceptance`: what runs after join (acceptance layers 2–5) — the images of the
//! rendered workloads (pinned by digest), which tests must run, the DCGM level, the
//! multi-node engine, threshold overrides and the regression tolerance. Every field is optional; what is absent
//! follows from the node's topology.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    pub thresholds: Thresholds,
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
}

impl Test {
    pub const ALL: [Test; 8] = [
        Test::Kubernetes,
        Test::Smoke,
        Test::Dcgm,
        Test::Nvbandwidth,
        Test::Nccl,
        Test::Rdma,
        Test::MultiNodeNccl,
        Test::Framework,
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
        let i = &self.images;
        for (field, value) in [
            ("framework", &i.framework),
            ("collectives", &i.collectives),
            ("dcgm", &i.dcgm),
            ("nvbandwidth", &i.nvbandwidth),
            ("perftest", &i.perftest),
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
    }
}
