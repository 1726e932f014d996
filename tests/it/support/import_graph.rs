//! The file-to-file import graph of a crate's `src/`, read from the text, and its circles.
//!
//! Nodes are the files: `a/b.rs` and `a/b/mod.rs` are the module `crate::a::b`, `lib.rs`
//! the crate root (`main.rs`, a separate crate, is left out). An edge F → G is a path in F
//! that resolves into G:
//!
//! - every leaf of a `use` tree, `pub use` re-exports included (`use super::x::{A, b::C}`);
//! - every path in code that starts from the crate (`crate::x::f()`), a parent
//!   (`super::x::Y`), itself (`self::x`), one of its modules (`os::evaluate` in a file that
//!   declares `mod os`), or a name a `use` brought in (`record::Finding` after
//!   `use crate::verify::report::record`).
//!
//! A path lands in the deepest file whose module it starts with; re-exports are not
//! followed (a name a `mod.rs` re-exports is an edge to that `mod.rs`, which has its own
//! edge to the file that defines it). Not edges: `mod x;` declarations, paths into other
//! crates, `$crate` paths in macros, and a file's reads of its own ancestors (`super::X` or
//! `crate::a::X` from inside `a/`): a folder's `mod.rs` is the front of the module its files
//! make up, and what it declares is in scope of every file below it. Comments, strings and
//! character literals are blanked before reading. Inline modules (`mod tests { … }`) are
//! read as part of their file, with their own scope for `super` and `use`; what is inside
//! a `#[cfg(test)]` one is an edge of the file, and is left out of [`Graph::code_edges`],
//! the edges of the code that ships.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A module path below the crate root: `["verify", "checks"]`.
type ModPath = Vec<String>;

/// Why an edge exists: the first place in the importing file that made it.
#[derive(Debug, Clone)]
pub struct Reason {
    pub line: usize,
    pub path: String,
}

pub struct Graph {
    /// Module path → file, relative to `src/`.
    files: BTreeMap<ModPath, PathBuf>,
    /// From file → to file → why.
    edges: BTreeMap<PathBuf, BTreeMap<PathBuf, Reason>>,
    /// The same, without what only `#[cfg(test)]` modules read.
    code: BTreeMap<PathBuf, BTreeMap<PathBuf, Reason>>,
}

impl Graph {
    /// Reads every `.rs` file under `src`.
    pub fn read(src: &Path) -> Graph {
        let mut files = BTreeMap::new();
        for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
            let entry = entry.unwrap();
            let rel = entry.path().strip_prefix(src).unwrap().to_path_buf();
            if rel.extension().is_none_or(|e| e != "rs") || rel == Path::new("main.rs") {
                continue;
            }
            let mut module: ModPath = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                module.pop();
            }
            files.insert(module, rel);
        }
        let parsed: Vec<(ModPath, Parsed)> = files
            .iter()
            .map(|(module, rel)| {
                let text = std::fs::read_to_string(src.join(rel))
                    .unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
                (module.clone(), parse(module, &text))
            })
            .collect();
        let mut resolver = Resolver {
            modules: files.keys().cloned().collect(),
            aliases: HashMap::new(),
        };
        for (_, p) in &parsed {
            resolver.modules.extend(p.inline.iter().cloned());
        }
        // A `use` may go through a name another `use` brought in: settle the aliases first.
        for _ in 0..8 {
            let mut changed = false;
            for (_, p) in &parsed {
                for u in &p.uses {
                    let (Some(alias), Some(target)) =
                        (&u.alias, resolver.absolute(&u.scope, &u.segments))
                    else {
                        continue;
                    };
                    let slot = resolver.aliases.entry(u.scope.clone()).or_default();
                    if slot.get(alias) != Some(&target) {
                        slot.insert(alias.clone(), target);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, Reason>> = BTreeMap::new();
        let mut code: BTreeMap<PathBuf, BTreeMap<PathBuf, Reason>> = BTreeMap::new();
        for (module, p) in &parsed {
            let from = &files[module];
            let refs = p
                .uses
                .iter()
                .map(|u| (&u.scope, &u.segments, u.line, u.test));
            let refs = refs.chain(
                p.paths
                    .iter()
                    .map(|r| (&r.scope, &r.segments, r.line, r.test)),
            );
            for (scope, segments, line, test) in refs {
                let Some(target) = resolver.absolute(scope, segments) else {
                    continue;
                };
                let Some(to) = deepest_file(&files, &target) else {
                    continue;
                };
                // Itself, or an ancestor of it: not an edge (see the module's doc).
                if module.starts_with(to) {
                    continue;
                }
                let reason = Reason {
                    line,
                    path: segments.join("::"),
                };
                if !test {
                    code.entry(from.clone())
                        .or_default()
                        .entry(files[to].clone())
                        .or_insert_with(|| reason.clone());
                }
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(files[to].clone())
                    .or_insert(reason);
            }
        }
        Graph { files, edges, code }
    }

    /// Every file (relative to `src/`), sorted.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        let mut files: Vec<&Path> = self.files.values().map(PathBuf::as_path).collect();
        files.sort();
        files.into_iter()
    }

    /// The files `from` reads (relative to `src/`).
    pub fn edges_from(&self, from: &str) -> BTreeSet<String> {
        self.edges
            .get(Path::new(from))
            .map(|to| to.keys().map(|p| p.display().to_string()).collect())
            .unwrap_or_default()
    }

    /// Every edge of the code that ships (not of `#[cfg(test)]` modules): from, to (files
    /// relative to `src/`), and why.
    pub fn code_edges(&self) -> impl Iterator<Item = (&Path, &Path, &Reason)> {
        self.code.iter().flat_map(|(from, to)| {
            to.iter()
                .map(move |(to, why)| (from.as_path(), to.as_path(), why))
        })
    }

    /// The circles: every set of two or more files each reachable from the others
    /// (strongly connected components, Tarjan), sorted.
    pub fn circles(&self) -> Vec<Vec<PathBuf>> {
        let nodes: Vec<&PathBuf> = self.files.values().collect();
        let index_of: HashMap<&PathBuf, usize> =
            nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let next: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| {
                self.edges
                    .get(*n)
                    .map(|to| to.keys().map(|t| index_of[t]).collect())
                    .unwrap_or_default()
            })
            .collect();
        let mut tarjan = Tarjan {
            next: &next,
            index: vec![None; nodes.len()],
            low: vec![0; nodes.len()],
            stack: Vec::new(),
            on_stack: vec![false; nodes.len()],
            counter: 0,
            components: Vec::new(),
        };
        for v in 0..nodes.len() {
            if tarjan.index[v].is_none() {
                tarjan.visit(v);
            }
        }
        let mut circles: Vec<Vec<PathBuf>> = tarjan
            .components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut files: Vec<PathBuf> = c.into_iter().map(|i| nodes[i].clone()).collect();
                files.sort();
                files
            })
            .collect();
        circles.sort();
        circles
    }

    /// A circle's files and the edges between them, each with the line that made it.
    pub fn describe(&self, circle: &[PathBuf]) -> String {
        let inside: HashSet<&PathBuf> = circle.iter().collect();
        let mut text = String::new();
        for from in circle {
            for (to, why) in self.edges.get(from).into_iter().flatten() {
                if inside.contains(to) {
                    text.push_str(&format!(
                        "  src/{}:{} -> src/{}  ({})\n",
                        from.display(),
                        why.line,
                        to.display(),
                        why.path
                    ));
                }
            }
        }
        text
    }
}

/// Writes `files` (path under `src/`, text) into a temporary crate and reads its graph.
pub fn crate_of(files: &[(&str, &str)]) -> (tempfile::TempDir, Graph) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join("src").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let graph = Graph::read(&dir.path().join("src"));
    (dir, graph)
}

/// The file a module path lands in: the one with the longest module prefix of it.
fn deepest_file<'a>(files: &'a BTreeMap<ModPath, PathBuf>, path: &[String]) -> Option<&'a ModPath> {
    (0..=path.len())
        .rev()
        .find_map(|n| files.get_key_value(&path[..n]).map(|(k, _)| k))
}

struct Resolver {
    /// Every module: files and inline modules.
    modules: HashSet<ModPath>,
    /// Scope → name a `use` brought in → the absolute path it stands for.
    aliases: HashMap<ModPath, HashMap<String, ModPath>>,
}

impl Resolver {
    /// The absolute module path `segments` names in `scope`; `None` for another crate's
    /// path, `Self::…`, a generic or a local name.
    fn absolute(&self, scope: &ModPath, segments: &[String]) -> Option<ModPath> {
        let (head, rest) = segments.split_first()?;
        match head.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" => Some([scope.as_slice(), rest].concat()),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let base = scope.get(..scope.len().checked_sub(ups)?)?;
                Some([base, &segments[ups..]].concat())
            }
            _ => {
                let child = [scope.as_slice(), std::slice::from_ref(head)].concat();
                if self.modules.contains(&child) {
                    return Some([scope.as_slice(), segments].concat());
                }
                let target = self.aliases.get(scope)?.get(head)?;
                Some([target.as_slice(), rest].concat())
            }
        }
    }
}

struct Use {
    scope: ModPath,
    /// Inside a `#[cfg(test)]` module.
    test: bool,
    segments: Vec<String>,
    /// The name it brings into scope (`None` for a glob).
    alias: Option<String>,
    line: usize,
}

struct PathRef {
    scope: ModPath,
    test: bool,
    segments: Vec<String>,
    line: usize,
}

struct Parsed {
    uses: Vec<Use>,
    paths: Vec<PathRef>,
    /// The inline modules (`mod tests { … }`), as module paths.
    inline: Vec<ModPath>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    PathSep,
    Open,
    Close,
    Semi,
    Comma,
    Star,
    Dollar,
    Other,
}

fn parse(module: &ModPath, text: &str) -> Parsed {
    let blank = blank(text);
    let toks = tokens(&blank);
    let mut out = Parsed {
        uses: Vec::new(),
        paths: Vec::new(),
        inline: Vec::new(),
    };
    // Inline modules open at a brace depth; the scope is the file's module plus them.
    // Each with the depth it opened at and whether it is `#[cfg(test)]`.
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0usize;
    let scope = |inline: &[(String, usize, bool)]| -> ModPath {
        module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(m, _, _)| m.clone()))
            .collect()
    };
    let in_test = |inline: &[(String, usize, bool)]| inline.iter().any(|(_, _, t)| *t);
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = toks[i];
        match tok {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d, _)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident("mod") => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Open, _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    // `#[cfg(test)] mod name {`: `cfg` `(` `test` `)` `]` just before.
                    let test = i >= 5
                        && toks[i - 5].0 == Tok::Ident("cfg")
                        && toks[i - 3].0 == Tok::Ident("test");
                    inline.push((name.to_string(), depth, test));
                    out.inline.push(scope(&inline));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident("use") => {
                let here = scope(&inline);
                let end = toks[i..]
                    .iter()
                    .position(|(t, _)| *t == Tok::Semi)
                    .map_or(toks.len(), |p| i + p);
                let mut leaves = Vec::new();
                use_tree(&toks[i + 1..end], Vec::new(), &mut leaves);
                for (segments, alias) in leaves {
                    out.uses.push(Use {
                        scope: here.clone(),
                        test: in_test(&inline),
                        segments,
                        alias,
                        line,
                    });
                }
                i = end + 1;
                continue;
            }
            Tok::Ident(head)
                if toks.get(i + 1).is_some_and(|(t, _)| *t == Tok::PathSep)
                    && (i == 0 || !matches!(toks[i - 1].0, Tok::PathSep | Tok::Dollar)) =>
            {
                let mut segments = vec![head.to_string()];
                let mut j = i + 1;
                while let (Some((Tok::PathSep, _)), Some((Tok::Ident(s), _))) =
                    (toks.get(j), toks.get(j + 1))
                {
                    segments.push(s.to_string());
                    j += 2;
                }
                out.paths.push(PathRef {
                    scope: scope(&inline),
                    test: in_test(&inline),
                    segments,
                    line,
                });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The leaves of a `use` tree: `a::{b, c::d as e, f::*}` → `a::b` (b), `a::c::d` (e),
/// `a::f` (glob, no name).
fn use_tree(
    toks: &[(Tok, usize)],
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut path = prefix;
    let mut i = 0;
    loop {
        match toks.get(i).map(|(t, _)| *t) {
            Some(Tok::Ident(s)) => {
                path.push(s.to_string());
                i += 1;
            }
            Some(Tok::PathSep) => i += 1,
            Some(Tok::Star) => {
                out.push((path, None));
                return;
            }
            Some(Tok::Open) => {
                // Split the braces' content at top-level commas.
                let mut depth = 0;
                let mut start = i + 1;
                for (j, (t, _)) in toks.iter().enumerate().skip(i) {
                    match t {
                        Tok::Open => depth += 1,
                        Tok::Close => {
                            depth -= 1;
                            if depth == 0 {
                                use_tree(&toks[start..j], path.clone(), out);
                                return;
                            }
                        }
                        Tok::Comma if depth == 1 => {
                            use_tree(&toks[start..j], path.clone(), out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => break,
        }
    }
    // `a::b as c`: the ident after `as` is the name, not a segment.
    let alias = match path.iter().rposition(|s| s == "as") {
        Some(p) if p + 2 == path.len() => {
            let alias = path.pop();
            path.pop();
            alias
        }
        _ => path.last().cloned(),
    };
    match path.last().map(String::as_str) {
        None => {}
        // `a::{self}` names `a`.
        Some("self") => {
            path.pop();
            let alias = if alias.as_deref() == Some("self") {
                path.last().cloned()
            } else {
                alias
            };
            out.push((path, alias));
        }
        Some(_) => out.push((path, alias)),
    }
}

/// The text with comments, string and character literals replaced by spaces (newlines
/// kept, so lines still count).
fn blank(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_lines = |out: &mut String, from: &[char]| {
        for c in from {
            out.push(if *c == '\n' { '\n' } else { ' ' });
        }
    };
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|c| *c == '\n')
                .map_or(chars.len(), |p| i + p);
            keep_lines(&mut out, &chars[i..end]);
            i = end;
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            let mut j = i;
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            keep_lines(&mut out, &chars[i..j.min(chars.len())]);
            i = j;
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && (i == 0 || !ident_char(chars[i - 1]))
            && raw_string_start(&chars[i..]).is_some()
        {
            let (open, hashes) = raw_string_start(&chars[i..]).unwrap();
            let mut j = i + open;
            while j < chars.len() {
                if chars[j] == '"'
                    && chars[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|c| **c == '#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            keep_lines(&mut out, &chars[i..j.min(chars.len())]);
            i = j;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            keep_lines(&mut out, &chars[i..(j + 1).min(chars.len())]);
            i = j + 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), or a lifetime ('a), kept.
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|c| *c == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    keep_lines(&mut out, &chars[i..=end]);
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br##"`…: the length of the opening and the number of `#`.
fn raw_string_start(chars: &[char]) -> Option<(usize, usize)> {
    let skip = if chars.first() == Some(&'b') { 2 } else { 1 };
    let hashes = chars[skip..].iter().take_while(|c| **c == '#').count();
    (chars.get(skip + hashes) == Some(&'"')).then_some((skip + hashes + 1, hashes))
}

/// The tokens the graph needs, each with its line; everything else is `Other`.
fn tokens(text: &str) -> Vec<(Tok<'_>, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let tok = match b {
            b'\n' => {
                line += 1;
                i += 1;
                continue;
            }
            b if b.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            b':' if bytes.get(i + 1) == Some(&b':') => {
                i += 2;
                out.push((Tok::PathSep, line));
                continue;
            }
            b'{' => Tok::Open,
            b'}' => Tok::Close,
            b';' => Tok::Semi,
            b',' => Tok::Comma,
            b'*' => Tok::Star,
            b'$' => Tok::Dollar,
            b if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                // `r#type`: a raw identifier.
                if &text[start..i] == "r" && bytes.get(i) == Some(&b'#') {
                    i += 1;
                    continue;
                }
                out.push((Tok::Ident(&text[start..i]), line));
                continue;
            }
            b if b.is_ascii_digit() => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push((Tok::Other, line));
                continue;
            }
            _ => Tok::Other,
        };
        out.push((tok, line));
        i += 1;
    }
    out
}

struct Tarjan<'a> {
    next: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    stack: Vec<usize>,
    on_stack: Vec<bool>,
    counter: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.counter);
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.next[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}
