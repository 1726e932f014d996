//! Hand-made OCI image layouts for apply's tests: layers written entry by
//! entry with the `tar` crate (whiteouts, opaque markers, links, devices,
//! paths that climb out), uncompressed, with index, manifest and config
//! written here, independently of nodeimg's own packager.

use std::path::Path;

use super::package::sha256;

/// One tar entry of a test layer.
pub enum E<'a> {
    Dir(&'a str, u32),
    File(&'a str, u32, &'a [u8]),
    Link(&'a str, &'a str),
    Hard(&'a str, &'a str),
    Char(&'a str),
    /// A raw path written as it is (to test `..` and the like).
    RawFile(&'a str, &'a [u8]),
}

/// An uncompressed tar of `entries`.
pub fn layer(entries: &[E<'_>]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_ustar();
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(0);
        match e {
            E::Dir(p, mode) => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(*mode);
                h.set_size(0);
                b.append_data(&mut h, p, &[][..]).unwrap();
            }
            E::File(p, mode, data) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(*mode);
                h.set_size(data.len() as u64);
                b.append_data(&mut h, p, *data).unwrap();
            }
            E::Link(p, target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_size(0);
                b.append_link(&mut h, p, target).unwrap();
            }
            E::Hard(p, target) => {
                h.set_entry_type(tar::EntryType::Link);
                h.set_mode(0o644);
                h.set_size(0);
                b.append_link(&mut h, p, target).unwrap();
            }
            E::Char(p) => {
                h.set_entry_type(tar::EntryType::Char);
                h.set_mode(0o600);
                h.set_size(0);
                b.append_data(&mut h, p, &[][..]).unwrap();
            }
            E::RawFile(p, data) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(0o644);
                h.set_size(data.len() as u64);
                // Bypass the builder's own path checks: write the name field.
                let name = &mut h.as_old_mut().name;
                name.fill(0);
                name[..p.len()].copy_from_slice(p.as_bytes());
                h.set_cksum();
                b.append(&h, *data).unwrap();
            }
        }
    }
    b.into_inner().unwrap()
}

fn blob(dir: &Path, bytes: &[u8]) -> String {
    let digest = sha256(bytes);
    let hex = digest.strip_prefix("sha256:").unwrap();
    std::fs::write(dir.join("blobs/sha256").join(hex), bytes).unwrap();
    digest
}

/// Writes an OCI layout of `layers` (bottom first) into `dir`.
pub fn layout(dir: &Path, layers: &[Vec<u8>]) {
    std::fs::create_dir_all(dir.join("blobs/sha256")).unwrap();
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    let diff_ids: Vec<String> = layers.iter().map(|l| sha256(l)).collect();
    let config = serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "config": {}
    });
    let config = serde_json::to_vec(&config).unwrap();
    let config_digest = blob(dir, &config);
    let descs: Vec<serde_json::Value> = layers
        .iter()
        .map(|l| {
            serde_json::json!({
                "mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": blob(dir, l), "size": l.len()
            })
        })
        .collect();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": descs
    });
    let manifest = serde_json::to_vec(&manifest).unwrap();
    let manifest_digest = blob(dir, &manifest);
    let index = serde_json::json!({
        "schemaVersion": 2,
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest, "size": manifest.len(),
            "annotations": {"org.opencontainers.image.ref.name": "test"}}]
    });
    std::fs::write(dir.join("index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
}

/// The digest and size of the image manifest of the layout at `dir` (the index entry
/// that is not an attachment).
pub fn image_manifest(dir: &Path) -> (String, u64) {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
    let m = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| {
            m.get("artifactType").is_none()
                && !m["annotations"]["org.opencontainers.image.ref.name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("sha256-"))
        })
        .expect("an image in the layout");
    (
        m["digest"].as_str().unwrap().to_owned(),
        m["size"].as_u64().unwrap(),
    )
}

/// How an attachment is tied to the layout's image.
pub enum Tie<'a> {
    /// Under a cosign-style tag `sha256-<hex>.<suffix>`.
    Tag(&'a str),
    /// An OCI 1.1 referrer: `subject` is the image, with this `artifactType`.
    Referrer(&'a str),
}

/// Adds a manifest about the layout's image holding `payload` as its one layer
/// (media type `layer_type`) to the layout at `dir`; returns the manifest's digest.
pub fn attach(dir: &Path, tie: Tie<'_>, layer_type: &str, payload: &[u8]) -> String {
    let (image, image_size) = image_manifest(dir);
    let empty = b"{}";
    let empty_digest = blob(dir, empty);
    let mut manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty_digest, "size": 2},
        "layers": [{"mediaType": layer_type, "digest": blob(dir, payload), "size": payload.len()}]
    });
    let mut entry = serde_json::json!({"mediaType": "application/vnd.oci.image.manifest.v1+json"});
    match tie {
        Tie::Tag(suffix) => {
            let hex = image.strip_prefix("sha256:").unwrap();
            entry["annotations"] = serde_json::json!({
                "org.opencontainers.image.ref.name": format!("sha256-{hex}.{suffix}")
            });
        }
        Tie::Referrer(artifact_type) => {
            manifest["artifactType"] = serde_json::json!(artifact_type);
            manifest["subject"] = serde_json::json!({
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": image, "size": image_size
            });
            entry["artifactType"] = serde_json::json!(artifact_type);
        }
    }
    let bytes = serde_json::to_vec(&manifest).unwrap();
    let digest = blob(dir, &bytes);
    entry["digest"] = serde_json::json!(digest);
    entry["size"] = serde_json::json!(bytes.len());
    let path = dir.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    index["manifests"].as_array_mut().unwrap().push(entry);
    std::fs::write(&path, serde_json::to_vec(&index).unwrap()).unwrap();
    digest
}
