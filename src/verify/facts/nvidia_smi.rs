//! `nvidia-smi -q -x` output, parsed across driver versions (DTD v8 to v13).
//!
//! NVIDIA says the output "is not guaranteed to be backwards compatible", and it is not:
//! `clocks_throttle_reasons` became `clocks_event_reasons` (535), `power_readings` split into
//! `gpu_power_readings`/`module_power_readings` (535) and `power_draw` into
//! `average_power_draw`/`instant_power_draw` (570), ECC counters went from
//! `single_bit`/`double_bit` per memory to `sram_*`/`dram_*` (Ampere datacenter, 515) and
//! `sram_uncorrectable` split into `_parity` and `_secded` (570), `remapped_rows` is the text
//! `N/A` before Ampere, `gpu_reset_status` says "Requested functionality has been
//! deprecated" (575) and is gone in 590. Old drivers wrote a 4-digit PCI domain, new ones 8.
//! Trimmed captures report more `attached_gpus` than they hold `<gpu>` elements.
//!
//! So every value is looked up by element path, sentinel strings (`N/A`, `[N/A]`,
//! `Not Found`, `[Not Supported]`, the deprecation sentence) become `Unknown` with the
//! element name, units are stripped once (`45 C`, `27.22 W`, `16x`), and an alternative
//! path is tried where an element was renamed. The XML is read with a real parser
//! (roxmltree); the external DTD named in the DOCTYPE is allowed but never fetched.

use super::pci_address::PciAddress;
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use roxmltree::{Document, Node, ParsingOptions};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvidiaSmiLog {
    /// `N` of `nvsmi_device_vN.dtd` in the DOCTYPE; `None` when there is no DOCTYPE.
    pub dtd_version: Option<u32>,
    pub driver_version: Fact<Version>,
    /// Unknown (`Not Found`) when no CUDA driver library is installed.
    pub cuda_version: Fact<Version>,
    pub attached_gpus: Fact<u32>,
    pub gpus: Vec<NvidiaGpu>,
    /// Inconsistencies in the document itself (more GPUs attached than listed, ...).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvidiaGpu {
    /// `pci/pci_bus_id`, or the `<gpu id=...>` attribute when that is missing.
    pub bus_id: Fact<PciAddress>,
    pub product_name: Fact<String>,
    pub product_architecture: Fact<String>,
    pub serial: Fact<String>,
    pub uuid: Fact<String>,
    pub vbios_version: Fact<Version>,
    pub persistence_mode: Fact<bool>,
    pub mig: Mig,
    pub ecc_mode: EccMode,
    pub ecc_errors: EccErrors,
    pub retired_pages: RetiredPages,
    pub remapped_rows: Fact<RemappedRows>,
    pub pcie: NvidiaPcie,
    pub memory_total_mib: Fact<u64>,
    pub bar1_total_mib: Fact<u64>,
    pub performance_state: Fact<String>,
    pub temperature_c: Fact<f64>,
    pub memory_temperature_c: Fact<f64>,
    pub power_draw_w: Fact<f64>,
    pub power_limit_w: Fact<f64>,
    /// Clock event (throttle) reasons by name without prefix, `true` when active.
    pub clock_event_reasons: Fact<BTreeMap<String, bool>>,
    /// `clocks_event_reasons_counters` (535+): microseconds each reason held the clocks
    /// down since the driver loaded, by name without prefix (`hw_therm_slowdown`,
    /// `hw_power_brake`, `sw_power_cap`, ...).
    pub clock_event_counters_us: Fact<BTreeMap<String, u64>>,
    pub temperature_limits: TemperatureLimits,
    pub fabric: Fabric,
    pub reset_required: Fact<bool>,
    /// `gpu_reset_status/drain_and_reset_recommended` (535 to 575).
    pub drain_and_reset_recommended: Fact<bool>,
    /// `gpu_recovery_action` (575+): `None`, `Reset`, `Reboot`, `Drain and Reset`, ...
    pub recovery_action: Fact<String>,
    /// `ecc_errors/aggregate/sram_threshold_exceeded` (570+): SRAM errors crossed the
    /// threshold at which NVIDIA asks for the board to be replaced.
    pub sram_threshold_exceeded: Fact<bool>,
    /// `ecc_errors/{channel,tpc}_repair_pending` (590+): a repair waits for a reset.
    pub repair_pending: Fact<bool>,
    /// `ecc_errors/unrepairable_memory` (590+).
    pub unrepairable_memory: Fact<bool>,
}

/// The GPU's temperature limits, as the driver reports them: margins to the limit on
/// drivers that report T.Limit (`gpu_temp_tlimit`: degrees left before the limit;
/// `gpu_temp_slow_tlimit_threshold`, `gpu_temp_max_tlimit_threshold`: the margin at which
/// the GPU slows down and shuts down, both negative), absolute thresholds on older ones
/// (`gpu_temp_slow_threshold`, `gpu_temp_max_threshold`), and the memory's
/// (`gpu_temp_max_mem_threshold`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemperatureLimits {
    pub tlimit_margin_c: Fact<f64>,
    pub slowdown_margin_c: Fact<f64>,
    pub shutdown_margin_c: Fact<f64>,
    pub slowdown_c: Fact<f64>,
    pub shutdown_c: Fact<f64>,
    pub memory_max_c: Fact<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mig {
    pub current: Fact<bool>,
    pub pending: Fact<bool>,
    /// MIG devices listed (0 when `<mig_devices>None</mig_devices>`).
    pub devices: Fact<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EccMode {
    pub current: Fact<bool>,
    pub pending: Fact<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EccErrors {
    pub volatile: EccCounters,
    pub aggregate: EccCounters,
}

/// ECC counts of one scope, with totals that mean the same in both layouts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EccCounters {
    /// Single-bit total (old layout) or SRAM + DRAM correctable (new layout).
    pub correctable: Fact<u64>,
    /// Double-bit total (old layout) or SRAM + DRAM uncorrectable (new layout).
    pub uncorrectable: Fact<u64>,
    /// Every counter, by its element path below the scope (`dram_uncorrectable`,
    /// `single_bit/device_memory`).
    pub counters: BTreeMap<String, Fact<u64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetiredPages {
    pub single_bit: Fact<u64>,
    pub double_bit: Fact<u64>,
    pub pending: Fact<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemappedRows {
    pub correctable: Fact<u64>,
    pub uncorrectable: Fact<u64>,
    pub pending: Fact<bool>,
    pub failure: Fact<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvidiaPcie {
    pub current_gen: Fact<u32>,
    pub max_gen: Fact<u32>,
    pub current_width: Fact<u32>,
    pub max_width: Fact<u32>,
    pub replay_counter: Fact<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fabric {
    /// `Completed`, `In Progress`, `Not Started`, `Not Supported`...
    pub state: Fact<String>,
    pub status: Fact<String>,
}

/// Parses a whole `nvidia-smi -q -x` document.
pub fn parse(xml: &str) -> Result<NvidiaSmiLog, String> {
    // nvidia-smi names an external DTD and declares no entities of its own; one declared
    // internal entity referenced many times would expand to gigabytes, so none is accepted.
    if xml.contains("<!ENTITY") {
        return Err(
            "nvidia-smi XML: declares entities (<!ENTITY ...>), which nvidia-smi never does; refusing it"
                .to_owned(),
        );
    }
    let options = ParsingOptions {
        allow_dtd: true,
        // Two orders of magnitude above a 16-GPU document.
        nodes_limit: 1_000_000,
        ..ParsingOptions::default()
    };
    let doc =
        Document::parse_with_options(xml, options).map_err(|e| format!("nvidia-smi XML: {e}"))?;
    let root = doc.root_element();
    if !root.has_tag_name("nvidia_smi_log") {
        return Err(format!(
            "nvidia-smi XML: root element is <{}>, expected <nvidia_smi_log>",
            root.tag_name().name()
        ));
    }
    let gpus: Vec<NvidiaGpu> = root
        .children()
        .filter(|n| n.has_tag_name("gpu"))
        .map(parse_gpu)
        .collect();
    let attached_gpus = parsed(root, &["attached_gpus"], |s| {
        s.parse::<u32>().map_err(|e| e.to_string())
    });
    let mut warnings = Vec::new();
    if let Some(&attached) = attached_gpus.known()
        && attached as usize != gpus.len()
    {
        warnings.push(format!(
            "attached_gpus is {attached} but the document lists {} <gpu> elements",
            gpus.len()
        ));
    }
    Ok(NvidiaSmiLog {
        dtd_version: dtd_version(xml),
        driver_version: value(root, &["driver_version"]).version("<driver_version>"),
        cuda_version: value(root, &["cuda_version"]).version("<cuda_version>"),
        attached_gpus,
        gpus,
        warnings,
    })
}

/// The `N` of `nvsmi_device_vN.dtd` (roxmltree does not expose the DOCTYPE).
fn dtd_version(xml: &str) -> Option<u32> {
    let head = xml.get(..xml.len().min(512))?;
    let doctype = head.find("<!DOCTYPE")?;
    let rest = &head[doctype..];
    let start = rest.find("nvsmi_device_v")? + "nvsmi_device_v".len();
    let digits: String = rest[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn parse_gpu(gpu: Node) -> NvidiaGpu {
    let bus_id = match parsed(gpu, &["pci", "pci_bus_id"], PciAddress::parse) {
        Fact::Unknown { reason } => match gpu.attribute("id").map(PciAddress::parse) {
            Some(Ok(address)) => Fact::Known(address),
            _ => Fact::unknown(reason),
        },
        known => known,
    };
    NvidiaGpu {
        bus_id,
        product_name: value(gpu, &["product_name"]),
        product_architecture: value(gpu, &["product_architecture"]),
        serial: value(gpu, &["serial"]),
        uuid: value(gpu, &["uuid"]),
        vbios_version: value(gpu, &["vbios_version"]).version("<vbios_version>"),
        persistence_mode: parsed(gpu, &["persistence_mode"], enabled),
        mig: Mig {
            current: parsed(gpu, &["mig_mode", "current_mig"], enabled),
            pending: parsed(gpu, &["mig_mode", "pending_mig"], enabled),
            devices: mig_devices(gpu),
        },
        ecc_mode: EccMode {
            current: parsed(gpu, &["ecc_mode", "current_ecc"], enabled),
            pending: parsed(gpu, &["ecc_mode", "pending_ecc"], enabled),
        },
        ecc_errors: EccErrors {
            volatile: ecc_counters(gpu, "volatile"),
            aggregate: ecc_counters(gpu, "aggregate"),
        },
        retired_pages: RetiredPages {
            single_bit: parsed(
                gpu,
                &[
                    "retired_pages",
                    "multiple_single_bit_retirement",
                    "retired_count",
                ],
                count,
            ),
            double_bit: parsed(
                gpu,
                &["retired_pages", "double_bit_retirement", "retired_count"],
                count,
            ),
            pending: parsed(gpu, &["retired_pages", "pending_retirement"], yes_no),
        },
        remapped_rows: remapped_rows(gpu),
        pcie: NvidiaPcie {
            current_gen: parsed(
                gpu,
                &["pci", "pci_gpu_link_info", "pcie_gen", "current_link_gen"],
                small,
            ),
            max_gen: parsed(
                gpu,
                &["pci", "pci_gpu_link_info", "pcie_gen", "max_link_gen"],
                small,
            ),
            current_width: parsed(
                gpu,
                &[
                    "pci",
                    "pci_gpu_link_info",
                    "link_widths",
                    "current_link_width",
                ],
                link_width,
            ),
            max_width: parsed(
                gpu,
                &["pci", "pci_gpu_link_info", "link_widths", "max_link_width"],
                link_width,
            ),
            replay_counter: parsed(gpu, &["pci", "replay_counter"], count),
        },
        memory_total_mib: parsed(gpu, &["fb_memory_usage", "total"], |s| with_unit(s, "MiB")),
        bar1_total_mib: parsed(gpu, &["bar1_memory_usage", "total"], |s| {
            with_unit(s, "MiB")
        }),
        performance_state: value(gpu, &["performance_state"]),
        temperature_c: parsed(gpu, &["temperature", "gpu_temp"], |s| with_unit(s, "C")),
        memory_temperature_c: parsed(gpu, &["temperature", "memory_temp"], |s| with_unit(s, "C")),
        power_draw_w: first_known(
            gpu,
            &[
                &["gpu_power_readings", "power_draw"],
                &["gpu_power_readings", "instant_power_draw"],
                &["gpu_power_readings", "average_power_draw"],
                &["power_readings", "power_draw"],
            ],
            |s| with_unit(s, "W"),
        ),
        power_limit_w: first_known(
            gpu,
            &[
                &["gpu_power_readings", "current_power_limit"],
                &["power_readings", "enforced_power_limit"],
                &["power_readings", "power_limit"],
            ],
            |s| with_unit(s, "W"),
        ),
        clock_event_reasons: clock_event_reasons(gpu),
        clock_event_counters_us: clock_event_counters(gpu),
        temperature_limits: TemperatureLimits {
            tlimit_margin_c: parsed(gpu, &["temperature", "gpu_temp_tlimit"], celsius),
            slowdown_margin_c: parsed(
                gpu,
                &["temperature", "gpu_temp_slow_tlimit_threshold"],
                celsius,
            ),
            shutdown_margin_c: parsed(
                gpu,
                &["temperature", "gpu_temp_max_tlimit_threshold"],
                celsius,
            ),
            slowdown_c: parsed(gpu, &["temperature", "gpu_temp_slow_threshold"], celsius),
            shutdown_c: parsed(gpu, &["temperature", "gpu_temp_max_threshold"], celsius),
            memory_max_c: parsed(gpu, &["temperature", "gpu_temp_max_mem_threshold"], celsius),
        },
        fabric: Fabric {
            state: value(gpu, &["fabric", "state"]),
            status: value(gpu, &["fabric", "status"]),
        },
        reset_required: parsed(gpu, &["gpu_reset_status", "reset_required"], yes_no),
        drain_and_reset_recommended: parsed(
            gpu,
            &["gpu_reset_status", "drain_and_reset_recommended"],
            yes_no,
        ),
        recovery_action: value(gpu, &["gpu_recovery_action"]),
        sram_threshold_exceeded: parsed(
            gpu,
            &["ecc_errors", "aggregate", "sram_threshold_exceeded"],
            yes_no,
        ),
        repair_pending: any_yes(
            gpu,
            &[
                &["ecc_errors", "channel_repair_pending"],
                &["ecc_errors", "tpc_repair_pending"],
            ],
        ),
        unrepairable_memory: parsed(gpu, &["ecc_errors", "unrepairable_memory"], yes_no),
    }
}

fn mig_devices(gpu: Node) -> Fact<usize> {
    match find(gpu, &["mig_devices"]) {
        None => Fact::unknown("<mig_devices> absent from nvidia-smi output"),
        Some(node) => {
            let devices = node
                .children()
                .filter(|n| n.has_tag_name("mig_device"))
                .count();
            if devices > 0 {
                return Fact::Known(devices);
            }
            match text_of(node).as_deref() {
                Some("None") | None => Fact::Known(0),
                Some(other) => sentinel_or(other, "mig_devices")
                    .and_then(|s| Fact::unknown(format!("<mig_devices> holds {s:?}"))),
            }
        }
    }
}

fn ecc_counters(gpu: Node, scope: &str) -> EccCounters {
    let base = ["ecc_errors", scope];
    let Some(node) = find(gpu, &base) else {
        let reason = format!("<ecc_errors/{scope}> absent from nvidia-smi output");
        return EccCounters {
            correctable: Fact::unknown(reason.clone()),
            uncorrectable: Fact::unknown(reason),
            counters: BTreeMap::new(),
        };
    };
    let mut counters = BTreeMap::new();
    for child in node.children().filter(Node::is_element) {
        let name = child.tag_name().name();
        let grandchildren: Vec<Node> = child.children().filter(Node::is_element).collect();
        if grandchildren.is_empty() {
            if name == "sram_threshold_exceeded" {
                continue;
            }
            counters.insert(name.to_owned(), parsed(node, &[name], count));
        } else {
            for leaf in grandchildren {
                let leaf_name = leaf.tag_name().name();
                counters.insert(
                    format!("{name}/{leaf_name}"),
                    parsed(child, &[leaf_name], count),
                );
            }
        }
    }
    let get = |key: &str| counters.get(key).cloned();
    let sum = |keys: &[&str]| -> Fact<u64> {
        let mut total = 0u64;
        for key in keys {
            match get(key) {
                Some(Fact::Known(n)) => total = total.saturating_add(n),
                Some(Fact::Unknown { reason }) => return Fact::unknown(reason),
                None => return Fact::unknown(format!("<ecc_errors/{scope}/{key}> absent")),
            }
        }
        Fact::Known(total)
    };
    let (correctable, uncorrectable) = if counters.contains_key("single_bit/total") {
        (sum(&["single_bit/total"]), sum(&["double_bit/total"]))
    } else if counters.contains_key("sram_uncorrectable_parity") {
        (
            sum(&["sram_correctable", "dram_correctable"]),
            sum(&[
                "sram_uncorrectable_parity",
                "sram_uncorrectable_secded",
                "dram_uncorrectable",
            ]),
        )
    } else {
        (
            sum(&["sram_correctable", "dram_correctable"]),
            sum(&["sram_uncorrectable", "dram_uncorrectable"]),
        )
    };
    EccCounters {
        correctable,
        uncorrectable,
        counters,
    }
}

fn remapped_rows(gpu: Node) -> Fact<RemappedRows> {
    let Some(node) = find(gpu, &["remapped_rows"]) else {
        return Fact::unknown("<remapped_rows> absent from nvidia-smi output");
    };
    if !node.children().any(|n| n.is_element()) {
        let text = text_of(node).unwrap_or_default();
        return sentinel_or(&text, "remapped_rows")
            .and_then(|s| Fact::unknown(format!("<remapped_rows> holds {s:?}")));
    }
    Fact::Known(RemappedRows {
        correctable: parsed(node, &["remapped_row_corr"], count),
        uncorrectable: parsed(node, &["remapped_row_unc"], count),
        pending: parsed(node, &["remapped_row_pending"], yes_no),
        failure: parsed(node, &["remapped_row_failure"], yes_no),
    })
}

fn clock_event_reasons(gpu: Node) -> Fact<BTreeMap<String, bool>> {
    let (node, prefix) = match find(gpu, &["clocks_event_reasons"]) {
        Some(node) => (node, "clocks_event_reason_"),
        None => match find(gpu, &["clocks_throttle_reasons"]) {
            Some(node) => (node, "clocks_throttle_reason_"),
            None => {
                return Fact::unknown(
                    "neither <clocks_event_reasons> nor <clocks_throttle_reasons> present",
                );
            }
        },
    };
    let mut reasons = BTreeMap::new();
    for child in node.children().filter(Node::is_element) {
        let name = child.tag_name().name();
        let short = name.strip_prefix(prefix).unwrap_or(name);
        if let Fact::Known(active) = parsed(node, &[name], |s| match s {
            "Active" => Ok(true),
            "Not Active" => Ok(false),
            _ => Err("expected Active or Not Active".to_owned()),
        }) {
            reasons.insert(short.to_owned(), active);
        }
    }
    Fact::Known(reasons)
}

fn clock_event_counters(gpu: Node) -> Fact<BTreeMap<String, u64>> {
    let Some(node) = find(gpu, &["clocks_event_reasons_counters"]) else {
        return Fact::unknown("<clocks_event_reasons_counters> not present (drivers before 535)");
    };
    let mut counters = BTreeMap::new();
    for child in node.children().filter(Node::is_element) {
        let name = child.tag_name().name();
        let short = name
            .strip_prefix("clocks_event_reasons_counters_")
            .unwrap_or(name);
        if let Fact::Known(us) = parsed(node, &[name], |s| with_unit::<u64>(s, "us")) {
            counters.insert(short.to_owned(), us);
        }
    }
    Fact::Known(counters)
}

/// `45 C`; also `-2 C` (a margin).
fn celsius(text: &str) -> Result<f64, String> {
    with_unit(text, "C")
}

fn find<'a, 'i>(node: Node<'a, 'i>, path: &[&str]) -> Option<Node<'a, 'i>> {
    let mut current = node;
    for name in path {
        current = current.children().find(|n| n.has_tag_name(*name))?;
    }
    Some(current)
}

/// The element's own text, trimmed; `None` when it has none.
fn text_of(node: Node) -> Option<String> {
    let text: String = node
        .children()
        .filter(Node::is_text)
        .filter_map(|n| n.text())
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Values nvidia-smi prints instead of a reading.
const SENTINELS: &[&str] = &[
    "n/a",
    "not found",
    "not supported",
    "unknown error",
    "insufficient permissions",
    "requested functionality has been deprecated",
    "not available",
];

/// `Known(text)` unless `text` is a sentinel, which becomes an `Unknown` naming `element`.
fn sentinel_or(text: &str, element: &str) -> Fact<String> {
    let bare = text
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    if SENTINELS.iter().any(|s| bare.eq_ignore_ascii_case(s)) {
        Fact::unknown(format!("<{element}> is {text:?}"))
    } else {
        Fact::Known(text.trim().to_owned())
    }
}

/// The text at `path` below `node`, with sentinels turned into `Unknown`.
fn value(node: Node, path: &[&str]) -> Fact<String> {
    let element = path.join("/");
    match find(node, path) {
        None => Fact::unknown(format!("<{element}> absent from nvidia-smi output")),
        Some(found) => match text_of(found) {
            None => Fact::unknown(format!("<{element}> is empty")),
            Some(text) => sentinel_or(&text, &element),
        },
    }
}

fn parsed<T>(node: Node, path: &[&str], parse: impl FnOnce(&str) -> Result<T, String>) -> Fact<T> {
    value(node, path).and_then(|text| match parse(&text) {
        Ok(value) => Fact::Known(value),
        Err(why) => Fact::unknown(format!("<{}> {text:?}: {why}", path.join("/"))),
    })
}

/// The first path that gives a known value; otherwise the first present path's reason.
fn first_known<T>(
    node: Node,
    paths: &[&[&str]],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Fact<T> {
    let mut first_reason = None;
    for path in paths {
        if find(node, path).is_none() {
            continue;
        }
        match parsed(node, path, &parse) {
            Fact::Known(value) => return Fact::Known(value),
            Fact::Unknown { reason } => {
                first_reason.get_or_insert(reason);
            }
        }
    }
    let names: Vec<String> = paths.iter().map(|p| p.join("/")).collect();
    Fact::unknown(
        first_reason.unwrap_or_else(|| format!("none of <{}> present", names.join(">, <"))),
    )
}

fn enabled(text: &str) -> Result<bool, String> {
    match text {
        "Enabled" => Ok(true),
        "Disabled" => Ok(false),
        _ => Err("expected Enabled or Disabled".to_owned()),
    }
}

/// `Yes` when any of the elements says so, `No` when every readable one says no, unknown
/// when none is readable.
fn any_yes(node: Node, paths: &[&[&str]]) -> Fact<bool> {
    let mut seen = None;
    for path in paths {
        match parsed(node, path, yes_no) {
            Fact::Known(true) => return Fact::Known(true),
            Fact::Known(false) => seen = Some(Fact::Known(false)),
            unknown => {
                seen.get_or_insert(unknown);
            }
        }
    }
    seen.unwrap_or_else(|| Fact::unknown("no elements to read"))
}

fn yes_no(text: &str) -> Result<bool, String> {
    match text {
        "Yes" => Ok(true),
        "No" => Ok(false),
        _ => Err("expected Yes or No".to_owned()),
    }
}

fn count(text: &str) -> Result<u64, String> {
    text.parse().map_err(|e| format!("{e}"))
}

fn small(text: &str) -> Result<u32, String> {
    text.parse().map_err(|e| format!("{e}"))
}

/// `16x` in XML (sysfs writes `16`).
fn link_width(text: &str) -> Result<u32, String> {
    text.strip_suffix('x')
        .unwrap_or(text)
        .trim()
        .parse()
        .map_err(|e| format!("{e}"))
}

/// `45 C`, `27.22 W`, `81920 MiB`.
fn with_unit<T: std::str::FromStr>(text: &str, unit: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    let number = text
        .strip_suffix(unit)
        .ok_or_else(|| format!("expected a value in {unit}"))?;
    number.trim().parse().map_err(|e| format!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v10.dtd">
<nvidia_smi_log>
  <driver_version>418.56</driver_version>
  <cuda_version>Not Found</cuda_version>
  <attached_gpus>2</attached_gpus>
  <gpu id="0000:04:00.0">
    <product_name>Tesla P100-PCIE-16GB</product_name>
    <ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Enabled</pending_ecc></ecc_mode>
    <ecc_errors>
      <volatile>
        <single_bit><device_memory>3</device_memory><total>3</total></single_bit>
        <double_bit><device_memory>0</device_memory><total>0</total></double_bit>
      </volatile>
      <aggregate>
        <single_bit><total>N/A</total></single_bit>
        <double_bit><total>[N/A]</total></double_bit>
      </aggregate>
    </ecc_errors>
    <clocks_throttle_reasons>
      <clocks_throttle_reason_gpu_idle>Active</clocks_throttle_reason_gpu_idle>
    </clocks_throttle_reasons>
    <power_readings><power_draw> 31.20 W </power_draw><power_limit>250.00 W</power_limit></power_readings>
  </gpu>
</nvidia_smi_log>"#;

    #[test]
    fn old_layout_and_sentinels() {
        let log = parse(OLD).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(log.dtd_version, Some(10));
        assert!(
            log.cuda_version
                .reason()
                .is_some_and(|r| r.contains("Not Found"))
        );
        assert_eq!(log.warnings.len(), 1);
        let gpu = &log.gpus[0];
        assert_eq!(
            gpu.bus_id.known().map(ToString::to_string).as_deref(),
            Some("0000:04:00.0")
        );
        assert_eq!(gpu.ecc_errors.volatile.correctable, Fact::Known(3));
        assert_eq!(gpu.ecc_errors.volatile.uncorrectable, Fact::Known(0));
        assert!(!gpu.ecc_errors.aggregate.uncorrectable.is_known());
        assert_eq!(gpu.power_draw_w, Fact::Known(31.2));
        assert_eq!(gpu.power_limit_w, Fact::Known(250.0));
        assert_eq!(
            gpu.clock_event_reasons
                .known()
                .and_then(|r| r.get("gpu_idle").copied()),
            Some(true)
        );
        assert!(
            gpu.remapped_rows
                .reason()
                .is_some_and(|r| r.contains("absent"))
        );
        assert!(gpu.uuid.reason().is_some_and(|r| r.contains("absent")));
    }

    /// Versions are typed here, once: checks compare versions, and text that is not one
    /// is unknown at the edge (with what it was), not a string for a check to re-parse.
    #[test]
    fn versions_are_parsed_at_the_edge() {
        let log = parse(OLD).unwrap_or_else(|e| panic!("{e}"));
        let driver: &Version = log
            .driver_version
            .known()
            .unwrap_or_else(|| panic!("driver"));
        assert_eq!(
            driver,
            &"418.56.0"
                .parse::<Version>()
                .unwrap_or_else(|e| panic!("{e}"))
        );
        assert_eq!(driver.as_str(), "418.56");
        let garbled = parse(&OLD.replace(
            "<driver_version>418.56</driver_version>",
            "<driver_version>unknown-build</driver_version>",
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            garbled
                .driver_version
                .reason()
                .is_some_and(|r| r.contains("\"unknown-build\" is not a version")),
            "{:?}",
            garbled.driver_version
        );
    }

    #[test]
    fn rejects_non_smi_xml() {
        assert!(parse("<foo/>").is_err());
        assert!(parse("not xml").is_err());
    }
}
