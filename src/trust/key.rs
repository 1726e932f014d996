//! Signing and verifying keys: ECDSA P-256, as cosign and containers/image use them.
//!
//! A private key comes from a PEM file (PKCS#8 `PRIVATE KEY`, as `openssl ecparam -name
//! prime256v1 -genkey | openssl pkcs8 -topk8 -nocrypt` writes it, or SEC1 `EC PRIVATE
//! KEY`) or from an environment variable holding the same text (`env://VAR`, cosign's
//! convention). A public key is a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), the file
//! skopeo's `sigstoreSigned` policy names with `keyPath`.
//!
//! A key is named by its [`KeyId`]: `sha256:` and the SHA-256 of the SubjectPublicKeyInfo
//! DER, the same for the private key and its public half, printed wherever a key is
//! meant. Errors name the file or the variable and what is wrong, never key material.

use std::fmt;
use std::path::{Path, PathBuf};

use p256::ecdsa::signature::{Signer, Verifier};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePublicKey, LineEnding};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::package::Digest;

/// Largest key file read (a P-256 key in PEM is a few hundred bytes).
const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

/// The prefix of a private key given as an environment variable.
pub const ENV_PREFIX: &str = "env://";

/// A key's name: the SHA-256 of its SubjectPublicKeyInfo DER, as `sha256:<hex>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KeyId(String);

impl KeyId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A key that could not be used: where it came from and why.
#[derive(Debug, Error)]
#[error("key {origin}: {message}")]
pub struct KeyError {
    /// The file, or `env://VAR`.
    pub origin: String,
    pub message: String,
}

/// An ECDSA P-256 public key, and its id.
#[derive(Debug, Clone)]
pub struct PublicKey {
    key: p256::ecdsa::VerifyingKey,
    id: KeyId,
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for PublicKey {}

impl PublicKey {
    fn new(key: p256::ecdsa::VerifyingKey) -> Self {
        let der = key
            .to_public_key_der()
            .map(|d| d.as_bytes().to_vec())
            .unwrap_or_default();
        let id = KeyId(Digest::of(&der).to_string());
        Self { key, id }
    }

    /// Parses PEM text holding one `PUBLIC KEY` block.
    pub fn from_pem(text: &str) -> Result<Self, String> {
        let (label, block) = first_block(text)?;
        match label {
            "PUBLIC KEY" => p256::ecdsa::VerifyingKey::from_public_key_pem(block)
                .map(Self::new)
                .map_err(|e| format!("not an ECDSA P-256 public key ({e})")),
            l if l.contains("PRIVATE KEY") => Err(format!(
                "holds a `{l}` block; give the public key (`openssl pkey -pubout` writes it), never the private key"
            )),
            l => Err(format!(
                "holds a `{l}` block; expected a `PUBLIC KEY` (ECDSA P-256)"
            )),
        }
    }

    /// Reads a public key file.
    pub fn read(path: &Path) -> Result<Self, KeyError> {
        let err = |message: String| KeyError {
            origin: path.display().to_string(),
            message,
        };
        let text =
            crate::input::read_text(path, MAX_KEY_FILE_BYTES).map_err(|e| err(e.to_string()))?;
        Self::from_pem(&text).map_err(err)
    }

    pub fn id(&self) -> &KeyId {
        &self.id
    }

    /// True when `signature` (ASN.1 DER, as cosign and Go's `ecdsa.SignASN1` write it) is
    /// this key's ECDSA signature over the SHA-256 of `message`.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        p256::ecdsa::DerSignature::try_from(signature)
            .is_ok_and(|sig| self.key.verify(message, &sig).is_ok())
    }

    /// The key as PEM `PUBLIC KEY` text.
    pub fn to_pem(&self) -> String {
        self.key
            .to_public_key_pem(LineEnding::LF)
            .unwrap_or_default()
    }
}

/// An ECDSA P-256 private key. Signing is deterministic (RFC 6979): the same payload and
/// key give the same signature bytes.
pub struct SigningKey {
    key: p256::ecdsa::SigningKey,
    public: PublicKey,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningKey({})", self.public.id)
    }
}

impl SigningKey {
    /// Parses PEM text holding a PKCS#8 `PRIVATE KEY` or a SEC1 `EC PRIVATE KEY` block
    /// (other blocks before it, such as openssl's `EC PARAMETERS`, are skipped).
    pub fn from_pem(text: &str) -> Result<Self, String> {
        let mut rest = text;
        loop {
            let (label, block) = first_block(rest)?;
            let key = match label {
                "PRIVATE KEY" => p256::ecdsa::SigningKey::from_pkcs8_pem(block)
                    .map_err(|e| format!("not an ECDSA P-256 PKCS#8 private key ({e})"))?,
                "EC PRIVATE KEY" => p256::SecretKey::from_sec1_pem(block)
                    .map(p256::ecdsa::SigningKey::from)
                    .map_err(|e| format!("not an ECDSA P-256 SEC1 private key ({e})"))?,
                "EC PARAMETERS" => {
                    rest = &rest[rest.find(block).unwrap_or(0) + block.len()..];
                    continue;
                }
                "ENCRYPTED PRIVATE KEY" => {
                    return Err(
                        "is an encrypted PKCS#8 key; nodeimg reads unencrypted keys \
                         (`openssl pkcs8 -topk8 -nocrypt`), kept in a file only its owner \
                         reads or passed as env://VAR"
                            .into(),
                    );
                }
                l if l.contains("COSIGN") || l.contains("SIGSTORE") => {
                    return Err(format!(
                        "is a cosign key (`{l}`, encrypted with a password); nodeimg reads the \
                         PKCS#8 key it was made from (`cosign import-key-pair` makes a cosign key \
                         from such a file)"
                    ));
                }
                "PUBLIC KEY" => {
                    return Err("is a public key; signing needs the private key".into());
                }
                l => {
                    return Err(format!(
                        "holds a `{l}` block; expected an ECDSA P-256 `PRIVATE KEY` (PKCS#8)"
                    ));
                }
            };
            let public = PublicKey::new(*key.verifying_key());
            return Ok(Self { key, public });
        }
    }

    /// Loads the key from a PEM file, or from the environment variable `VAR` for
    /// `env://VAR`.
    pub fn load(source: &str) -> Result<Self, KeyError> {
        let err = |message: String| KeyError {
            origin: source.to_owned(),
            message,
        };
        let text = match source.strip_prefix(ENV_PREFIX) {
            Some(var) => {
                if var.is_empty() {
                    return Err(err("names no environment variable".into()));
                }
                std::env::var(var).map_err(|e| match e {
                    std::env::VarError::NotPresent => err("the variable is not set".into()),
                    std::env::VarError::NotUnicode(_) => err("the variable is not UTF-8".into()),
                })?
            }
            None => crate::input::read_text(&PathBuf::from(source), MAX_KEY_FILE_BYTES)
                .map_err(|e| err(e.to_string()))?,
        };
        Self::from_pem(&text).map_err(err)
    }

    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// The ECDSA signature over the SHA-256 of `message`, as ASN.1 DER.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        let sig: p256::ecdsa::Signature = self.key.sign(message);
        sig.to_der().as_bytes().to_vec()
    }
}

/// The label of the first PEM block in `text` and the block itself (BEGIN to END lines).
fn first_block(text: &str) -> Result<(&str, &str), String> {
    let start = text
        .find("-----BEGIN ")
        .ok_or("is not a PEM key (no `-----BEGIN` line)")?;
    let after = &text[start + "-----BEGIN ".len()..];
    let label_end = after
        .find("-----")
        .ok_or("has a malformed `-----BEGIN` line")?;
    let label = &after[..label_end];
    if label.len() > 64 || label.contains(['\n', '\r']) {
        return Err("has a malformed `-----BEGIN` line".into());
    }
    let end_line = format!("-----END {label}-----");
    let end = text[start..]
        .find(&end_line)
        .ok_or_else(|| format!("its `{label}` block is never closed"))?;
    Ok((label, &text[start..start + end + end_line.len()]))
}

#[cfg(test)]
pub(crate) mod tests_support {
    /// A P-256 key as `openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8
    /// -topk8 -nocrypt` writes it (a test key, used nowhere else).
    pub const PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgoj2uOK3jH0HAjXWv
43y8YqwXLYdm+pafYLOwaPJAG46hRANCAARGi7VDqJVyUPRGKd1Mslz0V6xZE6xH
t2aS1xLjG00ETWuPUVUVrmf9lcIFJUjRwjYQvCPK463koHzLx2rlMTCE
-----END PRIVATE KEY-----
";
}

#[cfg(test)]
mod tests {
    use super::tests_support::PKCS8;
    use super::*;

    #[test]
    fn a_signature_verifies_with_the_public_half_only() {
        let key = SigningKey::from_pem(PKCS8).unwrap();
        let public = PublicKey::from_pem(&key.public().to_pem()).unwrap();
        assert_eq!(public.id(), key.public().id());
        assert!(public.id().as_str().starts_with("sha256:"));
        let sig = key.sign(b"payload");
        assert_eq!(
            sig,
            key.sign(b"payload"),
            "RFC 6979 signatures are deterministic"
        );
        assert!(public.verifies(b"payload", &sig));
        assert!(!public.verifies(b"payloaD", &sig));
        let mut bad = sig.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(!public.verifies(b"payload", &bad));
        assert!(!public.verifies(b"payload", b"not DER"));
    }

    #[test]
    fn wrong_kinds_of_key_are_named_without_their_content() {
        let key = SigningKey::from_pem(PKCS8).unwrap();
        let public = key.public().to_pem();
        let e = SigningKey::from_pem(&public).unwrap_err();
        assert!(e.contains("public key"), "{e}");
        let e = PublicKey::from_pem(PKCS8).unwrap_err();
        assert!(e.contains("never the private key"), "{e}");
        assert!(!e.contains("MIGHAgEA"), "{e}");
        let cosign = "-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----\neyJ9\n-----END ENCRYPTED COSIGN PRIVATE KEY-----\n";
        assert!(SigningKey::from_pem(cosign).unwrap_err().contains("cosign"));
        let broken = PKCS8.replace("MIGHAgEAMBMG", "MIGHAgEAMBMH");
        let e = SigningKey::from_pem(&broken).unwrap_err();
        assert!(e.starts_with("not an ECDSA P-256"), "{e}");
        assert!(!e.contains("MIGH"), "{e}");
        for text in ["", "hello", "-----BEGIN PRIVATE KEY-----\nAAAA\n"] {
            assert!(SigningKey::from_pem(text).is_err(), "{text}");
            assert!(PublicKey::from_pem(text).is_err(), "{text}");
        }
    }

    #[test]
    fn openssl_ec_parameters_before_a_sec1_key_are_skipped() {
        // `openssl ecparam -name prime256v1 -genkey` (without -noout) writes the
        // parameters first, then the SEC1 key; the same key as PKCS8 above.
        let sec1 = "-----BEGIN EC PARAMETERS-----
BggqhkjOPQMBBw==
-----END EC PARAMETERS-----
-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIKI9rjit4x9BwI11r+N8vGKsFy2HZvqWn2CzsGjyQBuOoAoGCCqGSM49
AwEHoUQDQgAERou1Q6iVclD0RindTLJc9FesWROsR7dmktcS4xtNBE1rj1FVFa5n
/ZXCBSVI0cI2ELwjyuOt5KB8y8dq5TEwhA==
-----END EC PRIVATE KEY-----
";
        let a = SigningKey::from_pem(sec1).unwrap();
        let b = SigningKey::from_pem(PKCS8).unwrap();
        assert_eq!(a.public().id(), b.public().id());
    }
}
