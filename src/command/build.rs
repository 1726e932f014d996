//! `nodeimg build BLUEPRINT [-o OUT]`: validate, render, package into a
//! reproducible OCI image layout (default OUT: `out/<metadata.name>/`),
//! print the manifest digest (`--format json`: every digest and size).
//! `--check-repro` builds twice under different conditions and compares
//! every byte. `--cluster DIR` writes the cluster-side files into DIR.

use std::path::PathBuf;

use serde::Serialize;

use super::{Env, exit};
use crate::atomic::{Kind, StagedDir};
use crate::cli::{BuildArgs, Format};
use crate::package::{self, BuildOptions, ImageMeta, Overlay, ReproReport};
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
    let overlay = Overlay::from_blueprint(&bp);
    let repro = if args.check_repro {
        match package::check_repro(&rendered.layer, overlay.as_ref(), &meta, &opts) {
            Ok(r) => Some(r),
            Err(e) => return env.fail(&e.to_string()),
        }
    } else {
        None
    };
    let report = match package::build(&rendered.layer, overlay.as_ref(), &meta, &opts, &output) {
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
        "{} {} → {} (tag {}, {}): layer {} ({} bytes, {} entries, diff_id {})",
        i.name,
        i.version,
        r.out.display(),
        i.tag,
        i.platform,
        i.layer.digest,
        i.layer.size,
        i.layer.entries,
        i.layer.diff_id
    ));
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
