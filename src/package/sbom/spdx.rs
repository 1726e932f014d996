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

use super::contents::{Contents, ItemKind};
use super::pins::purl as pin_purl;
use super::{NAMESPACE_BASE, TOOL, crate_purl, image_purl, uuid_v5};
use crate::canonical_json::{Array, Object};
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

/// `checksums`: one `{algorithm, checksumValue}` per (algorithm, hex).
fn checksums(o: &mut Object<'_>, sums: &[(&str, &str)]) {
    o.pairs("checksums", ("algorithm", "checksumValue"), sums);
}

/// `externalRefs`: the package's purl.
fn purl_ref(o: &mut Object<'_>, purl: &str) {
    let mut list = Array::new(o.key("externalRefs"));
    let mut r = list.object();
    r.str("referenceCategory", "PACKAGE-MANAGER")
        .str("referenceLocator", purl)
        .str("referenceType", "purl");
    r.end();
    list.end();
}

fn rel(rels: &mut Array<'_>, a: &str, kind: &str, b: &str) {
    let mut r = rels.object();
    r.str("relatedSpdxElement", b)
        .str("relationshipType", kind)
        .str("spdxElementId", a);
    r.end();
}

/// The SPDX document, as canonical JSON. Written straight into its bytes,
/// members in key order: packages, files and relationships each into a
/// buffer of their own, joined at the end.
pub fn write(c: &Contents<'_>) -> Vec<u8> {
    let m = c.meta;
    let s = c.source;
    let crates = c.verifier.crates.as_ref().map_or(0, |i| i.packages.len());
    let files_n: usize = c.layers.iter().map(|l| l.items.len()).sum();
    let (mut pk, mut fl, mut rl) = (
        Vec::with_capacity(4096 + crates * 400),
        Vec::with_capacity(files_n * 300),
        Vec::with_capacity(4096 + (files_n + 2 * crates) * 110),
    );
    let mut packages = Array::new(&mut pk);
    let mut files = Array::new(&mut fl);
    let mut rels = Array::new(&mut rl);
    rel(&mut rels, "SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Image");

    let mut image = packages.object();
    image.str("SPDXID", "SPDXRef-Image");
    if !c.pins.patterns.is_empty() {
        let mut list = Array::new(image.key("annotations"));
        for p in &c.pins.patterns {
            let mut a = list.object();
            a.str("annotationDate", &c.created)
                .str("annotationType", "OTHER")
                .str("annotator", TOOL)
                .str(
                    "comment",
                    &format!(
                        "pinned by pattern, not a package: `{}` ({}) in /{}: {}",
                        p.pattern,
                        p.pin,
                        c.pins.file.unwrap_or(""),
                        p.why
                    ),
                );
            a.end();
        }
        list.end();
    }
    checksums(&mut image, &[("SHA256", c.manifest.digest.hex())]);
    image
        .str(
            "comment",
            &format!(
                "OCI image manifest {} (config {}), tag {}, platform {}/{}, built from blueprint {} {}",
                c.manifest.digest, c.config.digest, m.tag, m.os, m.architecture, m.name, m.blueprint_id
            ),
        )
        .str("downloadLocation", "NOASSERTION");
    purl_ref(&mut image, &image_purl(c));
    image
        .bool("filesAnalyzed", false)
        .str("name", &m.name)
        .str("primaryPackagePurpose", "CONTAINER")
        .str("versionInfo", &m.version);
    image.end();

    let mut blueprint = packages.object();
    blueprint.str("SPDXID", "SPDXRef-Blueprint");
    checksums(
        &mut blueprint,
        &[(
            "SHA256",
            m.blueprint_id
                .strip_prefix("sha256:")
                .unwrap_or(&m.blueprint_id),
        )],
    );
    blueprint
        .str("comment", "the blueprint id: SHA-256 of the canonical resolved blueprint, its matrix entries and its overlay (etc/nodeimg/blueprint.lock.json in the image)")
        .str("downloadLocation", "NOASSERTION")
        .bool("filesAnalyzed", false)
        .str("name", &format!("{} blueprint", m.name))
        .str("primaryPackagePurpose", "SOURCE")
        .str("versionInfo", &m.version);
    blueprint.end();
    rel(
        &mut rels,
        "SPDXRef-Image",
        "GENERATED_FROM",
        "SPDXRef-Blueprint",
    );

    let mut os = packages.object();
    os.str("SPDXID", "SPDXRef-OS")
        .str(
            "comment",
            &format!(
                "the base OS the image is applied onto: patch level {}, kernel {}",
                s.patch_level, s.kernel
            ),
        )
        .str("downloadLocation", "NOASSERTION")
        .bool("filesAnalyzed", false)
        .str("name", s.distro.as_str())
        .str("primaryPackagePurpose", "OPERATING-SYSTEM")
        .str("versionInfo", &s.os_version);
    os.end();
    rel(&mut rels, "SPDXRef-Image", "DEPENDS_ON", "SPDXRef-OS");

    for (i, p) in c.pins.packages.iter().enumerate() {
        let id = format!("SPDXRef-Pinned-{i}");
        let mut pkg = packages.object();
        pkg.str("SPDXID", &id)
            .str(
                "comment",
                &format!(
                    "held at {} by /{} ({}); installed on the base OS, not carried in the layers",
                    p.pin,
                    c.pins.file.unwrap_or(""),
                    p.why
                ),
            )
            .str("downloadLocation", "NOASSERTION");
        purl_ref(
            &mut pkg,
            &pin_purl(p, s.distro, &s.os_version, &m.architecture),
        );
        pkg.bool("filesAnalyzed", false)
            .str("name", &p.name)
            .str("primaryPackagePurpose", "INSTALL");
        if let Some(v) = &p.version {
            pkg.str("versionInfo", v);
        }
        pkg.end();
        rel(&mut rels, "SPDXRef-Image", "DEPENDS_ON", &id);
    }

    for l in &c.layers {
        let role = l.info.role.as_str();
        let id = format!("SPDXRef-Layer-{role}");
        let listed = l.info.role != LayerRole::Overlay;
        let mut pkg = packages.object();
        pkg.str("SPDXID", &id);
        checksums(&mut pkg, &[("SHA256", l.info.digest.hex())]);
        pkg.str(
            "comment",
            &format!(
                "{} layer, diff_id {}, {} entries ({} files and links, {} folders){}",
                l.info.media_type, l.info.diff_id, l.info.entries, l.items.len(), l.dirs,
                if listed { "" } else { "; its files, each with its SHA-256, are in the CycloneDX SBOM of this image (SPDX 2.3 would need a SHA-1 of each)" }
            ),
        )
        .str("downloadLocation", "NOASSERTION")
        .bool("filesAnalyzed", listed)
        .str("name", &format!("{role} layer"))
        .str("packageFileName", &format!("blobs/sha256/{}", l.info.digest.hex()))
        .str("primaryPackagePurpose", "ARCHIVE");
        pkg.end();
        rel(&mut rels, "SPDXRef-Image", "CONTAINS", &id);
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
            let mut file = files.object();
            file.str("SPDXID", &fid);
            checksums(&mut file, &[("SHA1", sha1), ("SHA256", sha256)]);
            file.str("comment", &format!("mode {:04o}", item.mode))
                .str("fileName", &format!("./{}", item.path));
            file.end();
            rel(&mut rels, &id, "CONTAINS", &fid);
            match l.info.role {
                LayerRole::Config => rel(&mut rels, &fid, "GENERATED_FROM", "SPDXRef-Blueprint"),
                LayerRole::Verifier => rel(&mut rels, "SPDXRef-Verifier", "CONTAINS", &fid),
                LayerRole::Overlay => {}
            }
        }
    }

    let v = &c.verifier;
    let root = v.crates.as_ref().and_then(super::crates::root);
    let mut verifier = packages.object();
    verifier.str("SPDXID", "SPDXRef-Verifier");
    checksums(&mut verifier, &[("SHA1", &v.sha1), ("SHA256", &v.sha256)]);
    verifier
        .str(
            "comment",
            &match &v.crates {
                Some(info) => format!("the verifier the image's units run; {} crates from its .dep-v0 section (cargo auditable format {})", info.packages.len(), info.format),
                None => "the verifier the image's units run; the binary carries no crate list (.dep-v0 section)".to_string(),
            },
        )
        .str("downloadLocation", "NOASSERTION")
        .bool("filesAnalyzed", true)
        .str("name", root.map_or("nodeimg", |r| r.name.as_str()))
        .str(
            "packageFileName",
            &format!("./{}", crate::package::verifier::NODE_PATH),
        )
        .str("primaryPackagePurpose", "APPLICATION");
    if let Some(r) = root {
        verifier.str("versionInfo", &r.version.to_string());
    }
    verifier.end();
    rel(&mut rels, "SPDXRef-Image", "CONTAINS", "SPDXRef-Verifier");
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
                let purl = crate_purl(p);
                let mut pkg = packages.object();
                pkg.str("SPDXID", &id(i)).str(
                    "comment",
                    &format!(
                        "Rust crate, source {}, {}",
                        String::from(p.source.clone()),
                        kind_words(p.kind)
                    ),
                );
                match &purl {
                    Some(purl) => {
                        pkg.str(
                            "downloadLocation",
                            &format!(
                                "https://crates.io/api/v1/crates/{}/{}/download",
                                p.name, p.version
                            ),
                        );
                        purl_ref(&mut pkg, purl);
                    }
                    None => {
                        pkg.str("downloadLocation", "NOASSERTION");
                    }
                }
                pkg.bool("filesAnalyzed", false)
                    .str("name", &p.name)
                    .str("primaryPackagePurpose", "LIBRARY")
                    .str("versionInfo", &p.version.to_string());
                pkg.end();
            }
            for &d in &p.dependencies {
                match info.packages[d].kind {
                    auditable_serde::DependencyKind::Build => {
                        rel(&mut rels, &id(d), "BUILD_DEPENDENCY_OF", &id(i))
                    }
                    auditable_serde::DependencyKind::Runtime => {
                        rel(&mut rels, &id(i), "DEPENDS_ON", &id(d))
                    }
                }
            }
        }
    }
    packages.end();
    files.end();
    rels.end();

    let mut out = Vec::with_capacity(pk.len() + fl.len() + rl.len() + 1024);
    let mut doc = Object::new(&mut out);
    doc.str("SPDXID", "SPDXRef-DOCUMENT");
    let mut info = Object::new(doc.key("creationInfo"));
    info.str("created", &c.created);
    let mut creators = Array::new(info.key("creators"));
    creators.str(TOOL);
    creators.end();
    info.end();
    doc.str("dataLicense", "CC0-1.0")
        .str("documentNamespace", &namespace(c));
    doc.key("files").extend_from_slice(&fl);
    doc.str("name", &format!("nodeimg image {} {}", m.name, m.version));
    doc.key("packages").extend_from_slice(&pk);
    doc.key("relationships").extend_from_slice(&rl);
    doc.str("spdxVersion", "SPDX-2.3");
    doc.end();
    out
}

fn kind_words(k: auditable_serde::DependencyKind) -> &'static str {
    match k {
        auditable_serde::DependencyKind::Build => "build-time only (not in the binary)",
        auditable_serde::DependencyKind::Runtime => "compiled into the binary",
    }
}
