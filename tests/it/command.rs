//! The command layer end to end: exit codes of unusable input, `-` for standard input
//! and output, arguments checked by clap before anything runs, and the build's default
//! output folder.

use crate::support::verify_fixture::{self, BLUEPRINT};
use crate::support::{cmd, nodeimg, nodeimg_stdin, root, stderr, stdout};
use serde_json::Value;

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

#[test]
fn validate_of_a_missing_file_or_a_folder_is_unusable_input() {
    for path in ["blueprints/no-such-blueprint.yaml", "blueprints"] {
        let o = nodeimg(&["validate", path]);
        assert_eq!(o.status.code(), Some(2), "{path}: {}", stdout(&o));
        assert!(
            stdout(&o).contains(&format!("{path}: error[unreadable]: cannot read the file")),
            "{}",
            stdout(&o)
        );
    }
    // One unreadable file among valid ones still makes the run unusable, and the
    // report still covers every file.
    let o = nodeimg(&[
        "validate",
        "--format",
        "json",
        "blueprints/cpu-minimal.yaml",
        "missing.yaml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let report = json(&o.stdout);
    assert_eq!(report["valid"], 1);
    assert_eq!(report["invalid"], 1);
    // A file that is read but is not text is an invalid blueprint, not unusable input.
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("binary.yaml");
    std::fs::write(&binary, b"apiVersion: \xff\xfe\n").unwrap();
    let o = nodeimg(&["validate".as_ref(), binary.as_os_str()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn blueprints_are_read_from_standard_input() {
    let text = std::fs::read(root().join("blueprints/cpu-minimal.yaml")).unwrap();
    let from_file = nodeimg(&[
        "validate",
        "--format",
        "json",
        "blueprints/cpu-minimal.yaml",
    ]);
    let from_stdin = nodeimg_stdin(&["validate", "--format", "json", "-"], &text);
    assert_eq!(from_stdin.status.code(), Some(0), "{}", stdout(&from_stdin));
    let (a, b) = (json(&from_file.stdout), json(&from_stdin.stdout));
    assert_eq!(b["files"][0]["file"], "<stdin>");
    assert_eq!(a["files"][0]["id"], b["files"][0]["id"]);

    let explained = nodeimg_stdin(&["explain", "-"], &text);
    assert_eq!(explained.status.code(), Some(0), "{}", stderr(&explained));
    assert!(stdout(&explained).starts_with("cpu-minimal sha256:"));

    // Diagnostics name standard input.
    let o = nodeimg_stdin(
        &["validate", "-"],
        b"apiVersion: nodeimg.dev/v1alpha1\nkind: Nope\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("<stdin>:"), "{}", stdout(&o));

    // Standard input is read once: `diff - -` has nothing for the second side.
    let o = nodeimg_stdin(&["diff", "-", "-"], &text);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("standard input holds one blueprint"));
}

#[test]
fn schema_dash_writes_standard_output_not_a_file_named_dash() {
    let dir = tempfile::tempdir().unwrap();
    let o = cmd()
        .args(["schema", "-o", "-"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        json(&o.stdout)["title"],
        json(&nodeimg(&["schema"]).stdout)["title"]
    );
    assert!(!dir.path().join("-").exists(), "wrote a file named `-`");
}

/// The healthy fixture node: (its tree, a folder holding smi.xml).
fn fixture() -> (
    crate::support::fixture_tree::Tree,
    tempfile::TempDir,
    String,
    String,
) {
    let tree = verify_fixture::healthy_tree();
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("smi.xml");
    std::fs::write(&xml, verify_fixture::healthy_xml()).unwrap();
    let root = tree.root().to_string_lossy().into_owned();
    let xml = xml.to_string_lossy().into_owned();
    (tree, dir, root, xml)
}

#[test]
fn verify_reads_the_blueprint_from_stdin_and_writes_a_report_to_stdout() {
    let (tree, _dir, root, xml) = fixture();
    // The fixture's stand-in programs are named: nothing runs from an inspected root.
    let tools = tree.tool_args();
    let mut base = vec![
        "verify",
        "--blueprint",
        "-",
        "--root",
        &root,
        "--nvidia-smi-xml",
        &xml,
        "--timeout",
        "10",
    ];
    base.extend(tools.iter().map(String::as_str));
    let o = nodeimg_stdin(
        &[&base[..], &["--output", "json=-"]].concat(),
        BLUEPRINT.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Only the JSON report is on stdout: it replaces the text report.
    let report = json(&o.stdout);
    assert_eq!(report["outcome"], "pass");
    assert_eq!(report["blueprint"]["file"], "<stdin>");

    let o = nodeimg_stdin(
        &[&base[..], &["--record", "-"]].concat(),
        BLUEPRINT.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let record = json(&o.stdout);
    assert_eq!(record["layers"]["hardware_driver"]["result"], "pass");
    assert_eq!(
        record["result"], "incomplete",
        "layers 2-5 are still to run"
    );

    // Two things cannot share stdout.
    let o = nodeimg_stdin(
        &[&base[..], &["--output", "json=-", "--record", "-"]].concat(),
        BLUEPRINT.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("standard output"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn verify_without_a_lock_file_points_at_blueprint() {
    let lock = std::path::Path::new(nodeimg::cli::DEFAULT_LOCK);
    assert!(!lock.exists(), "this test needs a machine without {lock:?}");
    let dir = tempfile::tempdir().unwrap();
    let o = nodeimg(&["verify".as_ref(), "--root".as_ref(), dir.path().as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--blueprint FILE"), "{}", stderr(&o));
}

#[test]
fn arguments_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("oci");
    let out = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "build",
                "blueprints/cpu-minimal.yaml",
                "--compression",
                "lz4",
                "-o",
                out,
            ],
            "[possible values: zstd, gzip]",
        ),
        (
            &[
                "build",
                "blueprints/cpu-minimal.yaml",
                "--tag",
                "bad/tag",
                "-o",
                out,
            ],
            "not a valid image tag",
        ),
        (
            &["verify", "--output", "xml=out.xml"],
            "not a format (text, json, junit, prometheus, tap, summary)",
        ),
        (&["verify", "--phase", "later"], "[possible values: boot"),
        (
            &["facts", "--format", "json"],
            "unexpected argument '--format'",
        ),
    ];
    for (args, message) in cases {
        let o = nodeimg(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    assert!(
        !dir.path().join("oci").exists(),
        "a bad argument still built"
    );
}

#[cfg(feature = "push")]
#[test]
fn push_arguments_are_checked_before_the_layout_is_opened() {
    for (args, message) in [
        (
            [
                "push",
                "--timeout",
                "0",
                "no-such-layout",
                "127.0.0.1:1/a/b:c",
            ],
            "0 is not in 1..=86400",
        ),
        (
            [
                "push",
                "--timeout",
                "5",
                "no-such-layout",
                "127.0.0.1:1/Bad Ref",
            ],
            "Bad Ref",
        ),
    ] {
        let o = nodeimg(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(
            !err.contains("no-such-layout"),
            "opened the layout first: {err}"
        );
    }
}

#[test]
fn build_without_output_writes_out_slash_name() {
    let dir = tempfile::tempdir().unwrap();
    let bp = root().join("blueprints/cpu-minimal.yaml");
    let o = cmd()
        .args(["build".as_ref(), bp.as_os_str()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let layout = dir.path().join("out/cpu-minimal");
    assert!(layout.join("oci-layout").is_file(), "{}", stderr(&o));
    let index = json(&std::fs::read(layout.join("index.json")).unwrap());
    assert_eq!(
        index["manifests"][0]["digest"].as_str(),
        Some(stdout(&o).trim())
    );
}

#[test]
fn diagnostics_are_coloured_only_on_request() {
    let bad = "tests/fixtures/invalid/unknown-nested.yaml";
    let plain = nodeimg(&["validate", bad]);
    assert!(!stdout(&plain).contains('\x1b'));
    let coloured = nodeimg(&["--color", "always", "validate", bad]);
    let out = stdout(&coloured);
    assert!(
        out.contains(": \x1b[1;31merror\x1b[0m[unknown-field]: kubernetes.kubelet.maxPod"),
        "{out:?}"
    );
    // Without colour, the text is exactly the diagnostic's own rendering.
    let uncoloured: String = out
        .replace("\x1b[1;31m", "")
        .replace("\x1b[0m", "")
        .replace("\x1b[1;32m", "");
    assert_eq!(uncoloured, stdout(&plain));
}
