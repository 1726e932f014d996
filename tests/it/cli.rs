//! The `nodeimg` binary end to end: exit codes, report formats, stdout vs
//! stderr, colour, completions and man pages.

use std::path::{Path, PathBuf};
use std::process::Output;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

use crate::support::{cmd, nodeimg};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn validate_examples_prints_ids_and_exits_zero() {
    let o = nodeimg(&[
        "validate",
        "blueprints/h100-sxm-ubuntu.yaml",
        "blueprints/mi300x-rhel.yaml",
        "blueprints/cpu-minimal.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches(": valid ").count(), 3, "{out}");
    assert!(out.contains("3 file(s): 3 valid, 0 invalid; 0 error(s), 0 warning(s)"));
    // The id printed is the library's id.
    let loaded = nodeimg::blueprint::load_file(
        &root().join("blueprints/h100-sxm-ubuntu.yaml"),
        &nodeimg::blueprint::compat::Matrix::builtin(),
    )
    .unwrap();
    assert!(out.contains(loaded.blueprint.id()));
}

#[test]
fn invalid_blueprint_exits_one_with_located_text() {
    let o = nodeimg(&["validate", "tests/fixtures/invalid/unknown-nested.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("tests/fixtures/invalid/unknown-nested.yaml:43:5: error[unknown-field]: kubernetes.kubelet.maxPod: unknown field `maxPod`"),
        "{out}"
    );
    assert!(out.contains("hint: did you mean `maxPods`?"));
}

#[test]
fn json_report_lists_every_diagnostic() {
    let o = nodeimg(&[
        "validate",
        "--format",
        "json",
        "tests/fixtures/invalid/several-unknown.yaml",
        "blueprints/cpu-minimal.yaml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["invalid"], 1);
    assert_eq!(v["valid"], 1);
    let diags = v["files"][0]["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 3);
    let paths: Vec<&str> = diags.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        ["os.patchlevel", "accelerators.cudaVersion", "system.cash"]
    );
    assert!(
        diags
            .iter()
            .all(|d| d["line"].is_u64() && d["column"].is_u64())
    );
    assert!(v["files"][1]["id"].as_str().unwrap().starts_with("sha256:"));
}

#[test]
fn strict_turns_warnings_into_failure() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/fixtures/valid/gpu-base.yaml"))
        .unwrap()
        .replace("model: H100 SXM", "model: H100 Custom");
    let f = dir.path().join("warn.yaml");
    std::fs::write(&f, text).unwrap();
    let f = f.to_str().unwrap();
    let lenient = nodeimg(&["validate", f]);
    assert_eq!(lenient.status.code(), Some(0), "{}", stdout(&lenient));
    assert!(stdout(&lenient).contains("warning[unknown-model]"));
    let strict = nodeimg(&["validate", "--strict", f]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(stdout(&strict).contains("invalid (warnings under --strict)"));
}

#[test]
fn matrix_extension_adds_a_model_and_a_bad_matrix_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let bp = dir.path().join("bp.yaml");
    std::fs::write(
        &bp,
        std::fs::read_to_string(root().join("tests/fixtures/valid/gpu-base.yaml"))
            .unwrap()
            .replace("model: H100 SXM", "model: H100 Custom")
            // kubelet's default memory.available (100Mi) is negligible on
            // this 2 TiB node and warns; --strict here is about the model.
            .replace(
                "    maxPods: 110\n",
                "    maxPods: 110\n    evictionHard: {memory.available: 2%}\n",
            ),
    )
    .unwrap();
    let m = dir.path().join("m.yaml");
    std::fs::write(
        &m,
        "schemaVersion: 1\nmodels:\n  - {vendor: nvidia, model: H100 Custom, mig: true, nvswitch: true, source: site qualification 2026-11}\n",
    )
    .unwrap();
    let o = nodeimg(&[
        "validate",
        "--strict",
        "--matrix",
        m.to_str().unwrap(),
        bp.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    std::fs::write(&m, "schemaVersion: 1\nmodels: 3\n").unwrap();
    let o = nodeimg(&[
        "validate",
        "--matrix",
        m.to_str().unwrap(),
        bp.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("m.yaml"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn verbose_adds_detail_on_stderr_only() {
    let quiet = nodeimg(&["validate", "blueprints/cpu-minimal.yaml"]);
    let loud = nodeimg(&["-v", "validate", "blueprints/cpu-minimal.yaml"]);
    assert!(quiet.stderr.is_empty());
    let err = stderr(&loud);
    assert!(
        err.contains("compatibility matrix:") && err.contains("GPU models"),
        "{err}"
    );
    assert!(
        err.contains("blueprints/cpu-minimal.yaml: checked in"),
        "{err}"
    );
    assert_eq!(
        quiet.stdout, loud.stdout,
        "the report itself does not change"
    );
}

#[test]
fn bad_arguments_exit_two() {
    assert_eq!(nodeimg(&["validate"]).status.code(), Some(2));
    assert_eq!(nodeimg(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        nodeimg(&["validate", "--format", "xml", "x.yaml"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn explain_shows_reservation_arithmetic() {
    let o = nodeimg(&["explain", "blueprints/h100-sxm-ubuntu.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    // 224 CPUs: 60 + 10 + 2×5 + 220×2.5 = 630m; memory 11 × 110 + 255 = 1465Mi.
    assert!(out.contains("630m"), "{out}");
    assert!(
        out.contains("0.25% of cores above 4 (220 × 2.5m) = 550m → 630m"),
        "{out}"
    );
    assert!(out.contains("11Mi × maxPods 110 + 255Mi = 1465Mi"), "{out}");
    assert!(out.contains("os.kernel"));
    let json = nodeimg(&["explain", "--format", "json", "blueprints/mi300x-rhel.yaml"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let derived = v["derived"].as_array().unwrap();
    let kube_mem = derived
        .iter()
        .find(|d| d["path"] == "kubernetes.kubelet.kubeReserved.memory")
        .unwrap();
    // GKE bands over 3 TiB: 1024 + 820 + 820 + 6882 + ceil(2% of 3014656) 60294.
    assert_eq!(kube_mem["value"], "69840Mi");
    let sys_mem = derived
        .iter()
        .find(|d| d["path"] == "kubernetes.kubelet.systemReserved.memory")
        .unwrap();
    assert_eq!(
        sys_mem["value"], "3005Mi",
        "EKS memory from the effective maxPods 250"
    );
}

#[test]
fn explain_of_an_invalid_blueprint_is_unusable_input() {
    let o = nodeimg(&["explain", "tests/fixtures/invalid/bad-quantity.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown suffix `TB`"));
    assert!(o.stdout.is_empty());
}

#[test]
fn schema_command_prints_json_schema_and_writes_atomically() {
    let o = nodeimg(&["schema"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["title"], "NodeBlueprint");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("schema.json");
    let o = nodeimg(&["schema", "-o", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&f).unwrap(), nodeimg(&["schema"]).stdout);
    let md = nodeimg(&["schema", "--format", "markdown"]);
    assert!(stdout(&md).contains("| `kubernetes.kubelet.maxPods` |"));
}

#[test]
fn completions_and_man_pages_come_from_the_same_definitions() {
    for shell in ["bash", "zsh", "fish"] {
        let o = nodeimg(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0));
        let out = stdout(&o);
        assert!(
            out.contains("validate") && out.contains("explain"),
            "{shell}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let o = nodeimg(&["-q", "man", "-o", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "--quiet keeps stderr empty");
    let page = std::fs::read_to_string(dir.path().join("nodeimg-validate.1")).unwrap();
    assert!(page.contains(".TH nodeimg-validate"), "{page}");
    assert!(Path::new(&dir.path().join("nodeimg.1")).exists());
    // Every subcommand at every depth has its page, whose SYNOPSIS is what one types.
    fn walk(cmd: &clap::Command, line: &str, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let line = format!("{line} {}", sub.get_name());
            out.push(line.clone());
            walk(sub, &line, out);
        }
    }
    let mut lines = Vec::new();
    walk(
        &<nodeimg::cli::Cli as clap::CommandFactory>::command(),
        "nodeimg",
        &mut lines,
    );
    assert!(lines.contains(&"nodeimg rollout plan".to_owned()));
    assert!(lines.contains(&"nodeimg accept compare".to_owned()));
    for line in lines {
        let file = dir.path().join(format!("{}.1", line.replace(' ', "-")));
        let page =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let synopsis = page.split(".SH SYNOPSIS\n").nth(1).unwrap_or_default();
        let want = format!("\\fB{}\\fR", line.replace('-', "\\-"));
        assert!(synopsis.starts_with(&want), "{line}: {synopsis:.120}");
    }
}

#[test]
fn help_shows_an_example_for_each_command() {
    for cmd in ["validate", "explain", "schema", "completions", "man"] {
        let o = nodeimg(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0));
        assert!(
            stdout(&o).contains(&format!("nodeimg {cmd}")),
            "{cmd}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn colour_only_when_asked_and_never_under_no_color() {
    let f = "tests/fixtures/invalid/unknown-nested.yaml";
    let plain = nodeimg(&["validate", f]);
    assert!(
        !stdout(&plain).contains('\x1b'),
        "not a terminal: no colour"
    );
    let forced = nodeimg(&["validate", "--color", "always", f]);
    assert!(stdout(&forced).contains("\x1b[1;31merror\x1b[0m"));
    let no_color = cmd()
        .args(["validate", "--color", "auto", f])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&no_color.stdout).contains('\x1b'));
}
