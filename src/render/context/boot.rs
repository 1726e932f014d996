//! `boot`: how the kernel arguments reach the boot loader on each distro
//! family — the `/etc/default/grub.d` drop-in that `update-grub` reads on
//! Debian and Ubuntu, and a first-boot `grubby` unit on the RHEL family,
//! whose BLS entries carry their own `options` line that grub2-mkconfig
//! does not rewrite (and whose grub2-mkconfig never reads grub.d).

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Where the grubby unit records that it rebooted for an argument set.
pub const STAMP_DIR: &str = "/var/lib/nodeimg";

#[derive(Debug, Clone, Serialize)]
pub struct Boot {
    /// Debian family: `etc/default/grub.d/50-nodeimg.cfg`.
    pub grub_dropin: bool,
    /// RHEL family: `nodeimg-kernel-args.service` runs
    /// `grubby --update-kernel=ALL --args=…`.
    pub grubby: bool,
    /// The arguments, space-separated (each already checked: no blank, no quote).
    pub args_line: String,
    /// Present once the unit rebooted for exactly these arguments, so a boot
    /// loader that ignores them cannot make the node reboot forever.
    pub stamp: String,
    pub stamp_dir: &'static str,
}

pub(super) fn of(rhel: bool, args: &[String]) -> Boot {
    let args_line = args.join(" ");
    let digest = Sha256::digest(args_line.as_bytes());
    let short: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    Boot {
        grub_dropin: !rhel,
        grubby: rhel && !args.is_empty(),
        args_line,
        stamp: format!("{STAMP_DIR}/kernel-args-{short}.rebooted"),
        stamp_dir: STAMP_DIR,
    }
}
