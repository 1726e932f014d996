//! Topology Manager against the pods the node exists for. With
//! `single-numa-node` the kubelet admits a pod only when every aligned
//! resource (GPUs from the device plugin, exclusive CPUs from the static CPU
//! manager) fits one NUMA node, and otherwise rejects it with
//! TopologyAffinityError — the scheduler does not try elsewhere
//! (kubernetes.io/docs/tasks/administer-cluster/topology-manager/,
//! "single-numa-node"). A full-node GPU pod on a node whose GPUs span NUMA
//! nodes can then never run. `restricted` admits the narrowest hint that
//! fits (two NUMA nodes for 8 GPUs on a 2-socket HGX), `best-effort` admits
//! every pod and aligns what it can.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let k = &bp.kubernetes.kubelet;
    if k.topology_manager_policy != TopologyManagerPolicy::SingleNumaNode {
        return;
    }
    let path = p("kubernetes.kubelet.topologyManagerPolicy");
    let numa = bp.kubernetes.capacity.numa_nodes;
    if numa == Some(1) {
        return;
    }
    let gpus = bp.accelerators.as_ref().map_or(0, |a| a.count);
    let cpus = bp.kubernetes.capacity.cpu;
    let statics = k.cpu_manager_policy == CpuManagerPolicy::Static;
    match numa {
        None if gpus > 1 || statics => {
            out.error(
                "topology-single-numa",
                &path,
                "single-numa-node rejects every pod whose GPUs or exclusive CPUs do not fit one NUMA node, and the blueprint does not say how many the node has: set kubernetes.capacity.numaNodes (1 keeps this policy), or use restricted or best-effort",
            );
        }
        Some(n) if n > 1 => {
            let per_gpu = gpus / n;
            let per_cpu = cpus / n;
            let mut why = Vec::new();
            if gpus > per_gpu && gpus > 1 {
                why.push(format!(
                    "a pod asking for more than {per_gpu} of the {gpus} GPUs (a full-node pod)"
                ));
            }
            if statics {
                why.push(format!(
                    "a Guaranteed pod asking for more than {per_cpu} of the {cpus} CPUs"
                ));
            }
            if !why.is_empty() {
                out.error(
                    "topology-single-numa",
                    &path,
                    format!(
                        "with {n} NUMA nodes, single-numa-node rejects {} (TopologyAffinityError, not rescheduled): use restricted (admits the narrowest fitting NUMA set) or best-effort",
                        why.join(" and ")
                    ),
                );
            }
        }
        _ => {}
    }
}
