//! Values that pass validation render: every text value and map key of the examples,
//! extended by characters that mean something in some rendered format (quotes, `#`,
//! `%` specifiers, `$` variables, braces, escapes, blanks, separators, bidi controls),
//! either is refused at validation with its location or renders without an error. A
//! template filter refusing a value at render would mean a blueprint `validate` calls
//! good fails `build`, which is what the type of each field is there to prevent.

use nodeimg::blueprint::yaml_path::YamlPath;
use nodeimg::render::{Templates, render};
use serde_json::Value;

use crate::support::Variant;

/// Appended to each value (so the rest of it stays as valid as it was).
const PAYLOADS: &[&str] = &[
    "\"",
    "'",
    "#x",
    "%m",
    "${X}",
    "$X",
    "{",
    "}",
    "\\x20",
    "\\",
    " x",
    "\tx",
    ";x",
    "=x",
    ",x",
    "*",
    ":x",
    "|x",
    "&x",
    "<x",
    "`x`",
    "\u{202e}x",
    "]",
    "[",
];

/// Where a payload goes: a text value, or the key of a map entry (with its value).
enum Spot {
    Text(String),
    Key(String, Value),
}

/// Every text value and map key of `value`, with the YAML path of its parent or itself.
fn texts(value: &Value, at: YamlPath, out: &mut Vec<(YamlPath, Spot)>) {
    match value {
        Value::String(s) => out.push((at, Spot::Text(s.clone()))),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                texts(item, at.index(i), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                if !matches!(v, Value::Object(_) | Value::Array(_)) {
                    out.push((at.clone(), Spot::Key(k.clone(), v.clone())));
                }
                texts(v, at.key(k), out);
            }
        }
        _ => {}
    }
}

#[test]
#[ignore = "opt-in suite `valid_renders`: ~15,000 variants rendered in process, ~90 s in a debug build (cargo test -- --ignored valid_renders::)"]
fn every_value_that_validates_renders() {
    let templates = Templates::embedded();
    let mut tried = 0;
    let mut rendered = 0;
    let mut failures = Vec::new();
    for example in ["h100-sxm-ubuntu", "mi300x-rhel", "debian12-cpu"] {
        let base = Variant::of(example);
        let value: Value = serde_json::from_str(&base.text()).expect("JSON");
        let mut leaves = Vec::new();
        texts(&value, YamlPath::root(), &mut leaves);
        for (path, spot) in &leaves {
            for payload in PAYLOADS {
                let (variant, what) = match spot {
                    Spot::Text(old) => (
                        base.clone()
                            .set_at(path, Value::String(format!("{old}{payload}"))),
                        path.to_string(),
                    ),
                    Spot::Key(k, old) => (
                        base.clone()
                            .set_at(&path.key(format!("{k}{payload}")), old.clone()),
                        format!("{path} key {k}"),
                    ),
                };
                tried += 1;
                let Ok(bp) = variant.try_load() else { continue };
                match render(&bp, &templates) {
                    Ok(_) => rendered += 1,
                    Err(e) => failures.push(format!("{example}: {what} + {payload:?}: {e}")),
                }
            }
        }
    }
    assert!(
        tried > 1000 && rendered > 0,
        "tried {tried}, rendered {rendered}"
    );
    assert!(
        failures.is_empty(),
        "{} of {tried} variants validated but did not render:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
