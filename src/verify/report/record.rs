//! The node acceptance record: what this node is (hardware SKU and serial, firmware, OS,
//! kernel, runtime, driver, GPUs, NICs, links), what the blueprint declares around it
//! (operator, device plugin or DRA), what verify found, and where the evidence is.
//!
//! Every machine value is a fact: known, or `{"unknown": "<reason>"}`. Written as YAML or
//! JSON by the file's extension, atomically.

use super::{Outcome, Report};
use crate::blueprint::model::{InjectionMode, RawBlueprint};
use crate::verify::checks::{CheckResult, Verdict};
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// `schema` of the record.
pub const SCHEMA: &str = "nodeimg.dev/acceptance-record/v1";

#[derive(Debug, Clone, Serialize)]
pub struct AcceptanceRecord {
    pub schema: String,
    pub created_at: String,
    pub nodeimg_version: String,
    pub hostname: Fact<String>,
    pub blueprint: super::BlueprintRef,
    pub hardware: Hardware,
    pub firmware: Firmware,
    pub os: Os,
    pub runtime: Runtime,
    pub gpu: GpuSection,
    pub device_injection: DeviceInjection,
    pub network: Network,
    pub interconnect: Interconnect,
    pub diagnostics: Diagnostics,
    pub result: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub break_glass: Option<String>,
    /// The capture kept for this run, when one was written.
    pub evidence: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Hardware {
    pub vendor: Fact<String>,
    pub product: Fact<String>,
    pub sku: Fact<String>,
    pub serial: Fact<String>,
    pub board: Fact<String>,
    pub board_serial: Fact<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Firmware {
    pub bios_vendor: Fact<String>,
    pub bios_version: Fact<String>,
    pub bios_date: Fact<String>,
    pub bmc: Fact<String>,
    /// VBIOS per GPU address.
    pub gpu_vbios: BTreeMap<String, Fact<String>>,
    /// Firmware per RDMA device.
    pub nic: BTreeMap<String, Fact<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Os {
    pub pretty_name: Fact<String>,
    pub kernel: Fact<String>,
    pub cmdline: Fact<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Runtime {
    pub containerd: Fact<String>,
    pub kubelet: Fact<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GpuDevice {
    pub address: String,
    pub name: Fact<String>,
    pub uuid: Fact<String>,
    pub serial: Fact<String>,
    /// Every check on this GPU passed.
    pub healthy: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct GpuSection {
    pub count: usize,
    pub driver: Fact<String>,
    pub cuda: Fact<String>,
    pub devices: Vec<GpuDevice>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceInjection {
    /// `device-plugin`, `dra` or `none`, as the blueprint declares.
    pub mode: String,
    pub version: Option<String>,
    pub operator: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NicEntry {
    pub name: String,
    pub driver: Fact<Option<String>>,
    pub speed_mbps: Fact<u32>,
    pub mtu: Fact<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Network {
    pub nics: Vec<NicEntry>,
    /// Versions of the RDMA / NIC kernel modules loaded (`mlx5_core`, `mlx5_ib`, ...).
    pub rdma_driver: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Interconnect {
    /// `address: xW @ speed (max)` for each GPU.
    pub pcie: BTreeMap<String, String>,
    pub nvswitches: usize,
    pub fabric_manager: Fact<String>,
    pub nvlink: Fact<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diagnostics {
    pub phase: String,
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub unreadable: usize,
    pub warnings: usize,
    /// Names of the checks that did not pass.
    pub not_passed: Vec<String>,
}

impl AcceptanceRecord {
    pub fn new(
        blueprint: &RawBlueprint,
        facts: &Facts,
        report: &Report,
        evidence: Option<&Path>,
    ) -> Self {
        let dmi = &facts.dmi;
        let gpus = &facts.gpus.gpus;
        let devices = gpus
            .iter()
            .map(|gpu| {
                let address = gpu.address.to_string();
                let entry =
                    |get: fn(&crate::verify::facts::nvidia_smi::NvidiaGpu) -> Fact<String>| {
                        match &gpu.nvidia {
                            Some(Fact::Known(n)) => get(n),
                            Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
                            None => match &gpu.amd {
                                Some(Fact::Known(_)) | None => {
                                    Fact::unknown("not reported by nvidia-smi")
                                }
                                Some(Fact::Unknown { reason }) => Fact::unknown(reason.clone()),
                            },
                        }
                    };
                let amd =
                    |get: fn(&crate::verify::facts::rocm_smi::AmdGpu) -> Fact<String>| match &gpu
                        .amd
                    {
                        Some(Fact::Known(a)) => Some(get(a)),
                        _ => None,
                    };
                GpuDevice {
                    healthy: report
                        .results
                        .iter()
                        .filter(|r| r.subject.as_deref() == Some(address.as_str()))
                        .all(|r| r.verdict == Verdict::Pass),
                    name: amd(|a| a.product_name.clone())
                        .unwrap_or_else(|| entry(|n| n.product_name.clone())),
                    uuid: amd(|a| a.unique_id.clone()).unwrap_or_else(|| entry(|n| n.uuid.clone())),
                    serial: amd(|a| a.serial.clone())
                        .unwrap_or_else(|| entry(|n| n.serial.clone())),
                    address,
                }
            })
            .collect();
        let gpu_vbios = gpus
            .iter()
            .map(|gpu| {
                let vbios = match (&gpu.nvidia, &gpu.amd) {
                    (Some(n), _) => n.clone().and_then(|n| n.vbios_version),
                    (None, Some(a)) => a.clone().and_then(|a| a.vbios_version),
                    (None, None) => Fact::unknown("no vendor tool output"),
                };
                (gpu.address.to_string(), vbios)
            })
            .collect();
        let nic_firmware = match &facts.rdma_devices {
            Fact::Known(devices) => devices
                .iter()
                .map(|d| (d.name.clone(), d.fw_ver.clone()))
                .collect(),
            Fact::Unknown { reason } => {
                BTreeMap::from([("*".to_owned(), Fact::unknown(reason.clone()))])
            }
        };
        let driver = match (&facts.gpus.nvidia_smi, &facts.gpus.rocm_smi) {
            (Some(_), _) | (None, None) => facts.modules.nvidia_driver.clone().map(|d| d.version),
            (None, Some(rocm)) => rocm.clone().and_then(|r| r.driver_version),
        };
        let cuda = match &facts.gpus.nvidia_smi {
            Some(summary) => summary.clone().and_then(|s| s.cuda_version),
            None => Fact::unknown("no NVIDIA GPU"),
        };
        let runtime = facts.runtime.as_ref();
        let pcie = gpus
            .iter()
            .filter_map(|gpu| {
                let device = gpu.pci.known()?;
                let link = &device.link;
                let width = link
                    .current_width
                    .known()
                    .map_or("?".to_owned(), |w| format!("x{w}"));
                let max = link
                    .max_speed
                    .known()
                    .map_or("?".to_owned(), |s| format!("{} GT/s", s.gt_per_s));
                let now = link
                    .current_speed
                    .known()
                    .map_or("?".to_owned(), |s| format!("{} GT/s", s.gt_per_s));
                Some((
                    gpu.address.to_string(),
                    format!("{width} @ {now} (max {max})"),
                ))
            })
            .collect();
        let injection = &blueprint.kubernetes.device_injection;
        let counts = &report.counts;
        AcceptanceRecord {
            schema: SCHEMA.to_owned(),
            created_at: report.started_at.clone(),
            nodeimg_version: report.nodeimg_version.clone(),
            hostname: facts.hostname.clone(),
            blueprint: report.blueprint.clone(),
            hardware: Hardware {
                vendor: dmi.sys_vendor.clone(),
                product: dmi.product_name.clone(),
                sku: dmi.product_sku.clone(),
                serial: dmi.product_serial.clone(),
                board: dmi.board_name.clone(),
                board_serial: dmi.board_serial.clone(),
            },
            firmware: Firmware {
                bios_vendor: dmi.bios_vendor.clone(),
                bios_version: dmi.bios_version.clone(),
                bios_date: dmi.bios_date.clone(),
                bmc: Fact::unknown("not readable from the host (needs IPMI or Redfish)"),
                gpu_vbios,
                nic: nic_firmware,
            },
            os: Os {
                pretty_name: facts.os.clone().and_then(|os| os.pretty_name),
                kernel: facts.kernel.release.clone(),
                cmdline: facts.kernel.cmdline.clone().map(|c| c.raw),
            },
            runtime: Runtime {
                containerd: runtime.clone().and_then(|r| r.containerd_version.clone()),
                kubelet: runtime.clone().and_then(|r| r.kubelet_version.clone()),
            },
            gpu: GpuSection {
                count: gpus.iter().filter(|g| g.pci.is_known()).count(),
                driver,
                cuda,
                devices,
            },
            device_injection: DeviceInjection {
                mode: match injection.mode {
                    InjectionMode::None => "none",
                    InjectionMode::DevicePlugin => "device-plugin",
                    InjectionMode::Dra => "dra",
                }
                .to_owned(),
                version: injection.version.as_ref().map(ToString::to_string),
                operator: blueprint
                    .accelerators
                    .as_ref()
                    .and_then(|a| a.operator.as_ref())
                    .map(|o| {
                        let name = serde_json::to_value(o.name)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default();
                        format!("{name} {}", o.version)
                    }),
            },
            network: Network {
                nics: facts
                    .nics
                    .known()
                    .map(|nics| {
                        nics.iter()
                            .filter(|n| n.pci_address.known().is_some_and(Option::is_some))
                            .map(|n| NicEntry {
                                name: n.name.clone(),
                                driver: n.driver.clone(),
                                speed_mbps: n.speed_mbps.clone(),
                                mtu: n.mtu.clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                rdma_driver: facts
                    .modules
                    .versions
                    .known()
                    .map(|v| {
                        v.iter()
                            .filter(|(name, _)| {
                                name.starts_with("mlx")
                                    || name.starts_with("ib_")
                                    || name.starts_with("rdma")
                                    || name.as_str() == "nvidia_peermem"
                            })
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            interconnect: Interconnect {
                pcie,
                nvswitches: facts.gpus.nvswitches.len(),
                fabric_manager: runtime.and_then(|r| {
                    r.units
                        .get("nvidia-fabricmanager")
                        .cloned()
                        .unwrap_or_else(|| Fact::unknown("not collected"))
                }),
                nvlink: Fact::unknown("NVLink link state is not collected by this version"),
            },
            diagnostics: Diagnostics {
                phase: report.phase.clone(),
                total: counts.total,
                passed: counts.passed,
                failed: counts.failed,
                unreadable: counts.errors,
                warnings: counts.warnings,
                not_passed: report
                    .results
                    .iter()
                    .filter(|r| r.verdict != Verdict::Pass)
                    .map(CheckResult::name)
                    .collect(),
            },
            result: report.outcome,
            break_glass: report.break_glass.clone(),
            evidence: evidence.map(|p| p.display().to_string()),
        }
    }

    /// YAML for `.yaml`/`.yml` files, JSON otherwise.
    pub fn render_for(&self, path: &Path) -> Result<String, String> {
        let yaml = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
        if yaml {
            serde_yaml::to_string(self).map_err(|e| e.to_string())
        } else {
            serde_json::to_string_pretty(self)
                .map(|mut s| {
                    s.push('\n');
                    s
                })
                .map_err(|e| e.to_string())
        }
    }
}
