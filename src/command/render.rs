//! `nodeimg render BLUEPRINT -o DIR`: write the rendered tree (`layer/`) and
//! the cluster-side files (`cluster/`) atomically; a failure leaves DIR as
//! it was.

use super::{Env, exit};
use crate::cli::RenderArgs;
use crate::render;

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
    if let Err(e) = render::write::write_dir(
        &args.output,
        &[("layer", &rendered.layer), ("cluster", &rendered.cluster)],
    ) {
        return env.fail(&format!("cannot write {}: {e}", args.output.display()));
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
