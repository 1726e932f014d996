//! `nodeimg man -o DIR`: roff man pages from the clap definitions, one for
//! the tool and one per subcommand, nested ones included (`nodeimg-rollout-plan.1`). A
//! page is named with dashes, as man(1) finds it, and its SYNOPSIS says what one types
//! (`nodeimg rollout plan`).

use clap::CommandFactory;

use super::{Env, Exit, OrUnusable, Outcome};
use crate::cli::{Cli, ManArgs};

pub fn run(args: &ManArgs, env: &mut Env<'_>) -> Outcome {
    std::fs::create_dir_all(&args.output)
        .unusable_at(format_args!("cannot create {}", args.output.display()))?;
    let cmd = Cli::command();
    let mut pages = vec![("nodeimg".to_string(), cmd.clone())];
    add_pages(&cmd, "nodeimg", &mut pages);
    for (name, page) in pages {
        let mut buf = Vec::new();
        clap_mangen::Man::new(page)
            .render(&mut buf)
            .unusable_at(format_args!("cannot render the man page {name}"))?;
        let path = args.output.join(format!("{name}.1"));
        crate::atomic::write_file(&path, &buf)
            .unusable_at(format_args!("cannot write {}", path.display()))?;
        env.note(&format!("wrote {}", path.display()));
    }
    Ok(Exit::Ok)
}

/// A page for every subcommand under `parent` (whose command line is `line`), depth first;
/// clap's own `help` has none.
fn add_pages(parent: &clap::Command, line: &str, pages: &mut Vec<(String, clap::Command)>) {
    for sub in parent.get_subcommands().filter(|s| s.get_name() != "help") {
        let line = format!("{line} {}", sub.get_name());
        let name = line.replace(' ', "-");
        let page = sub
            .clone()
            .display_name(name.clone())
            .bin_name(line.clone());
        pages.push((name, page));
        add_pages(sub, &line, pages);
    }
}
