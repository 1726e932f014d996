//! The BMC's firmware version, read through the BMC's Redfish service on the host
//! interface where the blueprint gives credentials for it, else through IPMI.
//!
//! Redfish (DMTF DSP0266; host interface DSP0270): the SMBIOS type 42 record names the
//! service's address ([`super::redfish_host_interface`]); verify reads the service root
//! `/redfish/v1`, finds the BMC among its Managers, and reads that Manager's
//! `FirmwareVersion` — the vendor's full version (`7.00.00.171`, `1.45.455b66-rev4`).
//! A service may list several Managers (an enclosure manager, a rack manager, a
//! sub-system's controller); the BMC is the one whose `ManagerType` is `BMC`. The Manager
//! the root's `Links.ManagerProvidingService` names is read first and taken when it is a
//! BMC; else every member of the `Managers` collection is read, and exactly one must be a
//! BMC: several with none named by the root is ambiguous, and said so rather than
//! guessed. The documents go into captures (the credentials never do). Where the blueprint
//! configures Redfish and the machine has the interface, a failed read is the fact's
//! reason (unknown), not a quiet fall back to IPMI: wrong credentials or a wrong CA should
//! be seen. Without the interface, IPMI answers and the source says why.
//!
//! IPMI: `ipmitool mc info` sends the Get Device ID command over the in-band interface
//! (`/dev/ipmi0`, the `ipmi_si` and `ipmi_devintf` modules) and prints its answer; the
//! `Firmware Revision` line is the major.minor revision (IPMI 2.0 §20.1, the minor byte
//! BCD-encoded, which ipmitool prints as two decimal digits). A blueprint read through
//! IPMI pins what the fleet's BMCs report there, and a constraint such as `>=2.13`
//! compares them.

use super::redfish_host_interface::{self, RedfishService};
use crate::blueprint::model::RedfishAccess;
use crate::verify::fact::Fact;
use crate::verify::host::http::{HttpClient, HttpGet, HttpResponse};
use crate::verify::host::{Host, VendorCommand};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Most bytes of one Redfish document (DMTF's mockup Manager is 3 KiB).
pub const REDFISH_BODY_LIMIT: u64 = 1024 * 1024;

/// Most Managers read from the collection to find the BMC (a blade enclosure's service
/// lists a BMC per blade and an enclosure manager; far fewer than this).
const MAX_MANAGERS: usize = 64;

/// The `ManagerType` of a baseboard management controller: "a controller that provides
/// management functions for a single computer system" (DMTF Redfish schema `Manager`,
/// `ManagerType` enum; in every version from 1.0.0 to the mockup's `Manager.v1_17_0`).
const BMC: &str = "BMC";

/// The BMC's firmware version and where it was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BmcFirmware {
    pub version: Fact<String>,
    /// What answered, for the check's evidence (`GET https://…/Managers/BMC`,
    /// `ipmitool mc info`).
    pub source: String,
}

/// The version from Redfish when `redfish` is given and the machine has a Redfish host
/// interface, else from `ipmitool mc info`.
pub fn collect(host: &dyn Host, redfish: Option<&RedfishAccess>, timeout: Duration) -> BmcFirmware {
    let mut why_not_redfish = "the blueprint gives no Redfish credentials".to_owned();
    if let Some(access) = redfish {
        match redfish_host_interface::discover(host) {
            Ok(Some(service)) => return read_redfish(host, &service, access, timeout),
            Ok(None) => {
                why_not_redfish = format!(
                    "no Redfish host interface (no SMBIOS type 42 record in {})",
                    redfish_host_interface::DMI_ENTRIES
                )
            }
            Err(why) => {
                return BmcFirmware {
                    version: Fact::unknown(format!("the Redfish host interface: {why}")),
                    source: format!("{}/42-*/raw", redfish_host_interface::DMI_ENTRIES),
                };
            }
        }
    }
    let command = VendorCommand::IpmitoolMcInfo;
    let version = match host.run(&command, timeout) {
        Err(e) => Fact::unknown(e.to_string()),
        Ok(output) if output.success() => match parse_mc_info(&output.stdout_text()) {
            Ok(version) => Fact::Known(version),
            Err(why) => Fact::unknown(format!("{command}: {why}")),
        },
        Ok(output) => Fact::unknown(format!("{command}: {}", output.failure_summary())),
    };
    BmcFirmware {
        version,
        source: format!("{command} ({why_not_redfish})"),
    }
}

fn read_redfish(
    host: &dyn Host,
    service: &RedfishService,
    access: &RedfishAccess,
    timeout: Duration,
) -> BmcFirmware {
    let origin = service.origin();
    // One client for the walk: TLS configured and the files read once.
    let mut client = HttpClient::new();
    let mut get = |path: &str| -> Result<serde_json::Value, String> {
        let request = HttpGet {
            url: format!("{origin}{path}"),
            connect_to: service
                .hostname
                .as_ref()
                .map(|name| (name.clone(), service.address)),
            basic_auth_file: Some(PathBuf::from(access.credentials_file.as_str())),
            ca_file: access.ca_file.as_ref().map(|f| PathBuf::from(f.as_str())),
            timeout,
            limit: REDFISH_BODY_LIMIT,
        };
        let HttpResponse { status, body } =
            host.get(&mut client, &request).map_err(|e| e.to_string())?;
        match status {
            200 => {}
            401 | 403 => {
                return Err(format!(
                    "{request}: HTTP {status}: the BMC refused the credentials in {}",
                    access.credentials_file.as_str()
                ));
            }
            _ => return Err(format!("{request}: HTTP {status}")),
        }
        serde_json::from_slice(&body).map_err(|e| format!("{request}: not JSON: {e}"))
    };
    let mut last = format!("{origin}/redfish/v1");
    let walk = (|| {
        let root = get("/redfish/v1")?;
        // The Manager the service root names as providing the service, when it is a BMC:
        // on the host interface that is the BMC of this host.
        let providing = optional_link(&root, &["Links", "ManagerProvidingService", "@odata.id"])
            .map_err(|why| format!("the service root: {why}"))?;
        let mut read = BTreeMap::new();
        if let Some(path) = providing {
            last = format!("{origin}{path}");
            let document = get(&path)?;
            if manager_type(&document) == Some(BMC) {
                return parse_redfish_value(&document).map_err(|why| format!("{path}: {why}"));
            }
            read.insert(path, document);
        }
        let managers = link(&root, &["Managers", "@odata.id"])
            .map_err(|why| format!("the service root: {why}"))?;
        last = format!("{origin}{managers}");
        let collection = get(&managers)?;
        let members = collection
            .get("Members")
            .and_then(|m| m.as_array())
            .filter(|m| !m.is_empty())
            .ok_or_else(|| format!("{managers}: no Members: the service lists no Manager"))?;
        if members.len() > MAX_MANAGERS {
            return Err(format!(
                "{managers}: {} Members, more than the {MAX_MANAGERS} read",
                members.len()
            ));
        }
        let mut bmcs = Vec::new();
        let mut others = Vec::new();
        for member in members {
            let path = link(member, &["@odata.id"]).map_err(|why| format!("{managers}: {why}"))?;
            let document = match read.remove(&path) {
                Some(document) => document,
                None => get(&path)?,
            };
            match manager_type(&document) {
                Some(BMC) => bmcs.push((path, document)),
                other => others.push(format!(
                    "{path} ({})",
                    other.map_or("no ManagerType".to_owned(), |t| format!("ManagerType {t}"))
                )),
            }
        }
        match bmcs.as_slice() {
            [(path, document)] => {
                last = format!("{origin}{path}");
                parse_redfish_value(document).map_err(|why| format!("{path}: {why}"))
            }
            [] => Err(format!(
                "{managers}: no Manager whose ManagerType is BMC among {}",
                others.join(", ")
            )),
            several => Err(format!(
                "{managers}: {} Managers whose ManagerType is BMC ({}) and the service root's \
                 Links.ManagerProvidingService names none of them: which one is this host's \
                 BMC is ambiguous",
                several.len(),
                several
                    .iter()
                    .map(|(path, _)| path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    })();
    BmcFirmware {
        version: match walk {
            Ok(version) => Fact::Known(version),
            Err(why) => Fact::unknown(format!("Redfish: {why}")),
        },
        source: format!("Redfish GET {last} (FirmwareVersion)"),
    }
}

/// A Manager's `ManagerType` (DSP0268 `Manager` schema: `BMC`, `EnclosureManager`,
/// `ManagementController`, `RackManager`, `AuxiliaryController`, `Service`).
fn manager_type(document: &serde_json::Value) -> Option<&str> {
    document.get("ManagerType").and_then(|t| t.as_str())
}

/// [`link`] where the document may leave the link out (an older schema version).
fn optional_link(document: &serde_json::Value, keys: &[&str]) -> Result<Option<String>, String> {
    let mut value = document;
    for key in &keys[..keys.len() - 1] {
        match value.get(key) {
            Some(inner) => value = inner,
            None => return Ok(None),
        }
    }
    if value.get(keys[keys.len() - 1]).is_none() {
        return Ok(None);
    }
    link(document, keys).map(Some)
}

/// A resource path from a document's `@odata.id`, refused unless it stays a path on the
/// same service (`/redfish/v1/…`, no authority, query or `..`).
fn link(document: &serde_json::Value, keys: &[&str]) -> Result<String, String> {
    let mut value = document;
    for key in keys {
        value = value
            .get(key)
            .ok_or_else(|| format!("no {}", keys.join(".")))?;
    }
    let path = value
        .as_str()
        .ok_or_else(|| format!("{} is not a string", keys.join(".")))?;
    let fine = |c: char| c.is_ascii_graphic() && !"?#\\%".contains(c);
    if !path.starts_with("/redfish/v1/")
        || !path.chars().all(fine)
        || path.split('/').any(|s| s == "..")
        || path.len() > 512
    {
        return Err(format!(
            "{} {path:?} is not a resource path on this service",
            keys.join(".")
        ));
    }
    Ok(path.to_owned())
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
    parse_redfish_value(&value)
}

fn parse_redfish_value(value: &serde_json::Value) -> Result<String, String> {
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
    fn follows_only_resource_paths_on_the_same_service() {
        let doc = |id: &str| serde_json::json!({"Managers": {"@odata.id": id}});
        let managers = ["Managers", "@odata.id"];
        assert_eq!(
            link(&doc("/redfish/v1/Managers"), &managers).as_deref(),
            Ok("/redfish/v1/Managers")
        );
        for bad in [
            "https://elsewhere.example/redfish/v1/Managers",
            "//elsewhere.example/redfish/v1/Managers",
            "/redfish/v1/../../etc",
            "/redfish/v1/Managers?$expand=*",
            "/redfish/v1/Man agers",
            "/other/v1/Managers",
        ] {
            assert!(link(&doc(bad), &managers).is_err(), "{bad}");
        }
        assert!(link(&serde_json::json!({"Managers": {}}), &managers).is_err());
        assert!(
            link(
                &serde_json::json!({"Managers": {"@odata.id": 7}}),
                &managers
            )
            .is_err()
        );
    }

    #[test]
    fn reads_the_firmware_revision() {
        assert_eq!(parse_mc_info(MC_INFO).as_deref(), Ok("5.10"));
        assert!(parse_mc_info("Device ID : 32\n").is_err());
        assert!(parse_mc_info("Firmware Revision : \n").is_err());
    }
}
