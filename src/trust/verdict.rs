//! What checking an image against trusted keys found: one status for the signature, one
//! for the provenance attestation, one for the SBOM, and the verdict they make.
//!
//! Only a verified signature passes. Missing, signed by another key, signed over another
//! digest (a manifest edited after signing, or a signature copied onto another image),
//! signed for another repository, or malformed: each is a negative verdict with its own
//! status, so a report says which. The provenance and SBOM are reported, not required:
//! the signature is what binds an image to its signer.

use serde::Serialize;

use super::attestation;
use super::key::KeyId;
use crate::package::Digest;

/// The signature's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum SignatureStatus {
    /// A trusted key signed this manifest digest.
    Verified {
        key: KeyId,
        /// The name the signature was made for (`critical.identity.docker-reference`).
        identity: String,
    },
    /// No signature at all.
    Missing,
    /// Signatures, none by a trusted key.
    UntrustedKey { signatures: usize },
    /// A trusted key signed another manifest digest.
    OtherDigest { key: KeyId, signed: String },
    /// A trusted key signed this digest for another repository.
    OtherIdentity {
        key: KeyId,
        identity: String,
        expected: String,
    },
    /// The signature data cannot be read (manifest, payload, encoding).
    Malformed { reason: String },
}

impl SignatureStatus {
    /// The word reports use.
    pub fn word(&self) -> &'static str {
        match self {
            SignatureStatus::Verified { .. } => "verified",
            SignatureStatus::Missing => "missing",
            SignatureStatus::UntrustedKey { .. } => "untrusted-key",
            SignatureStatus::OtherDigest { .. } => "other-digest",
            SignatureStatus::OtherIdentity { .. } => "other-identity",
            SignatureStatus::Malformed { .. } => "malformed",
        }
    }

    /// One line for people.
    pub fn explain(&self) -> String {
        match self {
            SignatureStatus::Verified { key, identity } => {
                format!("signed by {key} for {identity}")
            }
            SignatureStatus::Missing => "no signature".into(),
            SignatureStatus::UntrustedKey { signatures } => {
                format!("{signatures} signature(s), none by a trusted key")
            }
            SignatureStatus::OtherDigest { key, signed } => format!(
                "a signature by {key} is for manifest {signed}, not this one (the image was changed after signing, or the signature was copied)"
            ),
            SignatureStatus::OtherIdentity {
                key,
                identity,
                expected,
            } => format!("a signature by {key} is for {identity}, not {expected}"),
            SignatureStatus::Malformed { reason } => format!("unreadable signature: {reason}"),
        }
    }
}

/// The provenance attestation's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum AttestationStatus {
    Verified(attestation::Verified),
    Missing,
    /// Attestations, none verified: why the first did not.
    Unverified {
        reason: String,
    },
}

impl AttestationStatus {
    pub fn word(&self) -> &'static str {
        match self {
            AttestationStatus::Verified(_) => "verified",
            AttestationStatus::Missing => "missing",
            AttestationStatus::Unverified { .. } => "unverified",
        }
    }

    pub fn explain(&self) -> String {
        match self {
            AttestationStatus::Verified(v) => format!(
                "SLSA provenance v1 signed by {}, built by {}{}",
                v.key,
                v.builder,
                v.blueprint_id
                    .as_ref()
                    .map(|id| format!(", blueprint {id}"))
                    .unwrap_or_default()
            ),
            AttestationStatus::Missing => "no provenance attestation".into(),
            AttestationStatus::Unverified { reason } => reason.clone(),
        }
    }
}

/// One SBOM document attached to the image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SbomDocument {
    /// `SPDX 2.3`, `CycloneDX 1.6`.
    pub format: String,
    /// The document's digest (the referrer's layer).
    pub digest: Digest,
}

/// The SBOM's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum SbomStatus {
    /// Referrers about this image name SBOM documents (their manifests checked: digest,
    /// subject, one layer); the documents themselves were not read.
    Attached { documents: Vec<SbomDocument> },
    /// As `Attached`, and each document parsed and describes this image.
    Checked { documents: Vec<SbomDocument> },
    /// No SBOM referrer.
    Missing,
    /// A referrer or document that cannot be used: about another image, malformed, too large.
    Invalid { reason: String },
}

impl SbomStatus {
    pub fn word(&self) -> &'static str {
        match self {
            SbomStatus::Attached { .. } => "attached",
            SbomStatus::Checked { .. } => "checked",
            SbomStatus::Missing => "missing",
            SbomStatus::Invalid { .. } => "invalid",
        }
    }

    pub fn explain(&self) -> String {
        match self {
            SbomStatus::Attached { documents } | SbomStatus::Checked { documents } => documents
                .iter()
                .map(|d| format!("{} {}", d.format, d.digest))
                .collect::<Vec<_>>()
                .join(", "),
            SbomStatus::Missing => "no SBOM referrer".into(),
            SbomStatus::Invalid { reason } => reason.clone(),
        }
    }
}

/// Everything found about one image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The image manifest digest judged.
    pub image: Digest,
    /// Where it was read: a layout folder or `registry/repository@digest`.
    pub source: String,
    /// The trusted keys it was checked against.
    pub keys: Vec<KeyId>,
    pub signature: SignatureStatus,
    pub provenance: AttestationStatus,
    pub sbom: SbomStatus,
    /// The digest of the SBOM when one was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sbom_digest: Option<Digest>,
}

impl Report {
    /// True when a trusted key signed this digest.
    pub fn verified(&self) -> bool {
        matches!(self.signature, SignatureStatus::Verified { .. })
    }

    /// The key that signed it, when verified.
    pub fn signer(&self) -> Option<&KeyId> {
        match &self.signature {
            SignatureStatus::Verified { key, .. } => Some(key),
            _ => None,
        }
    }
}
