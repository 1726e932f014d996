//! `security`: remote access (SSH), audit rules and hardening sysctls.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::AbsPath;

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Security {
    #[serde(default)]
    pub ssh: Ssh,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<AuditWatch>,
    /// Kernel parameters, e.g. `kernel.kptr_restrict: 2`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sysctls: BTreeMap<String, SysctlValue>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ssh {
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "default_port")]
    pub port: u16,
    #[serde(default)]
    pub permit_root_login: RootLogin,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub password_authentication: bool,
    /// Only these users may log in (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_users: Vec<String>,
    /// Only members of these groups may log in (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_groups: Vec<String>,
    #[serde(default = "default_max_auth_tries")]
    pub max_auth_tries: u8,
}

impl Default for Ssh {
    fn default() -> Self {
        Self {
            enabled: true,
            port: default_port(),
            permit_root_login: RootLogin::default(),
            password_authentication: false,
            allow_users: Vec::new(),
            allow_groups: Vec::new(),
            max_auth_tries: default_max_auth_tries(),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_port() -> u16 {
    22
}

fn default_max_auth_tries() -> u8 {
    3
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RootLogin {
    #[default]
    No,
    ProhibitPassword,
    Yes,
}

/// An audit watch: `-w PATH -p PERMS -k KEY`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditWatch {
    pub path: AbsPath,
    /// Any of `r`, `w`, `x`, `a`.
    pub permissions: String,
    pub key: String,
}

/// A sysctl value: text or a number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SysctlValue {
    Number(i64),
    Text(String),
}

impl std::fmt::Display for SysctlValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SysctlValue::Number(n) => write!(f, "{n}"),
            SysctlValue::Text(t) => f.write_str(t),
        }
    }
}
