//! The container runtime and the systemd units around it: `containerd --version`,
//! `kubelet --version` and
//! one `systemctl is-active` for a list of units (containerd, kubelet,
//! nvidia-fabricmanager, the time sync daemons), all at once.
//!
//! `containerd --version` prints `containerd github.com/containerd/containerd v1.7.12 <commit>`
//! upstream and `containerd containerd.io 1.6.28 <commit>` from Docker's packages; the version
//! is the first token that looks like one. `systemctl is-active` exits non-zero for an
//! inactive unit but still prints the state, so the printed state is the fact.

use super::options::RuntimeVersions;
use crate::blueprint::value::Version;
use crate::verify::fact::Fact;
use crate::verify::host::{Host, UnitName, VendorCommand};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Runtime {
    pub containerd_version: Fact<Version>,
    /// `kubelet --version` (`Kubernetes v1.31.4`).
    pub kubelet_version: Fact<Version>,
    /// `active`, `inactive`, `failed`, `activating`, ... per unit.
    pub units: BTreeMap<String, Fact<String>>,
}

/// Runs the commands `versions` and `units` ask for; a version not asked for is unknown,
/// saying so.
pub fn collect(
    host: &dyn Host,
    units: &[UnitName],
    versions: RuntimeVersions,
    timeout: Duration,
) -> Runtime {
    let version = |asked: bool, command: VendorCommand| {
        if asked {
            tool_version(host, &command, timeout)
        } else {
            Fact::unknown(format!("{command} was not run: no selected check reads it"))
        }
    };
    // The three commands are independent: run them at once, under the same deadline.
    std::thread::scope(|scope| {
        let containerd =
            scope.spawn(|| version(versions.containerd, VendorCommand::ContainerdVersion));
        let kubelet = scope.spawn(|| version(versions.kubelet, VendorCommand::KubeletVersion));
        let units = unit_states(host, units, timeout);
        Runtime {
            containerd_version: joined(containerd),
            kubelet_version: joined(kubelet),
            units,
        }
    })
}

/// A scoped thread's result; a panic there is re-raised here, as it would have been
/// without the thread.
pub(super) fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Every unit's state from one `systemctl is-active -- u1 u2 ...`, which prints one line
/// per unit in order. A capture made when each unit was asked for alone has no record of
/// the combined command: then each unit is asked for alone.
fn unit_states(
    host: &dyn Host,
    units: &[UnitName],
    timeout: Duration,
) -> BTreeMap<String, Fact<String>> {
    if units.is_empty() {
        return BTreeMap::new();
    }
    let command = VendorCommand::SystemctlIsActive(units.to_vec());
    let states = match host.run(&command, timeout) {
        Err(err) if err.is_not_found() && units.len() > 1 => {
            return units
                .iter()
                .flat_map(|unit| unit_states(host, std::slice::from_ref(unit), timeout))
                .collect();
        }
        Err(err) => Err(err.to_string()),
        Ok(output) => {
            let text = output.stdout_text();
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            if lines.len() == units.len() && lines.iter().all(|l| !l.is_empty()) {
                Ok(lines.into_iter().map(str::to_owned).collect::<Vec<_>>())
            } else {
                Err(format!(
                    "{command} printed {} state line(s) for {} unit(s); {}",
                    lines.len(),
                    units.len(),
                    output.failure_summary()
                ))
            }
        }
    };
    units
        .iter()
        .enumerate()
        .map(|(i, unit)| {
            let state = match &states {
                Ok(states) => Fact::Known(states[i].clone()),
                Err(why) => Fact::unknown(why.clone()),
            };
            (unit.as_str().to_owned(), state)
        })
        .collect()
}

/// The version a `--version` run prints, parsed once, or why there is none.
fn tool_version(host: &dyn Host, command: &VendorCommand, timeout: Duration) -> Fact<Version> {
    Fact::from(host.run(command, timeout)).and_then(|output| {
        if !output.success() {
            return Fact::unknown(format!("{command} {}", output.failure_summary()));
        }
        match parse_containerd_version(&output.stdout_text()).and_then(|v| v.parse::<Version>()) {
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
