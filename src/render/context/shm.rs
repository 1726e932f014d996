//! `shm`: the cluster-side policy that sizes pods' `/dev/shm`
//! (`cluster/shm-policy.yaml`).
//!
//! A pod's `/dev/shm` is its sandbox's own tmpfs (64 MiB by containerd's
//! default), not the host's, so remounting the host's `/dev/shm` changes
//! nothing for pods (and shrinks the host's 50%-of-RAM default). The
//! mechanism Kubernetes has is a memory-backed `emptyDir` mounted at
//! `/dev/shm`; a Kyverno ClusterPolicy injects it, sized `system.shmSize`,
//! into the pods that run on this node class: those that ask for its GPUs
//! (a resource limit, or a DRA claim), or, on a node without accelerators,
//! those that select its labels. The volume's usage counts against the
//! pod's memory limit.

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::model::*;

#[derive(Debug, Clone, Serialize)]
pub struct Shm {
    /// The ClusterPolicy's name.
    pub policy: String,
    /// `sizeLimit` of the emptyDir, as written in the blueprint.
    pub size: String,
    pub volume: &'static str,
    /// Kyverno precondition keys (JMESPath): the policy applies when any
    /// is true (`GreaterThan 0` for counts, `Equals` for label values).
    pub counts: Vec<String>,
    pub labels: Vec<(String, String)>,
}

pub(super) fn of(s: &Spec) -> Option<Shm> {
    let size = s.system.shm_size.as_ref()?;
    let mut counts = Vec::new();
    let mut labels = Vec::new();
    if let Some(a) = &s.accelerators {
        let resource = match a.vendor {
            Vendor::Nvidia => "nvidia.com/gpu",
            Vendor::Amd => "amd.com/gpu",
        };
        for list in ["containers", "initContainers"] {
            counts.push(format!(
                "{{{{ length(request.object.spec.{list}[?resources.limits.\"{resource}\"] || `[]`) }}}}"
            ));
        }
        if s.kubernetes.device_injection.mode == InjectionMode::Dra {
            counts.push("{{ length(request.object.spec.resourceClaims || `[]`) }}".to_string());
        }
    } else {
        for (k, v) in &s.kubernetes.labels {
            labels.push((
                format!(
                    "{{{{ request.object.spec.nodeSelector.\"{}\" || '' }}}}",
                    k.as_str()
                ),
                v.as_str().to_string(),
            ));
        }
    }
    Some(Shm {
        policy: format!("nodeimg-shm-{}", s.metadata.name.as_str()),
        size: size.to_string(),
        volume: "nodeimg-dshm",
        counts,
        labels,
    })
}
