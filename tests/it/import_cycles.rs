//! Imports run one way: no file of `src/` reads another that reads it back, directly or
//! around a circle. The graph and what counts as an edge are in
//! `support/import_graph.rs`; the synthetic crates below pin that definition down.

use crate::support::import_graph::{Graph, crate_of};
use crate::support::root;

#[test]
fn no_file_of_src_is_in_an_import_circle() {
    let graph = Graph::read(&root().join("src"));
    let circles = graph.circles();
    let text: String = circles
        .iter()
        .map(|c| {
            let files: Vec<String> = c.iter().map(|f| format!("src/{}", f.display())).collect();
            format!("{}\n{}", files.join(" <-> "), graph.describe(c))
        })
        .collect();
    assert!(
        circles.is_empty(),
        "files that import each other around a circle (move what both sides need below \
         them; README, Architecture):\n{text}"
    );
}

fn circles(graph: &Graph) -> Vec<Vec<String>> {
    graph
        .circles()
        .iter()
        .map(|c| c.iter().map(|f| f.display().to_string()).collect())
        .collect()
}

fn set(names: &[&str]) -> std::collections::BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn siblings_that_read_each_other_are_a_circle() {
    let (_dir, graph) = crate_of(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a.rs", "use crate::b::B;\npub struct A;\n"),
        ("b.rs", "pub struct B;\nfn f() { super::c::g(); }\n"),
        ("c.rs", "pub fn g() { let _ = crate::a::A; }\n"),
    ]);
    assert_eq!(circles(&graph), [["a.rs", "b.rs", "c.rs"]]);
    let text = graph.describe(&graph.circles()[0]);
    assert!(
        text.contains("src/b.rs:2 -> src/c.rs  (super::c::g)"),
        "{text}"
    );
}

#[test]
fn a_folder_front_and_its_files_are_not_a_circle() {
    // x/mod.rs re-exports y's type and calls into it; y reads x's own type.
    let (_dir, graph) = crate_of(&[
        ("lib.rs", "pub mod x;\n"),
        (
            "x/mod.rs",
            "mod y;\npub use y::Y;\npub struct X;\nfn f() { y::g() }\n",
        ),
        ("x/y.rs", "use super::X;\npub struct Y;\npub fn g() {}\n"),
    ]);
    assert!(circles(&graph).is_empty());
    assert_eq!(graph.edges_from("x/mod.rs"), set(&["x/y.rs"]));
    assert!(graph.edges_from("x/y.rs").is_empty());
}

#[test]
fn a_circle_through_a_folder_front_counts() {
    // x/mod.rs → y.rs (a path in code), y.rs → z.rs, z.rs → x/mod.rs (a re-export there).
    let (_dir, graph) = crate_of(&[
        ("lib.rs", "pub mod x;\npub mod z;\n"),
        (
            "x/mod.rs",
            "pub mod y;\npub struct X;\nconst F: fn() = y::f;\n",
        ),
        ("x/y.rs", "pub fn f() { crate::z::g() }\n"),
        ("z.rs", "pub fn g() {}\nuse crate::x::X;\n"),
    ]);
    assert_eq!(circles(&graph), [["x/mod.rs", "x/y.rs", "z.rs"]]);
}

#[test]
fn comments_strings_and_other_crates_are_not_edges() {
    let (_dir, graph) = crate_of(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        (
            "a.rs",
            concat!(
                "// use crate::b::B;\n",
                "/* crate::b::B /* nested */ super::b::B */\n",
                "const S: &str = \"crate::b::B\";\n",
                "const R: &str = r#\"super::b::B \"quoted\"\"#;\n",
                "const C: char = '\"';\n",
                "fn f<'a>(x: &'a str) -> std::path::PathBuf { serde_json::Value::Null; x.into() }\n",
                "macro_rules! m { () => { $crate::b::B } }\n",
            ),
        ),
        ("b.rs", "pub struct B;\nuse crate::a;\n"),
    ]);
    assert!(
        graph.edges_from("a.rs").is_empty(),
        "{:?}",
        graph.edges_from("a.rs")
    );
    assert_eq!(graph.edges_from("b.rs"), set(&["a.rs"]));
}

#[test]
fn names_brought_in_by_use_lead_to_their_files() {
    let (_dir, graph) = crate_of(&[
        ("lib.rs", "pub mod a;\npub mod c;\n"),
        (
            "a.rs",
            "use crate::c;\nuse c::d as dee;\nfn f() { c::e::g(); dee::h(); }\n",
        ),
        ("c/mod.rs", "pub mod d;\npub mod e;\n"),
        ("c/d.rs", "pub fn h() {}\n"),
        ("c/e.rs", "pub fn g() {}\n"),
    ]);
    assert_eq!(
        graph.edges_from("a.rs"),
        set(&["c/d.rs", "c/e.rs", "c/mod.rs"])
    );
}

#[test]
fn use_trees_inline_modules_and_globs() {
    let (_dir, graph) = crate_of(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
        (
            "a.rs",
            concat!(
                "use crate::{b::{self as bee}, c::*};\n",
                "pub struct A;\n",
                "#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::d::D;\n}\n",
            ),
        ),
        ("b.rs", ""),
        ("c.rs", ""),
        ("d.rs", "pub struct D;\n"),
    ]);
    assert_eq!(graph.edges_from("a.rs"), set(&["b.rs", "c.rs", "d.rs"]));
}
