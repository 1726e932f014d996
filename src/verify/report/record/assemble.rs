//! Assembling a record from what `nodeimg verify` read and judged: the node's facts into
//! its sections, the checks into layer 1, every later layer marked not run; and setting
//! layer 2 from `verify --phase cluster`'s findings.

use super::layers::{Baseline, Finding, Kubernetes, Layer, LayerResult, Layers, Verdict};
use super::node::{
    AcceptanceRecord, BlueprintIdentity, CheckAction, DeviceInjection, Diagnostics, Firmware,
    GpuDevice, GpuSection, Hardware, Interconnect, Network, NicEntry, Os, RecordResult, Runtime,
};
use super::wire::{Run, later};
use super::{LATER, SCHEMA};
use crate::blueprint::Spec;
use crate::blueprint::model::InjectionMode;
use crate::verify::checks::{CheckResult, Verdict as CheckVerdict};
use crate::verify::fact::Fact;
use crate::verify::facts::Facts;
use crate::verify::report::{Outcome, Report};
use std::collections::BTreeMap;
use std::path::Path;

impl AcceptanceRecord {
    pub fn new(blueprint: &Spec, facts: &Facts, report: &Report, evidence: Option<&Path>) -> Self {
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
                        .all(|r| r.verdict == CheckVerdict::Pass),
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
                (gpu.address.to_string(), vbios.map(|v| v.to_string()))
            })
            .collect();
        let nic_firmware = match &facts.rdma_devices {
            Fact::Known(devices) => devices
                .iter()
                .map(|d| (d.name.clone(), d.fw_ver.clone().map(|v| v.to_string())))
                .collect(),
            Fact::Unknown { reason } => {
                BTreeMap::from([("*".to_owned(), Fact::unknown(reason.clone()))])
            }
        };
        let driver = match (&facts.gpus.nvidia_smi, &facts.gpus.rocm_smi) {
            (Some(_), _) | (None, None) => facts.modules.nvidia_driver.clone().map(|d| d.version),
            (None, Some(rocm)) => rocm.clone().and_then(|r| r.driver_version),
        }
        .map(|v| v.to_string());
        let cuda = match &facts.gpus.nvidia_smi {
            Some(summary) => summary.clone().and_then(|s| s.cuda_version),
            None => Fact::unknown("no NVIDIA GPU"),
        }
        .map(|v| v.to_string());
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
        let gpu_links = blueprint
            .accelerators
            .as_ref()
            .is_some_and(|a| a.interconnect.gpu_links);
        let layer1 = match report.outcome {
            Outcome::Pass => Verdict::Pass,
            Outcome::Fail | Outcome::Overridden => Verdict::Fail,
        };
        AcceptanceRecord {
            schema: SCHEMA.to_owned(),
            created_at: report.started_at.clone(),
            nodeimg_version: report.nodeimg_version.clone(),
            hostname: facts.hostname.clone(),
            image: super::node::ImageIdentity::of(facts),
            blueprint: BlueprintIdentity::from(&report.blueprint),
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
                bmc: facts.bmc_firmware.version.clone(),
                gpu_vbios,
                nic: nic_firmware,
            },
            os: Os {
                pretty_name: facts.os.clone().and_then(|os| os.pretty_name),
                kernel: facts.kernel.release.clone(),
                cmdline: facts.kernel.cmdline.clone().map(|c| c.raw),
            },
            runtime: Runtime {
                containerd: runtime
                    .as_ref()
                    .and_then(|r| r.containerd_version.as_ref().map(ToString::to_string)),
                kubelet: runtime
                    .as_ref()
                    .and_then(|r| r.kubelet_version.as_ref().map(ToString::to_string)),
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
                nvlink: if gpu_links {
                    Fact::unknown(format!(
                        "measured by layer 4 (nvbandwidth device to device): {LATER}"
                    ))
                } else {
                    Fact::unknown(
                        "no GPU links: the blueprint declares none (accelerators.interconnect.gpuLinks)",
                    )
                },
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
                    .filter(|r| r.verdict != CheckVerdict::Pass)
                    .map(CheckResult::name)
                    .collect(),
                actions: report
                    .results
                    .iter()
                    .filter(|r| r.verdict != CheckVerdict::Pass)
                    .map(|r| CheckAction {
                        check: r.name(),
                        fault: r.fault,
                        action: r.action,
                        observed: r.observed.clone(),
                    })
                    .collect(),
            },
            layers: Layers {
                hardware_driver: Run::Done(LayerResult {
                    result: layer1,
                    checks: counts.total,
                    not_passed: report
                        .results
                        .iter()
                        .filter(|r| r.blocks())
                        .map(CheckResult::name)
                        .collect(),
                    at: report.started_at.clone(),
                }),
                kubernetes: later(),
                device_container: later(),
                interconnect: later(),
                framework: later(),
            },
            kubernetes: later(),
            device_container: later(),
            dcgm: later(),
            baseline: Baseline::later(),
            training: later(),
            inference: later(),
            figures: BTreeMap::new(),
            findings: Vec::new(),
            result: match report.outcome {
                Outcome::Fail => RecordResult::Fail,
                Outcome::Overridden => RecordResult::Overridden,
                // Layer 1 alone never accepts a node: layers 2–5 are still to run.
                Outcome::Pass => RecordResult::Incomplete,
            },
            break_glass: report.break_glass.clone(),
            evidence: evidence.map(|p| p.display().to_string()),
        }
    }

    /// Writes layer 2 as `nodeimg verify --phase cluster` judged it: the Node's section,
    /// the layer's verdict and its findings (replacing earlier layer-2 findings; those of
    /// layers 3–5 stay), then the overall result again. Layer 1 stays as it is.
    pub fn set_kubernetes_layer(
        &mut self,
        kubernetes: Kubernetes,
        findings: Vec<Finding>,
        at: &str,
    ) {
        let verdict = match findings.iter().map(|f| f.verdict).min() {
            None | Some(Verdict::NotRun) => Verdict::Incomplete,
            Some(v) => v,
        };
        self.layers.kubernetes = Run::Done(LayerResult {
            result: verdict,
            checks: findings.len(),
            not_passed: findings
                .iter()
                .filter(|f| f.verdict != Verdict::Pass)
                .map(Finding::name)
                .collect(),
            at: at.to_owned(),
        });
        self.kubernetes = Run::Done(kubernetes);
        self.findings.retain(|f| f.layer != Layer::Kubernetes);
        self.findings.extend(findings);
        let layer1 = self.layers.hardware_driver.done().map(|l| l.result);
        let later = self.findings.iter().map(|f| f.verdict).min();
        // Layers 3-5 that `accept` has not judged yet keep the node from passing.
        let pending = [
            &self.layers.device_container,
            &self.layers.interconnect,
            &self.layers.framework,
        ]
        .iter()
        .any(|l| matches!(l, Run::NotRun { not_run } if not_run == LATER));
        let overridden = self.result == RecordResult::Overridden;
        self.result = match (layer1, later) {
            (Some(Verdict::Fail), _) if !overridden => RecordResult::Fail,
            (_, Some(Verdict::Fail)) => RecordResult::Fail,
            (Some(Verdict::Fail), _) => RecordResult::Overridden,
            (None, _) | (_, Some(Verdict::Incomplete | Verdict::NotRun)) => {
                RecordResult::Incomplete
            }
            _ if pending || verdict != Verdict::Pass => RecordResult::Incomplete,
            _ => RecordResult::Pass,
        };
    }
}
