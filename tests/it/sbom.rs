//! The SBOM `nodeimg build` attaches, read back as a consumer would and
//! checked against the image itself: every regular file and link of every
//! layer blob (decompressed and walked here, with the `tar` crate and a
//! sha256 of this test's own) is in the CycloneDX document with its digest
//! and layer, and every file of the config and verifier layers is in the
//! SPDX one with its SHA-1 and SHA-256; the pinned packages carry purls; the
//! verifier's crates are the ones embedded in the binary; both documents are
//! found through index.json and describe this image; `--no-sbom` attaches
//! none; a stand-in verifier without a crate list is noted; and a layout
//! whose referrer points elsewhere, or whose document is huge, deep or about
//! another image, is refused with a clear error.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use nodeimg::package::sbom::{self, Format};
use serde_json::Value;

use crate::support::package::sha256;
use crate::support::{nodeimg, root, stderr};

/// A CPU blueprint (no external files) whose overlay holds nested files, an
/// executable and a link, in `dir`.
fn blueprint_with_overlay(dir: &Path) -> PathBuf {
    let ov = dir.join("overlay");
    std::fs::create_dir_all(ov.join("etc/site/conf.d")).unwrap();
    std::fs::create_dir_all(ov.join("usr/local/sbin")).unwrap();
    std::fs::write(ov.join("etc/site/conf.d/a.conf"), b"a = 1\n").unwrap();
    std::fs::write(ov.join("etc/site/motd"), vec![b'x'; 70_000]).unwrap();
    std::fs::write(ov.join("usr/local/sbin/tool"), b"#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        ov.join("usr/local/sbin/tool"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("conf.d/a.conf", ov.join("etc/site/current.conf")).unwrap();
    let text = std::fs::read_to_string(root().join("blueprints/cpu-minimal.yaml")).unwrap();
    let text = text.replacen(
        "\nkubernetes:",
        "\nfiles:\n  overlay: overlay\n\nkubernetes:",
        1,
    );
    assert!(text.contains("overlay: overlay"));
    let bp = dir.join("bp.yaml");
    std::fs::write(&bp, text).unwrap();
    bp
}

fn build(bp: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["build", bp.to_str().unwrap(), "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = nodeimg(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    o
}

fn blob(out: &Path, digest: &str) -> Vec<u8> {
    std::fs::read(
        out.join("blobs/sha256")
            .join(digest.strip_prefix("sha256:").unwrap()),
    )
    .unwrap()
}

fn json_blob(out: &Path, digest: &str) -> Value {
    serde_json::from_slice(&blob(out, digest)).unwrap()
}

/// Every regular file (sha256, mode) and link (target) of each layer, by
/// role, read from the layer blobs the manifest lists.
fn layer_contents(out: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let index: Value =
        serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
    let image = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m.get("artifactType").is_none())
        .unwrap();
    let manifest = json_blob(out, image["digest"].as_str().unwrap());
    let mut all = BTreeMap::new();
    for l in manifest["layers"].as_array().unwrap() {
        let role = l["annotations"]["dev.nodeimg.layer.role"]
            .as_str()
            .unwrap()
            .to_string();
        let tar = zstd::decode_all(blob(out, l["digest"].as_str().unwrap()).as_slice()).unwrap();
        let mut files = BTreeMap::new();
        let mut archive = tar::Archive::new(tar.as_slice());
        for e in archive.entries().unwrap() {
            let mut e = e.unwrap();
            let path = e
                .path()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches('/')
                .to_string();
            match e.header().entry_type() {
                tar::EntryType::Regular => {
                    let mut bytes = Vec::new();
                    e.read_to_end(&mut bytes).unwrap();
                    files.insert(path, sha256(&bytes));
                }
                tar::EntryType::Symlink => {
                    let target = e
                        .link_name()
                        .unwrap()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    files.insert(path, format!("-> {target}"));
                }
                _ => {}
            }
        }
        all.insert(role, files);
    }
    all
}

fn prop<'a>(component: &'a Value, name: &str) -> Option<&'a str> {
    component["properties"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == format!("dev.nodeimg:{name}"))
        .and_then(|p| p["value"].as_str())
}

#[test]
fn the_sbom_lists_every_file_of_every_layer_with_the_digest_of_the_layer_blob() {
    let dir = tempfile::tempdir().unwrap();
    let bp = blueprint_with_overlay(dir.path());
    let out = dir.path().join("oci");
    build(&bp, &out, &[]);
    let attached = sbom::sbom_referrers(&out).unwrap();
    let formats: Vec<Format> = attached.iter().map(|a| a.format).collect();
    assert_eq!(formats, [Format::Spdx, Format::Cyclonedx]);
    for a in &attached {
        sbom::check(&out, a).unwrap_or_else(|e| panic!("{e}"));
    }
    let layers = layer_contents(&out);
    assert_eq!(
        layers.keys().map(String::as_str).collect::<Vec<_>>(),
        ["config", "overlay", "verifier"]
    );
    assert_eq!(
        layers["overlay"]["etc/site/current.conf"],
        "-> conf.d/a.conf"
    );

    // CycloneDX: every file and link of every layer, nothing else.
    let cdx = json_blob(&out, &attached[1].document.digest.to_string());
    let mut listed: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for c in cdx["components"].as_array().unwrap() {
        if c["type"] != "file" {
            continue;
        }
        let path = c["name"]
            .as_str()
            .unwrap()
            .strip_prefix('/')
            .unwrap()
            .to_string();
        let layer = prop(c, "layer").unwrap().to_string();
        let value = match prop(c, "link-target") {
            Some(t) => format!("-> {t}"),
            None => {
                let h = c["hashes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|h| h["alg"] == "SHA-256")
                    .unwrap();
                format!("sha256:{}", h["content"].as_str().unwrap())
            }
        };
        assert!(prop(c, "mode").is_some(), "{c}");
        listed.entry(layer).or_default().insert(path, value);
    }
    assert_eq!(listed, layers);

    // SPDX: every file of the config and verifier layers, with both digests.
    let spdx = json_blob(&out, &attached[0].document.digest.to_string());
    let mut spdx_files = BTreeMap::new();
    for f in spdx["files"].as_array().unwrap() {
        let sums: BTreeMap<&str, &str> = f["checksums"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["algorithm"].as_str().unwrap(),
                    c["checksumValue"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(sums["SHA1"].len(), 40, "{f}");
        let path = f["fileName"].as_str().unwrap().strip_prefix("./").unwrap();
        spdx_files.insert(path.to_string(), format!("sha256:{}", sums["SHA256"]));
    }
    let expected: BTreeMap<String, String> = ["config", "verifier"]
        .iter()
        .flat_map(|r| layers[*r].iter())
        .filter(|(_, v)| v.starts_with("sha256:"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(spdx_files, expected);
    let package = |id: &str| {
        spdx["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["SPDXID"] == id)
            .unwrap_or_else(|| panic!("no {id}"))
            .clone()
    };
    assert_eq!(package("SPDXRef-Layer-overlay")["filesAnalyzed"], false);
    assert_eq!(package("SPDXRef-OS")["name"], "debian");
    assert_eq!(
        package("SPDXRef-OS")["primaryPackagePurpose"],
        "OPERATING-SYSTEM"
    );
    let rels = spdx["relationships"].as_array().unwrap();
    let generated = rels
        .iter()
        .filter(|r| {
            r["relationshipType"] == "GENERATED_FROM"
                && r["relatedSpdxElement"] == "SPDXRef-Blueprint"
        })
        .count();
    // The image, and every rendered file.
    let rendered = layers["config"]
        .values()
        .filter(|v| v.starts_with("sha256:"))
        .count();
    assert_eq!(generated, rendered + 1);

    // Pinned packages, with package URLs for the blueprint's distribution.
    let purls: Vec<&str> = cdx["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["purl"].as_str())
        .collect();
    for want in [
        "pkg:deb/debian/containerd@1.7.22?arch=amd64&distro=debian-12",
        "pkg:deb/debian/kubelet@",
        "pkg:deb/debian/linux-image-6.1.0-27-amd64?arch=amd64&distro=debian-12",
        "pkg:cargo/serde@",
    ] {
        assert!(
            purls.iter().any(|p| p.starts_with(want)),
            "{want} not in {purls:?}"
        );
    }

    let image = &cdx["metadata"]["component"];
    assert!(
        image["purl"]
            .as_str()
            .unwrap()
            .starts_with("pkg:oci/cpu-minimal@sha256%3A")
    );
    assert_eq!(image["type"], "container");

    // The verifier (this nodeimg, the default) with the crates it embeds:
    // its digest is that of the binary in the verifier layer.
    let verifier = cdx["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["bom-ref"] == "verifier")
        .unwrap();
    let sum = verifier["hashes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["alg"] == "SHA-256")
        .unwrap();
    assert_eq!(
        format!("sha256:{}", sum["content"].as_str().unwrap()),
        layers["verifier"]["usr/local/bin/nodeimg"]
    );
    let embedded = sbom::crates::read(&std::fs::read(env!("CARGO_BIN_EXE_nodeimg")).unwrap())
        .unwrap()
        .expect("nodeimg embeds its crates");
    let crates = cdx["components"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["bom-ref"]
                .as_str()
                .is_some_and(|r| r.starts_with("pkg:cargo/") || r.starts_with("crate:"))
        })
        .count();
    assert_eq!(
        crates + 1,
        embedded.packages.len(),
        "every crate but the root"
    );
    assert!(
        !purls.iter().any(|p| p.starts_with("pkg:cargo/proptest@")),
        "a dev-dependency is not compiled in"
    );

    // Both documents are canonical JSON (written member by member, in key
    // order): read and encoded again, they are the same bytes.
    for a in &attached {
        let bytes = blob(&out, &a.document.digest.to_string());
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(
            nodeimg::canonical_json::value_to_vec(&value) == bytes,
            "the {:?} document is not canonical JSON",
            a.format
        );
    }
}

#[test]
fn the_sbom_is_reproducible_and_optional_and_notes_a_verifier_without_crates() {
    let dir = tempfile::tempdir().unwrap();
    let bp = blueprint_with_overlay(dir.path());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    build(&bp, &a, &["--no-cache"]);
    build(&bp, &b, &["--no-cache"]);
    let digests = |out: &Path| -> Vec<String> {
        sbom::sbom_referrers(out)
            .unwrap()
            .iter()
            .map(|s| format!("{} {}", s.manifest.digest, s.document.digest))
            .collect()
    };
    assert_eq!(digests(&a), digests(&b));
    assert_eq!(digests(&a).len(), 2);
    // The provenance record names the SBOMs, for the node's record.
    let prov: Value =
        serde_json::from_slice(&std::fs::read(a.join("provenance.json")).unwrap()).unwrap();
    assert_eq!(prov["sbom"].as_array().unwrap().len(), 2);

    let c = dir.path().join("c");
    build(&bp, &c, &["--no-sbom"]);
    assert!(sbom::sbom_referrers(&c).unwrap().is_empty());
    let index: Value =
        serde_json::from_slice(&std::fs::read(c.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["manifests"].as_array().unwrap().len(), 1);

    let stand_in = dir.path().join("stand-in");
    std::fs::write(&stand_in, nodeimg::package::verifier::stand_in_elf()).unwrap();
    let d = dir.path().join("d");
    let o = build(&bp, &d, &["--verifier", stand_in.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("carries no list of its crates"),
        "{}",
        stderr(&o)
    );
    let cdx = json_blob(
        &d,
        &sbom::sbom_referrers(&d).unwrap()[1]
            .document
            .digest
            .to_string(),
    );
    assert!(!cdx.to_string().contains("pkg:cargo/"));
}

#[test]
fn a_referrer_for_another_image_or_a_hostile_document_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bp = blueprint_with_overlay(dir.path());
    let out = dir.path().join("oci");
    build(&bp, &out, &["--no-cache"]);
    let attached = sbom::sbom_referrers(&out).unwrap();

    // A document replaced by another (valid JSON) one: its digest no longer matches.
    let copy = |name: &str| {
        let to = dir.path().join(name);
        let o = std::process::Command::new("cp")
            .arg("-a")
            .arg(&out)
            .arg(&to)
            .status()
            .unwrap();
        assert!(o.success());
        to
    };
    // Rewrite the SPDX referrer (manifest + index entry) so that it points
    // at `subject` and carries `document`.
    let rewrite = |layout: &Path, document: &[u8], subject: Option<(&str, u64)>| {
        let doc = nodeimg::package::Digest::of(document);
        std::fs::write(layout.join("blobs/sha256").join(doc.hex()), document).unwrap();
        let mpath = layout
            .join("blobs/sha256")
            .join(attached[0].manifest.digest.hex());
        let mut m: Value = serde_json::from_slice(&std::fs::read(&mpath).unwrap()).unwrap();
        m["layers"][0]["digest"] = Value::from(doc.to_string());
        m["layers"][0]["size"] = Value::from(document.len());
        if let Some((d, size)) = subject {
            m["subject"]["digest"] = Value::from(d);
            m["subject"]["size"] = Value::from(size);
        }
        let bytes = serde_json::to_vec(&m).unwrap();
        let md = nodeimg::package::Digest::of(&bytes);
        std::fs::write(layout.join("blobs/sha256").join(md.hex()), &bytes).unwrap();
        let ipath = layout.join("index.json");
        let mut index: Value = serde_json::from_slice(&std::fs::read(&ipath).unwrap()).unwrap();
        index["manifests"][1]["digest"] = Value::from(md.to_string());
        index["manifests"][1]["size"] = Value::from(bytes.len());
        std::fs::write(&ipath, serde_json::to_vec(&index).unwrap()).unwrap();
    };
    let first = |layout: &Path| sbom::sbom_referrers(layout).map(|v| v[0].clone());

    let other = copy("other-subject");
    let original = blob(&out, &attached[0].document.digest.to_string());
    rewrite(
        &other,
        &original,
        Some((&format!("sha256:{}", "0".repeat(64)), 1143)),
    );
    let e = first(&other).unwrap_err().to_string();
    assert!(e.contains("not about the layout's image"), "{e}");

    let deep = copy("deep");
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    rewrite(
        &deep,
        format!(
            "{{\"spdxVersion\":\"SPDX-2.3\",\"packages\":[{{\"SPDXID\":\"x\",\"a\":{nested}}}]}}"
        )
        .as_bytes(),
        None,
    );
    let a = first(&deep).unwrap();
    let e = sbom::check(&deep, &a).unwrap_err().to_string();
    assert!(e.contains("recursion limit"), "{e}");

    let another = copy("another-image");
    let text = String::from_utf8(original.clone()).unwrap();
    let image_hex = {
        let index: Value =
            serde_json::from_slice(&std::fs::read(out.join("index.json")).unwrap()).unwrap();
        index["manifests"][0]["digest"]
            .as_str()
            .unwrap()
            .strip_prefix("sha256:")
            .unwrap()
            .to_string()
    };
    rewrite(
        &another,
        text.replace(&image_hex, &"1".repeat(64)).as_bytes(),
        None,
    );
    let a = first(&another).unwrap();
    let e = sbom::check(&another, &a).unwrap_err().to_string();
    assert!(e.contains("describes the image sha256:111"), "{e}");

    // A document larger than the bound is refused before it is read (a
    // sparse file of that size stands for it).
    let huge = copy("huge");
    let name = "f".repeat(64);
    let f = std::fs::File::create(huge.join("blobs/sha256").join(&name)).unwrap();
    f.set_len(sbom::attached::MAX_DOCUMENT_BYTES + 1).unwrap();
    let mpath = huge
        .join("blobs/sha256")
        .join(attached[0].manifest.digest.hex());
    let mut m: Value = serde_json::from_slice(&std::fs::read(&mpath).unwrap()).unwrap();
    m["layers"][0]["digest"] = Value::from(format!("sha256:{name}"));
    m["layers"][0]["size"] = Value::from(sbom::attached::MAX_DOCUMENT_BYTES + 1);
    let bytes = serde_json::to_vec(&m).unwrap();
    let md = nodeimg::package::Digest::of(&bytes);
    std::fs::write(huge.join("blobs/sha256").join(md.hex()), &bytes).unwrap();
    let ipath = huge.join("index.json");
    let mut index: Value = serde_json::from_slice(&std::fs::read(&ipath).unwrap()).unwrap();
    index["manifests"][1]["digest"] = Value::from(md.to_string());
    index["manifests"][1]["size"] = Value::from(bytes.len());
    std::fs::write(&ipath, serde_json::to_vec(&index).unwrap()).unwrap();
    let e = first(&huge).unwrap_err().to_string();
    assert!(e.contains("at most"), "{e}");

    // A tampered document fails its digest.
    let tampered = copy("tampered");
    let p = tampered
        .join("blobs/sha256")
        .join(attached[1].document.digest.hex());
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replacen("\"nodeimg\"", "\"nodeimG\"", 1)).unwrap();
    let e = sbom::check(&tampered, &sbom::sbom_referrers(&tampered).unwrap()[1])
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not match"), "{e}");
}
