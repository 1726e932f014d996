//! The SBOM as a CycloneDX 1.6 JSON document (`application/vnd.cyclonedx+json`).
//!
//! `metadata.component` is the image (type `container`, its manifest digest
//! as SHA-256, purl `pkg:oci/…`, the layers and the blueprint id as
//! properties). Components: the blueprint (`data`, hashed by its id), the
//! base OS (`operating-system`), every package the holds file pins (purl
//! `pkg:deb/…` or `pkg:rpm/…`), the verifier (`application`) and the Rust
//! crates compiled into it (purl `pkg:cargo/…`; build-time crates have
//! scope `excluded`: they are not in the binary), and every file and link of
//! every layer (`file`, with its SHA-256, its layer and mode as properties;
//! rendered files name the blueprint they were generated from). Pin
//! patterns (`*nvidia*`) are properties of the image, not components.
//! `dependencies`: the image depends on the base OS, the pinned packages and
//! the verifier; each crate on its dependencies.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::contents::{Contents, Item, ItemKind};
use super::pins::purl as pin_purl;
use super::{PROPERTY_PREFIX, crate_purl, image_purl, uuid_v5};
use crate::package::plan::LayerRole;

fn prop(name: &str, value: impl Into<String>) -> Value {
    json!({"name": format!("{PROPERTY_PREFIX}{name}"), "value": value.into()})
}

fn sha256(hex: &str) -> Value {
    json!({"alg": "SHA-256", "content": hex})
}

/// The CycloneDX document, as canonical JSON.
pub fn write(c: &Contents<'_>) -> Vec<u8> {
    let m = c.meta;
    let s = c.source;
    let mut image_props = vec![
        prop("blueprint-id", &m.blueprint_id),
        prop("tag", m.tag.as_str()),
        prop("config", c.config.digest.to_string()),
    ];
    for l in &c.layers {
        image_props.push(prop(
            &format!("layer:{}", l.info.role.as_str()),
            format!(
                "{} diff_id {} ({}, {} entries)",
                l.info.digest, l.info.diff_id, l.info.media_type, l.info.entries
            ),
        ));
    }
    for p in &c.pins.patterns {
        image_props.push(prop(
            "pin-pattern",
            format!(
                "`{}` ({}) in /{}: {}; a pattern, not a package",
                p.pattern,
                p.pin,
                c.pins.file.unwrap_or(""),
                p.why
            ),
        ));
    }
    let image = json!({
        "type": "container",
        "bom-ref": "image",
        "name": m.name,
        "version": m.version,
        "hashes": [sha256(c.manifest.digest.hex())],
        "purl": image_purl(c),
        "properties": image_props,
    });

    let mut components = vec![
        json!({
            "type": "data",
            "bom-ref": "blueprint",
            "name": format!("{} blueprint", m.name),
            "version": m.version,
            "hashes": [sha256(m.blueprint_id.strip_prefix("sha256:").unwrap_or(&m.blueprint_id))],
            "description": "the blueprint the image was generated from; its hash is the blueprint id (etc/nodeimg/blueprint.lock.json in the image)",
        }),
        json!({
            "type": "operating-system",
            "bom-ref": "os",
            "name": s.distro.as_str(),
            "version": s.os_version,
            "description": "the base OS the image is applied onto",
            "properties": [prop("patch-level", &s.patch_level), prop("kernel", &s.kernel)],
        }),
    ];
    let mut image_deps: BTreeSet<String> = BTreeSet::from(["os".to_string(), "verifier".into()]);
    for p in &c.pins.packages {
        let purl = pin_purl(p, s.distro, &s.os_version, &m.architecture);
        if !image_deps.insert(purl.clone()) {
            continue;
        }
        let mut comp = json!({
            "type": "library",
            "bom-ref": purl,
            "name": p.name,
            "purl": purl,
            "properties": [
                prop("pin", format!("{} (/{})", p.pin, c.pins.file.unwrap_or(""))),
                prop("pinned-for", &p.why),
            ],
            "description": "held by the image's holds file; installed on the base OS, not carried in the layers",
        });
        if let Some(v) = &p.version {
            comp["version"] = json!(v);
        }
        components.push(comp);
    }

    let v = &c.verifier;
    let root = v.crates.as_ref().and_then(super::crates::root);
    let mut verifier = json!({
        "type": "application",
        "bom-ref": "verifier",
        "name": root.map_or("nodeimg", |r| r.name.as_str()),
        "hashes": [{"alg": "SHA-1", "content": v.sha1}, sha256(&v.sha256)],
        "properties": [
            prop("path", format!("/{}", crate::package::verifier::NODE_PATH)),
            prop("crates", match &v.crates {
                Some(i) => format!("{} from its .dep-v0 section (cargo auditable format {})", i.packages.len(), i.format),
                None => "none: the binary carries no .dep-v0 section".to_string(),
            }),
        ],
    });
    if let Some(r) = root {
        verifier["version"] = json!(r.version.to_string());
    }
    components.push(verifier);

    let mut dependencies = vec![json!({"ref": "image", "dependsOn": image_deps})];
    dependencies.push(json!({"ref": "os"}));
    if let Some(info) = &v.crates {
        let refs: Vec<String> = info
            .packages
            .iter()
            .map(|p| {
                if p.root {
                    "verifier".to_string()
                } else {
                    crate_purl(p).unwrap_or_else(|| {
                        format!(
                            "crate:{}@{}:{}",
                            p.name,
                            p.version,
                            String::from(p.source.clone())
                        )
                    })
                }
            })
            .collect();
        let mut seen = BTreeSet::new();
        for (i, p) in info.packages.iter().enumerate() {
            if !seen.insert(refs[i].clone()) {
                continue;
            }
            if !p.root {
                let mut comp = json!({
                    "type": "library",
                    "bom-ref": refs[i],
                    "name": p.name,
                    "version": p.version.to_string(),
                    "scope": match p.kind {
                        auditable_serde::DependencyKind::Build => "excluded",
                        auditable_serde::DependencyKind::Runtime => "required",
                    },
                    "properties": [prop("crate-source", String::from(p.source.clone()))],
                });
                if let Some(purl) = crate_purl(p) {
                    comp["purl"] = json!(purl);
                }
                components.push(comp);
            }
            let deps: BTreeSet<&String> = p.dependencies.iter().map(|&d| &refs[d]).collect();
            dependencies.push(json!({"ref": refs[i], "dependsOn": deps}));
        }
    } else {
        dependencies.push(json!({"ref": "verifier"}));
    }
    for p in image_deps.iter().filter(|r| r.starts_with("pkg:")) {
        dependencies.push(json!({"ref": p}));
    }

    let metadata = json!({
        "timestamp": c.created,
        "tools": {"components": [{"type": "application", "name": "nodeimg"}]},
        "component": image,
    });
    let serial = format!(
        "urn:uuid:{}",
        uuid_v5(&format!("cyclonedx {}", c.manifest.digest))
    );
    // The canonical encoding of the whole document, written in key order
    // by hand so that the file components (one per file of every layer:
    // tens of thousands for a large overlay) go straight into the output
    // instead of becoming JSON values first.
    let files: usize = c.layers.iter().map(|l| l.items.len()).sum();
    let mut out = Vec::with_capacity(4096 + files * 320);
    out.extend_from_slice(br#"{"bomFormat":"CycloneDX","components":["#);
    let mut first = true;
    for comp in &components {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        out.extend_from_slice(&crate::canonical_json::value_to_vec(comp));
    }
    for l in &c.layers {
        for item in &l.items {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            file_component(l.info.role, item, &mut out);
        }
    }
    out.extend_from_slice(br#"],"dependencies":"#);
    out.extend_from_slice(&crate::canonical_json::value_to_vec(&Value::Array(
        dependencies,
    )));
    out.extend_from_slice(br#","metadata":"#);
    out.extend_from_slice(&crate::canonical_json::value_to_vec(&metadata));
    out.extend_from_slice(br#","serialNumber":"#);
    crate::canonical_json::string(&serial, &mut out);
    out.extend_from_slice(br#","specVersion":"1.6","version":1}"#);
    out
}

/// One file or link of a layer as its canonical component: `bom-ref`,
/// `hashes` (SHA-1 where known, SHA-256), `name`, `properties` (layer,
/// mode, and `generated-from` for a rendered file or `link-target` for a
/// link), `type` — keys in byte order, as `canonical_json` writes them.
fn file_component(role: LayerRole, item: &Item<'_>, out: &mut Vec<u8>) {
    use crate::canonical_json::{escaped, string};
    out.extend_from_slice(br#"{"bom-ref":"file:/"#);
    escaped(item.path, out);
    out.push(b'"');
    if let ItemKind::File { sha256, sha1, .. } = &item.kind {
        out.extend_from_slice(br#","hashes":["#);
        if let Some(s1) = sha1 {
            out.extend_from_slice(br#"{"alg":"SHA-1","content":"#);
            string(s1, out);
            out.extend_from_slice(b"},");
        }
        out.extend_from_slice(br#"{"alg":"SHA-256","content":"#);
        string(sha256, out);
        out.extend_from_slice(b"}]");
    }
    out.extend_from_slice(br#","name":"/"#);
    escaped(item.path, out);
    out.extend_from_slice(br#"","properties":["#);
    let property = |key: &str, value: &[u8], out: &mut Vec<u8>| {
        out.extend_from_slice(br#"{"name":""#);
        escaped(PROPERTY_PREFIX, out);
        escaped(key, out);
        out.extend_from_slice(br#"","value":"#);
        out.extend_from_slice(value);
        out.push(b'}');
    };
    let mut value = Vec::new();
    string(role.as_str(), &mut value);
    property("layer", &value, out);
    out.push(b',');
    // `"0644"`, as `{:04o}` writes it; written by hand for the permission
    // bits every layer entry has.
    let m = item.mode;
    if m <= 0o7777 {
        let digit = |shift: u32| b'0' + ((m >> shift) & 7) as u8;
        property(
            "mode",
            &[b'"', digit(9), digit(6), digit(3), digit(0), b'"'],
            out,
        );
    } else {
        property("mode", format!("\"{m:04o}\"").as_bytes(), out);
    }
    match &item.kind {
        ItemKind::File { .. } if role == LayerRole::Config => {
            out.push(b',');
            property("generated-from", br#""blueprint""#, out);
        }
        ItemKind::File { .. } => {}
        ItemKind::Symlink { target } => {
            out.push(b',');
            value.clear();
            string(target, &mut value);
            property("link-target", &value, out);
        }
    }
    out.extend_from_slice(br#"],"type":"file"}"#);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// The component as a JSON value, the way the rest of the document is
    /// built, for comparison.
    fn as_value(role: LayerRole, item: &Item<'_>) -> Value {
        let mut props = vec![
            prop("layer", role.as_str()),
            prop("mode", format!("{:04o}", item.mode)),
        ];
        let mut comp = json!({
            "type": "file",
            "bom-ref": format!("file:/{}", item.path),
            "name": format!("/{}", item.path),
        });
        match &item.kind {
            ItemKind::File {
                sha256: sum, sha1, ..
            } => {
                let mut hashes = Vec::new();
                if let Some(s1) = sha1 {
                    hashes.push(json!({"alg": "SHA-1", "content": s1}));
                }
                hashes.push(sha256(sum));
                comp["hashes"] = Value::Array(hashes);
                if role == LayerRole::Config {
                    props.push(prop("generated-from", "blueprint"));
                }
            }
            ItemKind::Symlink { target } => props.push(prop("link-target", *target)),
        }
        comp["properties"] = Value::Array(props);
        comp
    }

    #[test]
    fn file_components_are_written_as_their_canonical_values() {
        let file = |sha1: Option<&str>| ItemKind::File {
            size: 3,
            sha256: Cow::Borrowed("ab\"c"),
            sha1: sha1.map(str::to_string),
        };
        let items = [
            (LayerRole::Config, "etc/a \"b\"\n.conf", file(Some("0f"))),
            (LayerRole::Overlay, "opt/é/x", file(None)),
            (
                LayerRole::Verifier,
                "usr/local/bin/nodeimg",
                file(Some("1e")),
            ),
            (
                LayerRole::Config,
                "etc/systemd/system/x.wants/y",
                ItemKind::Symlink { target: "../y\\z" },
            ),
        ];
        let modes = [0o4755, 0o644, 0, 0o7777, 0o100644];
        for ((role, path, kind), mode) in items.into_iter().zip(modes.into_iter().cycle()) {
            let item = Item { path, mode, kind };
            let mut out = Vec::new();
            file_component(role, &item, &mut out);
            let expected = crate::canonical_json::value_to_vec(&as_value(role, &item));
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
        for mode in modes {
            let item = Item {
                path: "etc/x",
                mode,
                kind: file(None),
            };
            let mut out = Vec::new();
            file_component(LayerRole::Overlay, &item, &mut out);
            let expected =
                crate::canonical_json::value_to_vec(&as_value(LayerRole::Overlay, &item));
            assert_eq!(out, expected, "mode {mode:o}");
        }
    }
}
