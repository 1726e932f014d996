//! What a new user meets before any blueprint of their own: a starter from
//! the embedded examples (`init`), the long `--version`, and output into a
//! pipe that closes early (`schema | head`).

use std::io::Read;
use std::process::Stdio;

use crate::support::{cmd, nodeimg, root, stderr, stdout};

fn example_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("blueprints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".yaml").map(str::to_string))
        .collect();
    names.sort();
    names
}

#[test]
fn init_lists_every_example_in_blueprints() {
    let o = nodeimg(&["init", "--list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let listed: Vec<String> = stdout(&o)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(listed, example_names());
}

#[test]
fn every_starter_validates_where_init_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    for name in example_names() {
        let file = dir.path().join(&name).join("bp.yaml");
        let o = nodeimg(&["init", "--example", &name, "-o", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let o = nodeimg(&["validate", file.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
    // A second init into the same place refuses and changes nothing.
    let file = dir.path().join("h100-sxm-ubuntu/bp.yaml");
    std::fs::write(&file, "mine\n").unwrap();
    let o = nodeimg(&[
        "init",
        "--example",
        "h100-sxm-ubuntu",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not overwriting"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
}

#[test]
fn init_of_an_unknown_example_names_the_examples() {
    let o = nodeimg(&["init", "--example", "h200"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("h100-sxm-ubuntu"), "{}", stderr(&o));
    let o = nodeimg(&["init", "--example", "cpu-minimal"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("kind: NodeBlueprint"));
}

#[test]
fn the_readme_counts_the_examples_it_ships() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let words = [
        "one", "two", "three", "four", "five", "six", "seven", "eight",
    ];
    let n = example_names().len();
    let said = format!("See `blueprints/` for {} complete", words[n - 1]);
    assert!(
        readme.replace('\n', " ").contains(&said),
        "README does not say `{said}`"
    );
}

#[test]
fn schema_into_a_pipe_closed_early_is_not_an_error() {
    let mut child = cmd()
        .arg("schema")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The schema is larger than a pipe's buffer: read one byte and close.
    let mut out = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    out.read_exact(&mut one).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn long_version_names_commit_features_and_target() {
    let o = nodeimg(&["--version"]);
    let text = stdout(&o);
    assert!(
        text.starts_with(&format!("nodeimg {}\n", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no `{name}:` in {text}"))
            .to_string()
    };
    let commit = field("commit");
    assert!(
        commit == "unknown" || commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{commit}"
    );
    let features = field("features");
    assert_eq!(
        features.contains("push"),
        cfg!(feature = "push"),
        "{features}"
    );
    assert_eq!(
        features.contains("kube"),
        cfg!(feature = "kube"),
        "{features}"
    );
    assert!(field("target").contains("linux"), "{text}");
    // -V stays one line, for scripts.
    assert_eq!(stdout(&nodeimg(&["-V"])).lines().count(), 1);
}
