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
