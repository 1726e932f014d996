//! `security`: the sshd drop-in, audit rules and sysctls.

use serde::Serialize;

use crate::blueprint::model::*;

#[derive(Debug, Clone, Serialize)]
pub struct Security<'a> {
    pub ssh: Ssh<'a>,
    pub audit: Vec<AuditWatch<'a>>,
    pub sysctls: Vec<Sysctl<'a>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Ssh<'a> {
    pub enabled: bool,
    pub port: u16,
    pub permit_root_login: &'static str,
    pub password_authentication: &'static str,
    pub allow_users: &'a [String],
    pub allow_groups: &'a [String],
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

pub(super) fn of(s: &RawBlueprint) -> Security<'_> {
    let sec = &s.security;
    Security {
        ssh: Ssh {
            enabled: sec.ssh.enabled,
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
        audit: sec
            .audit
            .iter()
            .map(|w| AuditWatch {
                path: w.path.as_str(),
                perms: &w.permissions,
                key: &w.key,
            })
            .collect(),
        sysctls: sec
            .sysctls
            .iter()
            .map(|(k, v)| Sysctl {
                key: k,
                value: v.to_string(),
            })
            .collect(),
    }
}
