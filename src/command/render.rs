//! `nodeimg render BLUEPRINT -o DIR`: write the rendered tree (`layer/`) and
//! the cluster-side files (`cluster/`) atomically; a failure leaves DIR as
//! it was, and DIR is replaced only when it is new, empty or an earlier
//! render (it carries nodeimg's marker file).

use std::path::PathBuf;

use super::{Env, exit};
use crate::blueprint::Blueprint;
use crate::cli::{MatrixArg, RenderArgs, TemplatesArg};
use crate::render;

/// What a render or build reads, so that no output replaces it: the
/// blueprint and the files it names, `--templates` and `--matrix`.
pub(super) fn inputs(bp: &Blueprint, templates: &TemplatesArg, matrix: &MatrixArg) -> Vec<PathBuf> {
    let mut v = render::inputs(bp);
    v.extend(templates.templates.iter().cloned());
    v.extend(matrix.matrix.iter().cloned());
    v
}

pub fn run(args: &RenderArgs, env: &mut Env<'_>) -> u8 {
    let matrix = match super::matrix(&args.matrix, env) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let templates = match super::templates(&args.templates, env) {
        Ok(t) => t,
        Err(code) => return code,
    };
    for name in &templates.overridden {
        env.note(&format!("template {name} overridden"));
    }
    let bp = match super::load_valid(&args.file, &matrix, env) {
        Ok(b) => b,
        Err(code) => return code,
    };
    let rendered = match render::render(&bp, &templates) {
        Ok(r) => r,
        Err(e) => return env.fail(&format!("{}: {e}", args.file.display())),
    };
    let inputs = inputs(&bp, &args.templates, &args.matrix);
    if let Err(e) = render::write::write_dir(
        &args.output,
        &[("layer", &rendered.layer), ("cluster", &rendered.cluster)],
        &inputs,
    ) {
        return env.fail(&e.to_string());
    }
    let _ = writeln!(
        env.out,
        "{}: rendered {} layer file(s), {} cluster file(s) into {} ({})",
        bp.name(),
        rendered.layer.files().count(),
        rendered.cluster.files().count(),
        args.output.display(),
        bp.id()
    );
    exit::OK
}
