//! `nvidia-smi -q -x` output of the synthetic 8×H100 node, built from a small struct.
//!
//! Tests change the one field they mean (`smi.gpus[0].vbios = ...`) and print the XML
//! again, so a mutation cannot land on another GPU or on an element of the same name in
//! another section (`dram_uncorrectable` is both a volatile and an aggregate counter).
//! The layout is the 570 driver's (DTD v12): split power readings, split SRAM
//! uncorrectable counters, recovery action, deprecated reset status.

use super::fixture_tree::{IDLE_GPU, REMAP_PENDING_GPU, h100_pairs};
use std::fmt::Write as _;

/// The whole log: driver and CUDA versions and one entry per GPU, in order.
#[derive(Debug, Clone)]
pub struct SmiLog {
    pub driver_version: String,
    pub cuda_version: String,
    /// `<attached_gpus>`: what the driver counts, whatever `gpus` lists.
    pub attached_gpus: usize,
    pub gpus: Vec<SmiGpu>,
}

/// One `<gpu>` entry. `None` leaves an element out (a driver that does not report it).
#[derive(Debug, Clone)]
pub struct SmiGpu {
    /// Bus number; the bus id is `00000000:<bus>:00.0`.
    pub bus: u8,
    pub index: usize,
    pub product_name: String,
    /// `Enabled` / `Disabled`.
    pub persistence_mode: String,
    pub current_mig: String,
    pub vbios: String,
    /// `<gpu_reset_status><reset_required>`.
    pub reset_required: String,
    pub recovery_action: Option<String>,
    pub current_link_gen: u8,
    pub performance_state: String,
    pub idle: bool,
    pub current_ecc: String,
    pub volatile_dram_uncorrectable: u64,
    pub aggregate_dram_uncorrectable: u64,
    pub sram_threshold_exceeded: Option<String>,
    /// `<channel_repair_pending>` after the aggregate counters (newer drivers).
    pub channel_repair_pending: Option<String>,
    /// `None`: `N/A` (retired pages are reported before Ampere only).
    pub retired_pages: Option<RetiredPages>,
    /// `None`: `<remapped_rows>N/A</remapped_rows>` (before Ampere).
    pub remapped_rows: Option<RemappedRows>,
    pub temperature_c: usize,
    /// `<gpu_temp_tlimit>`: degrees left before the GPU's T.Limit (slowdown at -2 C).
    pub tlimit_c: i64,
    /// `<clocks_event_reason_hw_thermal_slowdown>` active.
    pub hw_thermal_slowdown: bool,
    /// `<clocks_event_reasons_counters_hw_therm_slowdown>`, microseconds.
    pub hw_therm_slowdown_us: u64,
    pub power_draw: String,
    pub fabric_state: String,
}

#[derive(Debug, Clone)]
pub struct RetiredPages {
    pub single_bit: u64,
    pub double_bit: u64,
    /// `Yes` / `No`.
    pub pending: String,
}

#[derive(Debug, Clone)]
pub struct RemappedRows {
    pub correctable: u64,
    pub uncorrectable: u64,
    /// `Yes` / `No`.
    pub pending: String,
    pub failure: String,
}

impl SmiLog {
    /// The node as captured: GPU [`REMAP_PENDING_GPU`] has a pending row remap (one
    /// uncorrectable error), [`IDLE_GPU`] is in P8 at PCIe Gen1.
    pub fn h100() -> SmiLog {
        let gpus: Vec<SmiGpu> = h100_pairs()
            .into_iter()
            .map(|pair| {
                let i = pair.index;
                let idle = i == IDLE_GPU;
                let remap = i == REMAP_PENDING_GPU;
                let unc = u64::from(remap);
                SmiGpu {
                    bus: pair.root_bus + 3,
                    index: i,
                    product_name: "NVIDIA H100 80GB HBM3".into(),
                    persistence_mode: "Enabled".into(),
                    current_mig: "Disabled".into(),
                    vbios: "96.00.99.00.01".into(),
                    reset_required: "Requested functionality has been deprecated".into(),
                    recovery_action: Some("None".into()),
                    current_link_gen: if idle { 1 } else { 5 },
                    performance_state: if idle { "P8" } else { "P0" }.into(),
                    idle,
                    current_ecc: "Enabled".into(),
                    volatile_dram_uncorrectable: unc,
                    aggregate_dram_uncorrectable: unc,
                    sram_threshold_exceeded: Some("No".into()),
                    channel_repair_pending: None,
                    retired_pages: None,
                    remapped_rows: Some(RemappedRows {
                        correctable: 0,
                        uncorrectable: unc,
                        pending: if remap { "Yes" } else { "No" }.into(),
                        failure: "No".into(),
                    }),
                    temperature_c: 30 + i,
                    tlimit_c: 56 - i as i64,
                    hw_thermal_slowdown: false,
                    hw_therm_slowdown_us: 0,
                    power_draw: if idle { "69.52 W" } else { "412.30 W" }.into(),
                    fabric_state: "Completed".into(),
                }
            })
            .collect();
        SmiLog {
            driver_version: "570.172.08".into(),
            cuda_version: "12.8".into(),
            attached_gpus: gpus.len(),
            gpus,
        }
    }

    /// The same node with no memory error anywhere: no pending remap, no uncorrectable
    /// error.
    pub fn h100_healthy() -> SmiLog {
        let mut log = SmiLog::h100();
        for gpu in &mut log.gpus {
            gpu.volatile_dram_uncorrectable = 0;
            gpu.aggregate_dram_uncorrectable = 0;
            if let Some(rows) = &mut gpu.remapped_rows {
                rows.uncorrectable = 0;
                rows.pending = "No".into();
            }
        }
        log
    }

    /// GPU `i`, panicking when there is none.
    pub fn gpu(&mut self, i: usize) -> &mut SmiGpu {
        let count = self.gpus.len();
        self.gpus
            .get_mut(i)
            .unwrap_or_else(|| panic!("the nvidia-smi fixture has {count} GPUs, not {}", i + 1))
    }

    /// The output of `nvidia-smi -q -x`.
    pub fn xml(&self) -> String {
        let mut xml = format!(
            "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n<nvidia_smi_log>\n\t<timestamp>Tue Jul 15 09:12:01 2025</timestamp>\n\t<driver_version>{}</driver_version>\n\t<cuda_version>{}</cuda_version>\n\t<attached_gpus>{}</attached_gpus>\n",
            self.driver_version, self.cuda_version, self.attached_gpus
        );
        for gpu in &self.gpus {
            gpu.write(&mut xml);
        }
        xml.push_str("</nvidia_smi_log>\n");
        xml
    }
}

impl SmiGpu {
    /// The remapped-row counters, panicking on a GPU that reports none (before Ampere).
    pub fn remapped(&mut self) -> &mut RemappedRows {
        self.remapped_rows
            .as_mut()
            .unwrap_or_else(|| panic!("GPU {} reports no remapped rows", self.index))
    }

    /// The retired-page counters, panicking on a GPU that reports none (Ampere and later).
    pub fn retired(&mut self) -> &mut RetiredPages {
        self.retired_pages
            .as_mut()
            .unwrap_or_else(|| panic!("GPU {} reports no retired pages", self.index))
    }

    fn write(&self, xml: &mut String) {
        let bus = format!("00000000:{:02X}:00.0", self.bus);
        let i = self.index;
        let optional = |name: &str, value: &Option<String>, indent: &str| match value {
            Some(v) => format!("{indent}<{name}>{v}</{name}>\n"),
            None => String::new(),
        };
        let retired = match &self.retired_pages {
            None => ("N/A".to_owned(), "N/A".to_owned(), "N/A".to_owned()),
            Some(r) => (
                r.single_bit.to_string(),
                r.double_bit.to_string(),
                r.pending.clone(),
            ),
        };
        let remapped = match &self.remapped_rows {
            None => "\t\t<remapped_rows>N/A</remapped_rows>\n".to_owned(),
            Some(r) => format!(
                "\t\t<remapped_rows>\n\t\t\t<remapped_row_corr>{}</remapped_row_corr>\n\t\t\t<remapped_row_unc>{}</remapped_row_unc>\n\t\t\t<remapped_row_pending>{}</remapped_row_pending>\n\t\t\t<remapped_row_failure>{}</remapped_row_failure>\n\t\t</remapped_rows>\n",
                r.correctable, r.uncorrectable, r.pending, r.failure
            ),
        };
        let _ = write!(
            xml,
            "\t<gpu id=\"{bus}\">\n\
\t\t<product_name>{product}</product_name>\n\
\t\t<product_brand>NVIDIA</product_brand>\n\
\t\t<product_architecture>Hopper</product_architecture>\n\
\t\t<display_mode>Requested functionality has been deprecated</display_mode>\n\
\t\t<persistence_mode>{persistence}</persistence_mode>\n\
\t\t<addressing_mode>None</addressing_mode>\n\
\t\t<mig_mode>\n\t\t\t<current_mig>{mig}</current_mig>\n\t\t\t<pending_mig>Disabled</pending_mig>\n\t\t</mig_mode>\n\
\t\t<mig_devices>\n\t\t\tNone\n\t\t</mig_devices>\n\
\t\t<serial>165232405{i:04}</serial>\n\
\t\t<uuid>GPU-6f3c1e2a-0b4d-4c1e-9a7b-00000000000{i}</uuid>\n\
\t\t<vbios_version>{vbios}</vbios_version>\n\
\t\t<gpu_reset_status>\n\t\t\t<reset_required>{reset}</reset_required>\n\t\t</gpu_reset_status>\n\
{recovery}\
\t\t<pci>\n\t\t\t<pci_bus>{bus_number:02X}</pci_bus>\n\t\t\t<pci_device>00</pci_device>\n\t\t\t<pci_domain>0000</pci_domain>\n\t\t\t<pci_device_id>233010DE</pci_device_id>\n\t\t\t<pci_bus_id>{bus}</pci_bus_id>\n\
\t\t\t<pci_gpu_link_info>\n\t\t\t\t<pcie_gen>\n\t\t\t\t\t<max_link_gen>5</max_link_gen>\n\t\t\t\t\t<current_link_gen>{link_gen}</current_link_gen>\n\t\t\t\t</pcie_gen>\n\
\t\t\t\t<link_widths>\n\t\t\t\t\t<max_link_width>16x</max_link_width>\n\t\t\t\t\t<current_link_width>16x</current_link_width>\n\t\t\t\t</link_widths>\n\t\t\t</pci_gpu_link_info>\n\
\t\t\t<replay_counter>0</replay_counter>\n\t\t</pci>\n\
\t\t<performance_state>{pstate}</performance_state>\n\
\t\t<clocks_event_reasons>\n\t\t\t<clocks_event_reason_gpu_idle>{idle}</clocks_event_reason_gpu_idle>\n\t\t\t<clocks_event_reason_hw_slowdown>Not Active</clocks_event_reason_hw_slowdown>\n\t\t\t<clocks_event_reason_hw_thermal_slowdown>{thermal}</clocks_event_reason_hw_thermal_slowdown>\n\t\t\t<clocks_event_reason_hw_power_brake_slowdown>Not Active</clocks_event_reason_hw_power_brake_slowdown>\n\t\t</clocks_event_reasons>\n\
\t\t<clocks_event_reasons_counters>\n\t\t\t<clocks_event_reasons_counters_sw_power_cap>4251825415 us</clocks_event_reasons_counters_sw_power_cap>\n\t\t\t<clocks_event_reasons_counters_hw_therm_slowdown>{therm_us} us</clocks_event_reasons_counters_hw_therm_slowdown>\n\t\t\t<clocks_event_reasons_counters_hw_power_brake>0 us</clocks_event_reasons_counters_hw_power_brake>\n\t\t</clocks_event_reasons_counters>\n\
\t\t<fb_memory_usage>\n\t\t\t<total>81559 MiB</total>\n\t\t</fb_memory_usage>\n\
\t\t<bar1_memory_usage>\n\t\t\t<total>131072 MiB</total>\n\t\t</bar1_memory_usage>\n\
\t\t<ecc_mode>\n\t\t\t<current_ecc>{ecc}</current_ecc>\n\t\t\t<pending_ecc>Enabled</pending_ecc>\n\t\t</ecc_mode>\n\
\t\t<ecc_errors>\n\t\t\t<volatile>\n\t\t\t\t<sram_correctable>0</sram_correctable>\n\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>\n\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n\t\t\t\t<dram_correctable>2</dram_correctable>\n\t\t\t\t<dram_uncorrectable>{volatile_unc}</dram_uncorrectable>\n\t\t\t</volatile>\n\
\t\t\t<aggregate>\n\t\t\t\t<sram_correctable>0</sram_correctable>\n\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>\n\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>\n\t\t\t\t<dram_correctable>7</dram_correctable>\n\t\t\t\t<dram_uncorrectable>{aggregate_unc}</dram_uncorrectable>\n{sram_threshold}\
\t\t\t</aggregate>{channel_repair}\n\t\t</ecc_errors>\n\
\t\t<retired_pages>\n\t\t\t<multiple_single_bit_retirement>\n\t\t\t\t<retired_count>{single}</retired_count>\n\t\t\t</multiple_single_bit_retirement>\n\t\t\t<double_bit_retirement>\n\t\t\t\t<retired_count>{double}</retired_count>\n\t\t\t</double_bit_retirement>\n\t\t\t<pending_retirement>{retire_pending}</pending_retirement>\n\t\t</retired_pages>\n\
{remapped}\
\t\t<temperature>\n\t\t\t<gpu_temp>{temp} C</gpu_temp>\n\t\t\t<gpu_temp_tlimit>{tlimit} C</gpu_temp_tlimit>\n\t\t\t<gpu_temp_max_tlimit_threshold>-5 C</gpu_temp_max_tlimit_threshold>\n\t\t\t<gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>\n\t\t\t<gpu_temp_max_gpu_tlimit_threshold>0 C</gpu_temp_max_gpu_tlimit_threshold>\n\t\t\t<memory_temp>[N/A]</memory_temp>\n\t\t</temperature>\n\
\t\t<gpu_power_readings>\n\t\t\t<power_state>{pstate}</power_state>\n\t\t\t<average_power_draw>N/A</average_power_draw>\n\t\t\t<instant_power_draw>{power}</instant_power_draw>\n\t\t\t<current_power_limit>700.00 W</current_power_limit>\n\t\t</gpu_power_readings>\n\
\t\t<fabric>\n\t\t\t<state>{fabric}</state>\n\t\t\t<status>Success</status>\n\t\t</fabric>\n\
\t</gpu>\n",
            product = self.product_name,
            persistence = self.persistence_mode,
            mig = self.current_mig,
            vbios = self.vbios,
            reset = self.reset_required,
            recovery = optional("gpu_recovery_action", &self.recovery_action, "\t\t"),
            bus_number = self.bus,
            link_gen = self.current_link_gen,
            pstate = self.performance_state,
            idle = if self.idle { "Active" } else { "Not Active" },
            ecc = self.current_ecc,
            volatile_unc = self.volatile_dram_uncorrectable,
            aggregate_unc = self.aggregate_dram_uncorrectable,
            sram_threshold = optional(
                "sram_threshold_exceeded",
                &self.sram_threshold_exceeded,
                "\t\t\t\t"
            ),
            channel_repair =
                optional("channel_repair_pending", &self.channel_repair_pending, "").trim_end(),
            single = retired.0,
            double = retired.1,
            retire_pending = retired.2,
            temp = self.temperature_c,
            tlimit = self.tlimit_c,
            thermal = if self.hw_thermal_slowdown {
                "Active"
            } else {
                "Not Active"
            },
            therm_us = self.hw_therm_slowdown_us,
            power = self.power_draw,
            fabric = self.fabric_state,
        );
    }
}
