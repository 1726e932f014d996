//! The SBOM as an SPDX 2.3 JSON document (`application/spdx+json`).
//!
//! Packages: the image (checksum: its manifest digest; purl `pkg:oci/…`),
//! each layer (its blob digest), the blueprint it was generated from (the
//! blueprint id), the base OS (`OPERATING-SYSTEM`), every package the holds
//! file pins (purl `pkg:deb/…` or `pkg:rpm/…`), the verifier and each Rust
//! crate compiled into it (purl `pkg:cargo/…`). Files: every file of the
//! config and verifier layers with SHA-1 and SHA-256.
//!
//! The overlay layer's files are not listed here: SPDX 2.3 requires a SHA-1
//! of every file (clause 8.4, and spdx-tools refuses a file without one),
//! which nodeimg would have to compute by reading the whole overlay again;
//! the overlay layer is a package with `filesAnalyzed: false`, and the
//! CycloneDX document of the same image lists each of its files with its
//! SHA-256. Pin patterns (`*nvidia*`) are annotations of the image, not
//! packages.
//!
//! Relationships: the document DESCRIBES the image; the image CONTAINS its
//! layers and the verifier, is GENERATED_FROM the blueprint and DEPENDS_ON
//! the base OS and the pinned packages (installed on the base OS, held by
//! the image's holds file); a layer CONTAINS its files; a rendered file is
//! GENERATED_FROM the blueprint; a crate DEPENDS_ON its dependencies (a
//! build-time one is a BUILD_DEPENDENCY_OF it).

use serde_json::{Value, json};

use super::contents::{Contents, ItemKind};
use super::pins::purl as pin_purl;
use super::{NAMESPACE_BASE, TOOL, crate_purl, image_purl, uuid_v5};
use crate::package::plan::LayerRole;

/// The document's namespace: unique per image manifest, stable across builds.
pub fn namespace(c: &Contents<'_>) -> String {
    format!(
        "{NAMESPACE_BASE}/spdx/{}-{}-{}",
        super::pins::percent(&c.meta.name),
        super::pins::percent(&c.meta.version),
        uuid_v5(&format!("spdx {}", c.manifest.digest))
    )
}

fn checksum(alg: &str, hex: &str) -> Value {
    json!({"algorithm": alg, "checksumValue": hex})
}

fn rel(a: &str, kind: &str, b: &str) -> Value {
    json!({"spdxElementId": a, "relationshipType": kind, "relatedSpdxElement": b})
}

fn purl_ref(purl: &str) -> Value {
    json!({"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": purl})
}

/// The SPDX document, as canonical JSON.
pub fn write(c: &Contents<'_>) -> Vec<u8> {
    let m = c.meta;
    let mut packages = Vec::new();
    let mut files = Vec::new();
    let mut rels = vec![rel("SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Image")];

    let mut annotations = Vec::new();
    for p in &c.pins.patterns {
        annotations.push(json!({
            "annotationDate": c.created,
            "annotationType": "OTHER",
            "annotator": TOOL,
            "comment": format!(
                "pinned by pattern, not a package: `{}` ({}) in /{}: {}",
                p.pattern, p.pin, c.pins.file.unwrap_or(""), p.why
            ),
        }));
    }
    let mut image = json!({
        "SPDXID": "SPDXRef-Image",
        "name": m.name,
        "versionInfo": m.version,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": false,
        "primaryPackagePurpose": "CONTAINER",
        "checksums": [checksum("SHA256", c.manifest.digest.hex())],
        "externalRefs": [purl_ref(&image_purl(c))],
        "comment": format!(
            "OCI image manifest {} (config {}), tag {}, platform {}/{}, built from blueprint {} {}",
            c.manifest.digest, c.config.digest, m.tag, m.os, m.architecture, m.name, m.blueprint_id
        ),
    });
    if !annotations.is_empty() {
        image["annotations"] = Value::Array(annotations);
    }
    packages.push(image);
    packages.push(json!({
        "SPDXID": "SPDXRef-Blueprint",
        "name": format!("{} blueprint", m.name),
        "versionInfo": m.version,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": false,
        "primaryPackagePurpose": "SOURCE",
        "checksums": [checksum("SHA256", m.blueprint_id.strip_prefix("sha256:").unwrap_or(&m.blueprint_id))],
        "comment": "the blueprint id: SHA-256 of the canonical resolved blueprint, its matrix entries and its overlay (etc/nodeimg/blueprint.lock.json in the image)",
    }));
    rels.push(rel("SPDXRef-Image", "GENERATED_FROM", "SPDXRef-Blueprint"));
    let s = c.source;
    packages.push(json!({
        "SPDXID": "SPDXRef-OS",
        "name": s.distro.as_str(),
        "versionInfo": s.os_version,
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": false,
        "primaryPackagePurpose": "OPERATING-SYSTEM",
        "comment": format!("the base OS the image is applied onto: patch level {}, kernel {}", s.patch_level, s.kernel),
    }));
    rels.push(rel("SPDXRef-Image", "DEPENDS_ON", "SPDXRef-OS"));

    for (i, p) in c.pins.packages.iter().enumerate() {
        let id = format!("SPDXRef-Pinned-{i}");
        let mut pkg = json!({
            "SPDXID": id,
            "name": p.name,
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": false,
            "primaryPackagePurpose": "INSTALL",
            "externalRefs": [purl_ref(&pin_purl(p, s.distro, &s.os_version, &m.architecture))],
            "comment": format!(
                "held at {} by /{} ({}); installed on the base OS, not carried in the layers",
                p.pin, c.pins.file.unwrap_or(""), p.why
            ),
        });
        if let Some(v) = &p.version {
            pkg["versionInfo"] = json!(v);
        }
        packages.push(pkg);
        rels.push(rel("SPDXRef-Image", "DEPENDS_ON", &id));
    }

    for l in &c.layers {
        let role = l.info.role.as_str();
        let id = format!("SPDXRef-Layer-{role}");
        let listed = l.info.role != LayerRole::Overlay;
        let files_n = l.items.len();
        packages.push(json!({
            "SPDXID": id,
            "name": format!("{role} layer"),
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": listed,
            "primaryPackagePurpose": "ARCHIVE",
            "packageFileName": format!("blobs/sha256/{}", l.info.digest.hex()),
            "checksums": [checksum("SHA256", l.info.digest.hex())],
            "comment": format!(
                "{} layer, diff_id {}, {} entries ({} files and links, {} folders){}",
                l.info.media_type, l.info.diff_id, l.info.entries, files_n, l.dirs,
                if listed { "" } else { "; its files, each with its SHA-256, are in the CycloneDX SBOM of this image (SPDX 2.3 would need a SHA-1 of each)" }
            ),
        }));
        rels.push(rel("SPDXRef-Image", "CONTAINS", &id));
        if !listed {
            continue;
        }
        for (i, item) in l.items.iter().enumerate() {
            let ItemKind::File {
                sha256,
                sha1: Some(sha1),
                ..
            } = &item.kind
            else {
                continue;
            };
            let fid = format!("SPDXRef-File-{role}-{i}");
            files.push(json!({
                "SPDXID": fid,
                "fileName": format!("./{}", item.path),
                "checksums": [checksum("SHA1", sha1), checksum("SHA256", sha256)],
                "comment": format!("mode {:04o}", item.mode),
            }));
            rels.push(rel(&id, "CONTAINS", &fid));
            match l.info.role {
                LayerRole::Config => rels.push(rel(&fid, "GENERATED_FROM", "SPDXRef-Blueprint")),
                LayerRole::Verifier => rels.push(rel("SPDXRef-Verifier", "CONTAINS", &fid)),
                LayerRole::Overlay => {}
            }
        }
    }

    let v = &c.verifier;
    let root = v.crates.as_ref().and_then(super::crates::root);
    let mut verifier = json!({
        "SPDXID": "SPDXRef-Verifier",
        "name": root.map_or("nodeimg", |r| r.name.as_str()),
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": true,
        "primaryPackagePurpose": "APPLICATION",
        "packageFileName": format!("./{}", crate::package::verifier::NODE_PATH),
        "checksums": [checksum("SHA1", &v.sha1), checksum("SHA256", &v.sha256)],
        "comment": match &v.crates {
            Some(info) => format!("the verifier the image's units run; {} crates from its .dep-v0 section (cargo auditable format {})", info.packages.len(), info.format),
            None => "the verifier the image's units run; the binary carries no crate list (.dep-v0 section)".to_string(),
        },
    });
    if let Some(r) = root {
        verifier["versionInfo"] = json!(r.version.to_string());
    }
    packages.push(verifier);
    rels.push(rel("SPDXRef-Image", "CONTAINS", "SPDXRef-Verifier"));
    if let Some(info) = &v.crates {
        let id = |i: usize| {
            if info.packages[i].root {
                "SPDXRef-Verifier".to_string()
            } else {
                format!("SPDXRef-Crate-{i}")
            }
        };
        for (i, p) in info.packages.iter().enumerate() {
            if !p.root {
                let mut pkg = json!({
                    "SPDXID": id(i),
                    "name": p.name,
                    "versionInfo": p.version.to_string(),
                    "downloadLocation": "NOASSERTION",
                    "filesAnalyzed": false,
                    "primaryPackagePurpose": "LIBRARY",
                    "comment": format!("Rust crate, source {}, {}", String::from(p.source.clone()), kind_words(p.kind)),
                });
                if let Some(purl) = crate_purl(p) {
                    pkg["externalRefs"] = json!([purl_ref(&purl)]);
                    pkg["downloadLocation"] = json!(format!(
                        "https://crates.io/api/v1/crates/{}/{}/download",
                        p.name, p.version
                    ));
                }
                packages.push(pkg);
            }
            for &d in &p.dependencies {
                match info.packages[d].kind {
                    auditable_serde::DependencyKind::Build => {
                        rels.push(rel(&id(d), "BUILD_DEPENDENCY_OF", &id(i)))
                    }
                    auditable_serde::DependencyKind::Runtime => {
                        rels.push(rel(&id(i), "DEPENDS_ON", &id(d)))
                    }
                }
            }
        }
    }

    let doc = json!({
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": format!("nodeimg image {} {}", m.name, m.version),
        "documentNamespace": namespace(c),
        "creationInfo": {
            "created": c.created,
            "creators": [TOOL],
        },
        "packages": packages,
        "files": files,
        "relationships": rels,
    });
    crate::canonical_json::value_to_vec(&doc)
}

fn kind_words(k: auditable_serde::DependencyKind) -> &'static str {
    match k {
        auditable_serde::DependencyKind::Build => "build-time only (not in the binary)",
        auditable_serde::DependencyKind::Runtime => "compiled into the binary",
    }
}
