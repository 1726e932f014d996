//! `nodeimg schema`: the blueprint JSON Schema, for editors and CI.

use super::{Env, exit};
use crate::cli::{SchemaArgs, SchemaFormat};

pub fn run(args: &SchemaArgs, env: &mut Env<'_>) -> u8 {
    let text = match args.format {
        SchemaFormat::Json => {
            let mut t = serde_json::to_string_pretty(&crate::blueprint::schema::document())
                .expect("schema serialises");
            t.push('\n');
            t
        }
        SchemaFormat::Markdown => crate::blueprint::schema::reference_markdown(),
    };
    match &args.output {
        Some(path) => match crate::atomic::write_file(path, text.as_bytes()) {
            Ok(()) => {
                env.note(&format!("wrote {}", path.display()));
                exit::OK
            }
            Err(e) => env.fail(&format!("cannot write {}: {e}", path.display())),
        },
        None => match env.out.write_all(text.as_bytes()) {
            Ok(()) => exit::OK,
            Err(e) => env.fail(&format!("cannot write the schema: {e}")),
        },
    }
}
