//! DSSE envelopes (Dead Simple Signing Envelope, <https://github.com/secure-systems-lab/dsse>):
//! a payload, its type and signatures over the pre-authentication encoding (PAE) of the
//! two, which is what cosign attaches as an attestation.
//!
//! `PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as
//! decimal ASCII; the signature is ECDSA P-256 over its SHA-256 in ASN.1 DER, base64 in
//! the envelope. The `keyid` hint is left empty, as cosign leaves it: verifiers try every
//! trusted key.

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::key::{KeyId, PublicKey, SigningKey};

/// The media type of an envelope stored as an attachment layer.
pub const MEDIA_TYPE: &str = "application/vnd.dsse.envelope.v1+json";
/// Largest envelope read.
pub const MAX_ENVELOPE_BYTES: u64 = 16 * 1024 * 1024;
/// Most signatures read from one envelope.
const MAX_SIGNATURES: usize = 64;

/// A parsed (untrusted until [`Envelope::verify`]) envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Envelope {
    pub payload_type: String,
    /// Base64 of the payload.
    pub payload: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeSignature {
    #[serde(default)]
    pub keyid: String,
    /// Base64 of the DER signature.
    pub sig: String,
}

/// The pre-authentication encoding signed and verified.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

impl Envelope {
    /// Signs `body` of `payload_type` with `key`.
    pub fn sign(key: &SigningKey, payload_type: &str, body: &[u8]) -> Self {
        let sig = key.sign(&pae(payload_type, body));
        Self {
            payload_type: payload_type.to_owned(),
            payload: b64().encode(body),
            signatures: vec![EnvelopeSignature {
                keyid: String::new(),
                sig: b64().encode(sig),
            }],
        }
    }

    /// Parses an envelope (bounded: at most [`MAX_ENVELOPE_BYTES`] and 64 signatures).
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() as u64 > MAX_ENVELOPE_BYTES {
            return Err(format!(
                "the envelope is {} bytes, more than {MAX_ENVELOPE_BYTES}",
                bytes.len()
            ));
        }
        let env: Envelope =
            serde_json::from_slice(bytes).map_err(|e| format!("not a DSSE envelope: {e}"))?;
        if env.signatures.len() > MAX_SIGNATURES {
            return Err(format!(
                "holds {} signatures; at most {MAX_SIGNATURES} are read",
                env.signatures.len()
            ));
        }
        Ok(env)
    }

    /// The envelope as canonical JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::canonical_json::to_vec(self).unwrap_or_default()
    }

    /// The payload, once one of `keys` verified a signature over it: the key's id and the
    /// decoded body. `Err` says why none did.
    pub fn verify(&self, keys: &[PublicKey]) -> Result<(KeyId, Vec<u8>), String> {
        let body = b64()
            .decode(&self.payload)
            .map_err(|e| format!("the payload is not base64: {e}"))?;
        let message = pae(&self.payload_type, &body);
        for s in &self.signatures {
            let Ok(sig) = b64().decode(&s.sig) else {
                continue;
            };
            if let Some(k) = keys.iter().find(|k| k.verifies(&message, &sig)) {
                return Ok((k.id().clone(), body));
            }
        }
        Err(format!(
            "none of its {} signature(s) verifies with the trusted key(s)",
            self.signatures.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_matches_the_specification_example() {
        // From the DSSE protocol document: PAE("http://example.com/HelloWorld", "hello world").
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn an_envelope_verifies_with_its_key_only() {
        let key = SigningKey::from_pem(crate::trust::key::tests_support::PKCS8).unwrap();
        let env = Envelope::sign(&key, "application/vnd.in-toto+json", b"{}");
        let parsed = Envelope::parse(&env.to_bytes()).unwrap();
        let (id, body) = parsed.verify(&[key.public().clone()]).unwrap();
        assert_eq!((&id, body.as_slice()), (key.public().id(), &b"{}"[..]));
        let mut other = parsed.clone();
        other.payload_type = "text/plain".into();
        assert!(other.verify(&[key.public().clone()]).is_err());
        assert!(parsed.verify(&[]).is_err());
    }
}
