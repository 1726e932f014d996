//! The README's Usage block is run, not trusted: every `nodeimg …` line in it must parse
//! with today's command line (a renamed flag or subcommand fails here), and the lines that
//! need no registry, node or cluster run for real in a folder holding the files they name,
//! and must not end in unusable arguments (exit 2). Commands after a `|` count too.

use std::path::Path;

use clap::Parser;

use crate::support::{clean, root};

/// The shell lines of the first ```sh block under `## Usage`.
fn usage_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let usage = readme
        .split("\n## Usage\n")
        .nth(1)
        .expect("README has ## Usage");
    let block = usage
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("Usage has a ```sh block");
    block.lines().map(str::to_owned).collect()
}

/// Words as sh splits them (quotes, no expansion), up to a comment; `|`, `>` and `<` end
/// a command and start the next segment.
fn segments(line: &str) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.last_mut().unwrap().push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, '|' | '>' | '<') => {
                if in_word {
                    out.last_mut().unwrap().push(std::mem::take(&mut word));
                    in_word = false;
                }
                out.push(Vec::new());
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.last_mut().unwrap().push(word);
    }
    out
}

/// Every `nodeimg …` command of the block, as its words.
fn commands() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for line in usage_lines() {
        for seg in segments(&line) {
            // `VAR=value nodeimg …`: the environment is not the command line.
            let start = seg.iter().position(|w| w == "nodeimg");
            if let Some(i) = start {
                out.push((line.clone(), seg[i..].to_vec()));
            }
        }
    }
    out
}

#[test]
fn every_usage_line_parses_with_todays_command_line() {
    let commands = commands();
    assert!(commands.len() >= 30, "only {} commands", commands.len());
    let mut failures = Vec::new();
    for (line, words) in &commands {
        if let Err(e) = nodeimg::cli::Cli::try_parse_from(words) {
            failures.push(format!(
                "{line}\n  {}",
                e.render().to_string().lines().next().unwrap_or("")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "README usage lines that do not parse:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_offline_usage_lines_run() {
    // The files the lines name, made the way a user would: from the examples.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let init = |name: &str, file: &str| {
        let o = crate::support::cmd()
            .args(["init", "--example", name, "-o"])
            .arg(d.join(file))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    init("h100-sxm-ubuntu", "blueprints/h100-sxm-ubuntu.yaml");
    for other in [
        "mi300x-rhel",
        "cpu-minimal",
        "debian12-cpu",
        "h100-sxm-debian",
    ] {
        init(other, &format!("blueprints/{other}.yaml"));
    }
    let h100 = std::fs::read_to_string(d.join("blueprints/h100-sxm-ubuntu.yaml")).unwrap();
    for (file, text) in [
        ("bp.yaml", h100.clone()),
        ("old.yaml", h100.replace("maxPods: 110", "maxPods: 100")),
        ("new.yaml", h100.clone()),
    ] {
        std::fs::write(d.join(file), text).unwrap();
    }
    std::fs::create_dir_all(d.join("my-templates")).unwrap();
    std::fs::copy(
        root().join("blueprints/matrix/site-matrix.yaml"),
        d.join("site-matrix.yaml"),
    )
    .unwrap();
    copy_dir(&d.join("blueprints/certs"), &d.join("certs"));
    copy_dir(&d.join("blueprints/overlays"), &d.join("overlays"));
    // What runs offline, with no node, registry or cluster behind it.
    let offline = |w: &[String]| {
        matches!(
            w.get(1).map(String::as_str),
            Some("init" | "validate" | "explain" | "schema" | "render" | "completions" | "golden")
        ) || (w.get(1).map(String::as_str) == Some("diff") && !w.iter().any(|a| a.contains(':')))
            || (w.get(1).map(String::as_str) == Some("verify")
                && w.iter().any(|a| a == "--explain"))
    };
    let mut ran = 0;
    let mut failures = Vec::new();
    for line in usage_lines() {
        let segs = segments(&line);
        let Some(words) = segs
            .iter()
            .find(|s| s.first().map(String::as_str) == Some("nodeimg"))
        else {
            continue;
        };
        if !offline(words) || segs.len() > 1 && line.contains('|') {
            continue;
        }
        // Redirections go to a file in the folder, never to /etc.
        let command = line
            .split(" #")
            .next()
            .unwrap()
            .replace("/etc/bash_completion.d/", "");
        let mut c = std::process::Command::new("sh");
        clean(&mut c);
        let bin = Path::new(crate::support::BIN)
            .parent()
            .unwrap()
            .display()
            .to_string();
        let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
        let o = c
            .env("PATH", path)
            .current_dir(d)
            .arg("-c")
            .arg(&command)
            .output()
            .unwrap();
        ran += 1;
        if o.status.code() == Some(2) || o.status.code().is_none() {
            failures.push(format!(
                "{command}\n  exit {:?}: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" / ")
            ));
        }
    }
    assert!(ran >= 10, "only {ran} lines ran");
    assert!(
        failures.is_empty(),
        "README usage lines that fail:\n{}",
        failures.join("\n")
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}
