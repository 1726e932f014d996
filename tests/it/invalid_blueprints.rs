//! Every file in tests/fixtures/invalid is a broken blueprint whose trailing
//! `# expect: code | path | line:col | message` lines name the errors it
//! must produce — no more, no fewer. Expectations sit after the content so
//! they never shift its line numbers.

use std::path::{Path, PathBuf};

use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::diagnostic::{Diagnostic, Severity};
use nodeimg::blueprint::load_file;

struct Expect {
    code: String,
    path: Option<String>,
    at: Option<(usize, usize)>,
    message: String,
}

fn expectations(text: &str) -> Vec<Expect> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# expect: "))
        .map(|l| {
            let f: Vec<&str> = l.splitn(4, " | ").collect();
            assert_eq!(f.len(), 4, "malformed expectation: {l}");
            let at = (f[2] != "-").then(|| {
                let (a, b) = f[2].split_once(':').expect("line:col");
                (a.parse().unwrap(), b.parse().unwrap())
            });
            Expect {
                code: f[0].to_string(),
                path: (f[1] != "-").then(|| f[1].to_string()),
                at,
                message: f[3].to_string(),
            }
        })
        .collect()
}

fn matches(e: &Expect, d: &Diagnostic) -> bool {
    let path_ok = match e.path.as_deref() {
        None => true,
        Some(".") => d.path.is_root(),
        Some(p) => d.path.to_string() == p,
    };
    d.code == e.code
        && path_ok
        && e.at
            .is_none_or(|(l, c)| d.line == Some(l) && d.column == Some(c))
        && d.message.contains(&e.message)
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/invalid");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_invalid_fixture_yields_exactly_its_expected_errors() {
    let matrix = Matrix::builtin();
    let files = fixtures();
    assert!(files.len() >= 40, "only {} invalid fixtures", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        let expects = expectations(&text);
        assert!(
            !expects.is_empty(),
            "{} has no `# expect:` line",
            file.display()
        );
        let diags = match load_file(file, &matrix) {
            Ok(_) => {
                failures.push(format!("{}: loaded without errors", file.display()));
                continue;
            }
            Err(d) => d,
        };
        let errors: Vec<&Diagnostic> = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        let mut used = vec![false; errors.len()];
        for e in &expects {
            match errors
                .iter()
                .enumerate()
                .find(|(i, d)| !used[*i] && matches(e, d))
            {
                Some((i, _)) => used[i] = true,
                None => failures.push(format!(
                    "{}: no error matches `{} | {} | {:?} | {}`; got:\n    {}",
                    file.display(),
                    e.code,
                    e.path.as_deref().unwrap_or("-"),
                    e.at,
                    e.message,
                    errors
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join("\n    ")
                )),
            }
        }
        for (i, d) in errors.iter().enumerate() {
            if !used[i] {
                failures.push(format!("{}: unexpected error: {d}", file.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn binary_garbage_is_refused_at_its_first_bad_byte() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/invalid/binary-garbage.bin");
    let diags = load_file(&file, &Matrix::builtin()).unwrap_err();
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, "unreadable");
    assert_eq!((diags[0].line, diags[0].column), (Some(1), Some(1)));
    assert!(
        diags[0]
            .message
            .contains("not UTF-8 text (invalid byte at offset 0)"),
        "{}",
        diags[0]
    );
}

#[test]
fn a_ten_megabyte_file_is_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.yaml");
    let mut text = String::from("apiVersion: nodeimg.dev/v1alpha1\nkind: NodeBlueprint\n");
    while text.len() < 10 * 1024 * 1024 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&file, &text).unwrap();
    let diags = load_file(&file, &Matrix::builtin()).unwrap_err();
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].message.contains(
            "file is larger than 4194304 bytes; a blueprint may be at most 4194304 bytes"
        ),
        "{}",
        diags[0]
    );
}

#[test]
fn a_missing_file_is_a_located_error_not_a_panic() {
    let diags =
        load_file(Path::new("/nonexistent/blueprint.yaml"), &Matrix::builtin()).unwrap_err();
    assert_eq!(diags[0].code, "unreadable");
    assert!(diags[0].message.contains("cannot read the file"));
}

#[test]
fn cdi_as_an_injection_mode_names_the_modes_and_where_cdi_lives() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/invalid/injection-mode-cdi.yaml");
    let diags = load_file(&file, &Matrix::builtin()).unwrap_err();
    let d = diags
        .iter()
        .find(|d| d.path.to_string() == "kubernetes.deviceInjection.mode")
        .expect("an error at the mode");
    assert!(!d.message.contains("oneOf"), "{d}");
    let hint = d.hint.as_deref().unwrap_or_default();
    assert!(hint.contains("runtime.cdi"), "{d}");
    assert!(hint.contains("device-plugin"), "{d}");
}
