//! Rules for `acceptance`: values serde cannot bound (the DCGM level, node count,
//! tolerance, positive thresholds), images pinned by digest, tests the node's
//! hardware cannot run, and a shared-GPU smoke test too large for the node's maxPods.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::acceptance::{Engine, InferenceEngine, Test};
use crate::blueprint::model::{InjectionMode, LinkLayer, NicRole, RawBlueprint, Vendor};

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let Some(a) = &bp.acceptance else { return };
    for (field, message) in a.problems() {
        out.error("acceptance", &p(&field), message);
    }
    let vendor = bp.accelerators.as_ref().map(|acc| acc.vendor);
    let rdma = bp.network.nics.iter().any(|n| n.rdma);
    // nccl-tests/rccl-tests start their ranks with MPI: only the MPI Operator runs them
    // across nodes. A JobSet blueprint that still requires the test would never pass.
    let multi_node_nccl = match &a.tests {
        Some(tests) => tests.contains(&Test::MultiNodeNccl),
        None => rdma && vendor.is_some(),
    };
    if a.multi_node.engine == Engine::Jobset && multi_node_nccl {
        out.error(
            "acceptance",
            &p("acceptance.multiNode.engine"),
            "the multi-node all-reduce (`multi-node-nccl`, required by default with RDMA NICs) \
             starts its ranks with MPI and runs under the MPI Operator only: use `engine: \
             mpi-operator`, or list `acceptance.tests` without `multi-node-nccl`",
        );
    }
    // RoCE v2 is addressed by the GIDs the interface's IP addresses make: a Pod that is
    // handed the device but has no address on the rail has no usable GID, and rdma_cm
    // cannot resolve a peer. The Network Operator pairs its RDMA resource with a Multus
    // network (macvlan, host-device or an SR-IOV VF) per rail for that reason.
    let roce = bp
        .network
        .nics
        .iter()
        .any(|n| n.rdma && n.role == NicRole::Compute && n.link_layer == LinkLayer::Ethernet);
    if roce && !a.rdma.host_network() && a.rdma.networks.is_empty() {
        out.error(
            "acceptance",
            &p("acceptance.rdma.networks"),
            "the RoCE rails need an address inside the Pod (RoCE v2 GIDs come from the \
             interface's IP addresses): name a Multus network per rail, or use `hostNetwork: true`",
        );
    }
    // Shared GPUs are smoke-tested by GPUs × replicas Pods of one replica each (the
    // device plugin refuses larger shared requests): they must fit the kubelet's maxPods
    // beside the node's own Pods, or the set never completes and `smoke.devices` stays
    // incomplete.
    if let Some(acc) = &bp.accelerators
        && acc.vendor == Vendor::Nvidia
        && !acc.vfio_passthrough
        && bp.kubernetes.device_injection.mode == InjectionMode::DevicePlugin
        && let Some(replicas) = acc.sharing.replicas()
        && a.images.framework.is_some()
        && a.tests.as_ref().is_none_or(|t| t.contains(&Test::Smoke))
    {
        let pods = u64::from(acc.count) * u64::from(replicas);
        let max = crate::blueprint::resolve::kubelet(bp).max_pods;
        if pods > u64::from(max) {
            out.warning(
                "smoke-pods",
                &p("accelerators.sharing.replicas"),
                format!(
                    "the smoke test runs {pods} Pods together on the node ({} GPUs × {replicas} \
                     replicas, one replica each), more than its maxPods {max}: it cannot \
                     complete; lower `replicas`, raise `kubernetes.kubelet.maxPods`, or leave \
                     `smoke` out of `acceptance.tests`",
                    acc.count
                ),
            );
        }
    }
    // TensorRT-LLM builds for CUDA only: on other GPUs its server never starts.
    if let Some(inf) = &a.inference
        && inf.engine == InferenceEngine::Trtllm
        && vendor != Some(Vendor::Nvidia)
    {
        out.error(
            "acceptance",
            &p("acceptance.inference.engine"),
            "`trtllm` (TensorRT-LLM) runs on NVIDIA GPUs only: use `vllm` or `sglang` \
             (both have ROCm images)",
        );
    }
    for (i, test) in a.tests.iter().flatten().enumerate() {
        let why = match test {
            Test::Smoke | Test::Framework | Test::Nccl | Test::Jax | Test::Inference
                if vendor.is_none() =>
            {
                Some("needs GPUs (the blueprint has no accelerators)")
            }
            Test::Jax if a.images.jax.is_none() => {
                Some("needs the JAX image (acceptance.images.jax)")
            }
            Test::Inference if a.images.inference.is_none() || a.inference.is_none() => Some(
                "needs the engine's image and model (acceptance.images.inference, acceptance.inference)",
            ),
            Test::Dcgm | Test::Nvbandwidth if vendor != Some(Vendor::Nvidia) => {
                Some("runs on NVIDIA GPUs only")
            }
            Test::TestRunner | Test::RocmBandwidth if vendor != Some(Vendor::Amd) => {
                Some("runs on AMD GPUs only")
            }
            Test::RocmBandwidth if a.images.rocm_bandwidth.is_none() => {
                Some("needs the rocm-bandwidth-test image (acceptance.images.rocmBandwidth)")
            }
            Test::TestRunner if a.images.test_runner.is_none() => {
                Some("needs the test runner's image (acceptance.images.testRunner)")
            }
            Test::Rdma | Test::MultiNodeNccl if !rdma => {
                Some("needs RDMA NICs (network.nics with rdma: true)")
            }
            _ => None,
        };
        if let Some(why) = why {
            out.error(
                "acceptance",
                &p("acceptance.tests").index(i),
                format!("`{}` {why}", test.as_str()),
            );
        }
    }
}
