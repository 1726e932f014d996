//! `nodeimg render BLUEPRINT -o DIR`: write the rendered tree (`layer/`) and
//! the cluster-side files (`cluster/`) atomically; a failure leaves DIR as
//! it was, and DIR is replaced only when it is new, empty or an earlier
//! render (it carries nodeimg's marker file).

use super::prepared::Prepared;
use super::{Env, Exit, OrUnusable, Outcome};
use crate::cli::RenderArgs;
use crate::render;

pub fn run(args: &RenderArgs, env: &mut Env<'_>) -> Outcome {
    let prepared = Prepared::load(&args.file, &args.matrix, Some(&args.templates), env)?;
    let bp = &prepared.blueprint;
    let rendered = render::render(bp, &prepared.templates).unusable_at(&args.file)?;
    let inputs = prepared.inputs(&args.templates, &args.matrix);
    render::write::write_dir(
        &args.output,
        &[("layer", &rendered.layer), ("cluster", &rendered.cluster)],
        &inputs,
    )
    .unusable()?;
    writeln!(
        env.out,
        "{}: rendered {} layer file(s), {} cluster file(s) into {} ({})",
        bp.name(),
        rendered.layer.files().count(),
        rendered.cluster.files().count(),
        args.output.display(),
        bp.id()
    )
    .unusable_at("cannot write the report")?;
    Ok(Exit::Ok)
}
