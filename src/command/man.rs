//! `nodeimg man -o DIR`: roff man pages from the clap definitions, one for
//! the tool and one per subcommand.

use clap::CommandFactory;

use super::{Env, Exit, OrUnusable, Outcome};
use crate::cli::{Cli, ManArgs};

pub fn run(args: &ManArgs, env: &mut Env<'_>) -> Outcome {
    std::fs::create_dir_all(&args.output)
        .unusable_at(format_args!("cannot create {}", args.output.display()))?;
    let cmd = Cli::command();
    let mut pages = vec![("nodeimg".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        let name = format!("nodeimg-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
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
