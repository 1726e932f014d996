//! `nodeimg build BLUEPRINT [-o OUT]`: validate, render, package into a
//! reproducible, layered OCI image layout (overlay, verifier, config;
//! default OUT: `out/<metadata.name>/`), print the manifest digest
//! (`--format json`: every digest and size), and attaches the image's SBOM
//! (SPDX and CycloneDX, as OCI referrers; `--no-sbom`: none). `--check-repro` builds twice
//! under different conditions and compares the two. `--cluster DIR` writes
//! the cluster-side files into DIR. A long build shows its progress when
//! stderr is a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::prepared::Prepared;
use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::atomic::{Kind, StagedDir};
use crate::blueprint::identity::FileDigests;
use crate::blueprint::identity::digests::ReadAll;
use crate::blueprint::source;
use crate::cli::{BuildArgs, Format};
use crate::package::cache::Cache;
use crate::package::prepacked::Prepacked;
use crate::package::verifier::Target;
use crate::package::{
    self, BuildOptions, ImageMeta, Inputs, Meter, Overlay, Progress, ReproReport, Silent, Verifier,
};
use crate::render;
use crate::stdio::Input;

#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    build: &'a package::BuildReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    reproducible: Option<&'a ReproReport>,
}

pub fn run(args: &BuildArgs, env: &mut Env<'_>) -> Outcome {
    let tty = !env.quiet && std::io::stderr().is_terminal();
    let ahead = args
        .output
        .clone()
        .or_else(|| name_ahead(&args.file).map(|n| default_output(&n)));
    // The overlay file digests the last build into OUT remembered, so an
    // unchanged overlay is not read again for the blueprint id (with
    // `--no-cache` none are reused; this build's are kept all the same).
    let remembered = ahead.clone().filter(|_| !args.no_cache);
    let (cached, digests) = match &remembered {
        Some(out) => Cache::open_remembering(out),
        None => (Cache::empty(), FileDigests::empty()),
    };
    let opts = options(args);
    // When files must be read for the id and the overlay layer packed
    // anyway, both happen in one pass (`package::prepacked`).
    let early: Arc<Mutex<Option<Prepacked>>> = Arc::default();
    let digests = match (&ahead, &opts) {
        (Some(out), Ok(opts)) if !args.check_repro => digests.reading_with(pack_first(
            out.clone(),
            opts.clone(),
            cached.clone(),
            tty,
            Arc::clone(&early),
        )),
        _ => digests,
    };
    let prepared = Prepared::load_with(
        &args.file,
        &args.matrix,
        Some(&args.templates),
        Some(&digests),
        env,
    )?;
    let bp = &prepared.blueprint;
    let prepacked = early.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(tree) = bp.identity().overlay().and_then(|t| t.records()) {
        let files = tree
            .iter()
            .filter(|r| matches!(r.kind, crate::blueprint::identity::RecordKind::File { .. }))
            .count();
        env.detail(&format!(
            "overlay: {} of {files} file(s) read for the blueprint id{}, the others unchanged since the last build into {}",
            digests.hashed(),
            if prepacked.is_some() {
                " in the pass that packed the overlay layer"
            } else {
                ""
            },
            remembered.as_deref().map_or("OUT".into(), |p| p.display().to_string())
        ));
    }
    let rendered = render::render(bp, &prepared.templates).unusable_at(&args.file)?;
    let mut meta = ImageMeta::from_blueprint(bp).unusable()?;
    if let Some(tag) = &args.tag {
        meta.tag = tag.clone();
    }
    let opts = opts.unusable()?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(bp.name()));
    let inputs = prepared.inputs(&args.templates, &args.matrix);
    crate::atomic::check_inputs(&output, &inputs).unusable()?;
    // Claimed before the image is built, so a refused --cluster folder
    // leaves no half-done build behind.
    let cluster = match &args.cluster {
        Some(dir) => Some(StagedDir::new(dir, Kind::Render, &inputs).unusable()?),
        None => None,
    };
    let verifier_path = match &args.verifier {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| {
            Failure::unusable(format!(
                "cannot find this executable to put into the image ({e}); give one with --verifier PATH"
            ))
        })?,
    };
    let os = &bp.spec().os;
    let target = Target {
        distro: os.distro,
        version: &os.version,
        architecture: &meta.architecture,
    };
    let verifier = Verifier::from_file(&verifier_path, &target).unusable()?;
    let overlay = Overlay::from_blueprint(bp);
    let tag = meta.tag.to_string();
    let replaced = package::output::tagged_digest(&output, &tag);
    let sbom_source = package::sbom::Source::from_blueprint(bp);
    let image = Inputs {
        config: &rendered.layer,
        verifier: &verifier,
        overlay: overlay.as_ref(),
        sbom: (!args.no_sbom).then_some(&sbom_source),
    };
    let (report, repro) = {
        let mut meter;
        let mut silent = Silent;
        let progress: &mut dyn Progress = if tty {
            meter = Meter::new(&mut *env.err);
            &mut meter
        } else {
            &mut silent
        };
        if args.check_repro {
            package::build_checked(image, &meta, &opts, &output, progress)
                .map(|(b, r)| (b, Some(r)))
        } else {
            let before = package::Before {
                cache: (remembered.as_ref() == Some(&output)).then_some(cached),
                digests: Some(&digests),
                prepacked,
            };
            package::build_with(image, &meta, &opts, &output, before, progress).map(|b| (b, None))
        }
    }
    .unusable()?;
    let digest = report.image.manifest.digest.to_string();
    if let Some(took) = report.sbom_time {
        let files: usize = report.image.layers.iter().map(|l| l.entries).sum();
        env.detail(&format!(
            "sbom: SPDX and CycloneDX over {files} layer entries in {:.1} ms",
            took.as_secs_f64() * 1e3
        ));
    }
    if !args.no_sbom && report.verifier_crates.is_none() {
        env.note(&format!(
            "note: the verifier {} carries no list of its crates (no .dep-v0 section, as nodeimg and cargo auditable embed); the SBOM names it without them",
            verifier_path.display()
        ));
    }
    if let Some(old) = replaced.filter(|d| *d != digest) {
        env.note(&format!(
            "warning: {} held an image tagged {tag} with digest {old}; the tag now names {digest}, different content under the same tag: give it its own metadata.version (or --tag)",
            output.display()
        ));
    }
    // A rollout without a site applier runs the image as its own applier.
    if let Some(rollout) = &bp.spec().rollout
        && rollout.engine.applier.is_none()
        && let Err(why) = verifier.self_applier()
    {
        env.note(&format!(
            "note: rollout.engine.applier is unset, so `rollout plan` renders Plans that run this \
             image as its own applier, but {why}: give a static verifier with registry access \
             (scripts/build-verifier) with --verifier, or name the site's applier"
        ));
    }
    if let Some(staged) = cluster {
        render::write::write_tree(staged.path(), &rendered.cluster).unusable()?;
        staged.commit().unusable()?;
    }
    match args.format {
        Format::Json => env.json(&Report {
            build: &report,
            reproducible: repro.as_ref(),
        })?,
        Format::Text => {
            text(&report, repro.as_ref(), env).unusable_at("cannot write the report")?
        }
    }
    Ok(match repro {
        Some(r) if !r.identical => Exit::Negative,
        _ => Exit::Ok,
    })
}

/// How to build, from the arguments and the environment.
fn options(args: &BuildArgs) -> Result<BuildOptions, package::PackageError> {
    Ok(BuildOptions {
        compression: args.compression,
        cache: !args.no_cache,
        ..BuildOptions::from_env()?
    })
}

/// Packs the overlay layer for OUT `out` (whose layer cache is `cached`)
/// when the blueprint id needs its files read, returning their digests,
/// and leaves the layer in `slot` for the build to take; declines when a
/// cache may hold the layer.
fn pack_first(
    out: PathBuf,
    opts: BuildOptions,
    cached: Cache,
    tty: bool,
    slot: Arc<Mutex<Option<Prepacked>>>,
) -> ReadAll {
    Box::new(move |overlay, listing| {
        let mut meter;
        let mut silent = Silent;
        let progress: &mut dyn Progress = if tty {
            meter = Meter::new(std::io::stderr());
            &mut meter
        } else {
            &mut silent
        };
        match package::prepacked::pack(overlay, listing, &opts, &cached, &out, progress) {
            Ok(Some((packed, sums))) => {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(packed);
                Ok(Some(sums))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    })
}

/// Where `build` writes without `-o`: `out/<metadata.name>/`.
fn default_output(name: &str) -> PathBuf {
    PathBuf::from("out").join(name)
}

/// `metadata.name` of a blueprint file, read ahead of its checks to find
/// the default OUT and the digests remembered there (`None` for standard
/// input, which cannot be read twice, or a file that does not say: its
/// overlay is then hashed in full, and the checks report what is wrong).
fn name_ahead(file: &Input) -> Option<String> {
    let Input::File(path) = file else {
        return None;
    };
    let bytes = crate::input::read(path, source::MAX_BYTES as u64).ok()?;
    let doc = source::parse(source::decode(&bytes).ok()?).ok()?;
    let name = doc.value.get("metadata")?.get("name")?.as_str()?;
    Some(name.to_string())
}

fn text(
    r: &package::BuildReport,
    repro: Option<&ReproReport>,
    env: &mut Env<'_>,
) -> std::io::Result<()> {
    let i = &r.image;
    writeln!(env.out, "{}", i.manifest.digest)?;
    env.note(&format!(
        "{} {} → {} (tag {}, {})",
        i.name,
        i.version,
        r.out.display(),
        i.tag,
        i.platform,
    ));
    for l in &i.layers {
        env.note(&format!(
            "  {:<8} layer {} ({} bytes, {} entries){}",
            l.role.as_str(),
            l.digest,
            l.size,
            l.entries,
            if r.reused.contains(&l.role) {
                ", unchanged: reused"
            } else {
                ""
            }
        ));
    }
    for s in &i.sbom {
        env.note(&format!(
            "  sbom     {} {} (referrer {})",
            s.artifact_type, s.blob.digest, s.manifest.digest
        ));
    }
    if let Some(rep) = repro {
        if rep.identical {
            env.note(&format!(
                "reproducible: identical under {} and {}",
                rep.conditions[0], rep.conditions[1]
            ));
        } else {
            writeln!(
                env.out,
                "NOT reproducible ({} vs {}):",
                rep.conditions[0], rep.conditions[1]
            )?;
            for d in &rep.differences {
                writeln!(env.out, "  {d}")?;
            }
        }
    }
    Ok(())
}
