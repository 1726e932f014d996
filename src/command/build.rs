//! `nodeimg build BLUEPRINT [-o OUT]`: validate, render, package into a
//! reproducible, layered OCI image layout (overlay, verifier, config;
//! default OUT: `out/<metadata.name>/`), print the manifest digest
//! (`--format json`: every digest and size). `--check-repro` builds twice
//! under different conditions and compares the two. `--cluster DIR` writes
//! the cluster-side files into DIR. A long build shows its progress when
//! stderr is a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;

use serde::Serialize;

use super::{Env, exit};
use crate::atomic::{Kind, StagedDir};
use crate::cli::{BuildArgs, Format};
use crate::package::verifier::Target;
use crate::package::{
    self, BuildOptions, ImageMeta, Inputs, Meter, Overlay, Progress, ReproReport, Silent, Verifier,
};
use crate::render;

#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    build: &'a package::BuildReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    reproducible: Option<&'a ReproReport>,
}

pub fn run(args: &BuildArgs, env: &mut Env<'_>) -> u8 {
    let matrix = match super::matrix(&args.matrix, env) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let templates = match super::templates(&args.templates, env) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let bp = match super::load_valid(&args.file, &matrix, env) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let rendered = match render::render(&bp, &templates) {
        Ok(r) => r,
        Err(e) => return env.fail(&format!("{}: {e}", args.file.display())),
    };
    let mut meta = match ImageMeta::from_blueprint(&bp) {
        Ok(m) => m,
        Err(e) => return env.fail(&e.to_string()),
    };
    if let Some(tag) = &args.tag {
        meta.tag = match tag.parse() {
            Ok(t) => t,
            Err(e) => return env.fail(&format!("--tag {tag}: {e}")),
        };
    }
    let mut opts = match BuildOptions::from_env() {
        Ok(o) => o,
        Err(e) => return env.fail(&e.to_string()),
    };
    opts.compression = match args.compression.parse() {
        Ok(c) => c,
        Err(e) => return env.fail(&format!("--compression: {e}")),
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(bp.name()));
    let inputs = super::render::inputs(&bp, &args.templates, &args.matrix);
    if let Err(e) = crate::atomic::check_inputs(&output, &inputs) {
        return env.fail(&e.to_string());
    }
    // Claimed before the image is built, so a refused --cluster folder
    // leaves no half-done build behind.
    let cluster = match &args.cluster {
        Some(dir) => match StagedDir::new(dir, Kind::Render, &inputs) {
            Ok(s) => Some(s),
            Err(e) => return env.fail(&e.to_string()),
        },
        None => None,
    };
    opts.cache = !args.no_cache;
    let verifier_path = match &args.verifier {
        Some(p) => p.clone(),
        None => match std::env::current_exe() {
            Ok(p) => p,
            Err(e) => {
                return env.fail(&format!(
                    "cannot find this executable to put into the image ({e}); give one with --verifier PATH"
                ));
            }
        },
    };
    let os = &bp.spec().os;
    let target = Target {
        distro: os.distro,
        version: &os.version,
        architecture: &meta.architecture,
    };
    let verifier = match Verifier::from_file(&verifier_path, &target) {
        Ok(v) => v,
        Err(e) => return env.fail(&e.to_string()),
    };
    let overlay = Overlay::from_blueprint(&bp);
    let image = Inputs {
        config: &rendered.layer,
        verifier: &verifier,
        overlay: overlay.as_ref(),
    };
    let result = {
        let tty = !env.quiet && std::io::stderr().is_terminal();
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
            package::build(image, &meta, &opts, &output, progress).map(|b| (b, None))
        }
    };
    let (report, repro) = match result {
        Ok(r) => r,
        Err(e) => return env.fail(&e.to_string()),
    };
    if let Some(staged) = cluster {
        let written = render::write::write_tree(staged.path(), &rendered.cluster)
            .map_err(|e| e.to_string())
            .and_then(|()| staged.commit().map_err(|e| e.to_string()));
        if let Err(e) = written {
            return env.fail(&e);
        }
    }
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(
            &mut *env.out,
            &Report {
                build: &report,
                reproducible: repro.as_ref(),
            },
        )
        .map_err(std::io::Error::from)
        .and_then(|_| writeln!(env.out)),
        Format::Text => text(&report, repro.as_ref(), env),
    };
    if let Err(e) = written {
        return env.fail(&format!("cannot write the report: {e}"));
    }
    match repro {
        Some(r) if !r.identical => exit::NEGATIVE,
        _ => exit::OK,
    }
}

/// Where `build` writes without `-o`: `out/<metadata.name>/`.
fn default_output(name: &str) -> PathBuf {
    PathBuf::from("out").join(name)
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
