//! `nodeimg man -o DIR`: roff man pages from the clap definitions, one for
//! the tool and one per subcommand.

use clap::CommandFactory;

use super::{Env, exit};
use crate::cli::{Cli, ManArgs};

pub fn run(args: &ManArgs, env: &mut Env<'_>) -> u8 {
    if let Err(e) = std::fs::create_dir_all(&args.output) {
        return env.fail(&format!("cannot create {}: {e}", args.output.display()));
    }
    let cmd = Cli::command();
    let mut pages = vec![("nodeimg".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        let name = format!("nodeimg-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    for (name, page) in pages {
        let mut buf = Vec::new();
        if let Err(e) = clap_mangen::Man::new(page).render(&mut buf) {
            return env.fail(&format!("cannot render the man page {name}: {e}"));
        }
        let path = args.output.join(format!("{name}.1"));
        if let Err(e) = crate::atomic::write_file(&path, &buf) {
            return env.fail(&format!("cannot write {}: {e}", path.display()));
        }
        env.note(&format!("wrote {}", path.display()));
    }
    exit::OK
}
