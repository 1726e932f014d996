//! The simple-signing payload a sigstore signature signs: which manifest digest, under
//! which name.
//!
//! ```json
//! {"critical":{"identity":{"docker-reference":"registry/repo@sha256:…"},
//!              "image":{"docker-manifest-digest":"sha256:…"},
//!              "type":"cosign container image signature"},
//!  "optional":{"creator":"nodeimg 0.1.0"}}
//! ```
//!
//! The format is cosign's and containers/image's (`signature/internal/sigstore_payload.go`):
//! `critical` holds exactly `type`, `image` and `identity`, each with exactly its one or
//! two fields, and `optional` is an object (any members) or `null`. Parsing is as strict
//! as containers/image's: unknown or repeated members of `critical` are refused, so a
//! payload nodeimg accepts is one skopeo accepts. nodeimg writes it as canonical JSON
//! (sorted keys, compact) and without a timestamp, so signing is deterministic.

use serde::{Deserialize, Serialize};

/// `critical.type` of an image signature.
pub const SIGNATURE_TYPE: &str = "cosign container image signature";
/// The media type of a payload blob (a layer of the `.sig` manifest).
pub const MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation on that layer holding the base64 DER signature over the payload.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// Largest payload read (containers/image's `MaxSignatureBodySize`).
pub const MAX_PAYLOAD_BYTES: u64 = 4 * 1024 * 1024;

/// What a signature says about an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// `critical.image.docker-manifest-digest`, as written (any algorithm).
    pub digest: String,
    /// `critical.identity.docker-reference`.
    pub reference: String,
    /// `optional.creator`, if any.
    pub creator: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    critical: Critical,
    /// Required (as containers/image requires it): an object, or `null`.
    optional: serde_json::Value,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Critical {
    identity: Identity,
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Identity {
    #[serde(rename = "docker-reference")]
    docker_reference: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: String,
}

impl Payload {
    /// The payload for `digest` under `reference`, created by this nodeimg.
    pub fn new(digest: &crate::package::Digest, reference: &str) -> Self {
        Self {
            digest: digest.to_string(),
            reference: reference.to_owned(),
            creator: Some(concat!("nodeimg ", env!("CARGO_PKG_VERSION")).to_owned()),
        }
    }

    /// The payload as canonical JSON bytes (what is signed and stored).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut optional = serde_json::Map::new();
        if let Some(c) = &self.creator {
            optional.insert("creator".into(), c.clone().into());
        }
        let raw = Raw {
            critical: Critical {
                identity: Identity {
                    docker_reference: self.reference.clone(),
                },
                image: Image {
                    docker_manifest_digest: self.digest.clone(),
                },
                kind: SIGNATURE_TYPE.into(),
            },
            optional: optional.into(),
        };
        crate::canonical_json::to_vec(&raw).unwrap_or_default()
    }

    /// Parses an (untrusted) payload. Only call this once the signature over `bytes`
    /// verified: before that, nothing in it means anything.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() as u64 > MAX_PAYLOAD_BYTES {
            return Err(format!(
                "the payload is {} bytes, more than {MAX_PAYLOAD_BYTES}",
                bytes.len()
            ));
        }
        let raw: Raw = serde_json::from_slice(bytes)
            .map_err(|e| format!("not a simple-signing payload: {e}"))?;
        if raw.critical.kind != SIGNATURE_TYPE {
            return Err(format!(
                "critical.type is `{}`, not `{SIGNATURE_TYPE}`",
                raw.critical.kind.escape_debug()
            ));
        }
        if !(raw.optional.is_object() || raw.optional.is_null()) {
            return Err("`optional` is neither an object nor null".into());
        }
        let creator = raw
            .optional
            .get("creator")
            .and_then(|c| c.as_str())
            .map(str::to_owned);
        Ok(Self {
            digest: raw.critical.image.docker_manifest_digest,
            reference: raw.critical.identity.docker_reference,
            creator,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_as_containers_image_marshals_it() {
        // containers/image marshals maps with sorted keys and no spaces; the same
        // structure as `NewUntrustedSigstorePayload(...).MarshalJSON()` without a
        // timestamp.
        let d: crate::package::Digest = format!("sha256:{}", "ab".repeat(32)).parse().unwrap();
        let mut p = Payload::new(&d, "127.0.0.1:5000/nodes/h100@sha256:abab");
        p.creator = Some("nodeimg 0.1.0".into());
        let text = String::from_utf8(p.to_bytes()).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"critical":{{"identity":{{"docker-reference":"127.0.0.1:5000/nodes/h100@sha256:abab"}},"image":{{"docker-manifest-digest":"sha256:{}"}},"type":"cosign container image signature"}},"optional":{{"creator":"nodeimg 0.1.0"}}}}"#,
                "ab".repeat(32)
            )
        );
        assert_eq!(Payload::parse(text.as_bytes()).unwrap(), p);
    }

    #[test]
    fn cosign_payloads_with_null_or_extra_optional_members_parse() {
        // cosign writes `"optional": null` without annotations.
        let cosign = br#"{"critical":{"identity":{"docker-reference":"reg/repo"},"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"},"optional":null}"#;
        let p = Payload::parse(cosign).unwrap();
        assert_eq!((p.reference.as_str(), p.creator), ("reg/repo", None));
        let skopeo = br#"{"critical":{"identity":{"docker-reference":"r/x:t"},"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"},"optional":{"creator":"containers/image 5.23.1","timestamp":1700000000}}"#;
        assert_eq!(
            Payload::parse(skopeo).unwrap().creator.as_deref(),
            Some("containers/image 5.23.1")
        );
    }

    #[test]
    fn anything_else_in_critical_is_refused() {
        for bad in [
            r#"{"critical":{"identity":{"docker-reference":"r"},"image":{"docker-manifest-digest":"sha256:00"},"type":"atomic container signature"},"optional":null}"#,
            r#"{"critical":{"identity":{"docker-reference":"r"},"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature","extra":1},"optional":null}"#,
            r#"{"critical":{"identity":{"docker-reference":"r","x":1},"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"},"optional":null}"#,
            r#"{"critical":{"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"},"optional":null}"#,
            r#"{"critical":{"identity":{"docker-reference":"r"},"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"}}"#,
            r#"{"critical":{"identity":{"docker-reference":"r"},"identity":{"docker-reference":"s"},"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"},"optional":null}"#,
            r#"[]"#,
            "",
        ] {
            assert!(Payload::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
