//! The node's check of the image it runs (`image.signature`, `image.config`) over a fixture
//! tree whose `var/lib/nodeimg/image` is apply's receipt (`apply::receipt`) of a layout
//! signed by `nodeimg sign`: a signed image whose configuration is on disk passes; an
//! unsigned image, one signed by another key, an edited lock, a key added on the node and
//! a node without the kept image each fail (or error), as image faults, never a pass.

use nodeimg::fault::Severity;
use nodeimg::package::{self, BuildOptions, Inputs, Silent, Verifier};
use nodeimg::tree::Tree as ImageTree;
use nodeimg::trust::SigningKey;
use nodeimg::verify::checks::{CheckResult, Verdict};
use nodeimg::verify::report::record::ImageIdentity;

use crate::support::fixture_tree::Tree;
use crate::support::keys::{KeyPair, pair};
use crate::support::verify_fixture::{self, BLUEPRINT, healthy_tree, healthy_xml};

const LOCK: &str = "{\"blueprint\": \"the lock of the fixture\"}\n";

fn with_trust(require: bool) -> String {
    format!(
        "{BLUEPRINT}security:\n  imageTrust:\n    require: {require}\n    keys:\n      - name: release\n        file: release.pub\n"
    )
}

/// Builds an image carrying the lock and the release key, signs it with `signer` (or
/// not), keeps it in the node tree and puts the image's files on the node's disk.
fn node(signer: Option<&KeyPair>, release: &KeyPair) -> (Tree, String) {
    let tree = healthy_tree();
    let key_pem = std::fs::read(&release.public).unwrap();
    let mut image = ImageTree::new();
    image
        .add_file(
            "etc/nodeimg/blueprint.lock.json",
            0o644,
            LOCK.as_bytes().to_vec(),
        )
        .unwrap();
    image
        .add_file("etc/nodeimg/trust/release.pub", 0o644, key_pem.clone())
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let layout = work.path().join("out");
    let verifier = Verifier::golden_stand_in();
    let sbom = crate::support::package::sbom_source();
    let inputs = Inputs {
        sbom: Some(&sbom),
        config: &image,
        verifier: &verifier,
        overlay: None,
    };
    let meta = crate::support::package::meta();
    let built = package::build(
        inputs,
        &meta,
        &BuildOptions::default(),
        &layout,
        &mut Silent,
    )
    .unwrap();
    if let Some(k) = signer {
        let key = SigningKey::load(k.private.to_str().unwrap()).unwrap();
        nodeimg::trust::sign::sign_layout(&layout, &key, None).unwrap();
    }
    // What apply keeps on the node: its receipt of the image.
    let image = nodeimg::package::layout_reader::LocalImage::open(&layout).unwrap();
    for (path, bytes) in nodeimg::apply::receipt::files(&image).unwrap() {
        tree.bytes(&path.to_string(), &bytes);
    }
    tree.file("/etc/nodeimg/blueprint.lock.json", LOCK);
    tree.bytes("/etc/nodeimg/trust/release.pub", &key_pem);
    (tree, built.image.manifest.digest.to_string())
}

fn image_results(tree: &Tree, require: bool) -> Vec<CheckResult> {
    verify_fixture::results(tree, &healthy_xml(), &with_trust(require))
        .into_iter()
        .filter(|r| r.id().starts_with("image."))
        .collect()
}

fn verdicts(results: &[CheckResult]) -> Vec<(&'static str, Verdict)> {
    results.iter().map(|r| (r.id(), r.verdict)).collect()
}

#[test]
fn a_signed_image_with_its_configuration_on_disk_passes() {
    let dir = tempfile::tempdir().unwrap();
    let release = pair(dir.path(), "release", 1);
    let (tree, digest) = node(Some(&release), &release);
    let results = image_results(&tree, true);
    assert_eq!(
        verdicts(&results),
        [
            ("image.signature", Verdict::Pass),
            ("image.config", Verdict::Pass)
        ],
        "{results:#?}"
    );
    assert!(results[0].observed.contains(&digest) && results[0].observed.contains(&release.id));
    // The record names what it judged.
    let facts = verify_fixture::facts(&tree, &healthy_xml());
    let identity = ImageIdentity::of(&facts).into_known().unwrap();
    assert_eq!(identity.manifest, digest);
    assert_eq!(identity.signed_by.as_deref(), Some(release.id.as_str()));
    assert_eq!(identity.signature, "verified");
}

#[test]
fn unsigned_wrongly_signed_or_changed_images_fail_as_image_faults() {
    let dir = tempfile::tempdir().unwrap();
    let release = pair(dir.path(), "release", 1);
    let other = pair(dir.path(), "other", 2);

    let (tree, _) = node(None, &release);
    let results = image_results(&tree, true);
    assert_eq!(results[0].verdict, Verdict::Fail);
    assert!(
        results[0].observed.contains("no signature"),
        "{}",
        results[0].observed
    );
    let json = serde_json::to_value(&results[0]).unwrap();
    assert_eq!(
        (json["fault"].as_str(), json["action"].as_str()),
        (Some("image"), Some("service"))
    );
    assert!(
        results[0].blocks(),
        "an unsigned image keeps kubelet from starting"
    );

    let (tree, _) = node(Some(&other), &release);
    let results = image_results(&tree, true);
    assert_eq!(results[0].verdict, Verdict::Fail);
    assert!(
        results[0].observed.contains("none by a trusted key"),
        "{}",
        results[0].observed
    );

    // The lock edited on the node after the image was applied.
    let (tree, _) = node(Some(&release), &release);
    tree.file(
        "/etc/nodeimg/blueprint.lock.json",
        "{\"blueprint\": \"edited\"}\n",
    );
    let results = image_results(&tree, true);
    assert_eq!(
        verdicts(&results),
        [
            ("image.signature", Verdict::Pass),
            ("image.config", Verdict::Fail)
        ]
    );
    assert!(
        results[1]
            .observed
            .contains("/etc/nodeimg/blueprint.lock.json differs"),
        "{}",
        results[1].observed
    );

    // A key dropped into the node's trust folder signs an image of its own: the signature
    // is by a key the blueprint does not name, and the folder is not the image's.
    let (tree, _) = node(Some(&other), &release);
    tree.bytes(
        "/etc/nodeimg/trust/other.pub",
        &std::fs::read(&other.public).unwrap(),
    );
    let results = image_results(&tree, true);
    assert_eq!(
        verdicts(&results),
        [
            ("image.signature", Verdict::Fail),
            ("image.config", Verdict::Fail)
        ]
    );
    assert!(
        results[0].observed.contains("does not name that key"),
        "{}",
        results[0].observed
    );
    assert!(
        results[1]
            .observed
            .contains("/etc/nodeimg/trust/other.pub extra"),
        "{}",
        results[1].observed
    );
}

#[test]
fn no_kept_image_is_an_error_and_require_false_only_warns() {
    let dir = tempfile::tempdir().unwrap();
    let release = pair(dir.path(), "release", 1);
    let tree = healthy_tree();
    let results = image_results(&tree, true);
    assert_eq!(
        verdicts(&results),
        [
            ("image.signature", Verdict::Error),
            ("image.config", Verdict::Error)
        ]
    );
    assert!(
        results[0].observed.contains("var/lib/nodeimg/image"),
        "{}",
        results[0].observed
    );

    let (tree, _) = node(None, &release);
    let results = image_results(&tree, false);
    assert_eq!(results[0].verdict, Verdict::Fail);
    assert_eq!(results[0].severity, Severity::Warning);
    assert!(!results[0].blocks());
    // Without imageTrust nothing is judged.
    let none: Vec<_> = verify_fixture::results(&tree, &healthy_xml(), BLUEPRINT)
        .into_iter()
        .filter(|r| r.id().starts_with("image."))
        .collect();
    assert!(none.is_empty());
}
