//! `nodeimg facts`: collect the facts verify uses and print them as JSON.

use super::{Env, Exit, Outcome, source};
use crate::cli::FactsArgs;
use crate::verify::collect;

pub fn run(args: &FactsArgs, env: &mut Env<'_>) -> Outcome {
    // No blueprint says who owns the driver: look where an operator's driver would be
    // first, as `capture` does (source::blueprintless).
    let source = source::open(&args.source, env, true)?;
    let facts = collect(source.host.as_ref(), &source.options);
    env.json(&facts)?;
    Ok(Exit::Ok)
}
