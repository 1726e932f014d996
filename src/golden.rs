//! A blueprint's golden folder: the review surface of a blueprint repository. For each
//! blueprint, `<dir>/<metadata.name>/` holds the rendered tree (`layer/`, `cluster/`),
//! `modes.txt` (each file's mode and each link's target, which git does not keep) and
//! `image.txt` (the digests of the image `nodeimg build` makes from it with
//! SOURCE_DATE_EPOCH 0, zstd and the fixed stand-in verifier, so that they follow the
//! configuration and the overlay, not the nodeimg that built them). Committed next to the
//! blueprints, a change to a blueprint, a template or nodeimg shows in review as what it
//! does to the files on the node.
//!
//! `nodeimg golden update` writes the folder (atomically, replacing only an earlier
//! golden folder) and `nodeimg golden check` compares it; this project's own `golden/`
//! test goes through the same [`Golden::of`], [`Golden::write`] and [`Golden::check`], so
//! the site command and the project's fixture cannot drift apart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::atomic::{Kind, MARKER, OutputError, StagedDir};
use crate::blueprint::Blueprint;
use crate::package::{BuildOptions, ImageMeta, Inputs, Overlay, PackageError, Silent, Verifier};
use crate::render::{RenderError, Templates, write::write_tree};
use crate::tree::{Node, Tree};

/// The file of modes and link targets.
pub const MODES: &str = "modes.txt";
/// The file of image digests.
pub const IMAGE: &str = "image.txt";

/// Mode 0 marks a symbolic link, whose "content" is `-> target`.
const LINK: u32 = 0;

/// Why a blueprint's golden content cannot be made or its folder read.
#[derive(Debug, Error)]
pub enum GoldenError {
    #[error("{0}")]
    Render(#[from] RenderError),
    #[error("the image cannot be built: {0}")]
    Package(#[from] PackageError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What a blueprint's golden folder holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Golden {
    name: String,
    layer: Tree,
    cluster: Tree,
    /// `layer/…` and `cluster/…` → (mode, bytes; `-> target` for a link).
    files: BTreeMap<String, (u32, Vec<u8>)>,
    modes: String,
    image: String,
}

/// One way a golden folder differs from what the blueprint gives now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Difference {
    /// The path inside the blueprint's folder (`layer/etc/…`, `modes.txt`), or `` for
    /// the folder itself.
    pub path: String,
    /// What differs, in words.
    pub what: String,
    /// Unified diff, golden → rendered (empty when there is nothing to show).
    pub diff: String,
}

impl Golden {
    /// Renders `bp` and builds its image with the stand-in verifier.
    pub fn of(bp: &Blueprint, templates: &Templates) -> Result<Self, GoldenError> {
        let rendered = crate::render::render(bp, templates)?;
        let mut files = BTreeMap::new();
        files_of(&rendered.layer, "layer", &mut files);
        files_of(&rendered.cluster, "cluster", &mut files);
        let modes = modes_txt(&files);
        let image = image_txt(bp, &rendered.layer)?;
        Ok(Self {
            name: bp.name().to_string(),
            layer: rendered.layer,
            cluster: rendered.cluster,
            files,
            modes,
            image,
        })
    }

    /// The blueprint's name: its folder under the golden folder.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes the folder `dir` (the blueprint's own, `<golden>/<name>`) atomically: only
    /// a new, empty or earlier golden (or render) folder is replaced, never one holding
    /// one of `inputs`.
    pub fn write(&self, dir: &Path, inputs: &[PathBuf]) -> Result<(), OutputError> {
        let staged = StagedDir::new(dir, Kind::Render, inputs)?;
        let io = |source| OutputError::Io {
            path: dir.to_path_buf(),
            source,
        };
        write_tree(&staged.path().join("layer"), &self.layer).map_err(io)?;
        write_tree(&staged.path().join("cluster"), &self.cluster).map_err(io)?;
        std::fs::write(staged.path().join(MODES), &self.modes).map_err(io)?;
        std::fs::write(staged.path().join(IMAGE), &self.image).map_err(io)?;
        staged.commit()
    }

    /// How the folder `dir` differs from this content; empty when it holds exactly it.
    pub fn check(&self, dir: &Path) -> Result<Vec<Difference>, GoldenError> {
        let mut out = Vec::new();
        if std::fs::symlink_metadata(dir).is_err() {
            out.push(Difference {
                path: String::new(),
                what: format!(
                    "{} does not exist: `nodeimg golden update` writes it",
                    dir.display()
                ),
                diff: String::new(),
            });
            return Ok(out);
        }
        let mut have = BTreeMap::new();
        read_dir_files(dir, dir, &mut have)?;
        if have.remove(MARKER).is_none() {
            out.push(Difference {
                path: MARKER.into(),
                what: format!("lacks nodeimg's {MARKER} marker (not written by nodeimg)"),
                diff: String::new(),
            });
        }
        for (name, want, what) in [
            (IMAGE, &self.image, "image digests changed"),
            (MODES, &self.modes, "file modes or links changed"),
        ] {
            let got = have
                .remove(name)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            if &got != want {
                out.push(Difference {
                    path: name.into(),
                    what: what.into(),
                    diff: unified(&got, want),
                });
            }
        }
        for (path, (_, bytes)) in &self.files {
            match have.get(path) {
                None => out.push(Difference {
                    path: path.clone(),
                    what: "rendered, not in the golden folder".into(),
                    diff: unified("", &String::from_utf8_lossy(bytes)),
                }),
                Some(g) if g != bytes => out.push(Difference {
                    path: path.clone(),
                    what: "differs".into(),
                    diff: unified(&String::from_utf8_lossy(g), &String::from_utf8_lossy(bytes)),
                }),
                Some(_) => {}
            }
        }
        for (path, bytes) in &have {
            if !self.files.contains_key(path) {
                out.push(Difference {
                    path: path.clone(),
                    what: "in the golden folder, no longer rendered".into(),
                    diff: unified(&String::from_utf8_lossy(bytes), ""),
                });
            }
        }
        Ok(out)
    }
}

fn unified(golden: &str, rendered: &str) -> String {
    similar::TextDiff::from_lines(golden, rendered)
        .unified_diff()
        .header("golden", "rendered")
        .to_string()
}

fn files_of(tree: &Tree, prefix: &str, out: &mut BTreeMap<String, (u32, Vec<u8>)>) {
    for (p, node) in tree.entries() {
        match node {
            Node::File { mode, bytes } => {
                out.insert(format!("{prefix}/{p}"), (mode, bytes));
            }
            Node::Symlink { target } => {
                out.insert(
                    format!("{prefix}/{p}"),
                    (LINK, format!("-> {target}").into_bytes()),
                );
            }
            Node::Dir { .. } => {}
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

/// Every file under `dir` by its path relative to `base`; a link as `-> target`.
fn read_dir_files(
    dir: &Path,
    base: &Path,
    out: &mut BTreeMap<String, Vec<u8>>,
) -> Result<(), GoldenError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GoldenError::Io { path, source }
    };
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        let p = e.map_err(io(dir))?.path();
        let meta = std::fs::symlink_metadata(&p).map_err(io(&p))?;
        let rel = p
            .strip_prefix(base)
            .unwrap_or(&p)
            .to_string_lossy()
            .into_owned();
        if meta.is_symlink() {
            let target = std::fs::read_link(&p).map_err(io(&p))?;
            out.insert(rel, format!("-> {}", target.display()).into_bytes());
        } else if meta.is_dir() {
            read_dir_files(&p, base, out)?;
        } else {
            out.insert(rel, std::fs::read(&p).map_err(io(&p))?);
        }
    }
    Ok(())
}

/// The digests `nodeimg build --verifier <stand-in>` gives this blueprint with default
/// options: the image, then each layer bottom to top, then the SBOM referrers.
fn image_txt(bp: &Blueprint, layer: &Tree) -> Result<String, GoldenError> {
    let dir = tempfile::tempdir().map_err(|source| GoldenError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let out = dir.path().join("oci");
    let overlay = Overlay::from_blueprint(bp);
    let meta = ImageMeta::from_blueprint(bp)?;
    let verifier = Verifier::golden_stand_in();
    let sbom = crate::package::sbom::Source::from_blueprint(bp);
    let inputs = Inputs {
        config: layer,
        verifier: &verifier,
        overlay: overlay.as_ref(),
        sbom: Some(&sbom),
    };
    let r = crate::package::build(inputs, &meta, &BuildOptions::default(), &out, &mut Silent)?;
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
    Ok(text)
}
