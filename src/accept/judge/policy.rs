//! What the blueprint asks of acceptance, resolved once: the tests required (from
//! `acceptance.tests`, or those the topology makes meaningful), the DCGM level, the
//! multi-node size, GPUDirect and `/dev/shm` expectations, how GPUs are shared (the pod
//! mapping's arithmetic), and each figure's threshold (the blueprint's, else the
//! topology's from [`threshold`]).

use crate::accept::threshold::{self, Figure, Threshold, Topology};
use crate::blueprint::Spec;
use crate::blueprint::model::acceptance::{Acceptance, Test};
use crate::blueprint::model::{SharingMode, Vendor};
use std::collections::{BTreeMap, BTreeSet};

/// What the blueprint asks of acceptance, resolved.
#[derive(Debug, Clone)]
pub struct Policy {
    pub topology: Topology,
    pub required: BTreeSet<Test>,
    pub dcgm_level: u8,
    /// The RVS recipe the AMD test runner must have run.
    pub test_runner_recipe: String,
    pub multi_node_nodes: u32,
    pub gpudirect: bool,
    /// GPUDirect RDMA goes through DMA-BUF (NVIDIA, RDMA NICs, no OFED and so no
    /// `nvidia_peermem`): perftest's CUDA runs must say `using DMA-BUF`.
    pub dma_buf: bool,
    /// `system.shmSize` in bytes: the smoke Pod's `/dev/shm` (the rendered Kyverno
    /// policy's emptyDir) must be at least this large.
    pub shm_bytes: Option<u64>,
    /// `accelerators.sharing`: its mode, and the Pods one GPU may go to (`replicas`
    /// under time-slicing or MPS, else 1).
    pub sharing: (SharingMode, u32),
    pub tolerance_percent: f64,
    /// The inference engine's thresholds: tokens/s (at least), time to first token in ms
    /// (at most), from `acceptance.thresholds`.
    pub inference: (Option<f64>, Option<f64>),
    /// The least share of its power limit a GPU must draw under the matmul load, and
    /// where it comes from: `acceptance.thresholds.powerPeakFractionOfLimit`, else DCGM's
    /// targeted power ratio ([`threshold::POWER_PEAK_MIN_RATIO`]).
    pub power_peak: (f64, &'static str),
    thresholds: BTreeMap<Figure, Option<Threshold>>,
}

impl Policy {
    pub fn new(blueprint: &Spec, settings: &Acceptance) -> Self {
        let topology = Topology::of(blueprint);
        let nvidia = topology.vendor == Some(Vendor::Nvidia);
        let gpus = topology.vendor.is_some() && topology.gpus > 0;
        let required: BTreeSet<Test> = match &settings.tests {
            Some(tests) => tests.iter().copied().collect(),
            None => Test::ALL
                .into_iter()
                .filter(|t| match t {
                    Test::Kubernetes => true,
                    Test::Smoke | Test::Framework => gpus,
                    Test::Dcgm | Test::Nvbandwidth => gpus && nvidia,
                    Test::TestRunner => {
                        gpus && topology.vendor == Some(Vendor::Amd)
                            && settings.images.test_runner.is_some()
                    }
                    Test::RocmBandwidth => {
                        gpus && topology.vendor == Some(Vendor::Amd)
                            && settings.images.rocm_bandwidth.is_some()
                    }
                    Test::Nccl => gpus && topology.gpus >= 2,
                    Test::Rdma | Test::MultiNodeNccl => gpus && topology.rail_count() > 0,
                    Test::Storage => settings.storage.is_some(),
                    Test::Jax => gpus && settings.images.jax.is_some(),
                    Test::Inference => {
                        gpus && settings.inference.is_some() && settings.images.inference.is_some()
                    }
                })
                .collect(),
        };
        let t = &settings.thresholds;
        let overrides = [
            (Figure::NcclAllReduceBusbw, t.nccl_all_reduce_busbw_gbps),
            (Figure::NcclMultiNodeBusbw, t.nccl_multi_node_busbw_gbps),
            (Figure::RdmaWrite, t.rdma_write_gbps),
            (
                Figure::NvbandwidthHostDevice,
                t.nvbandwidth_host_device_gbps,
            ),
            (
                Figure::NvbandwidthDeviceDevice,
                t.nvbandwidth_device_device_gbps,
            ),
            (
                Figure::RocmBandwidthHostDevice,
                t.rocm_bandwidth_host_device_gbps,
            ),
            (
                Figure::RocmBandwidthDeviceDevice,
                t.rocm_bandwidth_device_device_gbps,
            ),
        ];
        let thresholds = overrides
            .into_iter()
            .map(|(f, o)| (f, threshold::resolve(f, &topology, o)))
            .collect();
        Policy {
            gpudirect: blueprint.network.affinity.gpu_nic_same_pcie_switch,
            dma_buf: blueprint.gpudirect_dma_buf(),
            shm_bytes: blueprint.system.shm_size.as_ref().map(|s| s.bytes()),
            sharing: blueprint
                .accelerators
                .as_ref()
                .map_or((SharingMode::None, 1), |a| {
                    (a.sharing.mode(), a.sharing.replicas().unwrap_or(1))
                }),
            topology,
            required,
            dcgm_level: settings.dcgm.level,
            test_runner_recipe: settings.test_runner.recipe.clone(),
            multi_node_nodes: settings.multi_node.nodes,
            tolerance_percent: settings.regression_tolerance_percent,
            inference: (t.inference_tokens_per_second, t.inference_ttft_ms),
            power_peak: match t.power_peak_fraction_of_limit {
                Some(v) => (v, "acceptance.thresholds.powerPeakFractionOfLimit"),
                None => (
                    threshold::POWER_PEAK_MIN_RATIO,
                    "DCGM targeted power's target_power_min_ratio",
                ),
            },
            thresholds,
        }
    }

    pub fn threshold(&self, figure: Figure) -> Option<&Threshold> {
        self.thresholds.get(&figure).and_then(Option::as_ref)
    }
}
