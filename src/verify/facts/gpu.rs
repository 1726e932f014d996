//! GPUs and NVSwitches: the PCI view of each (link, upstream link, NUMA node, BARs) joined
//! with what the vendor tool says about it (`nvidia-smi -q -x`, `rocm-smi --json`), keyed
//! by PCI address.
//!
//! A GPU is a display-class (base class 0x03) or processing-accelerator (0x12, as MI300X
//! reports itself) device from NVIDIA or AMD; an NVSwitch is an
//! NVIDIA bridge-class device (0x0680). The vendor tool is run only when such a GPU is on
//! the bus (or its output was provided), and a GPU the tool lists but sysfs does not (or
//! the reverse) is kept, with the missing side `Unknown`: a GPU that vanished from one view
//! is exactly what verify must report.

use super::amd_ras::{self, AmdRas};
use super::nvidia_smi::{self, NvidiaGpu, NvidiaSmiLog};
use super::options::ToolOutput;
use super::pci::{PciDevice, VENDOR_AMD, VENDOR_NVIDIA};
use super::pci_address::PciAddress;
use super::rocm_smi::{self, AmdGpu, RocmSmiReport};
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use crate::verify::host::{Host, VendorCommand};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuVendor {
    Nvidia,
    Amd,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuFacts {
    pub gpus: Vec<Gpu>,
    pub nvswitches: Vec<PciDevice>,
    /// The nvidia-smi document, without its per-GPU part; `None` when there is no NVIDIA
    /// GPU and no output was provided.
    pub nvidia_smi: Option<Fact<NvidiaSmiSummary>>,
    /// The rocm-smi document, without its per-GPU part; `None` when not applicable.
    pub rocm_smi: Option<Fact<RocmSmiSummary>>,
    /// The amdgpu RAS state in sysfs of each AMD GPU on the bus.
    pub amd_ras: BTreeMap<PciAddress, Fact<AmdRas>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvidiaSmiSummary {
    pub dtd_version: Option<u32>,
    pub driver_version: Fact<Version>,
    pub cuda_version: Fact<Version>,
    pub attached_gpus: Fact<u32>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RocmSmiSummary {
    pub driver_version: Fact<Version>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gpu {
    pub address: PciAddress,
    pub vendor: GpuVendor,
    /// The sysfs view; `Unknown` for a GPU only the vendor tool lists.
    pub pci: Fact<PciDevice>,
    /// This GPU's entry in `nvidia-smi -q -x` (NVIDIA only).
    pub nvidia: Option<Fact<NvidiaGpu>>,
    /// This GPU's entry in `rocm-smi --json` (AMD only).
    pub amd: Option<Fact<AmdGpu>>,
}

pub(super) fn collect(
    host: &dyn Host,
    pci: &Fact<Vec<PciDevice>>,
    nvidia_source: &ToolOutput,
    rocm_source: &ToolOutput,
    timeout: Duration,
) -> GpuFacts {
    let devices: &[PciDevice] = pci.known().map(Vec::as_slice).unwrap_or(&[]);
    let is_gpu = |d: &PciDevice, vendor| {
        d.vendor_is(vendor)
            && d.class
                .known()
                .is_some_and(|c| matches!(c >> 16, 0x03 | 0x12))
    };
    let nvidia_pci: Vec<&PciDevice> = devices
        .iter()
        .filter(|d| is_gpu(d, VENDOR_NVIDIA))
        .collect();
    let amd_pci: Vec<&PciDevice> = devices.iter().filter(|d| is_gpu(d, VENDOR_AMD)).collect();
    let nvswitches = devices
        .iter()
        .filter(|d| d.vendor_is(VENDOR_NVIDIA) && d.class_prefix() == Some(0x0680))
        .cloned()
        .collect();

    let nvidia_doc = tool_document(
        host,
        nvidia_source,
        !nvidia_pci.is_empty(),
        &VendorCommand::NvidiaSmiQueryXml,
        timeout,
        nvidia_smi::parse,
    );
    let rocm_doc = tool_document(
        host,
        rocm_source,
        !amd_pci.is_empty(),
        &VendorCommand::RocmSmiJson,
        timeout,
        rocm_smi::parse,
    );

    let mut gpus = join(
        GpuVendor::Nvidia,
        &nvidia_pci,
        nvidia_doc.as_ref(),
        |doc: &NvidiaSmiLog| {
            doc.gpus
                .iter()
                .map(|g| (g.bus_id.known().copied(), g.clone()))
                .collect()
        },
        |gpu, entry| gpu.nvidia = Some(entry),
    );
    gpus.extend(join(
        GpuVendor::Amd,
        &amd_pci,
        rocm_doc.as_ref(),
        |doc: &RocmSmiReport| {
            doc.gpus
                .iter()
                .map(|g| (g.bus_id.known().copied(), g.clone()))
                .collect()
        },
        |gpu, entry| gpu.amd = Some(entry),
    ));
    gpus.sort_by_key(|gpu| gpu.address);
    let amd_ras = amd_pci
        .iter()
        .map(|d| (d.address, amd_ras::collect(host, d.address)))
        .collect();

    GpuFacts {
        gpus,
        nvswitches,
        nvidia_smi: nvidia_doc.map(|doc| {
            doc.map(|doc| NvidiaSmiSummary {
                dtd_version: doc.dtd_version,
                driver_version: doc.driver_version,
                cuda_version: doc.cuda_version,
                attached_gpus: doc.attached_gpus,
                warnings: doc.warnings,
            })
        }),
        rocm_smi: rocm_doc.map(|doc| {
            doc.map(|doc| RocmSmiSummary {
                driver_version: doc.driver_version,
            })
        }),
        amd_ras,
    }
}

/// The parsed tool document: from the provided text, or by running the tool when a GPU of
/// its vendor is present. `None` when it does not apply.
fn tool_document<T>(
    host: &dyn Host,
    source: &ToolOutput,
    gpus_present: bool,
    command: &VendorCommand,
    timeout: Duration,
    parse: fn(&str) -> Result<T, String>,
) -> Option<Fact<T>> {
    let text = match source {
        ToolOutput::Provided(text) => Fact::Known(text.clone()),
        ToolOutput::Skip if gpus_present => Fact::unknown(format!(
            "{} was not run (skipped by the caller)",
            command.program_name()
        )),
        ToolOutput::Run if gpus_present => {
            Fact::from(host.run(command, timeout)).and_then(|output| {
                if output.success() {
                    Fact::Known(output.stdout_text())
                } else {
                    Fact::unknown(format!("{command} {}", output.failure_summary()))
                }
            })
        }
        ToolOutput::Skip | ToolOutput::Run => return None,
    };
    Some(text.and_then(|text| match parse(&text) {
        Ok(doc) => Fact::Known(doc),
        Err(why) => Fact::unknown(why),
    }))
}

/// Joins sysfs GPUs with a tool's per-GPU entries by PCI address.
fn join<D, E: Clone>(
    vendor: GpuVendor,
    pci: &[&PciDevice],
    doc: Option<&Fact<D>>,
    entries: impl Fn(&D) -> Vec<(Option<PciAddress>, E)>,
    attach: impl Fn(&mut Gpu, Fact<E>),
) -> Vec<Gpu> {
    let tool = match vendor {
        GpuVendor::Nvidia => "nvidia-smi",
        GpuVendor::Amd => "rocm-smi",
    };
    let listed: Vec<(Option<PciAddress>, E)> = match doc {
        Some(Fact::Known(doc)) => entries(doc),
        _ => Vec::new(),
    };
    let mut gpus = Vec::new();
    let mut seen = BTreeSet::new();
    for device in pci {
        let mut gpu = Gpu {
            address: device.address,
            vendor,
            pci: Fact::Known((*device).clone()),
            nvidia: None,
            amd: None,
        };
        let entry = match doc {
            None => None,
            Some(Fact::Unknown { reason }) => Some(Fact::unknown(reason.clone())),
            Some(Fact::Known(_)) => {
                let mut matching = listed
                    .iter()
                    .filter(|(address, _)| *address == Some(device.address));
                Some(match (matching.next(), matching.count()) {
                    (Some((_, entry)), 0) => Fact::Known(entry.clone()),
                    (Some(_), more) => Fact::unknown(format!(
                        "{tool} lists {} {} times; which entry describes the GPU is ambiguous",
                        device.address,
                        more + 1
                    )),
                    (None, _) => Fact::unknown(format!("{tool} does not list {}", device.address)),
                })
            }
        };
        if let Some(entry) = entry {
            attach(&mut gpu, entry);
        }
        seen.insert(device.address);
        gpus.push(gpu);
    }
    for (address, entry) in listed {
        let Some(address) = address else { continue };
        if seen.insert(address) {
            let mut gpu = Gpu {
                address,
                vendor,
                pci: Fact::unknown(format!(
                    "{tool} lists {address} but /sys/bus/pci/devices has no such GPU"
                )),
                nvidia: None,
                amd: None,
            };
            attach(&mut gpu, Fact::Known(entry));
            gpus.push(gpu);
        }
    }
    gpus
}
