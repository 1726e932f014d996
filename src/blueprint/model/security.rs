//! `security`: remote access (SSH), audit rules and hardening sysctls.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{AbsPath, AuditKey, AuditPerms, SshPattern};
pub use crate::blueprint::value::{SysctlValue, Sysctls};

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Security {
    #[serde(default)]
    pub ssh: Ssh,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<AuditWatch>,
    /// Kernel parameters, e.g. `kernel.kptr_restrict: 2`: an integer, or text for parameters that
    /// take words (`"32768 60999"`). `kernel/kptr_restrict` names the same parameter; only one may appear.
    #[serde(default, skip_serializing_if = "Sysctls::is_empty")]
    pub sysctls: Sysctls,
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
    pub allow_users: Vec<SshPattern>,
    /// Only members of these groups may log in (empty: any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_groups: Vec<SshPattern>,
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
    pub permissions: AuditPerms,
    /// Tag of the matching audit records: 1–31 letters, digits, `-`, `_`.
    pub key: AuditKey,
}
