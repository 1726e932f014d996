//! The trust policy: which public keys an image must be signed by, and whether a missing
//! or bad signature refuses the image or is only reported.
//!
//! It comes from the blueprint (`security.imageTrust`, key files beside the blueprint),
//! from a site policy file (`--trust-policy FILE`, the same fields with `apiVersion:
//! nodeimg.dev/v1alpha1` and `kind: TrustPolicy`, key files beside it), from keys given
//! on the command line (`--key PUB`), or, on a node, from the lock and the keys the image
//! put under `/etc/nodeimg/trust/` ([`TrustPolicy::from_node`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::key::{KeyError, KeyId, PublicKey};
use crate::blueprint::Blueprint;
use crate::blueprint::model::TrustKey;

/// One trusted key and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedKey {
    pub name: String,
    pub key: PublicKey,
}

/// Keys an image must be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    pub keys: Vec<NamedKey>,
    /// Refuse (true) or only report (false) an image that does not verify.
    pub require: bool,
    /// Where the policy came from, for messages.
    pub source: String,
}

/// A site policy file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PolicyFile {
    api_version: String,
    kind: String,
    keys: Vec<TrustKey>,
    #[serde(default = "yes")]
    require: bool,
}

fn yes() -> bool {
    true
}

/// Largest policy file read.
const MAX_POLICY_BYTES: u64 = 1024 * 1024;

fn load_keys(base: &Path, keys: &[TrustKey]) -> Result<Vec<NamedKey>, KeyError> {
    keys.iter()
        .map(|k| {
            Ok(NamedKey {
                name: k.name.to_string(),
                key: PublicKey::read(&base.join(k.file.as_str()))?,
            })
        })
        .collect()
}

impl TrustPolicy {
    /// The blueprint's `security.imageTrust`, with its key files read; `None` without one.
    pub fn from_blueprint(bp: &Blueprint) -> Result<Option<Self>, KeyError> {
        let Some(t) = &bp.spec().security.image_trust else {
            return Ok(None);
        };
        let base = crate::atomic::parent_dir(bp.file());
        Ok(Some(Self {
            keys: load_keys(base, &t.keys)?,
            require: t.require,
            source: format!("{} (security.imageTrust)", bp.file().display()),
        }))
    }

    /// Public key files given by name (`--key`): required.
    pub fn from_key_files(paths: &[PathBuf]) -> Result<Self, KeyError> {
        let keys = paths
            .iter()
            .map(|p| {
                Ok(NamedKey {
                    name: p.display().to_string(),
                    key: PublicKey::read(p)?,
                })
            })
            .collect::<Result<Vec<_>, KeyError>>()?;
        Ok(Self {
            keys,
            require: true,
            source: "--key".into(),
        })
    }

    /// A site policy file.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let at = |m: String| format!("{}: {m}", path.display());
        let bytes = crate::input::read(path, MAX_POLICY_BYTES).map_err(|e| at(e.to_string()))?;
        let text = crate::blueprint::source::decode(&bytes).map_err(|e| at(e.to_string()))?;
        let doc = crate::blueprint::source::parse(text).map_err(|e| at(e.to_string()))?;
        let file: PolicyFile = doc.to().map_err(|e| at(e.to_string()))?;
        if file.api_version != "nodeimg.dev/v1alpha1" || file.kind != "TrustPolicy" {
            return Err(at(format!(
                "apiVersion/kind is {}/{}; a policy file is nodeimg.dev/v1alpha1/TrustPolicy",
                file.api_version, file.kind
            )));
        }
        if file.keys.is_empty() {
            return Err(at("keys: names no key".into()));
        }
        let base = crate::atomic::parent_dir(path);
        Ok(Self {
            keys: load_keys(base, &file.keys).map_err(|e| at(e.to_string()))?,
            require: file.require,
            source: path.display().to_string(),
        })
    }

    /// On a node: the policy in the lock's blueprint, with the keys the image put under
    /// `etc/nodeimg/trust/<name>.pub`, read by `read` (a path relative to the root).
    pub fn from_node(
        bp: &Blueprint,
        read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
    ) -> Result<Option<Self>, String> {
        let Some(t) = &bp.spec().security.image_trust else {
            return Ok(None);
        };
        let keys = t
            .keys
            .iter()
            .map(|k| {
                let path = format!("{}/{}.pub", crate::blueprint::model::TRUST_DIR, k.name);
                let bytes = read(&path)?;
                let text = String::from_utf8(bytes).map_err(|_| format!("{path}: not UTF-8"))?;
                Ok(NamedKey {
                    name: k.name.to_string(),
                    key: PublicKey::from_pem(&text).map_err(|m| format!("{path}: {m}"))?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Some(Self {
            keys,
            require: t.require,
            source: "the lock's security.imageTrust".into(),
        }))
    }

    pub fn public_keys(&self) -> Vec<PublicKey> {
        self.keys.iter().map(|k| k.key.clone()).collect()
    }

    pub fn ids(&self) -> Vec<KeyId> {
        self.keys.iter().map(|k| k.key.id().clone()).collect()
    }

    /// The name of the key with `id`, if the policy has it.
    pub fn name_of(&self, id: &KeyId) -> Option<&str> {
        self.keys
            .iter()
            .find(|k| k.key.id() == id)
            .map(|k| k.name.as_str())
    }
}
