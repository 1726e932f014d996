//! The build's provenance as a signed attestation: an in-toto Statement v1 whose
//! predicate is SLSA provenance v1, in a DSSE envelope, attached as cosign attaches
//! attestations (`sha256-<hex>.att`, layer media type `application/vnd.dsse.envelope.v1+json`,
//! annotation `predicateType`).
//!
//! The statement says what `OUT/provenance.json` says, deterministically (no clock, no
//! host): the subject is the image manifest; `buildDefinition` names nodeimg's build type,
//! the blueprint (name, version, id) and the platform as external parameters,
//! `SOURCE_DATE_EPOCH` and the compression as internal ones, and as resolved dependencies
//! the blueprint id and what each layer packed (its uncompressed tar, the config's
//! `diff_id`); `runDetails` names the builder (nodeimg and its version) and, as
//! byproducts, the config and the layer blobs.
//!
//! - in-toto Statement v1: <https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md>
//! - SLSA provenance v1: <https://slsa.dev/spec/v1.0/provenance>

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::dsse::{self, Envelope};
use super::key::{KeyId, PublicKey, SigningKey};
use crate::package::Digest;

/// `_type` of an in-toto Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The predicate type of SLSA provenance v1.
pub const SLSA_PROVENANCE_V1: &str = "https://slsa.dev/provenance/v1";
/// nodeimg's build type: the parameters below, described in the README.
pub const BUILD_TYPE: &str = "https://nodeimg.dev/build/v1";
/// The builder id.
pub const BUILDER_ID: &str = "https://nodeimg.dev/builder/nodeimg";
/// The annotation naming the predicate type on the attachment layer.
pub const PREDICATE_TYPE_ANNOTATION: &str = "predicateType";
/// Largest `provenance.json` read.
const MAX_PROVENANCE_BYTES: u64 = 1024 * 1024;

/// What `nodeimg build` wrote into `OUT/provenance.json` (the members the attestation
/// uses; others are ignored).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    pub builder: Builder,
    pub name: String,
    pub version: String,
    pub blueprint_id: String,
    pub tag: String,
    pub platform: String,
    pub source_date_epoch: u64,
    pub manifest: Blob,
    pub config: Blob,
    pub layers: Vec<LayerRecord>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Builder {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Blob {
    pub digest: Digest,
    pub size: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerRecord {
    pub role: String,
    pub media_type: String,
    pub compression: String,
    pub level: i32,
    pub digest: Digest,
    pub size: u64,
    pub diff_id: Digest,
}

impl Provenance {
    /// Reads `provenance.json` (a layout's, from `nodeimg build`).
    pub fn read(path: &Path) -> Result<Self, String> {
        let bytes = crate::input::read(path, MAX_PROVENANCE_BYTES)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn sha256(d: &Digest) -> Value {
    json!({ "sha256": d.hex() })
}

/// The in-toto statement for the image `provenance` describes.
pub fn statement(p: &Provenance) -> Value {
    let compression: BTreeMap<&str, Value> = p
        .layers
        .iter()
        .map(|l| {
            (
                l.role.as_str(),
                json!({"compression": l.compression, "level": l.level}),
            )
        })
        .collect();
    let mut dependencies = vec![json!({
        "name": format!("blueprint:{}@{}", p.name, p.version),
        "digest": p.blueprint_id.strip_prefix("sha256:").map(|h| json!({"sha256": h})).unwrap_or(json!({})),
    })];
    dependencies.extend(p.layers.iter().map(|l| {
        json!({
            "name": format!("layer/{}", l.role),
            "digest": sha256(&l.diff_id),
            "mediaType": "application/vnd.oci.image.layer.v1.tar",
        })
    }));
    let mut byproducts = vec![json!({
        "name": "config",
        "digest": sha256(&p.config.digest),
        "mediaType": "application/vnd.oci.image.config.v1+json",
    })];
    byproducts.extend(p.layers.iter().map(|l| {
        json!({
            "name": format!("layer/{}", l.role),
            "digest": sha256(&l.digest),
            "mediaType": l.media_type,
        })
    }));
    json!({
        "_type": STATEMENT_TYPE,
        "subject": [{
            "name": format!("{}:{}", p.name, p.tag),
            "digest": sha256(&p.manifest.digest),
        }],
        "predicateType": SLSA_PROVENANCE_V1,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "blueprint": {"name": p.name, "version": p.version, "id": p.blueprint_id},
                    "tag": p.tag,
                    "platform": p.platform,
                },
                "internalParameters": {
                    "sourceDateEpoch": p.source_date_epoch,
                    "layers": compression,
                },
                "resolvedDependencies": dependencies,
            },
            "runDetails": {
                "builder": {
                    "id": BUILDER_ID,
                    "version": {p.builder.name.clone(): p.builder.version},
                },
                "byproducts": byproducts,
            },
        },
    })
}

/// The signed attestation: the envelope's bytes (the attachment layer's blob).
pub fn sign(p: &Provenance, key: &SigningKey) -> Vec<u8> {
    let body = crate::canonical_json::value_to_vec(&statement(p));
    Envelope::sign(key, PAYLOAD_TYPE, &body).to_bytes()
}

/// A verified provenance attestation of an image.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verified {
    pub key: KeyId,
    pub predicate_type: String,
    /// `runDetails.builder.id` and its version(s).
    pub builder: String,
    /// `externalParameters.blueprint.id`, when the build type is nodeimg's.
    pub blueprint_id: Option<String>,
}

/// Checks one attestation blob: a DSSE envelope one of `keys` signed, holding an in-toto
/// Statement v1 whose subject is `image` and whose predicate is SLSA provenance v1.
pub fn verify(bytes: &[u8], image: &Digest, keys: &[PublicKey]) -> Result<Verified, String> {
    let env = Envelope::parse(bytes)?;
    if env.payload_type != PAYLOAD_TYPE {
        return Err(format!(
            "payload type `{}`, not `{PAYLOAD_TYPE}`",
            env.payload_type.escape_debug()
        ));
    }
    let (key, body) = env.verify(keys)?;
    let st: Value =
        serde_json::from_slice(&body).map_err(|e| format!("the statement is not JSON: {e}"))?;
    if st["_type"] != STATEMENT_TYPE {
        return Err(format!(
            "`_type` is {}, not `{STATEMENT_TYPE}`",
            st["_type"]
        ));
    }
    let subjects = st["subject"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if !subjects
        .iter()
        .any(|s| s["digest"]["sha256"].as_str() == Some(image.hex()))
    {
        let named: Vec<String> = subjects
            .iter()
            .take(4)
            .map(|s| format!("sha256:{}", s["digest"]["sha256"].as_str().unwrap_or("?")))
            .collect();
        return Err(format!(
            "the statement is about {}, not {image}",
            if named.is_empty() {
                "no subject".to_string()
            } else {
                named.join(", ")
            }
        ));
    }
    let predicate_type = st["predicateType"].as_str().unwrap_or_default().to_owned();
    if predicate_type != SLSA_PROVENANCE_V1 {
        return Err(format!(
            "predicate type `{}`, not `{SLSA_PROVENANCE_V1}`",
            predicate_type.escape_debug()
        ));
    }
    let run = &st["predicate"]["runDetails"]["builder"];
    let versions = run["version"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or("?")))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let builder = format!("{} ({versions})", run["id"].as_str().unwrap_or("?"));
    let def = &st["predicate"]["buildDefinition"];
    let blueprint_id = (def["buildType"] == BUILD_TYPE)
        .then(|| def["externalParameters"]["blueprint"]["id"].as_str())
        .flatten()
        .map(str::to_owned);
    Ok(Verified {
        key,
        predicate_type,
        builder,
        blueprint_id,
    })
}

/// The annotations of the attachment layer holding a provenance envelope.
pub fn annotations() -> BTreeMap<String, String> {
    BTreeMap::from([(
        PREDICATE_TYPE_ANNOTATION.to_owned(),
        SLSA_PROVENANCE_V1.to_owned(),
    )])
}

/// The media type of that layer.
pub const MEDIA_TYPE: &str = dsse::MEDIA_TYPE;

#[cfg(test)]
mod tests {
    use super::*;

    fn provenance() -> Provenance {
        let d = |c: &str| -> Digest { format!("sha256:{}", c.repeat(64)).parse().unwrap() };
        Provenance {
            builder: Builder {
                name: "nodeimg".into(),
                version: "0.1.0".into(),
            },
            name: "cpu-minimal".into(),
            version: "2026.11.1".into(),
            blueprint_id: format!("sha256:{}", "b".repeat(64)),
            tag: "2026.11.1".into(),
            platform: "linux/amd64".into(),
            source_date_epoch: 0,
            manifest: Blob {
                digest: d("a"),
                size: 1,
            },
            config: Blob {
                digest: d("c"),
                size: 1,
            },
            layers: vec![LayerRecord {
                role: "config".into(),
                media_type: "application/vnd.oci.image.layer.v1.tar+zstd".into(),
                compression: "zstd".into(),
                level: 3,
                digest: d("e"),
                size: 1,
                diff_id: d("f"),
            }],
        }
    }

    #[test]
    fn the_statement_binds_the_manifest_and_names_the_inputs() {
        let st = statement(&provenance());
        assert_eq!(st["subject"][0]["digest"]["sha256"], "a".repeat(64));
        assert_eq!(st["predicateType"], SLSA_PROVENANCE_V1);
        let deps = &st["predicate"]["buildDefinition"]["resolvedDependencies"];
        assert_eq!(deps[0]["digest"]["sha256"], "b".repeat(64));
        assert_eq!(deps[1]["name"], "layer/config");
        assert_eq!(deps[1]["digest"]["sha256"], "f".repeat(64));
        assert_eq!(
            st["predicate"]["runDetails"]["builder"]["version"]["nodeimg"],
            "0.1.0"
        );
    }

    #[test]
    fn verification_checks_key_subject_and_predicate() {
        let key = SigningKey::from_pem(crate::trust::key::tests_support::PKCS8).unwrap();
        let keys = [key.public().clone()];
        let p = provenance();
        let blob = sign(&p, &key);
        assert_eq!(blob, sign(&p, &key), "deterministic");
        let v = verify(&blob, &p.manifest.digest, &keys).unwrap();
        assert_eq!(v.key, *key.public().id());
        assert_eq!(v.blueprint_id.as_deref(), Some(p.blueprint_id.as_str()));
        let other: Digest = format!("sha256:{}", "9".repeat(64)).parse().unwrap();
        let e = verify(&blob, &other, &keys).unwrap_err();
        assert!(e.contains("not sha256:9999"), "{e}");
        assert!(verify(&blob, &p.manifest.digest, &[]).is_err());
        let other_type = Envelope::sign(&key, "text/plain", b"{}").to_bytes();
        assert!(verify(&other_type, &p.manifest.digest, &keys).is_err());
    }
}
