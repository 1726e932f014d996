//! Pass thresholds for the measured figures: from the blueprint's `acceptance.thresholds`
//! when set, otherwise from the node's topology by the table [`DEFAULTS`], one row per
//! (figure, topology) with the published source of the value. A topology no row fits
//! has no absolute threshold: its figures are recorded, compared with the node's
//! previous record, and the report says so.
//!
//! The values are the expected-bandwidth settings of Azure's node health checks
//! (github.com/Azure/azurehpc-health-checks, `conf/*.conf` and `customTests/*.nhc`), the
//! one public set that pairs each figure with the exact command it measures:
//! all-reduce bus bandwidth of `all_reduce_perf` at one large message (8 or 16 GiB) on
//! all GPUs of one node; `ib_write_bw -s 8388608 --report_gbits` with GPU memory per
//! rail; nvbandwidth's `host_to_device_memcpy_ce`/`device_to_host_memcpy_ce` and
//! `device_to_device_memcpy_read_ce` per GPU and per GPU pair.

use crate::blueprint::Spec;
use crate::blueprint::model::{LinkLayer, Vendor};
use serde::Serialize;

/// The least fraction of its power limit a GPU must draw under the matmul load unless
/// the blueprint sets `acceptance.thresholds.powerPeakFractionOfLimit`: DCGM's targeted
/// power test passes a GPU that reaches `target_power_min_ratio` (default 0.75) of its
/// target, the board's power limit (DCGM diagnostics reference, "Targeted Power Plugin",
/// parameters; DCGM 4.x). AMD publishes no such figure: the same default applies.
pub const POWER_PEAK_MIN_RATIO: f64 = 0.75;

/// A measured figure with a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Figure {
    /// Single-node all-reduce bus bandwidth at the largest message, GB/s.
    NcclAllReduceBusbw,
    /// Multi-node all-reduce bus bandwidth at the largest message, GB/s.
    NcclMultiNodeBusbw,
    /// `ib_write_bw` average bandwidth per rail at 8 MiB, Gb/s.
    RdmaWrite,
    /// nvbandwidth host→device and device→host copy per GPU, GB/s.
    NvbandwidthHostDevice,
    /// nvbandwidth device→device copy per GPU pair, GB/s.
    NvbandwidthDeviceDevice,
}

impl Figure {
    pub fn unit(self) -> &'static str {
        match self {
            Figure::RdmaWrite => "Gb/s",
            _ => "GB/s",
        }
    }

    /// The blueprint field that overrides the default.
    pub fn field(self) -> &'static str {
        match self {
            Figure::NcclAllReduceBusbw => "acceptance.thresholds.ncclAllReduceBusbwGBps",
            Figure::NcclMultiNodeBusbw => "acceptance.thresholds.ncclMultiNodeBusbwGBps",
            Figure::RdmaWrite => "acceptance.thresholds.rdmaWriteGbps",
            Figure::NvbandwidthHostDevice => "acceptance.thresholds.nvbandwidthHostDeviceGBps",
            Figure::NvbandwidthDeviceDevice => "acceptance.thresholds.nvbandwidthDeviceDeviceGBps",
        }
    }
}

/// What of the blueprint the defaults depend on.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub vendor: Option<Vendor>,
    pub model: String,
    pub gpus: u32,
    pub nvswitch: bool,
    pub gpu_links: bool,
    pub pcie: (u8, u8),
    /// Compute rails with RDMA: (link layer, speed Gb/s, count).
    pub rails: Vec<(LinkLayer, u32, u32)>,
}

impl Topology {
    pub fn of(blueprint: &Spec) -> Self {
        let acc = blueprint.accelerators.as_ref();
        Topology {
            vendor: acc.map(|a| a.vendor),
            model: acc.map(|a| a.model.to_string()).unwrap_or_default(),
            gpus: acc.map_or(0, |a| a.count),
            nvswitch: acc.is_some_and(|a| a.interconnect.nvswitch),
            gpu_links: acc.is_some_and(|a| a.interconnect.gpu_links),
            pcie: acc.map_or((0, 0), |a| (a.pcie.generation.get(), a.pcie.width.get())),
            rails: blueprint
                .network
                .nics
                .iter()
                .filter(|n| n.rdma && n.role == crate::blueprint::model::NicRole::Compute)
                .map(|n| (n.link_layer, n.speed_gbps, n.count))
                .collect(),
        }
    }

    /// Total RDMA rails.
    pub fn rail_count(&self) -> u32 {
        self.rails.iter().map(|r| r.2).sum()
    }

    fn model_is(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.model.eq_ignore_ascii_case(n))
    }
}

/// One default: a figure, the topology it holds for, its value and where it comes from.
pub struct Default {
    pub figure: Figure,
    /// The topology, in words (README, reports).
    pub when: &'static str,
    pub matches: fn(&Topology) -> bool,
    pub value: fn(&Topology) -> f64,
    pub source: &'static str,
}

const NHC: &str = "github.com/Azure/azurehpc-health-checks";

#[rustfmt::skip]
pub const DEFAULTS: &[Default] = &[
    Default { figure: Figure::NcclAllReduceBusbw, when: "8× NVIDIA H100 SXM, NVSwitch", matches: |t| t.model_is(&["H100 SXM"]) && t.nvswitch && t.gpus == 8, value: |_| 460.0,
        source: "Azure NHC conf/nd96isr_h100_v5.conf: check_nccl_allreduce 460.0 ... 16G (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::NcclAllReduceBusbw, when: "8× NVIDIA H200 SXM, NVSwitch", matches: |t| t.model_is(&["H200 SXM"]) && t.nvswitch && t.gpus == 8, value: |_| 431.0,
        source: "Azure NHC conf/nd96isr_h200_v5.conf: check_nccl_allreduce 431.0 1 16G (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::NcclAllReduceBusbw, when: "8× NVIDIA A100 SXM, NVSwitch", matches: |t| t.model_is(&["A100 SXM"]) && t.nvswitch && t.gpus == 8, value: |_| 228.0,
        source: "Azure NHC conf/nd96asr_v4.conf: check_nccl_allreduce 228.0 ... 8G (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::NcclAllReduceBusbw, when: "4× NVIDIA GB200", matches: |t| t.model_is(&["GB200"]) && t.gpus == 4, value: |_| 432.0,
        source: "Azure NHC conf/nd128isr_ndr_gb200_v6.conf: check_nccl_allreduce 432.0 1 16G (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::NcclAllReduceBusbw, when: "8× AMD MI300X (RCCL)", matches: |t| t.model_is(&["MI300X"]) && t.gpus == 8, value: |_| 314.0,
        source: "Azure NHC conf/nd96isr_mi300x_v5.conf: check_rccl_allreduce 314 1 16G (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::RdmaWrite, when: "InfiniBand NDR (400 Gb/s) rails", matches: |t| t.rails.iter().any(|r| r.0 == LinkLayer::Infiniband && r.1 == 400), value: |_| 375.0,
        source: "Azure NHC conf/nd96isr_h100_v5.conf: check_ib_bw_gdr 375, measured by customTests/azure_ib_write_bw_gdr.nhc as ib_write_bw -s 8388608 --report_gbits --use_cuda (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::RdmaWrite, when: "InfiniBand HDR (200 Gb/s) rails", matches: |t| t.rails.iter().any(|r| r.0 == LinkLayer::Infiniband && r.1 == 200), value: |_| 185.0,
        source: "Azure NHC conf/nd96asr_v4.conf: check_ib_bw_gdr 185.0 (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::RdmaWrite, when: "any other RDMA rail: 90 % of its line rate", matches: |t| !t.rails.is_empty(), value: |t| t.rails.iter().map(|r| r.1).min().unwrap_or(0) as f64 * 0.9,
        source: "90 % of the rail's speedGbps: the margin of Azure NHC conf/nd96isr_h200_v5.conf (check_ib_bw_gdr 360 on 400 Gb/s NDR) (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::NvbandwidthHostDevice, when: "NVIDIA GPU on PCIe Gen5 x16", matches: |t| t.vendor == Some(Vendor::Nvidia) && t.pcie == (5, 16), value: |_| 48.0,
        source: "Azure NHC conf/nd96isr_h200_v5.conf: check_gpu_bw 48 335 (host_to_device/device_to_host_memcpy_ce of nvbandwidth, customTests/azure_gpu_bandwidth.nhc) (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::NvbandwidthHostDevice, when: "NVIDIA GPU on PCIe Gen4 x16", matches: |t| t.vendor == Some(Vendor::Nvidia) && t.pcie == (4, 16), value: |_| 23.0,
        source: "Azure NHC README: check_gpu_bandwidth 23 GB/s on nd96asr_v4 and nd96amsr_a100_v4 (github.com/Azure/azurehpc-health-checks)" },
    Default { figure: Figure::NvbandwidthDeviceDevice, when: "NVIDIA H100/H200 SXM, NVSwitch", matches: |t| t.model_is(&["H100 SXM", "H200 SXM"]) && t.nvswitch, value: |_| 335.0,
        source: "Azure NHC conf/nd96isr_h200_v5.conf: check_gpu_bw 48 335 (device_to_device_memcpy_read_ce of nvbandwidth) (github.com/Azure/azurehpc-health-checks)" },
];

/// A threshold in force and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub value: f64,
    pub unit: &'static str,
    /// The blueprint field, or the cited default.
    pub source: String,
}

/// The threshold of `figure`: the blueprint's override, else the first default that fits.
pub fn resolve(figure: Figure, topology: &Topology, overridden: Option<f64>) -> Option<Threshold> {
    if let Some(value) = overridden {
        return Some(Threshold {
            value,
            unit: figure.unit(),
            source: format!("blueprint {}", figure.field()),
        });
    }
    DEFAULTS
        .iter()
        .find(|d| d.figure == figure && (d.matches)(topology))
        .map(|d| Threshold {
            value: (d.value)(topology),
            unit: figure.unit(),
            source: format!("default for {}: {}", d.when, d.source),
        })
}

/// Where the defaults come from (for `--help` and the README).
pub fn source_note() -> &'static str {
    NHC
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(model: &str, gpus: u32, nvswitch: bool, rails: Vec<(LinkLayer, u32, u32)>) -> Topology {
        Topology {
            vendor: Some(if model.starts_with("MI") {
                Vendor::Amd
            } else {
                Vendor::Nvidia
            }),
            model: model.into(),
            gpus,
            nvswitch,
            gpu_links: nvswitch,
            pcie: (5, 16),
            rails,
        }
    }

    #[test]
    fn defaults_follow_the_topology() {
        let h100 = topo("H100 SXM", 8, true, vec![(LinkLayer::Infiniband, 400, 8)]);
        assert_eq!(
            resolve(Figure::NcclAllReduceBusbw, &h100, None)
                .unwrap()
                .value,
            460.0
        );
        assert_eq!(
            resolve(Figure::RdmaWrite, &h100, None).unwrap().value,
            375.0
        );
        assert_eq!(
            resolve(Figure::NvbandwidthDeviceDevice, &h100, None)
                .unwrap()
                .value,
            335.0
        );
        let roce = topo("MI300X", 8, false, vec![(LinkLayer::Ethernet, 400, 8)]);
        assert_eq!(
            resolve(Figure::NcclAllReduceBusbw, &roce, None)
                .unwrap()
                .value,
            314.0
        );
        assert_eq!(
            resolve(Figure::RdmaWrite, &roce, None).unwrap().value,
            360.0
        );
        assert!(
            resolve(Figure::NvbandwidthHostDevice, &roce, None).is_none(),
            "nvbandwidth is NVIDIA's"
        );
        // 4 H100s are not the 8-GPU NVSwitch board the default was measured on.
        let four = topo("H100 SXM", 4, true, vec![]);
        assert!(resolve(Figure::NcclAllReduceBusbw, &four, None).is_none());
        let o = resolve(Figure::NcclAllReduceBusbw, &four, Some(200.0)).unwrap();
        assert_eq!(o.value, 200.0);
        assert!(o.source.contains("ncclAllReduceBusbwGBps"));
        for d in DEFAULTS {
            assert!(d.source.contains("azurehpc-health-checks"), "{}", d.when);
        }
    }
}
