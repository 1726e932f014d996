//! The floors of the house (README, Architecture): every top-level module of `src/` sits
//! on one floor and imports only modules on the floors below it, so that imports run one
//! way, from `command` down to the leaves. A new module is given its floor here, which is
//! the rule it then follows. Unit tests (`#[cfg(test)]` modules) may read any floor; the
//! code that ships may not. What counts as an import is `support/import_graph.rs`'s edge.

use crate::support::import_graph::{Graph, crate_of};
use crate::support::root;
use std::collections::BTreeMap;
use std::path::Path;

/// Lowest first. The README's Architecture section shows the same table.
const FLOORS: &[&[&str]] = &[
    &[
        "atomic",
        "canonical_json",
        "fault",
        "features",
        "input",
        "line_error",
        "time",
        "tree",
        "yaml_text",
    ],
    &["overlay", "stdio"],
    &["blueprint"],
    &["k8s", "package"],
    &["trust"],
    &["verify"],
    &["accept", "render"],
    &["diff", "golden"],
    &["apply", "rollout"],
    &["cli"],
    &["command"],
];

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`).
fn module_of(file: &Path) -> Option<String> {
    let first = file.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_owned())
}

/// What breaks the floors: modules given no floor, and each import of a module on the
/// same floor or above, with the line that makes it.
fn broken(graph: &Graph, floors: &[&[&str]]) -> Vec<String> {
    let floor: BTreeMap<&str, usize> = floors
        .iter()
        .enumerate()
        .flat_map(|(n, names)| names.iter().map(move |m| (*m, n)))
        .collect();
    let mut problems = Vec::new();
    let mut unplaced: Vec<String> = graph
        .files()
        .filter_map(module_of)
        .filter(|m| !floor.contains_key(m.as_str()))
        .collect();
    unplaced.dedup();
    for m in unplaced {
        problems.push(format!("module `{m}` has no floor"));
    }
    for (from, to, why) in graph.code_edges() {
        let (Some(a), Some(b)) = (module_of(from), module_of(to)) else {
            continue;
        };
        if a == b {
            continue;
        }
        let (Some(&fa), Some(&fb)) = (floor.get(a.as_str()), floor.get(b.as_str())) else {
            continue;
        };
        if fb >= fa {
            problems.push(format!(
                "src/{}:{} ({}, floor {fa}) imports src/{} ({}, floor {fb}): {}",
                from.display(),
                why.line,
                a,
                to.display(),
                b,
                why.path
            ));
        }
    }
    problems
}

#[test]
fn every_module_imports_only_from_the_floors_below() {
    let graph = Graph::read(&root().join("src"));
    let problems = broken(&graph, FLOORS);
    assert!(
        problems.is_empty(),
        "the floors are broken (move what both need below both, or give a new module its \
         floor here and in the README):\n{}",
        problems.join("\n")
    );
}

#[test]
fn an_import_upwards_sideways_or_from_an_unplaced_module_is_named() {
    let (_dir, graph) = crate_of(&[
        (
            "lib.rs",
            "pub mod low;\npub mod mid;\npub mod high;\npub mod side;\npub mod new;\n",
        ),
        ("low.rs", "pub fn f() { crate::high::g() }\n"),
        (
            "mid/mod.rs",
            "pub mod part;\nuse crate::low::f;\n#[cfg(test)]\nmod tests {\n    use crate::high::g;\n}\n",
        ),
        ("mid/part.rs", "use crate::side::S;\n"),
        ("high.rs", "pub fn g() {}\nuse crate::mid::part;\n"),
        ("side.rs", "pub struct S;\n"),
        ("new.rs", ""),
    ]);
    let problems = broken(&graph, &[&["low"], &["mid", "side"], &["high"]]);
    assert_eq!(
        problems,
        [
            "module `new` has no floor",
            "src/low.rs:1 (low, floor 0) imports src/high.rs (high, floor 2): crate::high::g",
            "src/mid/part.rs:1 (mid, floor 1) imports src/side.rs (side, floor 1): crate::side::S",
        ]
    );
}
