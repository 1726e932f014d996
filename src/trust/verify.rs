//! Checking an image in an OCI layout against trusted keys: the signature, then the
//! provenance attestation.
//!
//! As containers/image's `sigstoreSigned` requirement does: every simple-signing layer of
//! the image's `.sig` manifest is tried, one accepted signature is enough, and a
//! signature is accepted when a trusted key verifies it over the payload bytes, the
//! payload parses strictly, its `docker-manifest-digest` is the image's manifest digest
//! and, when a repository is expected, its identity names that repository (any tag or
//! digest in it: the digest is what is bound, as `matchRepository` has it). Nothing read
//! from the attachments is believed before its signature verified.
//!
//! [`verify_image`] is what `verify-image`, `apply` (before it unpacks anything) and
//! `verify --phase boot` (over the layout `apply` keeps on the node) call.

use base64::Engine;

use super::attachment::{self, Kind};
use super::attestation;
use super::key::PublicKey;
use super::layout::{Layout, LayoutError};
use super::payload::{self, Payload};
use super::verdict::{AttestationStatus, Report, SbomStatus, SignatureStatus};
use crate::package::Digest;

/// What the signature must name beyond the digest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expect {
    /// `registry/repository` the identity must name, when the image came from there.
    pub repository: Option<String>,
}

/// The repository part of a docker reference: without `@digest` and without `:tag`.
pub fn repository_of(reference: &str) -> &str {
    let name = reference.split('@').next().unwrap_or(reference);
    match name.rfind(':') {
        Some(i) if !name[i..].contains('/') => &name[..i],
        _ => name,
    }
}

/// Checks the layout's image against `keys`. `Err` only when the layout or its image
/// manifest cannot be read; everything about signatures is in the report.
pub fn verify_image(
    layout: &Layout<'_>,
    keys: &[PublicKey],
    expect: &Expect,
) -> Result<Report, LayoutError> {
    let entry = layout.image()?;
    // Reading the manifest checks the bytes hash to the digest judged.
    layout.manifest(entry)?;
    let image = entry.blob.digest.clone();
    let signature = signature(layout, &image, keys, expect);
    let provenance = provenance(layout, &image, keys);
    let sbom = sbom(layout, &image);
    let sbom_digest = match &sbom {
        SbomStatus::Attached { documents } | SbomStatus::Checked { documents } => {
            documents.first().map(|d| d.digest.clone())
        }
        _ => None,
    };
    Ok(Report {
        source: layout.location(),
        keys: keys.iter().map(|k| k.id().clone()).collect(),
        image,
        signature,
        provenance,
        sbom,
        sbom_digest,
    })
}

/// The SBOM referrers the layout lists beside the image: each manifest read (bounded,
/// digest-checked), its `subject` this image, its one layer the document.
fn sbom(layout: &Layout<'_>, image: &Digest) -> SbomStatus {
    use crate::package::sbom::Format;
    let mut documents = Vec::new();
    for e in layout.entries() {
        let Some(format) = e.artifact_type.as_deref().and_then(Format::from_media_type) else {
            continue;
        };
        let manifest = match layout.manifest(e) {
            Ok(b) => b,
            Err(err) => {
                return SbomStatus::Invalid {
                    reason: err.message,
                };
            }
        };
        let v: serde_json::Value = match serde_json::from_slice(&manifest) {
            Ok(v) => v,
            Err(err) => {
                return SbomStatus::Invalid {
                    reason: format!("referrer {}: {err}", e.blob.digest),
                };
            }
        };
        let subject = v["subject"]["digest"].as_str().unwrap_or("none");
        if subject != image.to_string() {
            return SbomStatus::Invalid {
                reason: format!("referrer {} is about {subject}, not {image}", e.blob.digest),
            };
        }
        let layers = v["layers"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let [layer] = layers else {
            return SbomStatus::Invalid {
                reason: format!(
                    "referrer {} has {} layers, not one document",
                    e.blob.digest,
                    layers.len()
                ),
            };
        };
        match layer["digest"].as_str().map(str::parse::<Digest>) {
            Some(Ok(digest)) => documents.push(super::verdict::SbomDocument {
                format: format.words().to_owned(),
                digest,
            }),
            _ => {
                return SbomStatus::Invalid {
                    reason: format!("referrer {}: its layer has no sha256 digest", e.blob.digest),
                };
            }
        }
    }
    if documents.is_empty() {
        SbomStatus::Missing
    } else {
        SbomStatus::Attached { documents }
    }
}

/// For a layout in a folder: reads each attached SBOM document (streamed, bounded) and
/// checks it parses and describes this image; `Attached` becomes `Checked` or `Invalid`.
pub fn check_sbom_documents(root: &std::path::Path, report: &mut Report) {
    use crate::package::sbom::attached;
    let SbomStatus::Attached { documents } = &report.sbom else {
        return;
    };
    let documents = documents.clone();
    let result = attached::sbom_referrers(root)
        .and_then(|all| all.iter().try_for_each(|a| attached::check(root, a)));
    report.sbom = match result {
        Ok(()) => SbomStatus::Checked { documents },
        Err(e) => SbomStatus::Invalid {
            reason: e.to_string(),
        },
    };
}

fn attachment_layers(
    layout: &Layout<'_>,
    image: &Digest,
    kind: Kind,
) -> Result<Option<Vec<attachment::Layer>>, String> {
    let Some(entry) = layout.attachment(image, kind) else {
        return Ok(None);
    };
    let bytes = layout.manifest(entry).map_err(|e| e.message)?;
    let manifest =
        attachment::Manifest::parse(&bytes).map_err(|m| format!("{}: {m}", kind.tag(image)))?;
    Ok(Some(manifest.layers))
}

fn signature(
    layout: &Layout<'_>,
    image: &Digest,
    keys: &[PublicKey],
    expect: &Expect,
) -> SignatureStatus {
    let layers = match attachment_layers(layout, image, Kind::Signature) {
        Ok(Some(l)) => l,
        Ok(None) => return SignatureStatus::Missing,
        Err(reason) => return SignatureStatus::Malformed { reason },
    };
    let mut found = 0;
    let mut worst: Option<SignatureStatus> = None;
    let note = |s: SignatureStatus, worst: &mut Option<SignatureStatus>| {
        let rank = |s: &SignatureStatus| match s {
            SignatureStatus::OtherDigest { .. } => 3,
            SignatureStatus::OtherIdentity { .. } => 2,
            SignatureStatus::Malformed { .. } => 1,
            _ => 0,
        };
        if worst.as_ref().is_none_or(|w| rank(&s) >= rank(w)) {
            *worst = Some(s);
        }
    };
    for (i, layer) in layers
        .iter()
        .enumerate()
        .filter(|(_, l)| l.media_type == payload::MEDIA_TYPE)
    {
        found += 1;
        let malformed = |reason: String| SignatureStatus::Malformed {
            reason: format!("{} layer {i}: {reason}", Kind::Signature.tag(image)),
        };
        let Some(sig) = layer.annotations.get(payload::SIGNATURE_ANNOTATION) else {
            note(
                malformed(format!("no `{}` annotation", payload::SIGNATURE_ANNOTATION)),
                &mut worst,
            );
            continue;
        };
        let Ok(sig) = base64::engine::general_purpose::STANDARD.decode(sig) else {
            note(malformed("the signature is not base64".into()), &mut worst);
            continue;
        };
        let blob = crate::package::BlobRef {
            digest: layer.digest.clone(),
            size: layer.size,
        };
        let bytes = match layout.blob(&blob, payload::MAX_PAYLOAD_BYTES) {
            Ok(b) => b,
            Err(e) => {
                note(malformed(e.message), &mut worst);
                continue;
            }
        };
        let Some(key) = keys.iter().find(|k| k.verifies(&bytes, &sig)) else {
            continue;
        };
        let key = key.id().clone();
        let p = match Payload::parse(&bytes) {
            Ok(p) => p,
            Err(m) => {
                note(malformed(m), &mut worst);
                continue;
            }
        };
        if p.digest != image.to_string() {
            note(
                SignatureStatus::OtherDigest {
                    key,
                    signed: p.digest,
                },
                &mut worst,
            );
            continue;
        }
        if let Some(expected) = &expect.repository
            && repository_of(&p.reference) != expected
        {
            note(
                SignatureStatus::OtherIdentity {
                    key,
                    identity: p.reference,
                    expected: expected.clone(),
                },
                &mut worst,
            );
            continue;
        }
        return SignatureStatus::Verified {
            key,
            identity: p.reference,
        };
    }
    match worst {
        Some(w) => w,
        None if found == 0 => SignatureStatus::Missing,
        None => SignatureStatus::UntrustedKey { signatures: found },
    }
}

fn provenance(layout: &Layout<'_>, image: &Digest, keys: &[PublicKey]) -> AttestationStatus {
    let layers = match attachment_layers(layout, image, Kind::Attestation) {
        Ok(Some(l)) => l,
        Ok(None) => return AttestationStatus::Missing,
        Err(reason) => return AttestationStatus::Unverified { reason },
    };
    let mut first_failure = None;
    for layer in layers.iter().filter(|l| {
        l.annotations
            .get(attestation::PREDICATE_TYPE_ANNOTATION)
            .map(String::as_str)
            == Some(attestation::SLSA_PROVENANCE_V1)
    }) {
        let blob = crate::package::BlobRef {
            digest: layer.digest.clone(),
            size: layer.size,
        };
        let result = layout
            .blob(&blob, super::dsse::MAX_ENVELOPE_BYTES)
            .map_err(|e| e.message)
            .and_then(|b| attestation::verify(&b, image, keys));
        match result {
            Ok(v) => return AttestationStatus::Verified(v),
            Err(reason) => {
                first_failure.get_or_insert(reason);
            }
        }
    }
    match first_failure {
        Some(reason) => AttestationStatus::Unverified { reason },
        None => AttestationStatus::Missing,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::trust::key::SigningKey;
    use crate::trust::layout::Dir;
    use crate::trust::sign::{sign_layout, signature};
    use std::path::Path;

    /// A layout holding one small image manifest (no layers) tagged `v1`; returns the
    /// manifest digest.
    pub(crate) fn tiny_layout(root: &Path, note: &str) -> Digest {
        std::fs::create_dir_all(root.join("blobs/sha256")).unwrap();
        std::fs::write(root.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        let config =
            br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#;
        let cd = Digest::of(config);
        std::fs::write(root.join(crate::trust::layout::blob_path(&cd)), config).unwrap();
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd.to_string(), "size": config.len()},
            "layers": [],
            "annotations": {"note": note},
        });
        let bytes = serde_json::to_vec(&manifest).unwrap();
        let md = Digest::of(&bytes);
        std::fs::write(root.join(crate::trust::layout::blob_path(&md)), &bytes).unwrap();
        let index = serde_json::json!({
            "schemaVersion": 2,
            "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md.to_string(), "size": bytes.len(), "annotations": {"org.opencontainers.image.ref.name": "v1"}}],
        });
        std::fs::write(root.join("index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
        md
    }

    fn key() -> SigningKey {
        SigningKey::from_pem(crate::trust::key::tests_support::PKCS8).unwrap()
    }

    fn other_key() -> SigningKey {
        let k = p256::ecdsa::SigningKey::from_slice(&[7u8; 32]).unwrap();
        use p256::pkcs8::EncodePrivateKey;
        SigningKey::from_pem(&k.to_pkcs8_pem(Default::default()).unwrap()).unwrap()
    }

    fn check(root: &Path, keys: &[PublicKey]) -> Report {
        let dir = Dir(root.to_path_buf());
        verify_image(&Layout::open(&dir).unwrap(), keys, &Expect::default()).unwrap()
    }

    #[test]
    fn a_signed_layout_verifies_with_its_key_only() {
        let tmp = tempfile::tempdir().unwrap();
        let image = tiny_layout(tmp.path(), "a");
        let k = key();
        assert_eq!(
            check(tmp.path(), &[k.public().clone()]).signature,
            SignatureStatus::Missing
        );
        let signed = sign_layout(tmp.path(), &k, Some("reg.example/nodes/a:v1")).unwrap();
        assert_eq!((&signed.image, signed.added), (&image, true));
        let report = check(tmp.path(), &[k.public().clone()]);
        assert_eq!(
            report.signature,
            SignatureStatus::Verified {
                key: k.public().id().clone(),
                identity: "reg.example/nodes/a:v1".into()
            }
        );
        assert_eq!(report.provenance, AttestationStatus::Missing);
        let o = other_key();
        assert_eq!(
            check(tmp.path(), &[o.public().clone()]).signature,
            SignatureStatus::UntrustedKey { signatures: 1 }
        );
        // Signing again changes nothing; another signer adds a layer and both verify.
        assert!(
            !sign_layout(tmp.path(), &k, Some("reg.example/nodes/a:v1"))
                .unwrap()
                .added
        );
        assert!(sign_layout(tmp.path(), &o, None).unwrap().added);
        assert!(check(tmp.path(), &[o.public().clone()]).verified());
        assert!(check(tmp.path(), &[k.public().clone()]).verified());
        // The image is still what push and apply read.
        let img = crate::package::layout_reader::LocalImage::open(tmp.path()).unwrap();
        assert_eq!(img.manifest.digest, image);
        // An expected repository must match the identity.
        let dir = Dir(tmp.path().to_path_buf());
        let expect = Expect {
            repository: Some("reg.example/other".into()),
        };
        let r = verify_image(&Layout::open(&dir).unwrap(), &[k.public().clone()], &expect).unwrap();
        assert!(
            matches!(r.signature, SignatureStatus::OtherIdentity { .. }),
            "{:?}",
            r.signature
        );
    }

    #[test]
    fn an_image_changed_after_signing_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let k = key();
        let old = tiny_layout(tmp.path(), "a");
        let copy = tempfile::tempdir().unwrap();
        let new = tiny_layout(copy.path(), "b");
        sign_layout(tmp.path(), &k, None).unwrap();
        // The index now names another manifest: its signature is missing.
        let index = std::fs::read_to_string(tmp.path().join("index.json")).unwrap();
        let new_bytes =
            std::fs::read(copy.path().join(crate::trust::layout::blob_path(&new))).unwrap();
        std::fs::write(
            tmp.path().join(crate::trust::layout::blob_path(&new)),
            &new_bytes,
        )
        .unwrap();
        let old_size = std::fs::metadata(tmp.path().join(crate::trust::layout::blob_path(&old)))
            .unwrap()
            .len();
        let edited = index.replace(&old.to_string(), &new.to_string()).replace(
            &format!("\"size\":{old_size}"),
            &format!("\"size\":{}", new_bytes.len()),
        );
        std::fs::write(tmp.path().join("index.json"), &edited).unwrap();
        assert_eq!(
            check(tmp.path(), &[k.public().clone()]).signature,
            SignatureStatus::Missing
        );
        // The old signature copied onto the new manifest's tag: signed over another digest.
        let old_tag = Kind::Signature.tag(&old);
        let new_tag = Kind::Signature.tag(&new);
        let index = std::fs::read_to_string(tmp.path().join("index.json")).unwrap();
        std::fs::write(
            tmp.path().join("index.json"),
            index.replace(&old_tag, &new_tag),
        )
        .unwrap();
        assert_eq!(
            check(tmp.path(), &[k.public().clone()]).signature,
            SignatureStatus::OtherDigest {
                key: k.public().id().clone(),
                signed: old.to_string()
            }
        );
    }

    #[test]
    fn malformed_signature_data_is_a_verdict_not_a_pass() {
        let tmp = tempfile::tempdir().unwrap();
        let k = key();
        let image = tiny_layout(tmp.path(), "a");
        // A signature layer whose annotation is not base64, and one whose payload is not
        // a payload (signed, so it reaches the parser).
        let mut bad = signature(&k, &image, "x");
        bad.layer
            .annotations
            .insert(payload::SIGNATURE_ANNOTATION.into(), "***".into());
        crate::trust::layout::add_attachment(
            tmp.path(),
            &image,
            Kind::Signature,
            bad.layer,
            &bad.blob,
        )
        .unwrap();
        let r = check(tmp.path(), &[k.public().clone()]);
        assert!(
            matches!(r.signature, SignatureStatus::Malformed { .. }),
            "{:?}",
            r.signature
        );
        let garbage = b"not json".to_vec();
        let sig = base64::engine::general_purpose::STANDARD.encode(k.sign(&garbage));
        let layer = attachment::Layer::of(
            payload::MEDIA_TYPE,
            &garbage,
            [(payload::SIGNATURE_ANNOTATION.to_owned(), sig)].into(),
        );
        crate::trust::layout::add_attachment(tmp.path(), &image, Kind::Signature, layer, &garbage)
            .unwrap();
        let r = check(tmp.path(), &[k.public().clone()]);
        match r.signature {
            SignatureStatus::Malformed { reason } => {
                assert!(reason.contains("simple-signing"), "{reason}")
            }
            s => panic!("{s:?}"),
        }
        // A .sig manifest that is not a manifest.
        let sig_tag = Kind::Signature.tag(&image);
        let junk = b"[1,2,3]";
        let jd = Digest::of(junk);
        std::fs::write(tmp.path().join(crate::trust::layout::blob_path(&jd)), junk).unwrap();
        let mut index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(tmp.path().join("index.json")).unwrap()).unwrap();
        for d in index["manifests"].as_array_mut().unwrap() {
            if d["annotations"]["org.opencontainers.image.ref.name"] == sig_tag.as_str() {
                d["digest"] = jd.to_string().into();
                d["size"] = junk.len().into();
            }
        }
        std::fs::write(
            tmp.path().join("index.json"),
            serde_json::to_vec(&index).unwrap(),
        )
        .unwrap();
        assert!(matches!(
            check(tmp.path(), &[k.public().clone()]).signature,
            SignatureStatus::Malformed { .. }
        ));
    }

    #[test]
    fn the_repository_of_a_reference_drops_tag_and_digest() {
        for (r, want) in [
            ("127.0.0.1:5000/nodes/h100:v1", "127.0.0.1:5000/nodes/h100"),
            (
                "127.0.0.1:5000/nodes/h100@sha256:00",
                "127.0.0.1:5000/nodes/h100",
            ),
            (
                "127.0.0.1:5000/nodes/h100:v1@sha256:00",
                "127.0.0.1:5000/nodes/h100",
            ),
            ("127.0.0.1:5000/nodes/h100", "127.0.0.1:5000/nodes/h100"),
            ("reg/repo", "reg/repo"),
        ] {
            assert_eq!(repository_of(r), want, "{r}");
        }
    }
}
