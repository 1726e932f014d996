//! The running kernel: its release (`/proc/sys/kernel/osrelease`) and its command line
//! (`/proc/cmdline`), tokenised the way the kernel does it.
//!
//! Parameters are split on whitespace outside double quotes, so `dyndbg="file a.c +p"`
//! stays one parameter; the quotes around a value are removed. Everything after `--` goes
//! to init and is kept apart, because `nodeimg` checks kernel parameters, not init's.

use super::attribute;
use crate::verify::fact::Fact;
use crate::verify::host::Host;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Kernel {
    /// e.g. `6.8.0-45-generic`.
    pub release: Fact<String>,
    pub cmdline: Fact<KernelCmdline>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelCmdline {
    pub raw: String,
    /// Parameters for the kernel, in order.
    pub params: Vec<KernelParam>,
    /// Arguments after `--`, passed to init.
    pub init_args: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelParam {
    pub key: String,
    /// `None` for a bare flag (`quiet`), `Some("")` for `key=`.
    pub value: Option<String>,
}

impl KernelCmdline {
    /// The last value given for `key` (the kernel lets later ones win).
    pub fn get(&self, key: &str) -> Option<&KernelParam> {
        self.params.iter().rev().find(|param| param.key == key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

pub fn collect(host: &dyn Host) -> Kernel {
    Kernel {
        release: attribute::text(host, "/proc/sys/kernel/osrelease"),
        cmdline: attribute::text(host, "/proc/cmdline").map(|raw| parse_cmdline(&raw)),
    }
}

/// Splits a kernel command line into parameters and init arguments.
pub fn parse_cmdline(raw: &str) -> KernelCmdline {
    let mut params = Vec::new();
    let mut init_args = Vec::new();
    let mut after_dashes = false;
    for token in tokens(raw) {
        if after_dashes {
            init_args.push(token);
        } else if token == "--" {
            after_dashes = true;
        } else {
            params.push(split_param(&token));
        }
    }
    KernelCmdline {
        raw: raw.trim().to_owned(),
        params,
        init_args,
    }
}

/// Whitespace-separated tokens; whitespace inside double quotes does not split.
fn tokens(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    let mut started = false;
    for c in raw.chars() {
        if c == '"' {
            in_quotes = !in_quotes;
            current.push(c);
            started = true;
        } else if c.is_whitespace() && !in_quotes {
            if started {
                out.push(std::mem::take(&mut current));
                started = false;
            }
        } else {
            current.push(c);
            started = true;
        }
    }
    if started {
        out.push(current);
    }
    out
}

fn split_param(token: &str) -> KernelParam {
    let strip = |s: &str| s.trim_matches('"').to_owned();
    let token = token.strip_prefix('"').unwrap_or(token);
    match token.split_once('=') {
        Some((key, value)) => KernelParam {
            key: strip(key),
            value: Some(strip(value)),
        },
        None => KernelParam {
            key: strip(token),
            value: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenises_quotes_and_init_args() {
        let cmdline = parse_cmdline(
            "BOOT_IMAGE=/vmlinuz ro quiet dyndbg=\"file drivers/a.c +p\" iommu=pt  hugepages=0 hugepages=8 foo= -- --init-flag x\n",
        );
        assert_eq!(cmdline.params.len(), 8);
        assert_eq!(
            cmdline.get("dyndbg").and_then(|p| p.value.as_deref()),
            Some("file drivers/a.c +p")
        );
        assert_eq!(cmdline.get("quiet").map(|p| p.value.clone()), Some(None));
        assert_eq!(
            cmdline.get("hugepages").and_then(|p| p.value.as_deref()),
            Some("8")
        );
        assert_eq!(
            cmdline.get("foo").and_then(|p| p.value.as_deref()),
            Some("")
        );
        assert_eq!(cmdline.init_args, vec!["--init-flag", "x"]);
        assert!(!cmdline.has("--init-flag"));
    }
}
