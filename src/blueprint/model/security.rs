//! `security`: remote access (SSH), audit rules, hardening sysctls and the keys images must
//! be signed by.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blueprint::value::{AbsPath, AuditKey, AuditPerms, DnsLabel, RelPath, SshPattern};
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
    /// The keys an image must be signed by (cosign-compatible sigstore signatures, checked
    /// by `nodeimg apply`, `nodeimg verify --phase boot`, `nodeimg verify-image` and
    /// `nodeimg rollout plan`). The public keys go into the image under
    /// `/etc/nodeimg/trust/`, so the node knows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_trust: Option<ImageTrust>,
}

/// Where the image keeps the keys of `imageTrust` (relative to the root): `<name>.pub`.
pub const TRUST_DIR: &str = "etc/nodeimg/trust";

/// Which signatures an image needs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageTrust {
    /// Public keys; an image signed by any one of them is trusted.
    pub keys: Vec<TrustKey>,
    /// Refuse an image without a valid signature by one of the keys (`false`: report it
    /// as a warning and go on, while signing is being introduced).
    #[serde(default = "yes")]
    pub require: bool,
}

/// One trusted public key.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustKey {
    /// File name on the node: `/etc/nodeimg/trust/<name>.pub`.
    pub name: DnsLabel,
    /// PEM public key (`PUBLIC KEY`, ECDSA P-256), relative to the blueprint file.
    pub file: RelPath,
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
