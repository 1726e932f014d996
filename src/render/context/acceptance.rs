//! `acceptance`: the workloads of acceptance layers 3–5 rendered into
//! `cluster/acceptance/` — which of them apply to the node (and have an image), how
//! they reach the node and its devices, and what they run.
//!
//! Every workload selects the nodes of this blueprint (its own labels) that carry the
//! gate label [`GATE_LABEL`]`=`[`GATE_VALUE`], so applying the manifests tests exactly
//! the nodes an operator (or the rollout) marked, never production nodes of the class.

use crate::blueprint::Spec;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::blueprint::model::acceptance::Inference as InferenceSettings;
use crate::blueprint::model::acceptance::{Engine, Images, Test};
use crate::blueprint::model::*;
use crate::blueprint::value::TaintEffect;

/// The label that admits a node to the acceptance workloads.
pub const GATE_LABEL: &str = "nodeimg.dev/acceptance";
pub const GATE_VALUE: &str = "run";

#[derive(Debug, Clone, Serialize)]
pub struct Acceptance<'a> {
    pub namespace: &'a str,
    pub gate_label: &'static str,
    pub gate_value: &'static str,
    /// The blueprint's labels and the gate label.
    pub node_selector: BTreeMap<&'a str, &'a str>,
    /// One per blueprint taint, so the workloads land on tainted GPU nodes.
    pub tolerations: Vec<Toleration<'a>>,
    pub images: &'a Images,
    pub gpu: Option<Devices>,
    pub dcgm_level: u8,
    /// `mpi-operator` or `jobset`.
    pub engine: &'static str,
    pub mpi: bool,
    /// Nodes in each multi-node run.
    pub nodes: u32,
    /// RDMA NIC ports expected per node (compute rails).
    pub rails: u32,
    /// GPUDirect RDMA declared (GPU and NIC on one PCIe switch): perftest uses GPU memory.
    pub gpudirect: bool,
    /// GPUDirect RDMA goes through DMA-BUF (NVIDIA, no OFED): perftest registers its GPU
    /// buffers with `--use_cuda_dmabuf`, and the judge requires its `using DMA-BUF` line.
    pub dma_buf: bool,
    /// `/dev/shm` for the collectives (NCCL's shared-memory transport): the blueprint's
    /// `system.shmSize` in bytes, else a quarter of the node's memory.
    pub shm_bytes: String,
    /// The all-reduce message range, nccl-tests `-b`/`-e` (the judge needs 8 GiB or more).
    pub nccl_max: &'static str,
    /// The `ib_write_bw -s` message size (the judge's threshold is defined at 8 MiB).
    pub rdma_bytes: u64,
    /// How the RDMA Pods (the pair, the multi-node workers) reach the rails.
    pub rdma: RdmaAccess<'a>,
    /// The storage baseline's fio run, when `acceptance.storage` is declared.
    pub storage: Option<StorageRun<'a>>,
    /// The inference engine check, when `acceptance.inference` is declared.
    pub inference: Option<InferenceRun<'a>>,
    /// The AMD test runner's `config.json` for its `MANUAL` trigger (the acceptance Job).
    pub test_runner_config: String,
    /// The RVS recipe it runs.
    pub test_runner_recipe: &'a str,
    /// Where it writes its logs, in the container and on the node.
    pub test_runner_logs: &'static str,
    /// Which workloads are rendered.
    pub runs: Runs,
    /// GPUs the device plugin shares (time-slicing, MPS): the switch to whole GPUs that
    /// the workloads asking for them select; absent where GPUs are whole.
    pub whole: Option<WholeGpus<'a>>,
    /// The folder under `acceptance/` of the workloads that ask for the node's GPUs:
    /// `whole-gpus/` where GPUs are shared, else the acceptance folder itself.
    pub gpu_folder: &'static str,
    /// The RDMA pair's: with GPUDirect its Pods ask for the node's GPUs too.
    pub rdma_folder: &'static str,
    /// A workload renders into `whole-gpus/`, so its window (`whole-gpus.sh`) renders.
    pub any_whole: bool,
}

/// Where the workloads that need whole GPUs go on a class that shares them: a folder
/// of their own, so `kubectl apply -f acceptance/` (not recursive) applies the shared
/// phase only, and `whole-gpus.sh` the rest inside its window.
pub const WHOLE_GPUS_FOLDER: &str = "whole-gpus/";

/// The window of whole GPUs on a node whose GPUs the device plugin shares. Under
/// time-slicing and MPS the plugin refuses a request for more than one replica
/// (`failRequestsGreaterThanOne`), and an MPS replica is a fraction of a GPU's memory
/// and threads: layers 4 and 5 measure the hardware, so they run on whole GPUs. The
/// node is switched to the device plugin's configuration [`WHOLE_GPUS_CONFIG`] (its
/// `nvidia.com/device-plugin.config` label) and back to its class's key afterwards;
/// the workloads select the whole key, so on a node still sharing they stay Pending.
#[derive(Debug, Clone, Serialize)]
pub struct WholeGpus<'a> {
    /// `nvidia.com/device-plugin.config`.
    pub label: &'static str,
    /// The key with no sharing.
    pub key: &'static str,
    /// The class's own key (the blueprint name), which the node registers with.
    pub class_key: &'a str,
    /// `nvidia.com/gpu` with its dot escaped for a kubectl JSONPath.
    pub resource_path: &'static str,
    /// Allocatable GPUs once the plugin hands out whole ones.
    pub whole: u32,
    /// Allocatable once it shares them again: GPUs × replicas.
    pub shared: u32,
}

/// The storage Job's fio run: the node folder it writes its test file into (a hostPath),
/// the file's size and each workload's run time.
#[derive(Debug, Clone, Serialize)]
pub struct StorageRun<'a> {
    pub path: &'a str,
    pub size_gib: u32,
    pub runtime_seconds: u32,
}

/// The inference Job's engine, model (inside its image) and tokens to generate.
#[derive(Debug, Clone, Serialize)]
pub struct InferenceRun<'a> {
    pub engine: &'static str,
    pub model: &'a str,
    pub max_tokens: u32,
}

/// How the RDMA Pods reach the rails: the node's network namespace, or a device plugin's
/// resource (with Multus networks for RoCE addresses).
#[derive(Debug, Clone, Serialize)]
pub struct RdmaAccess<'a> {
    pub host_network: bool,
    pub resources: &'a BTreeMap<String, u32>,
    /// The `k8s.v1.cni.cncf.io/networks` annotation value; empty for none.
    pub networks: String,
    pub gid_index: Option<u32>,
    /// Port of the MPI workers' sshd: off port 22 in the node's namespace, where the
    /// node's own sshd listens.
    pub ssh_port: u16,
}

/// How a Pod asks for the node's GPUs.
#[derive(Debug, Clone, Serialize)]
pub struct Devices {
    pub vendor: &'static str,
    pub nvidia: bool,
    pub count: u32,
    /// The device plugin's extended resource (`nvidia.com/gpu`, `amd.com/gpu`).
    pub resource: &'static str,
    /// Through a DRA ResourceClaimTemplate instead of the device plugin.
    pub dra: bool,
    /// The DRA DeviceClass (`gpu.nvidia.com`, `gpu.amd.com`).
    pub device_class: &'static str,
    /// `resource.k8s.io/v1` from Kubernetes 1.34, `v1beta1` before.
    pub dra_api: &'static str,
    /// Time-slicing or MPS through the device plugin: the replicas of each GPU. The
    /// plugin then refuses a request for more than one (`failRequestsGreaterThanOne`),
    /// so the smoke test is `count × replicas` Pods of one replica each, the node's
    /// whole shared capacity, and each GPU must go to exactly `replicas` of them.
    pub replicas: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Toleration<'a> {
    pub key: &'a str,
    pub operator: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<&'a str>,
    pub effect: &'static str,
}

/// Which workloads render: the test applies to the node, is required (all that apply
/// when `acceptance.tests` is absent) and its image is given.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Runs {
    pub probe: bool,
    pub smoke: bool,
    pub dcgm: bool,
    pub nvbandwidth: bool,
    /// The AMD GPU Operator's test runner (RVS), layer 4 on AMD.
    pub test_runner: bool,
    /// rocm-bandwidth-test, layer 4 on AMD.
    pub rocm_bandwidth: bool,
    pub nccl: bool,
    pub rdma: bool,
    pub multi_node_nccl: bool,
    pub framework: bool,
    pub storage: bool,
    pub jax: bool,
    pub inference: bool,
}

impl Acceptance<'_> {
    /// Any workload renders.
    pub fn any(&self) -> bool {
        let r = &self.runs;
        r.smoke
            || r.dcgm
            || r.nvbandwidth
            || r.test_runner
            || r.rocm_bandwidth
            || r.nccl
            || r.rdma
            || r.multi_node_nccl
            || r.framework
            || r.storage
            || r.jax
            || r.inference
    }
}

pub(super) fn of(s: &Spec) -> Option<Acceptance<'_>> {
    let a = s.acceptance.as_ref()?;
    let k = &s.kubernetes;
    let mut node_selector: BTreeMap<&str, &str> = k
        .labels
        .iter()
        .map(|(key, v)| (key.as_str(), v.as_str()))
        .collect();
    node_selector.insert(GATE_LABEL, GATE_VALUE);
    let tolerations = k
        .taints
        .iter()
        .map(|t| Toleration {
            key: t.key.as_str(),
            operator: if t.value.is_some() { "Equal" } else { "Exists" },
            value: t.value.as_ref().map(|v| v.as_str()),
            effect: match t.effect {
                TaintEffect::NoSchedule => "NoSchedule",
                TaintEffect::PreferNoSchedule => "PreferNoSchedule",
                TaintEffect::NoExecute => "NoExecute",
            },
        })
        .collect();
    let acc = s
        .accelerators
        .as_ref()
        .filter(|acc| !acc.vfio_passthrough && k.device_injection.mode != InjectionMode::None);
    let gpu = acc.map(|acc| {
        let nvidia = acc.vendor == Vendor::Nvidia;
        Devices {
            vendor: acc.vendor.as_str(),
            nvidia,
            count: acc.count,
            resource: if nvidia {
                "nvidia.com/gpu"
            } else {
                "amd.com/gpu"
            },
            dra: k.device_injection.mode == InjectionMode::Dra,
            device_class: if nvidia {
                "gpu.nvidia.com"
            } else {
                "gpu.amd.com"
            },
            dra_api: if k.version.minor() >= 34 {
                "resource.k8s.io/v1"
            } else {
                "resource.k8s.io/v1beta1"
            },
            replicas: acc
                .sharing
                .replicas()
                .filter(|_| nvidia && k.device_injection.mode != InjectionMode::Dra),
        }
    });
    let rails: u32 = s
        .network
        .nics
        .iter()
        .filter(|n| n.rdma && n.role == NicRole::Compute)
        .map(|n| n.count)
        .sum();
    let wanted = |t: Test| a.tests.as_ref().is_none_or(|ts| ts.contains(&t));
    let has = |i: &Option<String>| i.is_some();
    let gpus = gpu.as_ref().map_or(0, |g| g.count);
    let nvidia = gpu.as_ref().is_some_and(|g| g.nvidia);
    let mpi = a.multi_node.engine == Engine::MpiOperator;
    let mut runs = Runs {
        probe: false,
        smoke: gpus > 0 && wanted(Test::Smoke) && has(&a.images.framework),
        dcgm: nvidia && wanted(Test::Dcgm) && has(&a.images.dcgm),
        nvbandwidth: nvidia && wanted(Test::Nvbandwidth) && has(&a.images.nvbandwidth),
        test_runner: gpu
            .as_ref()
            .is_some_and(|g| g.vendor == Vendor::Amd.as_str())
            && gpus > 0
            && wanted(Test::TestRunner)
            && has(&a.images.test_runner),
        rocm_bandwidth: gpu
            .as_ref()
            .is_some_and(|g| g.vendor == Vendor::Amd.as_str())
            && gpus > 0
            && wanted(Test::RocmBandwidth)
            && has(&a.images.rocm_bandwidth),
        nccl: gpus >= 2 && wanted(Test::Nccl) && has(&a.images.collectives),
        rdma: gpus > 0 && rails > 0 && wanted(Test::Rdma) && has(&a.images.perftest),
        // nccl-tests start their ranks with MPI: the MPI Operator runs them.
        multi_node_nccl: gpus > 0
            && rails > 0
            && mpi
            && wanted(Test::MultiNodeNccl)
            && has(&a.images.collectives),
        framework: gpus > 0 && wanted(Test::Framework) && has(&a.images.framework),
        storage: a.storage.is_some() && wanted(Test::Storage) && has(&a.images.fio),
        jax: gpus > 0 && wanted(Test::Jax) && has(&a.images.jax),
        inference: gpus > 0
            && a.inference.is_some()
            && wanted(Test::Inference)
            && has(&a.images.inference),
    };
    runs.probe = runs.smoke || runs.framework;
    let whole = gpu.as_ref().and_then(|g| {
        g.replicas.map(|replicas| WholeGpus {
            label: DEVICE_PLUGIN_CONFIG_LABEL,
            key: WHOLE_GPUS_CONFIG,
            class_key: s.metadata.name.as_str(),
            resource_path: "nvidia\\.com/gpu",
            whole: g.count,
            shared: g.count * replicas,
        })
    });
    let gpu_folder = if whole.is_some() {
        WHOLE_GPUS_FOLDER
    } else {
        ""
    };
    let gpudirect = s.network.affinity.gpu_nic_same_pcie_switch;
    let any_whole = whole.is_some()
        && (runs.dcgm
            || runs.nvbandwidth
            || runs.nccl
            || (runs.rdma && gpudirect)
            || runs.multi_node_nccl
            || runs.framework
            || runs.jax
            || runs.inference);
    let shm_bytes = s.system.shm_size.as_ref().map_or_else(
        || (k.capacity.memory.units_ceil() / 4).to_string(),
        |q| q.units_ceil().to_string(),
    );
    Some(Acceptance {
        namespace: &a.namespace,
        gate_label: GATE_LABEL,
        gate_value: GATE_VALUE,
        node_selector,
        tolerations,
        images: &a.images,
        gpu,
        dcgm_level: a.dcgm.level,
        engine: if mpi { "mpi-operator" } else { "jobset" },
        mpi,
        nodes: a.multi_node.nodes,
        rails,
        gpudirect,
        dma_buf: s.network.affinity.gpu_nic_same_pcie_switch && s.gpudirect_dma_buf(),
        shm_bytes,
        nccl_max: "16G",
        rdma_bytes: 8 << 20,
        rdma: RdmaAccess {
            host_network: a.rdma.host_network(),
            resources: &a.rdma.resources,
            networks: a.rdma.networks.join(","),
            gid_index: a.rdma.gid_index,
            ssh_port: if a.rdma.host_network() { 2222 } else { 22 },
        },
        inference: a
            .inference
            .as_ref()
            .map(|i: &InferenceSettings| InferenceRun {
                engine: i.engine.as_str(),
                model: &i.model,
                max_tokens: i.max_tokens,
            }),
        storage: a.storage.as_ref().map(|st| StorageRun {
            path: &st.path,
            size_gib: st.size_gib,
            runtime_seconds: st.runtime_seconds,
        }),
        test_runner_config: super::test_runner::config_json(
            &a.test_runner,
            super::test_runner::MANUAL,
        ),
        test_runner_recipe: &a.test_runner.recipe,
        test_runner_logs: super::amd::TEST_RUNNER_LOGS,
        runs,
        whole,
        gpu_folder,
        rdma_folder: if gpudirect { gpu_folder } else { "" },
        any_whole,
    })
}
