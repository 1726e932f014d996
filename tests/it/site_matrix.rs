//! A blueprint that needs a site matrix (`--matrix`) is valid, renders and
//! builds with it, and the image's lock is trusted at boot: verify loads it
//! by schema and id, without re-running the compatibility rules against a
//! matrix the node does not have. A lock that no longer matches the image's
//! id is refused.

use std::path::Path;
use std::process::Output;

use crate::support::{Variant, root};
use serde_json::json;

fn nodeimg(dir: &Path, args: &[&str]) -> Output {
    crate::support::cmd()
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The H100 example asking for CUDA 13.1, which only the site matrix
/// qualifies with its driver.
fn site_blueprint(dir: &Path) {
    let v = Variant::of("h100-sxm-ubuntu");
    assert_eq!(v.get("accelerators.cuda"), Some(&json!("13.0")));
    v.set("accelerators.cuda", json!("13.1"))
        .write(&dir.join("bp.yaml"));
    // Copies, not links: files a blueprint names must lie inside its folder.
    for sub in ["certs", "overlays"] {
        copy_tree(&root().join("blueprints").join(sub), &dir.join(sub));
    }
    std::fs::write(
        dir.join("site.yaml"),
        "schemaVersion: 1\ncudaMinimumDriver:\n  - cuda: \"13.1\"\n    driver: \"580.100\"\n    source: \"site qualification\"\n",
    )
    .unwrap();
}

#[test]
fn validate_render_build_and_verify_agree_with_a_site_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    site_blueprint(d);
    let code = |o: &Output| o.status.code().unwrap_or(-1);
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    // Without the site matrix it is invalid; with it, every stage agrees.
    assert_eq!(code(&nodeimg(d, &["validate", "bp.yaml"])), 1);
    for args in [
        vec!["validate", "--matrix", "site.yaml", "bp.yaml"],
        vec!["render", "--matrix", "site.yaml", "bp.yaml", "-o", "r"],
        vec!["build", "--matrix", "site.yaml", "bp.yaml", "-o", "oci"],
    ] {
        let o = nodeimg(d, &args);
        assert_eq!(code(&o), 0, "{args:?}: {}", err(&o));
    }
    // Verify on the node: no --matrix. An empty root fails checks (1), but
    // the lock itself is usable (not 2).
    std::fs::create_dir(d.join("root")).unwrap();
    let lock = "r/layer/etc/nodeimg/blueprint.lock.json";
    let o = nodeimg(d, &["verify", "--blueprint", lock, "--root", "root"]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    // An altered lock no longer hashes to the image's id: refused.
    let text = std::fs::read_to_string(d.join(lock)).unwrap();
    Variant::parse(lock, &text)
        .set("accelerators.cuda", json!("13.0"))
        .write(&d.join(lock));
    let o = nodeimg(d, &["verify", "--blueprint", lock, "--root", "root"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("altered"), "{}", err(&o));
}

#[test]
fn the_lock_loads_as_trusted_input_with_its_id() {
    let bp = crate::support::example("h100-sxm-ubuntu");
    let lock = nodeimg::render::lock_json(&bp);
    let path = Path::new("blueprint.lock.json");
    let back =
        nodeimg::blueprint::identity::load_lock(lock.as_bytes(), path, Some(bp.id())).unwrap();
    assert_eq!(back.id(), bp.id());
    assert!(
        nodeimg::blueprint::identity::load_lock(lock.as_bytes(), path, Some("sha256:00")).is_err()
    );
}
