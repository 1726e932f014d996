//! `nodeimg init`: a starter blueprint from the embedded examples, so the
//! first `validate`/`build` needs no checkout of this repository. With
//! `-o FILE` the certificates and overlay files the example refers to are
//! written beside it (relative paths resolve against the blueprint's
//! folder), and nothing that exists is overwritten.

use std::path::Path;

use super::{Env, Exit, Failure, OrUnusable, Outcome};
use crate::blueprint::examples::{self, Example};
use crate::cli::InitArgs;

pub fn run(args: &InitArgs, env: &mut Env<'_>) -> Outcome {
    if args.list {
        let mut text = String::new();
        for e in examples::all() {
            text.push_str(&format!("{:<18} {}\n", e.name, e.summary()));
        }
        env.out
            .write_all(text.as_bytes())
            .unusable_at("cannot write the list")?;
        return Ok(Exit::Ok);
    }
    let name = args.example.as_deref().unwrap_or_default();
    let example = examples::find(name).ok_or_else(|| {
        let names: Vec<&str> = examples::all().map(|e| e.name).collect();
        Failure::unusable(format!(
            "no example called `{name}`; the examples are: {}",
            names.join(", ")
        ))
    })?;
    let text = starter(&example);
    let Some(file) = &args.output else {
        env.out
            .write_all(text.as_bytes())
            .unusable_at("cannot write the blueprint")?;
        let refs = example.referenced();
        if !refs.is_empty() {
            let names: Vec<&str> = refs.iter().map(|(p, _)| *p).collect();
            env.note(&format!(
                "note: it refers to {} beside it; `-o FILE` writes them too",
                names.join(", ")
            ));
        }
        return Ok(Exit::Ok);
    };
    let dir = crate::atomic::parent_dir(file);
    let mut writes = vec![(file.clone(), text.into_bytes())];
    for (rel, bytes) in example.referenced() {
        writes.push((dir.join(rel), bytes.to_vec()));
    }
    // Refused as a whole before anything is written: a half-written starter
    // would not validate. A referenced file that is already there with the same
    // bytes (a second example sharing a CA) is kept as it is.
    let same = |p: &Path, bytes: &[u8]| std::fs::read(p).is_ok_and(|b| b == bytes);
    let taken: Vec<String> = writes
        .iter()
        .enumerate()
        .filter(|(i, (p, bytes))| p.symlink_metadata().is_ok() && (*i == 0 || !same(p, bytes)))
        .map(|(_, (p, _))| p.display().to_string())
        .collect();
    writes.retain(|(p, _)| p.symlink_metadata().is_err());
    if !taken.is_empty() {
        return Err(Failure::unusable(format!(
            "not overwriting what exists: {}",
            taken.join(", ")
        )));
    }
    for (path, bytes) in &writes {
        write_new(path, bytes).unusable_at(format_args!("cannot write {}", path.display()))?;
        env.note(&format!("wrote {}", path.display()));
    }
    env.note(&format!("next: nodeimg validate {}", file.display()));
    Ok(Exit::Ok)
}

/// The example with a first line saying where it came from and what to do.
fn starter(e: &Example) -> String {
    format!(
        "# Starter from `nodeimg init --example {}`: edit it for your node, then\n\
         # `nodeimg validate` it. `nodeimg schema` documents every field.\n{}",
        e.name, e.text
    )
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(crate::atomic::parent_dir(path))?;
    crate::atomic::write_file(path, bytes)
}
