//! Boot integrity: UEFI Secure Boot, kernel module signature enforcement, and lockdown.
//!
//! Secure Boot is the `SecureBoot` EFI variable of the global GUID
//! `8be4df61-93ca-11d2-aa0d-00e098032b8c`: efivarfs prints 4 attribute bytes and then the
//! 1-byte value (1 = on). The file is binary and read as bytes. A machine without
//! `/sys/firmware/efi` (but with `/sys/firmware`) booted in legacy BIOS mode and cannot
//! have Secure Boot.
//! With Secure Boot on, unsigned out-of-tree modules (a self-built NVIDIA driver) fail to
//! load unless `sig_enforce` is off or they are signed with an enrolled key.

use super::attribute;
use super::memory::selected_choice;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::path::Path;

pub const SECURE_BOOT_VAR: &str =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SecureBoot {
    Enabled,
    Disabled,
    /// Booted without UEFI: no Secure Boot possible.
    LegacyBoot,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootSecurity {
    pub secure_boot: Fact<SecureBoot>,
    /// `/sys/module/module/parameters/sig_enforce` (`Y`/`N`).
    pub module_sig_enforce: Fact<bool>,
    /// The selected mode of `/sys/kernel/security/lockdown`.
    pub lockdown: Fact<String>,
}

pub fn collect(host: &dyn Host) -> BootSecurity {
    BootSecurity {
        secure_boot: secure_boot(host),
        module_sig_enforce: attribute::parsed(
            host,
            "/sys/module/module/parameters/sig_enforce",
            |raw| match raw {
                "Y" | "1" => Ok(true),
                "N" | "0" => Ok(false),
                _ => Err("expected Y or N".to_owned()),
            },
        ),
        lockdown: attribute::parsed(host, "/sys/kernel/security/lockdown", selected_choice),
    }
}

fn secure_boot(host: &dyn Host) -> Fact<SecureBoot> {
    match host.read(Path::new(SECURE_BOOT_VAR)) {
        Ok(bytes) => match parse_efivar(&bytes) {
            Ok(value) => Fact::Known(value),
            Err(why) => Fact::unknown(format!("{SECURE_BOOT_VAR}: {why}")),
        },
        // Legacy boot only when sysfs is there to say so: `/sys/firmware` exists on every
        // booted machine (acpi, dmi, memmap), so its absence means an unmounted sysfs or a
        // tree that is not a machine's, not a BIOS boot.
        Err(err) if err.is_not_found() => match host.list_dir(Path::new("/sys/firmware/efi")) {
            Err(efi) if efi.is_not_found() => match host.list_dir(Path::new("/sys/firmware")) {
                Ok(_) => Fact::Known(SecureBoot::LegacyBoot),
                Err(firmware) => Fact::unknown(format!(
                    "{firmware}: the boot mode (UEFI or BIOS) is unknown without /sys/firmware"
                )),
            },
            _ => Fact::unknown(err.to_string()),
        },
        Err(err) => Fact::unknown(err.to_string()),
    }
}

/// 4 attribute bytes, then the value byte.
pub fn parse_efivar(bytes: &[u8]) -> Result<SecureBoot, String> {
    match bytes.get(4) {
        Some(1) => Ok(SecureBoot::Enabled),
        Some(0) => Ok(SecureBoot::Disabled),
        Some(other) => Err(format!("unexpected value byte {other:#04x}")),
        None => Err(format!("{} bytes, expected 5", bytes.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fifth_byte() {
        assert_eq!(parse_efivar(&[6, 0, 0, 0, 1]), Ok(SecureBoot::Enabled));
        assert_eq!(parse_efivar(&[6, 0, 0, 0, 0]), Ok(SecureBoot::Disabled));
        assert!(parse_efivar(&[6, 0, 0, 0]).is_err());
        assert!(parse_efivar(&[6, 0, 0, 0, 7]).is_err());
    }
}
