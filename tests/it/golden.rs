//! golden/<blueprint>/ holds the committed rendered tree of every example
//! blueprint (`layer/`, `cluster/`, and `modes.txt` for file modes, which git
//! does not keep) and `image.txt`, the digests of the image `nodeimg build`
//! makes from it (SOURCE_DATE_EPOCH 0, zstd) with the fixed stand-in
//! verifier (`package::verifier::stand_in_elf`), so the digests follow the
//! configuration and the overlay, not nodeimg's own code. Rendering and
//! packaging must reproduce them byte for byte; on drift the failure shows
//! unified diffs. `scripts/update-golden` rewrites them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nodeimg::atomic::{Kind, MARKER, StagedDir};
use nodeimg::blueprint::{compat::Matrix, load_file};
use nodeimg::render::{Templates, render, write::write_tree};
use nodeimg::tree::Tree;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Mode 0 marks a symbolic link, whose "content" is `-> target`.
const LINK: u32 = 0;

fn files_of(tree: &Tree, prefix: &str, out: &mut BTreeMap<String, (u32, Vec<u8>)>) {
    for (p, node) in tree.entries() {
        match node {
            nodeimg::tree::Node::File { mode, bytes } => {
                out.insert(format!("{prefix}/{p}"), (mode, bytes));
            }
            nodeimg::tree::Node::Symlink { target } => {
                out.insert(
                    format!("{prefix}/{p}"),
                    (LINK, format!("-> {target}").into_bytes()),
                );
            }
            nodeimg::tree::Node::Dir { .. } => {}
        }
    }
}

fn modes_txt(files: &BTreeMap<String, (u32, Vec<u8>)>) -> String {
    files
        .iter()
        .map(|(p, (m, bytes))| match *m {
            LINK => format!("link {p} {}\n", String::from_utf8_lossy(bytes)),
            m => format!("{m:04o} {p}\n"),
        })
        .collect()
}

fn read_dir_files(dir: &Path, base: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let p = e.unwrap().path();
        let meta = std::fs::symlink_metadata(&p).unwrap();
        let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
        if meta.is_symlink() {
            let target = std::fs::read_link(&p).unwrap();
            out.insert(rel, format!("-> {}", target.display()).into_bytes());
        } else if meta.is_dir() {
            read_dir_files(&p, base, out);
        } else {
            out.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// The digests `nodeimg build --verifier <stand-in>` gives this blueprint
/// with default options: the image, then each layer bottom to top.
fn image_txt(bp: &nodeimg::blueprint::Blueprint, layer: &Tree) -> String {
    use nodeimg::package::{BuildOptions, ImageMeta, Inputs, Overlay, Silent, Verifier, build};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let overlay = Overlay::from_blueprint(bp);
    let meta = ImageMeta::from_blueprint(bp).unwrap();
    let verifier = Verifier::golden_stand_in();
    let sbom = nodeimg::package::sbom::Source::from_blueprint(bp);
    let inputs = Inputs {
        config: layer,
        verifier: &verifier,
        overlay: overlay.as_ref(),
        sbom: Some(&sbom),
    };
    let r = build(inputs, &meta, &BuildOptions::default(), &out, &mut Silent).unwrap();
    let i = &r.image;
    let mut text = format!(
        "# nodeimg build {}.yaml (SOURCE_DATE_EPOCH=0, zstd level 3, stand-in verifier)\nmanifest {}\nconfig   {}\n",
        bp.name(),
        i.manifest.digest,
        i.config.digest,
    );
    for l in &i.layers {
        text.push_str(&format!(
            "layer {:<8} {} diff_id {} entries {}\n",
            l.role.as_str(),
            l.digest,
            l.diff_id,
            l.entries
        ));
    }
    for s in &i.sbom {
        text.push_str(&format!(
            "sbom  {:<30} {} referrer {}\n",
            s.artifact_type, s.blob.digest, s.manifest.digest
        ));
    }
    text
}

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
        let r = render(&bp, &Templates::embedded()).unwrap();
        let golden = root().join("golden").join(bp.name());
        let mut want = BTreeMap::new();
        files_of(&r.layer, "layer", &mut want);
        files_of(&r.cluster, "cluster", &mut want);
        let image = image_txt(&bp, &r.layer);
        if update {
            // The same guarded swap as `render -o`: golden/<name> is replaced
            // only while it carries the marker.
            let staged = StagedDir::new(&golden, Kind::Render, &[]).unwrap();
            write_tree(&staged.path().join("layer"), &r.layer).unwrap();
            write_tree(&staged.path().join("cluster"), &r.cluster).unwrap();
            std::fs::write(staged.path().join("modes.txt"), modes_txt(&want)).unwrap();
            std::fs::write(staged.path().join("image.txt"), &image).unwrap();
            staged.commit().unwrap();
            continue;
        }
        let mut have = BTreeMap::new();
        read_dir_files(&golden, &golden, &mut have);
        if have.remove(MARKER).is_none() {
            problems.push(format!("{}: golden/ lacks its {MARKER} marker", bp.name()));
        }
        let have_image = have
            .remove("image.txt")
            .map(|b| String::from_utf8(b).unwrap())
            .unwrap_or_default();
        if have_image != image {
            let diff = similar::TextDiff::from_lines(have_image.as_str(), image.as_str());
            problems.push(format!(
                "{}: image digests changed:\n{}",
                bp.name(),
                diff.unified_diff()
            ));
        }
        let have_modes = have
            .remove("modes.txt")
            .map(|b| String::from_utf8(b).unwrap())
            .unwrap_or_default();
        let want_modes = modes_txt(&want);
        if have_modes != want_modes {
            let diff = similar::TextDiff::from_lines(have_modes.as_str(), want_modes.as_str());
            problems.push(format!(
                "{}: modes.txt differs:\n{}",
                bp.name(),
                diff.unified_diff()
            ));
        }
        for (path, (_, bytes)) in &want {
            match have.get(path) {
                None => problems.push(format!(
                    "{}: {path} is rendered but not in golden/",
                    bp.name()
                )),
                Some(g) if g != bytes => {
                    let a = String::from_utf8_lossy(g);
                    let b = String::from_utf8_lossy(bytes);
                    problems.push(format!(
                        "{}: {path} differs:\n{}",
                        bp.name(),
                        similar::TextDiff::from_lines(a.as_ref(), b.as_ref())
                            .unified_diff()
                            .header("golden", "rendered")
                    ));
                }
                Some(_) => {}
            }
        }
        for path in have.keys() {
            if !want.contains_key(path) {
                problems.push(format!(
                    "{}: {path} is in golden/ but no longer rendered",
                    bp.name()
                ));
            }
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
