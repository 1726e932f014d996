//! Property tests: laws that must hold for every input, checked on generated
//! ones (proptest shrinks a failure to a minimal case and prints it).
//!
//! - escaping: a string written by `toml_string`, `yaml_string` or
//!   `yaml_block_text` reads back as itself through a real parser;
//! - `Version`: a total order consistent with equality (`550.54 == 550.54.0`);
//! - `Quantity`, `Duration`, `Percent`: parse → display → parse keeps the value,
//!   and different spellings of one value are equal;
//! - `YamlPath`: parse reads what display writes;
//! - the blueprint id: reordered keys and spelled-out defaults do not change it;
//! - `select::glob` agrees with the regular expression it stands for.

use nodeimg::blueprint::value::{Duration, Percent, Quantity, Version};
use nodeimg::blueprint::yaml_path::{Segment, YamlPath};
use nodeimg::blueprint::{compat::Matrix, load_bytes, schema, source};
use nodeimg::render::escape::toml_string;
use nodeimg::verify::checks::select::glob;
use nodeimg::yaml_text::{yaml_block_text, yaml_string};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::cmp::Ordering;

use crate::support::{EXAMPLES, Variant};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Failures are reported with their minimal input; no files are written.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------- escaping

/// The value at `k` of a one-key YAML document, read by the project's loader.
fn yaml_value_of(doc: &str) -> Value {
    let parsed = source::parse(doc).unwrap_or_else(|e| panic!("{doc:?}: {}", e.message));
    parsed.value
}

/// Any JSON value the renderer writes as YAML (no floats: their text is not unique).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-z.:/ -]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn toml_strings_read_back(s in any::<String>()) {
        let doc = format!("k = {}\n", toml_string(&s));
        let table: toml::Table = toml::from_str(&doc).map_err(|e| TestCaseError::fail(format!("{doc:?}: {e}")))?;
        prop_assert_eq!(table["k"].as_str(), Some(s.as_str()));
    }

    #[test]
    fn yaml_strings_read_back(s in any::<String>()) {
        let doc = format!("k: {}\n", yaml_string(&s));
        prop_assert_eq!(yaml_value_of(&doc), json!({ "k": s }));
    }

    #[test]
    fn yaml_strings_that_look_like_other_scalars_stay_strings(
        s in "(-?[0-9]{1,4}(\\.[0-9]{0,3})?|[Tt]rue|[Ff]alse|[Yy]es|[Nn]o|[Oo]n|[Oo]ff|null|~|0x1F|0o17|\\.inf|\\.nan|[0-9]{4}-[0-9]{2}-[0-9]{2})"
    ) {
        let doc = format!("k: {}\n", yaml_string(&s));
        prop_assert_eq!(yaml_value_of(&doc), json!({ "k": s }));
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn yaml_blocks_read_back(v in json_value()) {
        // A document is a mapping; the value sits under one key.
        let whole = json!({ "root": v });
        let text = yaml_block_text(&whole, 0);
        prop_assert_eq!(yaml_value_of(&text), whole, "{}", text);
    }
}

// ---------------------------------------------------------------- versions

fn version() -> impl Strategy<Value = Version> {
    "v?[0-9]{1,3}([.-]([0-9]{1,3}|[a-z]{1,3})){0,4}"
        .prop_map(|s| s.parse::<Version>().unwrap_or_else(|e| panic!("{s}: {e}")))
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn versions_are_totally_ordered(a in version(), b in version(), c in version()) {
        // Antisymmetric, and equality is exactly "neither is greater".
        prop_assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
        prop_assert_eq!(a == b, a.cmp(&b) == Ordering::Equal);
        prop_assert_eq!(a.partial_cmp(&b), Some(a.cmp(&b)));
        // Transitive.
        if a <= b && b <= c {
            prop_assert!(a <= c, "{a} <= {b} <= {c}, but not {a} <= {c}");
        }
        if a == b && b == c {
            prop_assert_eq!(&a, &c);
        }
    }

    #[test]
    fn a_trailing_zero_or_a_v_changes_no_version(a in version()) {
        let zero: Version = format!("{a}.0").parse().unwrap();
        prop_assert_eq!(&zero, &a);
        let body = a.as_str().strip_prefix('v').unwrap_or(a.as_str());
        let v: Version = format!("v{body}").parse().unwrap();
        prop_assert_eq!(&v, &a);
        // Display keeps the text as written.
        let back: Version = a.to_string().parse().unwrap();
        prop_assert_eq!(back.as_str(), a.as_str());
    }

    #[test]
    fn a_greater_last_number_is_a_greater_version(prefix in "[0-9]{1,3}(\\.[0-9]{1,3}){0,3}", n in 0u64..1000) {
        let lo: Version = format!("{prefix}.{n}").parse().unwrap();
        let hi: Version = format!("{prefix}.{}", n + 1).parse().unwrap();
        prop_assert!(lo < hi);
    }
}

#[test]
fn sorting_versions_agrees_with_every_pair() {
    let mut all: Vec<Version> = [
        "550.54",
        "550.54.0",
        "550.54.14",
        "550.127.05",
        "1.0rc1",
        "1.0",
        "v1.0.0",
        "5.15.0-126-generic",
        "5.15.0-91-generic",
        "96.00.74.00.01",
        "12.4",
        "12.4.1",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    all.sort();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i..] {
            assert!(a <= b, "{a} sorted before {b}");
        }
    }
}

// ---------------------------------------------------------------- quantities, durations, percentages

const BINARY: &[(&str, i128)] = &[
    ("Ki", 1 << 10),
    ("Mi", 1 << 20),
    ("Gi", 1 << 30),
    ("Ti", 1 << 40),
    ("Pi", 1 << 50),
];
const DECIMAL: &[(&str, i128)] = &[
    ("k", 1_000),
    ("M", 1_000_000),
    ("G", 1_000_000_000),
    ("T", 1_000_000_000_000),
];

fn quantity(s: &str) -> Quantity {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn quantities_from_bytes_read_back(bytes in 0i128..(1 << 52)) {
        let q = Quantity::from_bytes(bytes);
        let back = quantity(&q.to_string());
        prop_assert_eq!(back.units_ceil(), bytes, "{}", q);
        prop_assert_eq!(&back, &q);
    }

    #[test]
    fn quantities_from_millis_read_back(m in 0i128..1_000_000_000) {
        let q = Quantity::from_millis(m);
        prop_assert_eq!(quantity(&q.to_string()).millis_ceil(), m, "{}", q);
    }

    #[test]
    fn a_suffix_is_its_multiplier(n in 0i128..1_000_000, i in 0usize..BINARY.len(), j in 0usize..DECIMAL.len()) {
        let (bin, bm) = BINARY[i];
        prop_assert_eq!(quantity(&format!("{n}{bin}")), quantity(&(n * bm).to_string()));
        let (dec, dm) = DECIMAL[j];
        prop_assert_eq!(quantity(&format!("{n}{dec}")), quantity(&(n * dm).to_string()));
        prop_assert_eq!(quantity(&format!("{n}m")), quantity(&format!("{n}e-3")));
    }

    #[test]
    fn a_decimal_point_is_an_exponent(int in 0u32..100_000, frac in "[0-9]{1,6}") {
        let dotted = quantity(&format!("{int}.{frac}"));
        let exp = quantity(&format!("{int}{frac}e-{}", frac.len()));
        prop_assert_eq!(&dotted, &exp);
        prop_assert_eq!(quantity(&dotted.to_string()), dotted);
        // The sign flips the value and nothing else.
        prop_assert_eq!(quantity(&format!("-{int}.{frac}")).nanos(), -exp.nanos());
    }

    #[test]
    fn durations_add_their_parts(w in 0u128..10, d in 0u128..10, h in 0u128..100, m in 0u128..100, s in 0u128..100, ms in 0u128..1000) {
        let text = format!("{w}w{d}d{h}h{m}m{s}s{ms}ms");
        let parsed: Duration = text.parse().unwrap();
        let secs = (((w * 7 + d) * 24 + h) * 60 + m) * 60 + s;
        prop_assert_eq!(parsed.nanos(), secs * 1_000_000_000 + ms * 1_000_000);
        prop_assert_eq!(parsed.to_string().parse::<Duration>().unwrap(), parsed);
    }

    #[test]
    fn percentages_read_back(thousandths in 0u32..=100_000) {
        let text = format!("{}.{:03}%", thousandths / 1000, thousandths % 1000);
        let p: Percent = text.parse().unwrap();
        prop_assert!((p.value() - f64::from(thousandths) / 1000.0).abs() < 1e-9, "{}", text);
        prop_assert_eq!(p.to_string().parse::<Percent>().unwrap(), p);
    }

    #[test]
    fn percentages_outside_0_to_100_are_refused(x in 100.001f64..1e6) {
        let above = format!("{x}%");
        let below = format!("-{x}%");
        prop_assert!(above.parse::<Percent>().is_err(), "{} was taken", above);
        prop_assert!(below.parse::<Percent>().is_err(), "{} was taken", below);
    }
}

// ---------------------------------------------------------------- paths

fn segment() -> impl Strategy<Value = Segment> {
    prop_oneof![
        "[a-zA-Z0-9_-]{1,8}".prop_map(Segment::Key),
        any::<String>().prop_map(Segment::Key),
        "[a-z.\\[\\]\"\\\\/ ]{0,8}".prop_map(Segment::Key),
        (0usize..1000).prop_map(Segment::Index),
    ]
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn paths_read_back_from_their_text(segments in prop::collection::vec(segment(), 1..6)) {
        let path = segments.iter().fold(YamlPath::root(), |p, s| match s {
            Segment::Key(k) => p.key(k.clone()),
            Segment::Index(i) => p.index(*i),
        });
        let text = path.to_string();
        prop_assert_eq!(YamlPath::parse(&text), path, "{}", text);
    }
}

// ---------------------------------------------------------------- blueprint id

/// `v` as JSON text with each mapping's keys in an order drawn from `seed`.
fn shuffled_json(v: &Value, seed: &mut u64, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            for i in (1..keys.len()).rev() {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                keys.swap(i, (*seed >> 33) as usize % (i + 1));
            }
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                shuffled_json(&map[k], seed, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                shuffled_json(item, seed, out);
            }
            out.push(']');
        }
        leaf => out.push_str(&leaf.to_string()),
    }
}

fn id_of(name: &str, text: &str) -> String {
    let file = crate::support::root()
        .join("blueprints")
        .join(format!("{name}.yaml"));
    load_bytes(text.as_bytes(), &file, file.parent(), &Matrix::builtin())
        .unwrap_or_else(|d| panic!("{name}: {d:?}"))
        .blueprint
        .id()
        .to_owned()
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn reordered_keys_keep_the_blueprint_id(which in 0usize..EXAMPLES.len(), mut seed in any::<u64>()) {
        let name = EXAMPLES[which];
        let variant = Variant::of(name);
        let original = id_of(name, &variant.text());
        let mut text = String::new();
        shuffled_json(&serde_json::from_str(&variant.text()).unwrap(), &mut seed, &mut text);
        prop_assert_eq!(id_of(name, &text), original);
    }
}

/// Follows `$ref`s and takes the non-null branch of an optional (`anyOf [T, null]`).
fn resolve<'s>(root: &'s Value, mut node: &'s Value) -> &'s Value {
    loop {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            node = root
                .pointer(r.trim_start_matches('#'))
                .expect("a $ref resolves");
        } else if let Some(alts) = node.get("anyOf").and_then(Value::as_array) {
            match alts.iter().find(|a| a.get("type") != Some(&json!("null"))) {
                Some(a) => node = a,
                None => return node,
            }
        } else {
            return node;
        }
    }
}

/// Every field the schema gives a default that `doc` leaves out, with that default.
fn absent_defaults(
    root: &Value,
    schema: &Value,
    doc: &Value,
    at: &YamlPath,
    out: &mut Vec<(YamlPath, Value)>,
) {
    let schema = resolve(root, schema);
    match doc {
        Value::Object(map) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (key, sub) in props {
                let here = at.key(key.clone());
                match map.get(key) {
                    Some(child) => absent_defaults(root, sub, child, &here, out),
                    None => {
                        if let Some(d) = sub
                            .get("default")
                            .or_else(|| resolve(root, sub).get("default"))
                        {
                            out.push((here, d.clone()));
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    absent_defaults(root, item_schema, item, &at.index(i), out);
                }
            }
        }
        _ => {}
    }
}

#[test]
fn spelled_out_defaults_keep_the_blueprint_id() {
    let root = schema::document();
    let mut checked = 0;
    for name in EXAMPLES {
        let variant = Variant::of(name);
        let original = variant.load().id().to_owned();
        let doc: Value = serde_json::from_str(&variant.text()).unwrap();
        let mut defaults = Vec::new();
        absent_defaults(&root, &root, &doc, &YamlPath::root(), &mut defaults);
        assert!(
            !defaults.is_empty(),
            "{name}: no absent field with a default"
        );
        let mut all = variant.clone();
        for (path, value) in &defaults {
            let one = variant.clone().set_at(path, value.clone());
            // A default may be refused next to another field (a rule ties them);
            // what loads must mean the same blueprint.
            if let Ok(bp) = one.try_load() {
                assert_eq!(bp.id(), original, "{name}: spelling out {path}: {value}");
                all = all.set_at(path, value.clone());
                checked += 1;
            }
        }
        assert_eq!(
            all.load().id(),
            original,
            "{name}: every default spelled out"
        );
    }
    assert!(
        checked >= 20,
        "only {checked} defaults could be spelled out"
    );
}

// ---------------------------------------------------------------- check selection

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn glob_is_its_regular_expression(pattern in "[ab.*]{0,8}", text in "[ab.]{0,10}") {
        let re = format!(
            "(?s)^{}$",
            pattern.split('*').map(regex::escape).collect::<Vec<_>>().join(".*")
        );
        let want = regex::Regex::new(&re).unwrap().is_match(&text);
        prop_assert_eq!(glob(&pattern, &text), want, "{} against {}", pattern, text);
    }
}

#[test]
fn a_glob_without_stars_is_equality() {
    assert!(glob("gpu.count", "gpu.count"));
    assert!(!glob("gpu.count", "gpu.counts"));
    assert!(glob("*", ""));
}
