//! Kernel parameters as the running kernel holds them, read back from `/proc/sys`.
//!
//! The image writes its parameters to `etc/sysctl.d/90-nodeimg.conf`; `systemd-sysctl`
//! applies them at boot, and anything later (another `sysctl.d` file sorting after it, a
//! module loaded late, a value the kernel refused) can leave the kernel with something
//! else. Only `/proc/sys` says what holds, so that is what is read: one file per
//! parameter, the dotted name turned into a path the way sysctl.d(5) does
//! ([`SysctlKey::proc_path`]).
//!
//! A value is kept as its whitespace-separated fields ([`Setting`]): the kernel prints
//! multi-value parameters with tabs (`net.ipv4.ip_local_port_range` reads
//! `32768\t60999`), while sysctl.d is written with spaces. [`Setting::holds`] compares a
//! wanted value the way the kernel would have parsed it when it was written.

use crate::blueprint::value::SysctlKey;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The parameters collected when the caller names none: every key the image's
/// baselines can write (the render context's `kernel.sysctls`), so a capture made
/// without a blueprint still holds what verify compares. Keys the blueprint adds
/// (`security.sysctls`) are asked for by verify itself.
pub const BASELINE: &[&str] = &[
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
    "net.ipv4.ip_forward",
    "net.bridge.bridge-nf-call-iptables",
    "net.bridge.bridge-nf-call-ip6tables",
    "fs.inotify.max_user_instances",
    "fs.inotify.max_user_watches",
    "kernel.pid_max",
    "kernel.numa_balancing",
    "net.ipv4.conf.all.rp_filter",
    "net.ipv4.conf.all.arp_ignore",
    "net.ipv4.conf.all.arp_announce",
];

/// The baseline keys, parsed.
pub fn baseline() -> Vec<SysctlKey> {
    BASELINE.iter().filter_map(|key| key.parse().ok()).collect()
}

/// One parameter's value as `/proc/sys` prints it, split into its fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Setting(Vec<String>);

impl Setting {
    pub fn parse(text: &str) -> Self {
        Setting(text.split_whitespace().map(str::to_owned).collect())
    }

    /// Whether the kernel holds `wanted`, a value as sysctl.d writes it.
    ///
    /// Fields compare one by one, and their number must agree. A wanted field that is an
    /// integer compares by value: the kernel's `proc_dointvec` family reads numbers with
    /// base 0 (`strtoul(…, 0)`: `0x10` is 16, `010` is 8) and prints them in decimal.
    /// Any other field (a word, a path) compares as text.
    pub fn holds(&self, wanted: &str) -> bool {
        let wanted: Vec<&str> = wanted.split_whitespace().collect();
        wanted.len() == self.0.len()
            && wanted.iter().zip(&self.0).all(|(want, have)| {
                match (kernel_integer(want), decimal(have)) {
                    (Some(want), Some(have)) => want == have,
                    _ => want == have,
                }
            })
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join(" "))
    }
}

/// An integer as the kernel's sysctl handlers read one: an optional `-`, then base 0
/// (`0x`/`0X` hexadecimal, a leading `0` octal, decimal otherwise).
fn kernel_integer(text: &str) -> Option<i128> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i128::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1
        && let Some(octal) = digits.strip_prefix('0')
    {
        i128::from_str_radix(octal, 8).ok()?
    } else {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// A number as `/proc/sys` prints one: decimal, maybe negative.
fn decimal(text: &str) -> Option<i128> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Reads each parameter from `/proc/sys`. A parameter the kernel does not have (a module
/// not loaded: `net.bridge.*` without `br_netfilter`) or cannot show is `Unknown` with the
/// reason, never a default.
pub fn collect(host: &dyn Host, keys: &[SysctlKey]) -> BTreeMap<String, Fact<Setting>> {
    keys.iter()
        .map(|key| {
            let path = format!("/proc/sys/{}", key.proc_path());
            let setting = Fact::from(host.read_text(Path::new(&path))).map(|t| Setting::parse(&t));
            (key.as_str().to_owned(), setting)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_as_the_kernel_reads_them() {
        let one = Setting::parse("1\n");
        assert!(one.holds("1"));
        assert!(one.holds("0x1"));
        assert!(one.holds("01"));
        assert!(!one.holds("2"));
        assert!(!one.holds("1 1"));
        assert!(Setting::parse("8\n").holds("010"));
        assert!(Setting::parse("-1\n").holds("-1"));
        let range = Setting::parse("32768\t60999\n");
        assert!(range.holds("32768 60999"));
        assert!(range.holds("32768   60999"));
        assert!(!range.holds("32768"));
        assert!(!range.holds("60999 32768"));
        assert_eq!(range.to_string(), "32768 60999");
        let words = Setting::parse("|/usr/lib/systemd/systemd-coredump %P\n");
        assert!(words.holds("|/usr/lib/systemd/systemd-coredump %P"));
        assert!(!words.holds("core"));
        // Text never passes as a number or the reverse.
        assert!(!Setting::parse("on\n").holds("1"));
        assert!(!Setting::parse("\n").holds("0"));
    }

    #[test]
    fn baseline_keys_are_valid_names() {
        assert_eq!(baseline().len(), BASELINE.len());
    }
}
