//! Memory headroom on large-memory nodes. kubelet's hard eviction acts only
//! when `memory.available` falls below its threshold; on a node with
//! hundreds of GiB, pinned (`cudaHostAlloc`) memory and a page-cache-heavy
//! model cache, a threshold of a few hundred MiB is crossed after the
//! kernel's OOM killer has already acted. Reservation policies scale with
//! the node (GKE keeps 2% of memory beyond 128 GiB); explicit values alone
//! tend to be copied from small nodes.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::model::*;
use crate::blueprint::resolve;

/// From this much memory a node counts as large.
pub const LARGE_MEMORY_BYTES: i128 = 256 << 30;
/// The share of memory below which a `memory.available` threshold is negligible.
pub const NEGLIGIBLE_SHARE: f64 = 0.01;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let cap = bp.kubernetes.capacity.memory.units_ceil();
    if cap < LARGE_MEMORY_BYTES {
        return;
    }
    let k = &bp.kubernetes.kubelet;
    let r = resolve::kubelet(bp);
    if let Some((_, t, _)) = r
        .eviction_hard
        .iter()
        .find(|(s, _, _)| *s == EvictionSignal::MemoryAvailable)
    {
        let held = resolve::memory_threshold_bytes(t, cap);
        let share = held as f64 / cap as f64;
        // Only a threshold the file writes: kubelet's own default is not the
        // user's choice, and a warning at a line they never wrote reads as
        // noise (the README's kubelet section says to set one on large nodes).
        let written = k
            .eviction_hard
            .contains_key(&EvictionSignal::MemoryAvailable);
        if share < NEGLIGIBLE_SHARE && written {
            let path = p("kubernetes.kubelet.evictionHard").key("memory.available");
            out.warning(
                "eviction-memory",
                &path,
                format!(
                    "memory.available {t} is {:.2}% of {}: the kernel OOM killer acts before kubelet evicts; use at least 1% (e.g. 2%) or add evictionSoft",
                    share * 100.0,
                    bp.kubernetes.capacity.memory
                ),
            );
        }
    }
    let policy = |r: &Option<Reservation>| r.as_ref().is_some_and(|r| r.policy.is_some());
    if !policy(&k.kube_reserved) && !policy(&k.system_reserved) {
        out.warning(
            "reservation-policy",
            &p("kubernetes.kubelet"),
            format!(
                "a node with {} of memory and no reservation policy (kubeReserved or systemReserved policy: eks or gke): what the daemons need grows with the node, measure it or let a policy scale it",
                bp.kubernetes.capacity.memory
            ),
        );
    }
}
