//! golden/<blueprint>/ holds the committed rendered tree of every example
//! blueprint (`layer/`, `cluster/`, and `modes.txt` for file modes, which git
//! does not keep) and `image.txt`, the digests of the image `nodeimg build`
//! makes from it (SOURCE_DATE_EPOCH 0, zstd) with the fixed stand-in
//! verifier (`package::verifier::stand_in_elf`), so the digests follow the
//! configuration and the overlay, not nodeimg's own code. Rendering and
//! packaging must reproduce them byte for byte; on drift the failure shows
//! unified diffs. `scripts/update-golden` rewrites them.

use std::path::PathBuf;

use nodeimg::blueprint::{compat::Matrix, load_file};
use nodeimg::golden::Golden;
use nodeimg::render::{Templates, render};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Through the same code as `nodeimg golden check|update`, so the project's fixture and
/// a site's golden folder are made and compared alike.
#[test]
fn rendered_examples_match_golden() {
    let update = std::env::var_os("NODEIMG_UPDATE_GOLDEN").is_some();
    let mut problems = Vec::new();
    let mut blueprints: Vec<PathBuf> = std::fs::read_dir(root().join("blueprints"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    blueprints.sort();
    for bp_path in blueprints {
        let bp = load_file(&bp_path, &Matrix::builtin()).unwrap().blueprint;
        let golden = Golden::of(&bp, &Templates::embedded()).unwrap();
        let dir = root().join("golden").join(golden.name());
        if update {
            golden.write(&dir, &[]).unwrap();
            continue;
        }
        for d in golden.check(&dir).unwrap() {
            problems.push(format!("{}: {} {}:\n{}", bp.name(), d.path, d.what, d.diff));
        }
    }
    assert!(
        problems.is_empty(),
        "rendered output drifted from golden/ (run scripts/update-golden if intended):\n{}",
        problems.join("\n")
    );
}

#[test]
fn rendering_is_deterministic() {
    let bp = load_file(
        &root().join("blueprints/h100-sxm-ubuntu.yaml"),
        &Matrix::builtin(),
    )
    .unwrap()
    .blueprint;
    let a = render(&bp, &Templates::embedded()).unwrap();
    let b = render(&bp, &Templates::embedded()).unwrap();
    assert_eq!(a, b);
}

/// A site's blueprint repository: `golden update` writes what the project's golden/
/// holds for the same blueprint (the starter is the example, so the digests agree), `check`
/// is 0 on it, 1 naming the changed file with its diff after an edit, and a folder nodeimg
/// did not write is never replaced (2).
#[test]
fn a_site_checks_and_updates_its_golden_folder() {
    use crate::support::cmd;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let run = |args: &[&str]| cmd().current_dir(d).args(args).output().unwrap();
    let o = run(&["init", "--example", "cpu-minimal", "-o", "site/cpu.yaml"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Nothing written yet: a difference, not unusable input.
    let o = run(&["golden", "check", "site/cpu.yaml"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("golden/cpu-minimal"));

    let o = run(&["golden", "update", "site/cpu.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let site = d.join("golden/cpu-minimal");
    let project = root().join("golden/cpu-minimal");
    for file in ["image.txt", "modes.txt", "layer/etc/nodeimg/blueprint.id"] {
        assert_eq!(
            std::fs::read_to_string(site.join(file)).unwrap(),
            std::fs::read_to_string(project.join(file)).unwrap(),
            "{file}"
        );
    }
    let o = run(&["golden", "check", "site/cpu.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");

    // An edit shows as the files it changes, each with its unified diff.
    let bp = std::fs::read_to_string(d.join("site/cpu.yaml")).unwrap();
    std::fs::write(
        d.join("site/cpu.yaml"),
        bp.replace("memory: 512Mi", "memory: 768Mi"),
    )
    .unwrap();
    let o = run(&["golden", "check", "site/cpu.yaml"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("kubelet.conf.d/50-nodeimg.conf: differs"),
        "{out}"
    );
    assert!(out.contains("+++ rendered"), "{out}");
    assert!(out.contains("768Mi"), "{out}");
    let o = run(&["golden", "check", "--format", "json", "site/cpu.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["differs"], true);
    assert!(
        json["blueprints"][0]["differences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["path"] == "image.txt")
    );

    // A folder of the same name that nodeimg did not write stays as it is.
    let other = d.join("other");
    std::fs::create_dir_all(other.join("cpu-minimal")).unwrap();
    std::fs::write(other.join("cpu-minimal/notes.txt"), "mine").unwrap();
    let o = run(&["golden", "update", "--dir", "other", "site/cpu.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(other.join("cpu-minimal/notes.txt")).unwrap(),
        "mine"
    );
    // An unreadable blueprint is unusable input.
    let o = run(&["golden", "check", "site/missing.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}
