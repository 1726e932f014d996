//! The BMC's firmware version, from the host through IPMI: `ipmitool mc info` sends the
//! Get Device ID command over the in-band interface (`/dev/ipmi0`, the `ipmi_si` and
//! `ipmi_devintf` modules) and prints its answer; the `Firmware Revision` line is the
//! major.minor revision (IPMI 2.0 §20.1, the minor byte BCD-encoded, which ipmitool prints
//! as two decimal digits).
//!
//! Vendors' full BMC versions (`7.00.00.171`, `2.13.3`) have more parts than IPMI's two:
//! a blueprint pins what the fleet's BMCs report here, and a constraint such as `>=2.13`
//! compares them. The Redfish host interface would give the full `FirmwareVersion` of
//! `/redfish/v1/Managers/<id>`, but needs the interface's network and credentials
//! configured on the node: [`parse_redfish_manager`] reads that document for a caller
//! that has it.

use crate::verify::fact::Fact;
use crate::verify::host::{Host, VendorCommand};
use std::time::Duration;

/// The firmware revision `ipmitool mc info` reports.
pub fn collect(host: &dyn Host, timeout: Duration) -> Fact<String> {
    let command = VendorCommand::IpmitoolMcInfo;
    match host.run(&command, timeout) {
        Err(e) => Fact::unknown(e.to_string()),
        Ok(output) if output.success() => match parse_mc_info(&output.stdout_text()) {
            Ok(version) => Fact::Known(version),
            Err(why) => Fact::unknown(format!("{command}: {why}")),
        },
        Ok(output) => Fact::unknown(format!("{command}: {}", output.failure_summary())),
    }
}

/// The value of the `Firmware Revision : X.Y` line.
pub fn parse_mc_info(text: &str) -> Result<String, String> {
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| key.trim() == "Firmware Revision")
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .ok_or_else(|| "no \"Firmware Revision\" line".to_owned())
}

/// `FirmwareVersion` of a Redfish Manager resource (DSP0268, `Manager` schema).
pub fn parse_redfish_manager(json: &str) -> Result<String, String> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    match value.get("@odata.type").and_then(|t| t.as_str()) {
        Some(kind) if kind.starts_with("#Manager.") => {}
        other => {
            return Err(format!(
                "@odata.type {other:?} is not a Redfish Manager resource"
            ));
        }
    }
    value
        .get("FirmwareVersion")
        .and_then(|v| v.as_str())
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.trim().to_owned())
        .ok_or_else(|| "the Manager has no FirmwareVersion".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ipmitool mc info` as ipmitool 1.8.18 prints it (field names and layout from
    /// ipmitool's lib/ipmi_mc.c `ipmi_mc_get_deviceid`).
    const MC_INFO: &str = "Device ID                 : 32\n\
        Device Revision           : 1\n\
        Firmware Revision         : 5.10\n\
        IPMI Version              : 2.0\n\
        Manufacturer ID           : 10876\n\
        Manufacturer Name         : Super Micro Computer Inc.\n\
        Product ID                : 6929 (0x1b11)\n\
        Product Name              : Unknown (0x1B11)\n\
        Device Available          : yes\n\
        Provides Device SDRs      : no\n\
        Additional Device Support :\n\
        \x20   Sensor Device\n\
        \x20   SEL Device\n\
        Aux Firmware Rev Info     : \n\
        \x20   0x00\n";

    /// The identifying fields of DMTF's `public-rackmount1` mockup Manager
    /// (github.com/DMTF/Redfish-Mockup-Server, public-rackmount1/Managers/BMC/index.json at
    /// b022e342eef1def23cef3489de05fc3fa353d950), the rest left out.
    const DMTF_MANAGER: &str = r##"{
    "@odata.type": "#Manager.v1_17_0.Manager",
    "Id": "BMC",
    "Name": "Manager",
    "ManagerType": "BMC",
    "Description": "Contoso BMC",
    "Model": "Joo Janta 200",
    "FirmwareVersion": "1.45.455b66-rev4",
    "AdditionalFirmwareVersions": {"Bootloader": "v2022.01"},
    "@odata.id": "/redfish/v1/Managers/BMC"
}"##;

    #[test]
    fn reads_a_redfish_manager_firmware_version() {
        assert_eq!(
            parse_redfish_manager(DMTF_MANAGER).as_deref(),
            Ok("1.45.455b66-rev4")
        );
        // A ComputerSystem is not a Manager, and a Manager without a version says so.
        assert!(parse_redfish_manager(r##"{"@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem", "FirmwareVersion": "1"}"##).is_err());
        assert!(parse_redfish_manager(r##"{"@odata.type": "#Manager.v1_17_0.Manager"}"##).is_err());
        assert!(parse_redfish_manager("<html>").is_err());
    }

    #[test]
    fn reads_the_firmware_revision() {
        assert_eq!(parse_mc_info(MC_INFO).as_deref(), Ok("5.10"));
        assert!(parse_mc_info("Device ID : 32\n").is_err());
        assert!(parse_mc_info("Firmware Revision : \n").is_err());
    }
}
