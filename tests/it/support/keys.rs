//! ECDSA P-256 key pairs for the signing tests, made from fixed scalars (so a failure
//! reproduces) and written as the PEM files `openssl` writes: PKCS#8 `PRIVATE KEY` and
//! SubjectPublicKeyInfo `PUBLIC KEY`.

use std::path::{Path, PathBuf};

use p256::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};

/// A key pair on disk.
pub struct KeyPair {
    pub private: PathBuf,
    pub public: PathBuf,
    /// `sha256:<hex>` of the public key's DER, computed here independently.
    pub id: String,
}

/// Writes key pair number `n` (1..=255) as `<name>.key` and `<name>.pub` in `dir`.
pub fn pair(dir: &Path, name: &str, n: u8) -> KeyPair {
    let key = p256::ecdsa::SigningKey::from_slice(&[n; 32]).expect("a valid scalar");
    let private = dir.join(format!("{name}.key"));
    let public = dir.join(format!("{name}.pub"));
    std::fs::write(
        &private,
        key.to_pkcs8_pem(LineEnding::LF).unwrap().as_bytes(),
    )
    .unwrap();
    let verifying = key.verifying_key();
    std::fs::write(
        &public,
        verifying.to_public_key_pem(LineEnding::LF).unwrap(),
    )
    .unwrap();
    let der = verifying.to_public_key_der().unwrap();
    KeyPair {
        private,
        public,
        id: super::package::sha256(der.as_bytes()),
    }
}
