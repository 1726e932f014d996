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

use super::contents::{Contents, Item, ItemKind};
use super::pins::purl as pin_purl;
use super::{PROPERTY_PREFIX, crate_purl, image_purl, uuid_v5};
use crate::canonical_json::{Array, Object};
use crate::package::plan::LayerRole;

/// `properties`: one `{name, value}` per (name, value), names prefixed.
fn properties(o: &mut Object<'_>, props: &[(&str, &str)]) {
    let mut list = Array::new(o.key("properties"));
    for (name, value) in props {
        let mut p = list.object();
        p.str("name", &format!("{PROPERTY_PREFIX}{name}"))
            .str("value", value);
        p.end();
    }
    list.end();
}

/// `hashes`: one `{alg, content}` per (algorithm, hex).
fn hashes(o: &mut Object<'_>, sums: &[(&str, &str)]) {
    o.pairs("hashes", ("alg", "content"), sums);
}

/// The CycloneDX document, as canonical JSON. Written straight into its
/// bytes, members in key order: the file components (one per file of every
/// layer: tens of thousands for a large overlay) and the crates never
/// become JSON values first.
pub fn write(c: &Contents<'_>) -> Vec<u8> {
    let m = c.meta;
    let s = c.source;
    let v = &c.verifier;
    let files: usize = c.layers.iter().map(|l| l.items.len()).sum();
    let crates = v.crates.as_ref().map_or(0, |i| i.packages.len());
    let mut out = Vec::with_capacity(4096 + files * 320 + crates * 500);
    let mut doc = Object::new(&mut out);
    doc.str("bomFormat", "CycloneDX");

    let mut components = Array::new(doc.key("components"));
    let mut blueprint = components.object();
    blueprint
        .str("bom-ref", "blueprint")
        .str("description", "the blueprint the image was generated from; its hash is the blueprint id (etc/nodeimg/blueprint.lock.json in the image)");
    hashes(
        &mut blueprint,
        &[(
            "SHA-256",
            m.blueprint_id
                .strip_prefix("sha256:")
                .unwrap_or(&m.blueprint_id),
        )],
    );
    blueprint
        .str("name", &format!("{} blueprint", m.name))
        .str("type", "data")
        .str("version", &m.version);
    blueprint.end();

    let mut os = components.object();
    os.str("bom-ref", "os")
        .str("description", "the base OS the image is applied onto")
        .str("name", s.distro.as_str());
    properties(
        &mut os,
        &[("patch-level", &s.patch_level), ("kernel", &s.kernel)],
    );
    os.str("type", "operating-system")
        .str("version", &s.os_version);
    os.end();

    let mut image_deps: BTreeSet<String> = BTreeSet::from(["os".to_string(), "verifier".into()]);
    for p in &c.pins.packages {
        let purl = pin_purl(p, s.distro, &s.os_version, &m.architecture);
        if !image_deps.insert(purl.clone()) {
            continue;
        }
        let mut comp = components.object();
        comp.str("bom-ref", &purl)
            .str("description", "held by the image's holds file; installed on the base OS, not carried in the layers")
            .str("name", &p.name);
        properties(
            &mut comp,
            &[
                (
                    "pin",
                    &format!("{} (/{})", p.pin, c.pins.file.unwrap_or("")),
                ),
                ("pinned-for", &p.why),
            ],
        );
        comp.str("purl", &purl).str("type", "library");
        if let Some(version) = &p.version {
            comp.str("version", version);
        }
        comp.end();
    }

    let root = v.crates.as_ref().and_then(super::crates::root);
    let mut verifier = components.object();
    verifier.str("bom-ref", "verifier");
    hashes(&mut verifier, &[("SHA-1", &v.sha1), ("SHA-256", &v.sha256)]);
    verifier.str("name", root.map_or("nodeimg", |r| r.name.as_str()));
    let crate_count = match &v.crates {
        Some(i) => format!(
            "{} from its .dep-v0 section (cargo auditable format {})",
            i.packages.len(),
            i.format
        ),
        None => "none: the binary carries no .dep-v0 section".to_string(),
    };
    properties(
        &mut verifier,
        &[
            ("path", &format!("/{}", crate::package::verifier::NODE_PATH)),
            ("crates", &crate_count),
        ],
    );
    verifier.str("type", "application");
    if let Some(r) = root {
        verifier.str("version", &r.version.to_string());
    }
    verifier.end();

    // The crates' references, and whether each is the first of its name
    // (a crate listed twice is one component).
    let refs: Vec<String> = v.crates.as_ref().map_or_else(Vec::new, |info| {
        info.packages
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
            .collect()
    });
    let mut seen = BTreeSet::new();
    let first: Vec<bool> = refs.iter().map(|r| seen.insert(r.as_str())).collect();
    if let Some(info) = &v.crates {
        for (i, p) in info.packages.iter().enumerate() {
            if !first[i] || p.root {
                continue;
            }
            let mut comp = components.object();
            comp.str("bom-ref", &refs[i]).str("name", &p.name);
            properties(
                &mut comp,
                &[("crate-source", &String::from(p.source.clone()))],
            );
            if let Some(purl) = crate_purl(p) {
                comp.str("purl", &purl);
            }
            comp.str(
                "scope",
                match p.kind {
                    auditable_serde::DependencyKind::Build => "excluded",
                    auditable_serde::DependencyKind::Runtime => "required",
                },
            )
            .str("type", "library")
            .str("version", &p.version.to_string());
            comp.end();
        }
    }
    for l in &c.layers {
        for item in &l.items {
            file_component(l.info.role, item, components.item());
        }
    }
    components.end();

    let mut dependencies = Array::new(doc.key("dependencies"));
    let depends = |list: &mut Array<'_>, on: &mut dyn Iterator<Item = &str>, of: &str| {
        let mut d = list.object();
        let mut names = Array::new(d.key("dependsOn"));
        for name in on {
            names.str(name);
        }
        names.end();
        d.str("ref", of);
        d.end();
    };
    let alone = |list: &mut Array<'_>, of: &str| {
        let mut d = list.object();
        d.str("ref", of);
        d.end();
    };
    depends(
        &mut dependencies,
        &mut image_deps.iter().map(String::as_str),
        "image",
    );
    alone(&mut dependencies, "os");
    if let Some(info) = &v.crates {
        for (i, p) in info.packages.iter().enumerate() {
            if !first[i] {
                continue;
            }
            let deps: BTreeSet<&str> = p.dependencies.iter().map(|&d| refs[d].as_str()).collect();
            depends(&mut dependencies, &mut deps.into_iter(), &refs[i]);
        }
    } else {
        alone(&mut dependencies, "verifier");
    }
    for p in image_deps.iter().filter(|r| r.starts_with("pkg:")) {
        alone(&mut dependencies, p);
    }
    dependencies.end();

    let mut metadata = Object::new(doc.key("metadata"));
    let mut image = Object::new(metadata.key("component"));
    image.str("bom-ref", "image");
    hashes(&mut image, &[("SHA-256", c.manifest.digest.hex())]);
    image.str("name", &m.name);
    let mut image_props = vec![
        ("blueprint-id".to_string(), m.blueprint_id.clone()),
        ("tag".to_string(), m.tag.to_string()),
        ("config".to_string(), c.config.digest.to_string()),
    ];
    for l in &c.layers {
        image_props.push((
            format!("layer:{}", l.info.role.as_str()),
            format!(
                "{} diff_id {} ({}, {} entries)",
                l.info.digest, l.info.diff_id, l.info.media_type, l.info.entries
            ),
        ));
    }
    for p in &c.pins.patterns {
        image_props.push((
            "pin-pattern".to_string(),
            format!(
                "`{}` ({}) in /{}: {}; a pattern, not a package",
                p.pattern,
                p.pin,
                c.pins.file.unwrap_or(""),
                p.why
            ),
        ));
    }
    let image_props: Vec<(&str, &str)> = image_props
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    properties(&mut image, &image_props);
    image
        .str("purl", &image_purl(c))
        .str("type", "container")
        .str("version", &m.version);
    image.end();
    metadata.str("timestamp", &c.created);
    let mut tools = Object::new(metadata.key("tools"));
    let mut tool_list = Array::new(tools.key("components"));
    let mut tool = tool_list.object();
    tool.str("name", "nodeimg").str("type", "application");
    tool.end();
    tool_list.end();
    tools.end();
    metadata.end();

    doc.str(
        "serialNumber",
        &format!(
            "urn:uuid:{}",
            uuid_v5(&format!("cyclonedx {}", c.manifest.digest))
        ),
    )
    .str("specVersion", "1.6");
    doc.key("version").push(b'1');
    doc.end();
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
    use serde_json::{Value, json};
    use std::borrow::Cow;

    fn prop(name: &str, value: impl Into<String>) -> Value {
        json!({"name": format!("{PROPERTY_PREFIX}{name}"), "value": value.into()})
    }

    fn sha256(hex: &str) -> Value {
        json!({"alg": "SHA-256", "content": hex})
    }

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
