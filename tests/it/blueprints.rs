//! The example blueprints: every one is valid; ids are stable across runs,
//! key order and spelled-out defaults, and change when meaning changes; the
//! published JSON Schema is a valid schema that accepts every example.

use std::path::{Path, PathBuf};

use nodeimg::blueprint::compat::Matrix;
use nodeimg::blueprint::{load_bytes, load_file, schema, source};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    v.sort();
    v
}

fn base() -> (String, PathBuf) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/valid/gpu-base.yaml");
    (std::fs::read_to_string(&p).unwrap(), p)
}

fn id_of(text: &str) -> String {
    let (_, p) = base();
    match load_bytes(text.as_bytes(), &p, None, &Matrix::builtin()) {
        Ok(l) => l.blueprint.id().to_string(),
        Err(d) => panic!(
            "{}",
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

#[test]
fn every_example_is_valid_without_warnings() {
    let files = examples();
    assert!(files.len() >= 3);
    for f in files {
        let loaded = load_file(&f, &Matrix::builtin()).unwrap_or_else(|d| {
            panic!(
                "{}: {}",
                f.display(),
                d.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        });
        assert!(
            loaded.warnings.is_empty(),
            "{}: {:?}",
            f.display(),
            loaded.warnings
        );
        assert!(loaded.blueprint.id().starts_with("sha256:") && loaded.blueprint.id().len() == 71);
    }
}

#[test]
fn id_is_stable_across_runs_and_key_order() {
    let (text, _) = base();
    let a = id_of(&text);
    assert_eq!(a, id_of(&text));
    // Same document, keys of every mapping in reverse order.
    let value: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    fn reverse(v: serde_yaml::Value) -> serde_yaml::Value {
        match v {
            serde_yaml::Value::Mapping(m) => {
                let mut items: Vec<_> = m.into_iter().collect();
                items.reverse();
                serde_yaml::Value::Mapping(
                    items.into_iter().map(|(k, v)| (k, reverse(v))).collect(),
                )
            }
            serde_yaml::Value::Sequence(s) => {
                serde_yaml::Value::Sequence(s.into_iter().map(reverse).collect())
            }
            other => other,
        }
    }
    let reordered = serde_yaml::to_string(&reverse(value)).unwrap();
    assert_ne!(reordered, text);
    assert_eq!(a, id_of(&reordered));
}

#[test]
fn id_ignores_spelled_out_defaults_and_comments() {
    let (text, _) = base();
    let a = id_of(&text);
    let with_defaults = text
        .replace(
            "  cdi:\n    generator: nvidia-ctk\n",
            "  cdi:\n    enabled: true\n    generator: nvidia-ctk\n    rollback: keep-previous\n",
        )
        .replace("kubernetes:\n", "# a comment\nkubernetes:\n");
    assert_ne!(with_defaults, text);
    assert_eq!(a, id_of(&with_defaults));
}

#[test]
fn id_changes_when_meaning_changes() {
    let (text, _) = base();
    let a = id_of(&text);
    assert_ne!(a, id_of(&text.replace("maxPods: 110", "maxPods: 120")));
    assert_ne!(
        a,
        id_of(&text.replace("5.15.0-171-generic", "5.15.0-172-generic"))
    );
}

#[test]
fn published_schema_is_valid_and_accepts_every_example() {
    let doc = schema::document();
    assert!(
        jsonschema::meta::is_valid(&doc),
        "the schema must satisfy its metaschema"
    );
    let validator = jsonschema::validator_for(&doc).unwrap();
    for f in examples() {
        let text = std::fs::read_to_string(&f).unwrap();
        let mut parsed = source::parse(&text).unwrap();
        schema::drop_nulls(&mut parsed.value);
        let errors: Vec<String> = validator
            .iter_errors(&parsed.value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
    }
    // And it rejects a blueprint with an unknown field.
    let (text, _) = base();
    let bad = source::parse(&text.replace("maxPods: 110", "maxPod: 110")).unwrap();
    assert!(!validator.is_valid(&bad.value));
}

#[test]
fn reference_in_readme_matches_the_schema() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = "<!-- blueprint-reference:start -->\n";
    let end = "<!-- blueprint-reference:end -->";
    let a = readme
        .find(start)
        .expect("README has the reference start marker")
        + start.len();
    let b = readme
        .find(end)
        .expect("README has the reference end marker");
    assert_eq!(
        &readme[a..b],
        schema::reference_markdown(),
        "README's blueprint reference is stale: run scripts/update-readme-reference"
    );
}
