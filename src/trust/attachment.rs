//! Cosign's attachment manifests: the signatures (`sha256-<hex>.sig`) and attestations
//! (`sha256-<hex>.att`) of an image, stored as an OCI image manifest under a tag derived
//! from the image's manifest digest, in the same repository (or the same OCI layout).
//!
//! Each signature or attestation is one layer of that manifest: the payload is the blob
//! and the layer's annotations carry the rest (`dev.cosignproject.cosign/signature` for a
//! simple-signing payload; `predicateType` for a DSSE envelope). The config is an OCI image
//! config whose `rootfs.diff_ids` list the layers, as containers/image writes it
//! (`docker/docker_image_dest.go`, `putSignaturesToSigstoreAttachments`) and reads it
//! (`use-sigstore-attachments: true` in registries.d). Several signers add layers to the
//! same manifest; a layer already there is not added twice.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::package::{BlobRef, Digest};

/// The media type of the attachment manifest itself (containers/image reads no other).
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The media type of its config.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// Most layers read from one attachment manifest (each is a signature or attestation).
pub const MAX_LAYERS: usize = 256;

/// What an attachment manifest holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Simple-signing signatures: tag suffix `.sig`.
    Signature,
    /// DSSE-wrapped in-toto attestations: tag suffix `.att`.
    Attestation,
}

impl Kind {
    pub fn suffix(self) -> &'static str {
        match self {
            Kind::Signature => "sig",
            Kind::Attestation => "att",
        }
    }

    /// The tag of `image`'s attachments of this kind: `sha256-<hex>.sig`.
    pub fn tag(self, image: &Digest) -> String {
        format!("sha256-{}.{}", image.hex(), self.suffix())
    }

    /// The image digest and kind a tag names, if it is an attachment tag.
    pub fn parse_tag(tag: &str) -> Option<(Digest, Kind)> {
        let (hex, suffix) = tag.strip_prefix("sha256-")?.split_once('.')?;
        let kind = [Kind::Signature, Kind::Attestation]
            .into_iter()
            .find(|k| k.suffix() == suffix)?;
        Some((format!("sha256:{hex}").parse().ok()?, kind))
    }
}

/// One signature or attestation: a blob and its annotations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Layer {
    pub media_type: String,
    pub digest: Digest,
    pub size: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Layer {
    /// The layer for `payload`, with `annotations`.
    pub fn of(media_type: &str, payload: &[u8], annotations: BTreeMap<String, String>) -> Self {
        Self {
            media_type: media_type.to_owned(),
            digest: Digest::of(payload),
            size: payload.len() as u64,
            annotations,
        }
    }
}

/// An attachment manifest: its layers (and the config it had, when read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub layers: Vec<Layer>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawManifest {
    schema_version: u32,
    #[serde(default)]
    media_type: Option<String>,
    config: RawDescriptor,
    #[serde(default)]
    layers: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDescriptor {
    #[allow(dead_code, reason = "read to check the document's shape")]
    media_type: String,
    #[allow(dead_code, reason = "read to check the document's shape")]
    digest: String,
}

/// The two documents of an attachment manifest, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Documents {
    pub manifest: Vec<u8>,
    pub config: Vec<u8>,
}

impl Documents {
    pub fn manifest_ref(&self) -> BlobRef {
        BlobRef {
            digest: Digest::of(&self.manifest),
            size: self.manifest.len() as u64,
        }
    }

    pub fn config_ref(&self) -> BlobRef {
        BlobRef {
            digest: Digest::of(&self.config),
            size: self.config.len() as u64,
        }
    }
}

impl Manifest {
    /// Parses an (untrusted) attachment manifest: an OCI image manifest with at most
    /// [`MAX_LAYERS`] layers, each with a sha256 digest.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let raw: RawManifest =
            serde_json::from_slice(bytes).map_err(|e| format!("not an OCI image manifest: {e}"))?;
        if raw.schema_version != 2 {
            return Err(format!("schemaVersion is {}, not 2", raw.schema_version));
        }
        if let Some(m) = &raw.media_type
            && m != MANIFEST_MEDIA_TYPE
        {
            return Err(format!(
                "media type `{}`, not an OCI image manifest",
                m.escape_debug()
            ));
        }
        if raw.layers.len() > MAX_LAYERS {
            return Err(format!(
                "holds {} layers; at most {MAX_LAYERS} signatures or attestations are read",
                raw.layers.len()
            ));
        }
        let _ = raw.config;
        let layers = raw
            .layers
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                serde_json::from_value::<Layer>(v).map_err(|e| format!("layers[{i}]: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { layers })
    }

    /// Adds `layer` unless an equal one (media type, digest, size, annotations) is there;
    /// returns whether it was added.
    pub fn add(&mut self, layer: Layer) -> bool {
        if self.layers.contains(&layer) {
            return false;
        }
        self.layers.push(layer);
        true
    }

    /// The manifest and config documents, as canonical JSON.
    pub fn documents(&self) -> Documents {
        let config = serde_json::json!({
            "architecture": "",
            "os": "",
            "config": {},
            "rootfs": {
                "type": "layers",
                "diff_ids": self.layers.iter().map(|l| l.digest.to_string()).collect::<Vec<_>>(),
            },
        });
        let config = crate::canonical_json::value_to_vec(&config);
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": {
                "mediaType": CONFIG_MEDIA_TYPE,
                "digest": Digest::of(&config).to_string(),
                "size": config.len(),
            },
            "layers": self.layers,
        });
        Documents {
            manifest: crate::canonical_json::value_to_vec(&manifest),
            config,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_the_image_and_the_kind() {
        let d: Digest = format!("sha256:{}", "0f".repeat(32)).parse().unwrap();
        let tag = Kind::Signature.tag(&d);
        assert_eq!(tag, format!("sha256-{}.sig", "0f".repeat(32)));
        assert_eq!(Kind::parse_tag(&tag), Some((d.clone(), Kind::Signature)));
        assert_eq!(
            Kind::parse_tag(&Kind::Attestation.tag(&d)),
            Some((d, Kind::Attestation))
        );
        for other in ["latest", "sha256-00.sig", "sha256-.sig", "sha512-00.sig"] {
            assert_eq!(Kind::parse_tag(other), None, "{other}");
        }
    }

    #[test]
    fn documents_round_trip_and_list_each_layer_once() {
        let mut m = Manifest::default();
        let l = Layer::of(
            crate::trust::payload::MEDIA_TYPE,
            b"{}",
            BTreeMap::from([("k".into(), "v".into())]),
        );
        assert!(m.add(l.clone()));
        assert!(!m.add(l.clone()));
        let docs = m.documents();
        let back = Manifest::parse(&docs.manifest).unwrap();
        assert_eq!(back, m);
        let v: serde_json::Value = serde_json::from_slice(&docs.manifest).unwrap();
        assert_eq!(v["config"]["digest"], docs.config_ref().digest.to_string());
        let c: serde_json::Value = serde_json::from_slice(&docs.config).unwrap();
        assert_eq!(c["rootfs"]["diff_ids"][0], l.digest.to_string());
    }

    #[test]
    fn malformed_manifests_are_refused() {
        let many = serde_json::json!({
            "schemaVersion": 2,
            "config": {"mediaType": CONFIG_MEDIA_TYPE, "digest": "sha256:00"},
            "layers": vec![serde_json::json!({}); MAX_LAYERS + 1],
        });
        for bad in [
            b"[]".to_vec(),
            br#"{"schemaVersion":1,"config":{"mediaType":"x","digest":"y"}}"#.to_vec(),
            br#"{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"x","digest":"y"}}"#.to_vec(),
            br#"{"schemaVersion":2,"config":{"mediaType":"x","digest":"y"},"layers":[{"mediaType":"m","digest":"md5:00","size":1}]}"#.to_vec(),
            serde_json::to_vec(&many).unwrap(),
        ] {
            assert!(Manifest::parse(&bad).is_err(), "{}", String::from_utf8_lossy(&bad));
        }
    }
}
