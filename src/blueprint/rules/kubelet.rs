//! kubelet rules: reservations, eviction and hugepages fit inside the
//! declared capacity; explicit values are not below their policy and do not
//! reserve an unreasonable share; CPU/memory managers have what they need;
//! `extraConfig` keys are known for the pinned version and not owned by a
//! typed field.

use super::p;
use crate::blueprint::diagnostic::Collector;
use crate::blueprint::known_fields;
use crate::blueprint::model::*;
use crate::blueprint::resolve;

/// Share of memory above which reserving is probably a mistake.
const SANE_MEMORY_SHARE: f64 = 0.25;

pub fn check(bp: &RawBlueprint, out: &mut Collector<'_>) {
    let k = &bp.kubernetes.kubelet;
    let cap = &bp.kubernetes.capacity;
    let r = resolve::kubelet(bp);

    if cap.cpu == 0 {
        out.error(
            "capacity",
            &p("kubernetes.capacity.cpu"),
            "a node has at least one CPU",
        );
    }
    if let Some(n) = k.max_pods
        && n == 0
    {
        out.error(
            "max-pods",
            &p("kubernetes.kubelet.maxPods"),
            "maxPods must be at least 1",
        );
    }

    for (name, res) in [
        ("kubeReserved", &r.kube_reserved),
        ("systemReserved", &r.system_reserved),
    ] {
        for (what, explicit, policy) in &res.below_policy {
            let field = match *what {
                "ephemeral-storage" => "ephemeralStorage",
                other => other,
            };
            out.warning(
                "reservation-below-policy",
                &p("kubernetes.kubelet").key(name).key(field),
                format!("{explicit} is below the {what} the policy computes ({policy})"),
            );
        }
    }

    // CPU.
    if r.allocatable_cpu.value.millis_ceil() <= 0 {
        out.error(
            "reservation-capacity",
            &p("kubernetes.kubelet"),
            format!(
                "CPU reservations leave nothing for pods: {}",
                r.allocatable_cpu.how
            ),
        );
    }
    // Memory.
    let cap_b = cap.memory.units_ceil();
    if cap_b <= 0 {
        out.error(
            "capacity",
            &p("kubernetes.capacity.memory"),
            "memory capacity must be positive",
        );
    } else if r.allocatable_memory_bytes <= 0 {
        out.error(
            "reservation-capacity",
            &p("kubernetes.kubelet"),
            format!(
                "memory reservations, eviction and hugepages exceed capacity: {}",
                r.allocatable_memory.how
            ),
        );
    } else {
        let held = cap_b - r.allocatable_memory.value.units_ceil() - r.hugepages.units_ceil();
        let share = held as f64 / cap_b as f64;
        if share > SANE_MEMORY_SHARE {
            out.warning(
                "reservation-share",
                &p("kubernetes.kubelet"),
                format!(
                    "reservations and eviction hold back {:.0}% of memory (more than {:.0}%): {}",
                    share * 100.0,
                    SANE_MEMORY_SHARE * 100.0,
                    r.allocatable_memory.how
                ),
            );
        }
    }
    // Ephemeral storage.
    if let Some(eph) = &cap.ephemeral_storage {
        let sum: i128 = [&r.kube_reserved, &r.system_reserved]
            .iter()
            .filter_map(|x| x.ephemeral_storage.as_ref())
            .map(|e| e.value.units_ceil())
            .sum();
        if sum >= eph.units_ceil() {
            out.error(
                "reservation-capacity",
                &p("kubernetes.kubelet"),
                format!("ephemeral-storage reservations ({sum} bytes) reach the capacity {eph}"),
            );
        }
    }
    // Eviction thresholds in bounds.
    for (sig, t) in &k.eviction_hard {
        if let Threshold::Quantity(q) = t {
            let path = p("kubernetes.kubelet.evictionHard").key(sig.as_str());
            if *sig == EvictionSignal::MemoryAvailable && q.units_ceil() >= cap_b {
                out.error(
                    "eviction",
                    &path,
                    format!("{q} is not below the memory capacity {}", cap.memory),
                );
            }
        }
    }

    // Managers.
    let reserved_cpu = |x: &crate::blueprint::reservation::Resolved| {
        x.cpu.as_ref().is_some_and(|c| c.value.millis_ceil() > 0)
    };
    if k.cpu_manager_policy == CpuManagerPolicy::Static
        && !reserved_cpu(&r.kube_reserved)
        && !reserved_cpu(&r.system_reserved)
    {
        out.error(
            "cpu-manager",
            &p("kubernetes.kubelet.cpuManagerPolicy"),
            "the static CPU manager needs a non-zero CPU reservation (kubeReserved or systemReserved cpu)",
        );
    }
    if k.memory_manager_policy == MemoryManagerPolicy::Static {
        let has_mem = [&r.kube_reserved, &r.system_reserved]
            .iter()
            .any(|x| x.memory.as_ref().is_some_and(|m| m.value.units_ceil() > 0));
        if !has_mem {
            out.error(
                "memory-manager",
                &p("kubernetes.kubelet.memoryManagerPolicy"),
                "the Static memory manager needs a memory reservation to place reservedMemory",
            );
        }
    }
    if k.topology_manager_policy == TopologyManagerPolicy::SingleNumaNode
        && k.cpu_manager_policy == CpuManagerPolicy::None
    {
        out.warning(
            "topology-manager",
            &p("kubernetes.kubelet.topologyManagerPolicy"),
            "single-numa-node aligns only what a hint provider pins; with cpuManagerPolicy none, CPUs are not aligned with GPUs",
        );
    }
    if bp.os.cgroup == CgroupMode::V2 && k.cgroup_driver == CgroupDriver::Cgroupfs {
        out.warning(
            "cgroup-driver",
            &p("kubernetes.kubelet.cgroupDriver"),
            "on systemd hosts with cgroup v2 the systemd cgroup driver is recommended",
        );
    }

    // Escape hatch.
    for key in k.extra_config.keys() {
        if let Some((msg, hint)) = known_fields::kubelet_key_problem(key, &bp.kubernetes.version) {
            let d = out.error_at_key(
                "extra-config",
                &p("kubernetes.kubelet.extraConfig").key(key.clone()),
                msg,
            );
            d.hint = hint;
        }
    }
    for (key, value) in &bp.runtime.containerd.extra_config {
        if let Some((msg, hint)) =
            known_fields::containerd_key_problem(key, value, &bp.runtime.containerd.version)
        {
            let d = out.error_at_key(
                "extra-config",
                &p("runtime.containerd.extraConfig").key(key.to_string()),
                msg,
            );
            d.hint = hint;
        }
    }

    // Taints: one per key and effect.
    let mut seen = std::collections::BTreeSet::new();
    for (i, t) in bp.kubernetes.taints.iter().enumerate() {
        if !seen.insert((t.key.clone(), t.effect)) {
            out.error(
                "duplicate",
                &p("kubernetes.taints").index(i),
                format!("taint `{t}` repeats a key and effect"),
            );
        }
    }
}
