//! The README's "From layer to node" table says, for every blueprint field, whether
//! it configures the node, is only checked, or both. This keeps it covering each
//! field of the schema exactly once, naming no field the schema does not have.

use nodeimg::blueprint::schema;

const START: &str = "<!-- node-fields:start -->\n";
const END: &str = "<!-- node-fields:end -->";
const KINDS: &[&str] = &[
    "configures",
    "checks",
    "both",
    "cluster",
    "acceptance",
    "validated",
    "identity",
];

/// Every field path of the schema, from its generated reference table.
fn schema_fields() -> Vec<String> {
    schema::reference_markdown()
        .lines()
        .filter_map(|l| {
            l.strip_prefix("| `")?
                .split_once('`')
                .map(|(p, _)| p.to_owned())
        })
        .collect()
}

/// Whether `pattern` (a field, or `x.*` for every field under `x`) covers `field`.
fn covers(pattern: &str, field: &str) -> bool {
    match pattern.strip_suffix(".*") {
        Some(prefix) => field
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("[].")),
        None => pattern == field,
    }
}

#[test]
fn every_blueprint_field_says_what_it_does_on_the_node() {
    let readme = std::fs::read_to_string(crate::support::root().join("README.md")).unwrap();
    let a = readme
        .find(START)
        .expect("README has the node-fields start marker")
        + START.len();
    let b = readme
        .find(END)
        .expect("README has the node-fields end marker");
    let fields = schema_fields();
    assert!(
        fields.len() > 100,
        "the reference lists the schema's fields"
    );
    let leaves: Vec<&String> = fields
        .iter()
        .filter(|f| {
            !fields
                .iter()
                .any(|g| g.starts_with(&format!("{f}.")) || g.starts_with(&format!("{f}[].")))
        })
        .collect();

    let mut patterns = Vec::new();
    for row in readme[a..b].lines().skip(2) {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 3, "a row has fields, kind and how: {row}");
        assert!(
            KINDS.contains(&cells[1]),
            "unknown kind `{}` in {row}",
            cells[1]
        );
        assert!(!cells[2].is_empty(), "say how: {row}");
        for p in cells[0].split(", ") {
            let p = p
                .strip_prefix('`')
                .and_then(|p| p.strip_suffix('`'))
                .unwrap_or_else(|| panic!("`{p}` is not a backticked field in {row}"));
            let known = match p.strip_suffix(".*") {
                Some(prefix) => {
                    leaves.iter().any(|l| covers(p, l)) && fields.iter().any(|f| f == prefix)
                }
                None => leaves.iter().any(|l| *l == p),
            };
            assert!(
                known,
                "`{p}` is not a field (or a group of fields) of the schema"
            );
            patterns.push(p.to_owned());
        }
    }

    let mut problems = Vec::new();
    for leaf in &leaves {
        let rows: Vec<&String> = patterns.iter().filter(|p| covers(p, leaf)).collect();
        if rows.len() != 1 {
            problems.push(format!("`{leaf}`: covered by {rows:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "each field needs exactly one row in README's \"From layer to node\" table:\n{}",
        problems.join("\n")
    );
}
