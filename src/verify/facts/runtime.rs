//! The container runtime and the systemd units around it: `containerd --version`,
//! `kubelet --version` and
//! `systemctl is-active` for a list of units (containerd, kubelet, nvidia-fabricmanager).
//!
//! `containerd --version` prints `containerd github.com/containerd/containerd v1.7.12 <commit>`
//! upstream and `containerd containerd.io 1.6.28 <commit>` from Docker's packages; the version
//! is the first token that looks like one. `systemctl is-active` exits non-zero for an
//! inactive unit but still prints the state, so the printed state is the fact.

use crate::verify::fact::Fact;
use crate::verify::host::{Host, UnitName, VendorCommand};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Runtime {
    pub containerd_version: Fact<String>,
    /// `kubelet --version` (`Kubernetes v1.31.4`).
    pub kubelet_version: Fact<String>,
    /// `active`, `inactive`, `failed`, `activating`, ... per unit.
    pub units: BTreeMap<String, Fact<String>>,
}

pub fn collect(host: &dyn Host, units: &[UnitName], timeout: Duration) -> Runtime {
    let containerd_version = tool_version(host, &VendorCommand::ContainerdVersion, timeout);
    let kubelet_version = tool_version(host, &VendorCommand::KubeletVersion, timeout);
    let units = units
        .iter()
        .map(|unit| {
            let state =
                Fact::from(host.run(&VendorCommand::SystemctlIsActive(unit.clone()), timeout))
                    .and_then(|output| {
                        let text = output.stdout_text();
                        match text.lines().next().map(str::trim) {
                            Some(state) if !state.is_empty() => Fact::Known(state.to_owned()),
                            _ => Fact::unknown(format!(
                                "systemctl is-active {} printed no state; {}",
                                unit.as_str(),
                                output.failure_summary()
                            )),
                        }
                    });
            (unit.as_str().to_owned(), state)
        })
        .collect();
    Runtime {
        containerd_version,
        kubelet_version,
        units,
    }
}

/// The version a `--version` run prints, or why there is none.
fn tool_version(host: &dyn Host, command: &VendorCommand, timeout: Duration) -> Fact<String> {
    Fact::from(host.run(command, timeout)).and_then(|output| {
        if !output.success() {
            return Fact::unknown(format!("{command} {}", output.failure_summary()));
        }
        match parse_containerd_version(&output.stdout_text()) {
            Ok(version) => Fact::Known(version),
            Err(why) => Fact::unknown(format!("{command}: {why}")),
        }
    })
}

/// The first version-looking token of a `--version` line (`containerd ... v1.7.12 ...`,
/// `Kubernetes v1.31.4`).
pub fn parse_containerd_version(text: &str) -> Result<String, String> {
    text.split_whitespace()
        .filter(|word| !word.contains('/'))
        .map(|word| word.strip_prefix('v').unwrap_or(word))
        .find(|word| {
            let mut parts = word.split('.');
            let numeric = |p: Option<&str>| {
                p.is_some_and(|p| p.chars().next().is_some_and(|c| c.is_ascii_digit()))
            };
            numeric(parts.next()) && numeric(parts.next())
        })
        .map(str::to_owned)
        .ok_or_else(|| format!("no version in {:?}", text.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_version_token() {
        assert_eq!(
            parse_containerd_version(
                "containerd github.com/containerd/containerd v1.7.12 71909c1814c5\n"
            ),
            Ok("1.7.12".to_owned())
        );
        assert_eq!(
            parse_containerd_version("containerd containerd.io 1.6.28 ae07eda36dd2\n"),
            Ok("1.6.28".to_owned())
        );
        assert_eq!(
            parse_containerd_version(
                "containerd github.com/containerd/containerd/v2 v2.0.0 207ad71\n"
            ),
            Ok("2.0.0".to_owned())
        );
        assert!(parse_containerd_version("containerd").is_err());
    }
}
