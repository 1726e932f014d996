//! Pulling from a real registry (Debian's docker-registry, distribution 2.8: no
//! referrers API, so the `sha256-<hex>` fallback tag is what lists an image's
//! referrers) what `nodeimg push` put there: the image by digest, its cosign-tagged
//! signature and its referrers, into a layout that holds the same bytes. skopeo reads
//! the fallback index the push kept, as any OCI 1.1 client would.
//!
//! Needs: docker-registry, skopeo. Opt-in (`cargo test -- --ignored`).

use std::path::Path;
use std::process::{Command, Stdio};

use nodeimg::package::layout_reader::LocalImage;
use nodeimg::package::pull::pull;
use nodeimg::package::registry::{Options, Reference, TagPolicy};

use crate::support::oci::{self, E, Tie};
use crate::support::registry::Registry;

fn options() -> Options {
    Options {
        insecure: true,
        timeout: std::time::Duration::from_secs(60),
        auth_files: Vec::new(),
        ca_bundle: None,
    }
}

/// A small image with a signature-like tag and an SBOM-like referrer.
fn layout_with_attachments(dir: &Path) -> (String, String, String) {
    oci::layout(
        dir,
        &[oci::layer(&[
            E::Dir("etc", 0o755),
            E::File("etc/hello", 0o644, b"hello\n"),
        ])],
    );
    let (image, _) = oci::image_manifest(dir);
    let sig = oci::attach(
        dir,
        Tie::Tag("sig"),
        "application/vnd.dev.cosign.simplesigning.v1+json",
        br#"{"critical":{}}"#,
    );
    let sbom = oci::attach(
        dir,
        Tie::Referrer("application/spdx+json"),
        "application/spdx+json",
        br#"{"spdxVersion":"SPDX-2.3"}"#,
    );
    (image, sig, sbom)
}

fn skopeo_raw(reference: &str) -> serde_json::Value {
    let out = Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false"])
        .arg(format!("docker://{reference}"))
        .stdin(Stdio::null())
        .output()
        .expect("skopeo is required (apt-get install skopeo)");
    assert!(
        out.status.success(),
        "skopeo inspect {reference}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[ignore = "opt-in suite `real-tools`: runs docker-registry and skopeo (cargo test -- --ignored)"]
fn push_then_pull_by_digest_brings_the_image_its_signature_and_its_referrers() {
    let reg = Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let (image, sig, sbom) = layout_with_attachments(&src);
    let name = format!("{}/nodes/pull", reg.host());

    let out = crate::support::cmd()
        .args(["push", "--insecure", "--format", "json"])
        .arg(&src)
        .arg(format!("{name}:v1"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["digest"], image.as_str());
    let attachments = report["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), 2, "{report}");
    assert!(
        attachments
            .iter()
            .any(|a| a["digest"] == sbom.as_str() && a["referrers"] == "fallback-tag"),
        "{report}"
    );

    // What an OCI 1.1 client reads: the fallback index and the cosign tag.
    let hex = image.strip_prefix("sha256:").unwrap();
    let index = skopeo_raw(&format!("{name}:sha256-{hex}"));
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let listed: Vec<&str> = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["digest"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [sbom.as_str()]);
    assert_eq!(
        index["manifests"][0]["artifactType"],
        "application/spdx+json"
    );
    let signature = skopeo_raw(&format!("{name}:sha256-{hex}.sig"));
    assert_eq!(
        signature["layers"][0]["mediaType"],
        "application/vnd.dev.cosign.simplesigning.v1+json"
    );

    // Pushing again keeps one entry per referrer.
    let again = crate::support::cmd()
        .args(["push", "--insecure"])
        .arg(&src)
        .arg(format!("{name}:v1"))
        .output()
        .unwrap();
    assert!(again.status.success());
    let index = skopeo_raw(&format!("{name}:sha256-{hex}"));
    assert_eq!(index["manifests"].as_array().unwrap().len(), 1);

    // Pulled by digest: the same image, the same attachments, the same bytes.
    let dest = dir.path().join("pulled");
    let reference = Reference::for_pull(&format!("{name}@{image}"), TagPolicy::DigestOnly).unwrap();
    let pulled = pull(&reference, &dest, &options()).unwrap();
    assert_eq!(pulled.digest.to_string(), image);
    let local = LocalImage::open(&dest).unwrap();
    local.verify().unwrap();
    assert_eq!(local.manifest.digest.to_string(), image);
    let mut got: Vec<(String, Option<String>, bool)> = local
        .attachments
        .iter()
        .map(|a| {
            (
                a.manifest.digest.to_string(),
                a.ref_name.clone(),
                a.referrer,
            )
        })
        .collect();
    got.sort();
    let mut want = vec![
        (sig.clone(), Some(format!("sha256-{hex}.sig")), false),
        (sbom.clone(), None, true),
    ];
    want.sort();
    assert_eq!(got, want);
    for entry in std::fs::read_dir(dest.join("blobs/sha256")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        assert_eq!(
            std::fs::read(entry.path()).unwrap(),
            std::fs::read(src.join("blobs/sha256").join(&name)).unwrap(),
            "{name:?}"
        );
    }

    // A tag alone is refused unless allowed; allowed, it resolves to the same image.
    let e = Reference::for_pull(&format!("{name}:v1"), TagPolicy::DigestOnly).unwrap_err();
    assert!(e.0.contains("--allow-tag"), "{}", e.0);
    let by_tag = Reference::for_pull(&format!("{name}:v1"), TagPolicy::AllowTag).unwrap();
    let pulled = pull(&by_tag, &dir.path().join("by-tag"), &options()).unwrap();
    assert_eq!(pulled.digest.to_string(), image);

    // An image the registry does not have: an error, and no folder left behind.
    let missing = Reference::for_pull(
        &format!("{name}@sha256:{}", "0".repeat(64)),
        TagPolicy::DigestOnly,
    )
    .unwrap();
    let gone = dir.path().join("missing");
    let e = pull(&missing, &gone, &options()).unwrap_err();
    assert!(e.to_string().contains("not found"), "{e}");
    assert!(!gone.exists());
}
