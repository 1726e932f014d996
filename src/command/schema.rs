//! `nodeimg schema`: the blueprint JSON Schema (or, with `--record`, the
//! acceptance record's; with `--matrix`, the site matrix file's), for
//! editors and CI.

use super::{Env, Exit, OrUnusable, Outcome};
use crate::cli::{SchemaArgs, SchemaFormat};

pub fn run(args: &SchemaArgs, env: &mut Env<'_>) -> Outcome {
    let text = match args.format {
        _ if args.record => {
            let mut t = serde_json::to_string_pretty(&crate::verify::report::record::schema())
                .expect("schema serialises");
            t.push('\n');
            t
        }
        _ if args.matrix => {
            let mut t =
                serde_json::to_string_pretty(&crate::blueprint::compat::Matrix::file_schema())
                    .expect("schema serialises");
            t.push('\n');
            t
        }
        SchemaFormat::Json => {
            let mut t = serde_json::to_string_pretty(&crate::blueprint::schema::document())
                .expect("schema serialises");
            t.push('\n');
            t
        }
        SchemaFormat::Markdown => crate::blueprint::schema::reference_markdown(),
    };
    match &args.output {
        Some(output) if !output.is_stdout() => {
            output
                .write(text.as_bytes(), env.out)
                .unusable_at(format_args!("cannot write {output}"))?;
            env.note(&format!("wrote {output}"));
        }
        _ => env
            .out
            .write_all(text.as_bytes())
            .unusable_at("cannot write the schema")?,
    }
    Ok(Exit::Ok)
}
