//! Values a blueprint implies but does not spell out: the effective maxPods,
//! the reservations its policies compute, the eviction thresholds kubelet
//! will use, hugepage memory and the resulting allocatable resources — each
//! with the sentence that derives it, for `explain`, `diff` and rendering.

use serde::Serialize;

use super::model::*;
use super::reservation::{self, Explained};
use super::value::Quantity;

/// kubelet's own default for maxPods.
pub const DEFAULT_MAX_PODS: u32 = 110;

#[derive(Debug, Clone, PartialEq)]
pub struct Kubelet {
    pub max_pods: u32,
    pub max_pods_how: String,
    pub kube_reserved: reservation::Resolved,
    pub system_reserved: reservation::Resolved,
    /// Thresholds kubelet enforces, with their origin.
    pub eviction_hard: Vec<(EvictionSignal, Threshold, String)>,
    /// Memory held by boot-time hugepage pools.
    pub hugepages: Quantity,
    pub allocatable_cpu: Explained,
    pub allocatable_memory: Explained,
    /// Exact allocatable memory in bytes; negative when over-reserved.
    pub allocatable_memory_bytes: i128,
}

/// A value nodeimg computes from a blueprint, with the sentence that
/// derives it (what `explain` lists and `diff` compares).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Derived {
    /// Where it lives: the blueprint field it resolves
    /// (`kubernetes.kubelet.kubeReserved.memory`, spelt as `explain` spells
    /// resolved values) or what it is (`allocatable.memory`).
    pub path: String,
    pub value: String,
    pub how: String,
}

impl Kubelet {
    /// Every value computed for the kubelet, in a fixed order: maxPods, the
    /// reservations (each resource kubelet is given, pid included), the hard
    /// eviction thresholds, hugepage memory, allocatable CPU and memory.
    pub fn derived(&self) -> Vec<Derived> {
        let row = |path: String, value: String, how: &str| Derived {
            path,
            value,
            how: how.to_string(),
        };
        let mut out = vec![row(
            "kubernetes.kubelet.maxPods".into(),
            self.max_pods.to_string(),
            &self.max_pods_how,
        )];
        for (name, res) in [
            ("kubeReserved", &self.kube_reserved),
            ("systemReserved", &self.system_reserved),
        ] {
            for e in res.entries() {
                out.push(row(
                    format!("kubernetes.kubelet.{name}.{}", e.field),
                    e.value,
                    &e.how,
                ));
            }
        }
        for (sig, t, how) in &self.eviction_hard {
            // Signal names hold dots: quoted, as resolved values are.
            out.push(row(
                format!("kubernetes.kubelet.evictionHard[{:?}]", sig.as_str()),
                t.to_string(),
                how,
            ));
        }
        out.push(row(
            "boot.hugepages (memory)".into(),
            self.hugepages.to_string(),
            "sum of size × count over boot.hugepages",
        ));
        out.push(row(
            "allocatable.cpu".into(),
            self.allocatable_cpu.value.to_string(),
            &self.allocatable_cpu.how,
        ));
        out.push(row(
            "allocatable.memory".into(),
            self.allocatable_memory.value.to_string(),
            &self.allocatable_memory.how,
        ));
        out
    }
}

/// kubelet's default hard eviction thresholds on Linux
/// (`pkg/kubelet/eviction/defaults_linux.go`).
pub fn default_eviction() -> Vec<(EvictionSignal, Threshold)> {
    let t = |s: &str| s.parse::<Threshold>().expect("default thresholds parse");
    vec![
        (EvictionSignal::MemoryAvailable, t("100Mi")),
        (EvictionSignal::NodefsAvailable, t("10%")),
        (EvictionSignal::NodefsInodesFree, t("5%")),
        (EvictionSignal::ImagefsAvailable, t("15%")),
        (EvictionSignal::ImagefsInodesFree, t("5%")),
    ]
}

/// Bytes a memory threshold holds back on a node of `capacity` bytes.
pub fn memory_threshold_bytes(t: &Threshold, capacity: i128) -> i128 {
    match t {
        Threshold::Quantity(q) => q.units_ceil(),
        Threshold::Percent(p) => ((capacity as f64) * p.value() / 100.0).ceil() as i128,
    }
}

/// Crate-only (the rules resolve the model they check); outside, use
/// [`super::Blueprint::kubelet`].
pub(crate) fn kubelet(bp: &RawBlueprint) -> Kubelet {
    let k = &bp.kubernetes.kubelet;
    let cap = &bp.kubernetes.capacity;
    let (max_pods, max_pods_how) = match k.max_pods {
        Some(n) => (n, "explicit".to_string()),
        None => (DEFAULT_MAX_PODS, "kubelet default".to_string()),
    };
    let empty = Reservation::default();
    let kube_reserved =
        reservation::resolve(k.kube_reserved.as_ref().unwrap_or(&empty), cap, max_pods);
    let system_reserved =
        reservation::resolve(k.system_reserved.as_ref().unwrap_or(&empty), cap, max_pods);
    // kubelet sets every signal a partial evictionHard map omits to 0
    // (node-pressure eviction: "If you change the value of any parameter,
    // then the values of other parameters … will be set to zero"): the
    // defaults for the signals not given are written out too.
    let mut eviction_hard: Vec<_> = k
        .eviction_hard
        .iter()
        .map(|(s, t)| (*s, t.clone(), "explicit".to_string()))
        .collect();
    for (s, t) in default_eviction() {
        if !k.eviction_hard.contains_key(&s) {
            let how = if k.eviction_hard.is_empty() {
                "kubelet default"
            } else {
                "kubelet default, kept (a partial map would set it to 0)"
            };
            eviction_hard.push((s, t, how.to_string()));
        }
    }
    eviction_hard.sort_by_key(|(s, _, _)| *s);
    let hugepages_bytes: i128 = bp
        .boot
        .hugepages
        .iter()
        .map(|p| p.size.units_ceil() * i128::from(p.count))
        .sum();
    let hugepages = Quantity::from_bytes(hugepages_bytes);

    let millis = |e: &Option<Explained>| e.as_ref().map_or(0, |x| x.value.millis_ceil());
    let cap_m = i128::from(cap.cpu) * 1000;
    let kr_m = millis(&kube_reserved.cpu);
    let sr_m = millis(&system_reserved.cpu);
    let alloc_cpu = cap_m - kr_m - sr_m;
    let allocatable_cpu = Explained {
        value: Quantity::from_millis(alloc_cpu),
        how: format!(
            "capacity {cap_m}m − kubeReserved {kr_m}m − systemReserved {sr_m}m = {alloc_cpu}m"
        ),
    };

    let cap_b = cap.memory.units_ceil();
    let bytes = |e: &Option<Explained>| e.as_ref().map_or(0, |x| x.value.units_ceil());
    let kr_b = bytes(&kube_reserved.memory);
    let sr_b = bytes(&system_reserved.memory);
    let ev_b = eviction_hard
        .iter()
        .find(|(s, _, _)| *s == EvictionSignal::MemoryAvailable)
        .map_or(0, |(_, t, _)| memory_threshold_bytes(t, cap_b));
    let alloc_b = cap_b - kr_b - sr_b - ev_b - hugepages_bytes;
    let mib = |b: i128| format!("{}Mi", b.div_euclid(1 << 20));
    let allocatable_memory = Explained {
        value: Quantity::from_bytes(alloc_b.max(0) / (1 << 20) * (1 << 20)),
        how: format!(
            "capacity {} − kubeReserved {} − systemReserved {} − eviction {} − hugepages {} = {}",
            mib(cap_b),
            mib(kr_b),
            mib(sr_b),
            mib(ev_b),
            mib(hugepages_bytes),
            mib(alloc_b)
        ),
    };
    Kubelet {
        max_pods,
        max_pods_how,
        kube_reserved,
        system_reserved,
        eviction_hard,
        hugepages,
        allocatable_cpu,
        allocatable_memory,
        allocatable_memory_bytes: alloc_b,
    }
}
