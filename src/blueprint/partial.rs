//! One-pass validation: the semantic rules also run over a file that has
//! structural errors, so a user sees every problem at once instead of the
//! rule errors only after the last schema error is fixed.
//!
//! The values the schema check faulted are left out of a copy of the
//! document; when the rest still reads as the typed model, the rules run on
//! it. A rule finding that touches a left-out value (its path is on, above or
//! below one) is dropped: it would judge a default that stands in for what
//! the user wrote. When the rest does not read (a faulty value was required,
//! a required field is missing), only the structural errors are reported:
//! leaving out the whole section instead would make the rules report its
//! absence everywhere else.

use serde_json::Value;

use super::diagnostic::{Collector, Diagnostic};
use super::model::RawBlueprint;
use super::yaml_path::{Segment, YamlPath};

/// Rule diagnostics for `doc` with the values at `faulty` left out, or none
/// when what is left is not a blueprint.
pub fn rule_findings(
    doc: &Value,
    faulty: &[YamlPath],
    run: impl FnOnce(&RawBlueprint, &mut Collector<'_>),
    out: &mut Collector<'_>,
) {
    let mut pruned = doc.clone();
    for p in faulty {
        remove(&mut pruned, p);
    }
    // Only the faulty values go: when one was required, what is left is not
    // a blueprint, and leaving out its whole section instead would make the
    // rules report that section's absence everywhere else.
    let Ok(raw) = serde_json::from_value::<RawBlueprint>(pruned) else {
        return;
    };
    let before = out.items.len();
    run(&raw, out);
    let found: Vec<Diagnostic> = out.items.drain(before..).collect();
    out.items.extend(
        found
            .into_iter()
            .filter(|d| !faulty.iter().any(|p| related(p, &d.path))),
    );
}

/// The value at `path` removed from its mapping or list; false when there
/// was none.
fn remove(doc: &mut Value, path: &YamlPath) -> bool {
    let Some((last, parents)) = path.segments().split_last() else {
        return false;
    };
    let mut cur = doc;
    for seg in parents {
        let next = match seg {
            Segment::Key(k) => cur.get_mut(k.as_str()),
            Segment::Index(i) => cur.get_mut(*i),
        };
        match next {
            Some(n) => cur = n,
            None => return false,
        }
    }
    match (last, cur) {
        (Segment::Key(k), Value::Object(o)) => o.remove(k).is_some(),
        // A list item is replaced by nothing rather than shifting the later
        // items' indexes (their paths name them); serde then refuses the
        // null, and the rules do not run.
        (Segment::Index(i), Value::Array(a)) if *i < a.len() => {
            a[*i] = Value::Null;
            true
        }
        _ => false,
    }
}

/// True when one path lies on the other (equal, above or below).
fn related(a: &YamlPath, b: &YamlPath) -> bool {
    let (a, b) = (a.segments(), b.segments());
    a.starts_with(b) || b.starts_with(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_on_one_line_are_related() {
        let p = YamlPath::parse;
        assert!(related(&p("a.b"), &p("a.b.c")));
        assert!(related(&p("a.b.c"), &p("a.b")));
        assert!(related(&p("a.b"), &p("a.b")));
        assert!(!related(&p("a.b"), &p("a.c")));
        assert!(related(&YamlPath::root(), &p("a")));
    }

    #[test]
    fn removing_a_nested_key_and_a_list_item() {
        let mut v = serde_json::json!({"a": {"b": 1, "c": [1, 2]}});
        assert!(remove(&mut v, &YamlPath::parse("a.b")));
        assert!(remove(&mut v, &YamlPath::parse("a.c[1]")));
        assert!(!remove(&mut v, &YamlPath::parse("a.x.y")));
        assert_eq!(v, serde_json::json!({"a": {"c": [1, null]}}));
    }
}
