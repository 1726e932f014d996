//! Named kubelet reservation policies and the arithmetic behind them.
//!
//! `kubeReserved`/`systemReserved` may name a policy (`eks`, `gke`) computed
//! from the declared capacity and the *effective* maxPods, with explicit
//! values overriding single resources. Every computed value keeps the
//! sentence that derives it, so `nodeimg explain` and `nodeimg diff` can show
//! the arithmetic instead of a bare number.

use super::model::{Capacity, Reservation, ReservationPolicy};
use super::value::Quantity;

const MIB: i128 = 1024 * 1024;

/// A resolved value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Explained {
    pub value: Quantity,
    /// `explicit`, `policy eks: …` or `kubelet default`.
    pub how: String,
}

/// A reservation with every resource resolved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolved {
    pub cpu: Option<Explained>,
    pub memory: Option<Explained>,
    pub ephemeral_storage: Option<Explained>,
    pub pid: Option<u32>,
    /// Values the policy computed that an explicit value then lowered:
    /// (resource, explicit, policy result).
    pub below_policy: Vec<(&'static str, Quantity, Quantity)>,
}

/// One reserved resource as kubelet's configuration and the blueprint name
/// it, with its value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The blueprint field (`ephemeralStorage`).
    pub field: &'static str,
    /// The key kubelet reads (`ephemeral-storage`).
    pub kubelet: &'static str,
    pub value: String,
    pub how: String,
}

impl Resolved {
    /// The resources reserved, in the order cpu, memory, ephemeral storage,
    /// pid: exactly what the kubelet configuration is rendered from, and
    /// what `explain` and `diff` show.
    pub fn entries(&self) -> Vec<Entry> {
        let explained = |field, kubelet, e: &Option<Explained>| {
            e.as_ref().map(|e| Entry {
                field,
                kubelet,
                value: e.value.to_string(),
                how: e.how.clone(),
            })
        };
        [
            explained("cpu", "cpu", &self.cpu),
            explained("memory", "memory", &self.memory),
            explained(
                "ephemeralStorage",
                "ephemeral-storage",
                &self.ephemeral_storage,
            ),
            self.pid.map(|p| Entry {
                field: "pid",
                kubelet: "pid",
                value: p.to_string(),
                how: "explicit".into(),
            }),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Resolves one reservation against the node's capacity.
pub fn resolve(res: &Reservation, capacity: &Capacity, max_pods: u32) -> Resolved {
    let policy = res.policy.unwrap_or(ReservationPolicy::Static);
    let (pcpu, pmem, peph) = match policy {
        ReservationPolicy::Static => (None, None, None),
        ReservationPolicy::Eks => (
            Some(cpu_bands(capacity.cpu, "eks")),
            Some(eks_memory(max_pods)),
            Some(Explained {
                value: Quantity::from_mib(1024),
                how: "policy eks: 1Gi".into(),
            }),
        ),
        ReservationPolicy::Gke => (
            Some(cpu_bands(capacity.cpu, "gke")),
            Some(gke_memory(&capacity.memory)),
            None,
        ),
    };
    let mut out = Resolved {
        pid: res.pid,
        ..Resolved::default()
    };
    let pick = |explicit: Option<&Quantity>,
                computed: Option<Explained>,
                name: &'static str,
                below: &mut Vec<_>| {
        match (explicit, computed) {
            (Some(q), Some(c)) => {
                if *q < c.value {
                    below.push((name, q.clone(), c.value.clone()));
                }
                Some(Explained {
                    value: q.clone(),
                    how: format!("explicit (overrides {})", c.how),
                })
            }
            (Some(q), None) => Some(Explained {
                value: q.clone(),
                how: "explicit".into(),
            }),
            (None, c) => c,
        }
    };
    let mut below = Vec::new();
    out.cpu = pick(res.cpu.as_deref(), pcpu, "cpu", &mut below);
    out.memory = pick(res.memory.as_deref(), pmem, "memory", &mut below);
    out.ephemeral_storage = pick(
        res.ephemeral_storage.as_deref(),
        peph,
        "ephemeral-storage",
        &mut below,
    );
    out.below_policy = below;
    out
}

/// The CPU bands EKS and GKE share: 6 % of the first core, 1 % of the
/// second, 0.5 % each of cores 3–4, 0.25 % of every further core; the sum is
/// floored to whole millicores.
pub fn cpu_bands(cpus: u32, policy: &str) -> Explained {
    let n = i128::from(cpus);
    // Tenths of a millicore keep the 0.25 % band (2.5m per core) exact.
    let bands: [(&str, i128, i128); 4] = [
        ("6% of core 1", n.min(1), 600),
        ("1% of core 2", (n - 1).clamp(0, 1), 100),
        ("0.5% of cores 3-4", (n - 2).clamp(0, 2), 50),
        ("0.25% of cores above 4", (n - 4).max(0), 25),
    ];
    let mut terms = Vec::new();
    let mut total = 0;
    for (label, cores, per) in bands {
        if cores > 0 {
            total += cores * per;
            terms.push(format!(
                "{label} ({cores} × {}m) = {}m",
                fmt_tenths(per),
                fmt_tenths(cores * per)
            ));
        }
    }
    let millis = total / 10;
    Explained {
        value: Quantity::from_millis(millis),
        how: format!(
            "policy {policy}: {cpus} CPUs: {} → {millis}m",
            terms.join(" + ")
        ),
    }
}

fn fmt_tenths(t: i128) -> String {
    if t % 10 == 0 {
        format!("{}", t / 10)
    } else {
        format!("{}.{}", t / 10, t % 10)
    }
}

/// EKS: 11 MiB per pod plus 255 MiB, from the effective maxPods.
pub fn eks_memory(max_pods: u32) -> Explained {
    let mib = 11 * i128::from(max_pods) + 255;
    Explained {
        value: Quantity::from_mib(mib),
        how: format!("policy eks: 11Mi × maxPods {max_pods} + 255Mi = {mib}Mi"),
    }
}

/// GKE: 255 MiB below 1 GiB; else 25 % of the first 4 GiB, 20 % of the next
/// 4 GiB, 10 % of the next 8 GiB, 6 % of the next 112 GiB and 2 % of the
/// rest. Each band is rounded up to a whole MiB.
pub fn gke_memory(memory: &Quantity) -> Explained {
    let total_mib = memory.units_ceil() / MIB;
    if total_mib < 1024 {
        return Explained {
            value: Quantity::from_mib(255),
            how: format!("policy gke: {total_mib}Mi is under 1Gi → 255Mi"),
        };
    }
    let bands: [(i128, i128); 5] = [
        (4096, 25),
        (4096, 20),
        (8192, 10),
        (112 * 1024, 6),
        (i128::MAX, 2),
    ];
    let mut left = total_mib;
    let mut sum = 0;
    let mut terms = Vec::new();
    for (width, pct) in bands {
        if left <= 0 {
            break;
        }
        let part = left.min(width);
        let reserved = (part * pct + 99) / 100;
        terms.push(format!("{pct}% of {part}Mi = {reserved}Mi"));
        sum += reserved;
        left -= part;
    }
    Explained {
        value: Quantity::from_mib(sum),
        how: format!("policy gke: {} → {sum}Mi", terms.join(" + ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eks_cpu_worked_examples() {
        // From the reference table of EKS kubeReserved CPU.
        for (cores, want) in [
            (1, 60),
            (2, 70),
            (4, 80),
            (8, 90),
            (16, 110),
            (32, 150),
            (64, 230),
            (96, 310),
            (192, 550),
        ] {
            assert_eq!(
                cpu_bands(cores, "eks").value.millis_ceil(),
                want,
                "{cores} cores"
            );
        }
        // Odd counts floor the half millicore: 5 cores = 80 + 2.5.
        assert_eq!(cpu_bands(5, "eks").value.millis_ceil(), 82);
        assert!(
            cpu_bands(192, "eks")
                .how
                .contains("0.25% of cores above 4 (188 × 2.5m) = 470m")
        );
    }

    #[test]
    fn eks_memory_worked_examples() {
        assert_eq!(eks_memory(110).value.mib_ceil(), 1465);
        assert_eq!(eks_memory(250).value.mib_ceil(), 3005);
    }

    #[test]
    fn gke_memory_bands() {
        let gib = |n: i128| Quantity::from_mib(n * 1024);
        // Worked examples below 128 GiB, where every published variant agrees.
        assert_eq!(gke_memory(&gib(8)).value.mib_ceil(), 1844);
        assert_eq!(gke_memory(&gib(16)).value.mib_ceil(), 2664);
        assert_eq!(gke_memory(&gib(64)).value.mib_ceil(), 5614);
        assert_eq!(gke_memory(&gib(128)).value.mib_ceil(), 9546);
        // 512 GiB: 2664 + ceil(6% of 114688) 6882 + ceil(2% of 393216) 7865.
        assert_eq!(gke_memory(&gib(512)).value.mib_ceil(), 17411);
        assert_eq!(gke_memory(&Quantity::from_mib(512)).value.mib_ceil(), 255);
    }
}
