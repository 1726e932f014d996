//! `security`: the sshd drop-in, audit rules and sysctls.

use crate::blueprint::Spec;
use serde::Serialize;

use crate::blueprint::model::*;
use crate::blueprint::value::SshPattern;

#[derive(Debug, Clone, Serialize)]
pub struct Security<'a> {
    pub ssh: Ssh<'a>,
    /// The baseline watches, then the blueprint's (a path the blueprint
    /// watches itself is not repeated: auditctl refuses a duplicate rule).
    pub audit: Vec<AuditWatch<'a>>,
    /// Syscall rules (module loading) after the watches.
    pub audit_syscalls: &'static [&'static str],
    pub sysctls: Vec<Sysctl<'a>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Ssh<'a> {
    pub enabled: bool,
    /// sshd's units on this distro family, masked when SSH is off (an empty
    /// unit file masks like a link to /dev/null, systemd.unit(5)).
    pub units: &'static [&'static str],
    pub port: u16,
    pub permit_root_login: &'static str,
    pub password_authentication: &'static str,
    pub allow_users: &'a [SshPattern],
    pub allow_groups: &'a [SshPattern],
    pub max_auth_tries: u8,
}

#[derive(Debug, Clone, Serialize)]
pub struct AuditWatch<'a> {
    pub path: &'a str,
    pub perms: &'a str,
    pub key: &'a str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sysctl<'a> {
    pub key: &'a str,
    pub value: String,
}

pub(super) fn of(s: &Spec) -> Security<'_> {
    let sec = &s.security;
    Security {
        ssh: Ssh {
            enabled: sec.ssh.enabled,
            units: if s.os.distro.is_rhel_family() {
                &["sshd.service", "sshd.socket"]
            } else {
                &["ssh.service", "ssh.socket"]
            },
            port: sec.ssh.port,
            permit_root_login: match sec.ssh.permit_root_login {
                RootLogin::No => "no",
                RootLogin::ProhibitPassword => "prohibit-password",
                RootLogin::Yes => "yes",
            },
            password_authentication: if sec.ssh.password_authentication {
                "yes"
            } else {
                "no"
            },
            allow_users: &sec.ssh.allow_users,
            allow_groups: &sec.ssh.allow_groups,
            max_auth_tries: sec.ssh.max_auth_tries,
        },
        audit: audit(s),
        audit_syscalls: if sec.audit.is_empty() {
            &[]
        } else {
            AUDIT_SYSCALLS
        },
        sysctls: sec
            .sysctls
            .iter()
            .map(|(k, v)| Sysctl {
                key: k.as_str(),
                value: v.to_string(),
            })
            .collect(),
    }
}

/// Watched whenever the blueprint asks for audit rules: node credentials
/// and configuration that decide what runs on the node, privilege, and the
/// kernel's module policy (CIS Benchmarks 4.1.x / 6.3.x families).
const AUDIT_BASELINE: &[(&str, &str, &str)] = &[
    ("/etc/kubernetes", "wa", "kubernetes"),
    ("/var/lib/kubelet/pki", "wa", "kubelet-pki"),
    ("/etc/sudoers", "wa", "privilege"),
    ("/etc/sudoers.d", "wa", "privilege"),
    ("/etc/ssh", "wa", "sshd"),
    ("/etc/modprobe.d", "wa", "modules"),
    ("/etc/modules-load.d", "wa", "modules"),
    ("/usr/sbin/insmod", "x", "modules"),
    ("/usr/sbin/rmmod", "x", "modules"),
    ("/usr/sbin/modprobe", "x", "modules"),
];

/// Module loading by any means (`finit_module` is what modprobe uses).
const AUDIT_SYSCALLS: &[&str] =
    &["-a always,exit -F arch=b64 -S init_module,finit_module,delete_module -k modules"];

fn audit(s: &Spec) -> Vec<AuditWatch<'_>> {
    let own = &s.security.audit;
    if own.is_empty() {
        return Vec::new();
    }
    let mut base: Vec<(&str, &str, &str)> = AUDIT_BASELINE.to_vec();
    if s.accelerators
        .as_ref()
        .is_some_and(|a| a.vendor == Vendor::Nvidia)
    {
        base.push(("/etc/nvidia-container-runtime", "wa", "gpu-runtime"));
    }
    base.extend(
        s.runtime
            .cdi
            .spec_dirs
            .iter()
            .map(|d| (d.as_str(), "wa", "cdi")),
    );
    base.retain(|(path, _, _)| !own.iter().any(|w| w.path.as_str() == *path));
    base.into_iter()
        .map(|(path, perms, key)| AuditWatch { path, perms, key })
        .chain(own.iter().map(|w| AuditWatch {
            path: w.path.as_str(),
            perms: w.permissions.as_str(),
            key: w.key.as_str(),
        }))
        .collect()
}
