//! Firmware and hardware identity from DMI (`/sys/class/dmi/id/*`): BIOS vendor, version and
//! date, system and board names, serials.
//!
//! The acceptance record needs the hardware SKU, serial and BIOS version; the blueprint pins
//! the BIOS version. Serial files are root-only, so they are often `Unknown` (permission)
//! for a non-root run.

use super::attribute;
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dmi {
    pub bios_vendor: Fact<String>,
    /// As DMI holds it (vendors write words too: `U46 v2.80`).
    pub bios_version: Fact<String>,
    /// `bios_version` as a version, for the pinned-version check; not serialised again.
    #[serde(skip)]
    pub bios: Fact<Version>,
    pub bios_date: Fact<String>,
    pub bios_release: Fact<String>,
    pub sys_vendor: Fact<String>,
    pub product_name: Fact<String>,
    pub product_sku: Fact<String>,
    pub product_serial: Fact<String>,
    pub board_vendor: Fact<String>,
    pub board_name: Fact<String>,
    pub board_version: Fact<String>,
    pub board_serial: Fact<String>,
    pub chassis_type: Fact<String>,
}

pub fn collect(host: &dyn Host) -> Dmi {
    let field = |name: &str| attribute::text(host, &format!("/sys/class/dmi/id/{name}"));
    let bios_version = field("bios_version");
    Dmi {
        bios_vendor: field("bios_vendor"),
        bios: bios_version
            .clone()
            .version("/sys/class/dmi/id/bios_version"),
        bios_version,
        bios_date: field("bios_date"),
        bios_release: field("bios_release"),
        sys_vendor: field("sys_vendor"),
        product_name: field("product_name"),
        product_sku: field("product_sku"),
        product_serial: field("product_serial"),
        board_vendor: field("board_vendor"),
        board_name: field("board_name"),
        board_version: field("board_version"),
        board_serial: field("board_serial"),
        chassis_type: field("chassis_type"),
    }
}
