//! Reads a YAML document into a JSON value plus a source map from every
//! [`YamlPath`] to its line and column.
//!
//! Parsing keeps positions so that every later diagnostic — structural or
//! semantic — can point at the line a user must edit. The reader follows the
//! YAML 1.2 core schema (so `yes` is a string, not a boolean), refuses
//! duplicate keys, multi-document streams and unknown tags (on scalars and
//! collections alike), refuses numbers JSON cannot hold (`.inf`, `.nan`,
//! `1e400`, integers past 64 bits) instead of turning them into text, and
//! bounds what hostile input can cost: file size, nesting depth, and alias
//! expansion counted both in nodes and in bytes, checked before an alias is
//! copied (one 3 MB anchored string aliased 100,000 times would otherwise
//! cost 300 GB).
//!
//! What a scalar or a tag means under the core schema is `scalar.rs`; this file turns the
//! parser's events into the value and the source map, within the bounds.

mod scalar;

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScanError, Span};
use serde_json::{Map, Value};

use super::yaml_path::YamlPath;
use scalar::{collection_tag, scalar};

/// Largest blueprint accepted. Real blueprints are a few kilobytes.
pub const MAX_BYTES: usize = 4 * 1024 * 1024;
/// Deepest nesting accepted; the model itself is under ten levels deep.
pub const MAX_DEPTH: usize = 64;
/// Most nodes a document may expand to once aliases are resolved.
pub const MAX_NODES: usize = 100_000;
/// Most bytes of text (scalars and keys) a document may expand to once aliases
/// are resolved: four times the largest file.
pub const MAX_EXPANDED_BYTES: usize = 4 * MAX_BYTES;

/// A line and column, both counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// Where a node's key (inside a mapping) and its value start.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Option<Pos>,
    value: Pos,
}

/// Positions of every node of one document.
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    entries: HashMap<YamlPath, Entry>,
}

impl SourceMap {
    /// Position of the value at `path`, or of its nearest ancestor that has one.
    pub fn value_pos(&self, path: &YamlPath) -> Option<Pos> {
        self.nearest(path).map(|e| e.value)
    }

    /// Position of the key that introduces `path` (falls back to the value).
    pub fn key_pos(&self, path: &YamlPath) -> Option<Pos> {
        self.nearest(path).map(|e| e.key.unwrap_or(e.value))
    }

    /// True when the document itself holds `path` (not only an ancestor).
    pub fn contains(&self, path: &YamlPath) -> bool {
        self.entries.contains_key(path)
    }

    fn nearest(&self, path: &YamlPath) -> Option<&Entry> {
        let mut cur = Some(path.clone());
        while let Some(p) = cur {
            if let Some(e) = self.entries.get(&p) {
                return Some(e);
            }
            cur = p.parent();
        }
        None
    }
}

/// Why a document could not be read; always located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    pub pos: Option<Pos>,
    pub path: YamlPath,
    pub message: String,
}

impl SourceError {
    fn at(pos: Pos, path: &YamlPath, message: impl Into<String>) -> Self {
        Self {
            pos: Some(pos),
            path: path.clone(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = self.pos {
            write!(f, "line {}, column {}: ", p.line, p.column)?;
        }
        if !self.path.is_root() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SourceError {}

/// A parsed document.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: Value,
    pub map: SourceMap,
}

impl Document {
    /// The document as a `T`; a value `T` does not take is named by its
    /// path and the line it is on.
    pub fn to<T: serde::de::DeserializeOwned>(&self) -> Result<T, SourceError> {
        serde_path_to_error::deserialize(&self.value).map_err(|e| {
            let path = super::yaml_path_of(e.path());
            SourceError {
                pos: self.map.value_pos(&path),
                message: e.inner().to_string(),
                path,
            }
        })
    }
}

/// What kind of file a document is, for the words of its errors. The limits
/// are the same for every kind: every YAML file nodeimg reads (blueprints,
/// locks, matrices, CDI specs on the node, its own rendered files) is a few
/// kilobytes when it is what it claims to be.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// `a blueprint`, `a CDI spec`.
    pub noun: &'static str,
    /// How a file of this kind starts, said when one is empty.
    pub starts_with: Option<&'static str>,
}

/// A node blueprint (also its lock and a compatibility matrix).
pub const BLUEPRINT: Kind = Kind {
    noun: "a blueprint",
    starts_with: Some("apiVersion: nodeimg.dev/v1alpha1"),
};

/// Decodes and parses one YAML document of `kind`, within every limit.
pub fn read(bytes: &[u8], kind: Kind) -> Result<Document, SourceError> {
    parse_as(decode_as(bytes, kind)?, kind)
}

/// Decodes raw file bytes: enforces the size limit and UTF-8.
pub fn decode(bytes: &[u8]) -> Result<&str, SourceError> {
    decode_as(bytes, BLUEPRINT)
}

fn decode_as(bytes: &[u8], kind: Kind) -> Result<&str, SourceError> {
    if bytes.len() > MAX_BYTES {
        return Err(SourceError {
            pos: None,
            path: YamlPath::root(),
            message: format!(
                "file is {} bytes; {} may be at most {} bytes",
                bytes.len(),
                kind.noun,
                MAX_BYTES
            ),
        });
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
        SourceError {
            pos: Some(Pos { line, column }),
            path: YamlPath::root(),
            message: format!(
                "file is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
        }
    })
}

/// Parses one YAML document (a blueprint).
pub fn parse(text: &str) -> Result<Document, SourceError> {
    parse_as(text, BLUEPRINT)
}

fn parse_as(text: &str, kind: Kind) -> Result<Document, SourceError> {
    if text.contains('\0') {
        let before = &text[..text.find('\0').unwrap_or(0)];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        return Err(SourceError::at(
            Pos { line, column },
            &YamlPath::root(),
            format!("file contains a NUL byte; {} is YAML text", kind.noun),
        ));
    }
    Builder::new(kind).run(Parser::new_from_str(text))
}

fn pos_of(span: &Span) -> Pos {
    Pos {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

fn scan_error(e: &ScanError) -> SourceError {
    let m = e.marker();
    SourceError {
        pos: Some(Pos {
            line: m.line(),
            column: m.col() + 1,
        }),
        path: YamlPath::root(),
        message: format!("YAML syntax error: {}", e.info()),
    }
}

enum Frame {
    Seq {
        path: YamlPath,
        items: Vec<Value>,
        anchor: usize,
    },
    Map {
        path: YamlPath,
        entries: Map<String, Value>,
        key: Option<(String, Pos)>,
        anchor: usize,
    },
}

/// What a value costs once expanded: nodes and bytes of text.
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    nodes: usize,
    bytes: usize,
}

struct Builder {
    kind: Kind,
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Value, Size)>,
    map: SourceMap,
    /// What the document has expanded to so far.
    total: Size,
    root: Option<Value>,
    documents: usize,
}

impl Builder {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            stack: Vec::new(),
            anchors: HashMap::new(),
            map: SourceMap::default(),
            total: Size::default(),
            root: None,
            documents: 0,
        }
    }

    fn run(
        mut self,
        parser: Parser<'_, saphyr_parser::StrInput<'_>>,
    ) -> Result<Document, SourceError> {
        for event in parser {
            let (event, span) = event.map_err(|e| scan_error(&e))?;
            let pos = pos_of(&span);
            match event {
                Event::DocumentStart(_) => {
                    self.documents += 1;
                    if self.documents > 1 {
                        return Err(SourceError::at(
                            pos,
                            &YamlPath::root(),
                            format!(
                                "{} holds one YAML document; found a second one (`---`)",
                                self.kind.noun
                            ),
                        ));
                    }
                }
                Event::Scalar(text, style, anchor, tag) => {
                    if self.expecting_key() {
                        let path = self.current_path();
                        self.count(
                            Size {
                                nodes: 0,
                                bytes: text.len(),
                            },
                            pos,
                            &path,
                        )?;
                        self.set_key(text.into_owned(), pos)?;
                        continue;
                    }
                    let path = self.child_path();
                    let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
                    let value = scalar(&text, style, tag.as_deref())
                        .map_err(|m| SourceError::at(pos, &path, m))?;
                    let size = Size {
                        nodes: 1,
                        bytes: text.len(),
                    };
                    self.leaf(value, pos, anchor, size)?;
                }
                Event::Alias(id) => {
                    let path = self.child_path();
                    let Some(&(_, size)) = self.anchors.get(&id) else {
                        return Err(SourceError::at(
                            pos,
                            &path,
                            "alias refers to an unknown anchor",
                        ));
                    };
                    if self.expecting_key() {
                        return Err(SourceError::at(
                            pos,
                            &path,
                            "an alias cannot be used as a mapping key",
                        ));
                    }
                    // Counted before the copy is made, so a refused alias costs nothing.
                    self.count(size, pos, &path)?;
                    let value = self.anchors.get(&id).map(|(v, _)| v.clone());
                    self.place(value.unwrap_or(Value::Null), pos, 0, size);
                }
                Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                    let is_seq = matches!(event, Event::SequenceStart(..));
                    if self.expecting_key() {
                        let path = self.current_path();
                        return Err(SourceError::at(
                            pos,
                            &path,
                            "mapping keys must be plain text, not a list or a mapping",
                        ));
                    }
                    let path = self.child_path();
                    if let Some(tag) = tag {
                        let tag = format!("{}{}", tag.handle, tag.suffix);
                        collection_tag(&tag, is_seq).map_err(|m| SourceError::at(pos, &path, m))?;
                    }
                    if self.stack.len() >= MAX_DEPTH {
                        return Err(SourceError::at(
                            pos,
                            &path,
                            format!("nesting is deeper than {MAX_DEPTH} levels"),
                        ));
                    }
                    self.count(Size { nodes: 1, bytes: 0 }, pos, &path)?;
                    self.record(&path, pos);
                    self.stack.push(if is_seq {
                        Frame::Seq {
                            path,
                            items: Vec::new(),
                            anchor,
                        }
                    } else {
                        Frame::Map {
                            path,
                            entries: Map::new(),
                            key: None,
                            anchor,
                        }
                    });
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let (value, anchor) = match self.stack.pop() {
                        Some(Frame::Seq { items, anchor, .. }) => (Value::Array(items), anchor),
                        Some(Frame::Map {
                            entries, anchor, ..
                        }) => (Value::Object(entries), anchor),
                        None => continue,
                    };
                    if anchor != 0 {
                        let size = size_of(&value);
                        self.anchors.insert(anchor, (value.clone(), size));
                    }
                    self.attach(value);
                }
                _ => {}
            }
        }
        match self.root {
            None | Some(Value::Null) => Err(SourceError {
                pos: Some(Pos { line: 1, column: 1 }),
                path: YamlPath::root(),
                message: match self.kind.starts_with {
                    Some(first) => {
                        format!("file is empty; {} starts with `{first}`", self.kind.noun)
                    }
                    None => format!("file is empty; {} is a YAML document", self.kind.noun),
                },
            }),
            Some(value) => Ok(Document {
                value,
                map: self.map,
            }),
        }
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { key: None, .. }))
    }

    fn current_path(&self) -> YamlPath {
        match self.stack.last() {
            Some(Frame::Seq { path, .. } | Frame::Map { path, .. }) => path.clone(),
            None => YamlPath::root(),
        }
    }

    /// The path the next value will have.
    fn child_path(&self) -> YamlPath {
        match self.stack.last() {
            Some(Frame::Seq { path, items, .. }) => path.index(items.len()),
            Some(Frame::Map {
                path,
                key: Some((k, _)),
                ..
            }) => path.key(k.clone()),
            Some(Frame::Map { path, .. }) => path.clone(),
            None => YamlPath::root(),
        }
    }

    fn set_key(&mut self, key: String, pos: Pos) -> Result<(), SourceError> {
        if let Some(Frame::Map {
            path,
            entries,
            key: slot,
            ..
        }) = self.stack.last_mut()
        {
            if entries.contains_key(&key) {
                let first = self
                    .map
                    .entries
                    .get(&path.key(key.clone()))
                    .and_then(|e| e.key)
                    .map(|p| format!(" (first at line {})", p.line))
                    .unwrap_or_default();
                return Err(SourceError::at(
                    pos,
                    &path.key(key.clone()),
                    format!("duplicate key `{key}`{first}"),
                ));
            }
            *slot = Some((key, pos));
        }
        Ok(())
    }

    fn record(&mut self, path: &YamlPath, value: Pos) {
        let key = match self.stack.last() {
            Some(Frame::Map {
                key: Some((_, p)), ..
            }) => Some(*p),
            _ => None,
        };
        self.map.entries.insert(path.clone(), Entry { key, value });
    }

    fn count(&mut self, size: Size, pos: Pos, path: &YamlPath) -> Result<(), SourceError> {
        self.total.nodes = self.total.nodes.saturating_add(size.nodes);
        self.total.bytes = self.total.bytes.saturating_add(size.bytes);
        if self.total.nodes > MAX_NODES {
            return Err(SourceError::at(
                pos,
                path,
                format!(
                    "document expands to more than {MAX_NODES} nodes (aliases included); refusing it"
                ),
            ));
        }
        if self.total.bytes > MAX_EXPANDED_BYTES {
            return Err(SourceError::at(
                pos,
                path,
                format!(
                    "document expands to more than {MAX_EXPANDED_BYTES} bytes of text (aliases included); refusing it"
                ),
            ));
        }
        Ok(())
    }

    fn leaf(
        &mut self,
        value: Value,
        pos: Pos,
        anchor: usize,
        size: Size,
    ) -> Result<(), SourceError> {
        let path = self.child_path();
        self.count(size, pos, &path)?;
        self.place(value, pos, anchor, size);
        Ok(())
    }

    /// Records and attaches a value already counted.
    fn place(&mut self, value: Value, pos: Pos, anchor: usize, size: Size) {
        let path = self.child_path();
        self.record(&path, pos);
        if anchor != 0 {
            self.anchors.insert(anchor, (value.clone(), size));
        }
        self.attach(value);
    }

    fn attach(&mut self, value: Value) {
        match self.stack.last_mut() {
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map { entries, key, .. }) => {
                if let Some((k, _)) = key.take() {
                    entries.insert(k, value);
                }
            }
            None => self.root = Some(value),
        }
    }
}

/// Nodes and bytes of text in a built value (what one more alias of it costs).
fn size_of(v: &Value) -> Size {
    let add = |a: Size, b: Size| Size {
        nodes: a.nodes.saturating_add(b.nodes),
        bytes: a.bytes.saturating_add(b.bytes),
    };
    let one = Size { nodes: 1, bytes: 0 };
    match v {
        Value::Array(a) => a.iter().map(size_of).fold(one, add),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| {
                add(
                    Size {
                        nodes: 0,
                        bytes: k.len(),
                    },
                    size_of(v),
                )
            })
            .fold(one, add),
        Value::String(s) => Size {
            nodes: 1,
            bytes: s.len(),
        },
        // The text a number or a literal was written as is at most this long in practice;
        // what matters is that it is not free.
        _ => Size { nodes: 1, bytes: 8 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(doc: &Document, path: &str) -> Pos {
        doc.map.value_pos(&YamlPath::parse(path)).unwrap()
    }

    #[test]
    fn positions_of_nested_values() {
        let doc = parse("a:\n  b:\n    - x\n    - c: 1\n").unwrap();
        assert_eq!(
            at(&doc, "a.b[1].c"),
            Pos {
                line: 4,
                column: 10
            }
        );
        assert_eq!(
            doc.map.key_pos(&YamlPath::parse("a.b[1].c")),
            Some(Pos { line: 4, column: 7 })
        );
        assert_eq!(doc.value["a"]["b"][0], "x");
    }

    #[test]
    fn core_schema_scalars() {
        let doc = parse("a: yes\nb: 0644\nc: '1.30'\nd: 1.30\ne: ~\nf: 0x1f\ng: TRUE\n").unwrap();
        assert_eq!(doc.value["a"], "yes");
        assert_eq!(doc.value["b"], 644);
        assert_eq!(doc.value["c"], "1.30");
        assert_eq!(doc.value["d"], 1.3);
        assert!(doc.value["e"].is_null());
        assert_eq!(doc.value["f"], 31);
        assert_eq!(doc.value["g"], true);
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 3, column: 1 }));
        assert!(
            e.message.contains("duplicate key `a` (first at line 1)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn alias_bomb_is_bounded() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let e = parse(&text).unwrap_err();
        assert!(
            e.message.contains("more than 100000 nodes"),
            "{}",
            e.message
        );
    }

    #[test]
    fn aliases_are_bounded_by_expanded_bytes_before_copying() {
        // 100 aliases of a 1 MB string are 101 nodes but 100 MB of text.
        let big = "x".repeat(1 << 20);
        let mut text = format!("a: &big {big}\nb:\n");
        for _ in 0..100 {
            text.push_str("  - *big\n");
        }
        let e = parse(&text).unwrap_err();
        assert!(
            e.message
                .contains(&format!("more than {MAX_EXPANDED_BYTES} bytes")),
            "{}",
            e.message
        );
        assert!(e.pos.is_some_and(|p| p.line > 2), "{e:?}");
        // Keys of aliased mappings count too.
        let key = "k".repeat(1 << 20);
        let mut text = format!("a: &m {{{key}: 1}}\nb:\n");
        for _ in 0..20 {
            text.push_str("  - *m\n");
        }
        assert!(parse(&text).unwrap_err().message.contains("bytes of text"));
        // A few aliases of a small anchor are fine.
        assert!(parse("a: &x [1, 2]\nb: [*x, *x, *x]\n").is_ok());
    }

    #[test]
    fn tags_on_collections_are_refused_like_tags_on_scalars() {
        for text in [
            "a: !!python/object/apply:os.system ['id']\n",
            "a: !!python/object/new:x {k: 1}\n",
            "a: !custom [1]\n",
            "a: !!map [1]\n",
            "a: !!seq {k: 1}\n",
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.message.contains("unsupported YAML tag"), "{text}: {e:?}");
            assert_eq!(e.pos.map(|p| p.line), Some(1), "{text}");
        }
        let doc = parse("a: !!seq [1]\nb: !!map {k: 1}\nc: ! {k: 2}\n").unwrap();
        assert_eq!(doc.value["a"][0], 1);
        assert_eq!(doc.value["b"]["k"], 1);
    }

    #[test]
    fn numbers_json_cannot_hold_are_errors_not_text() {
        for text in [
            "a: 1e400\n",
            "a: -1e400\n",
            "a: .inf\n",
            "a: -.Inf\n",
            "a: .nan\n",
            "a: !!float 1e999\n",
            "a: 99999999999999999999999\n",
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.message.contains("quote it"), "{text}: {e:?}");
        }
        // Quoted, they are text; in range, numbers.
        let doc = parse("a: '1e400'\nb: \".inf\"\nc: 1e300\nd: 18446744073709551615\n").unwrap();
        assert_eq!(doc.value["a"], "1e400");
        assert_eq!(doc.value["b"], ".inf");
        assert_eq!(doc.value["c"], 1e300);
        assert_eq!(doc.value["d"], u64::MAX);
    }

    #[test]
    fn aliases_expand() {
        let doc = parse("base: &b {x: 1}\nother: *b\n").unwrap();
        assert_eq!(doc.value["other"]["x"], 1);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let text = "[".repeat(100) + &"]".repeat(100);
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("deeper than 64"), "{}", e.message);
    }

    #[test]
    fn syntax_errors_are_located() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.message.starts_with("YAML syntax error"), "{}", e.message);
        assert!(e.pos.is_some());
    }

    #[test]
    fn second_document_is_refused() {
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(e.pos.map(|p| p.line), Some(2));
    }

    #[test]
    fn bad_utf8_is_located() {
        let e = decode(b"a: 1\nb: \xff\n").unwrap_err();
        assert_eq!(e.pos, Some(Pos { line: 2, column: 4 }));
    }

    #[test]
    fn empty_is_an_error() {
        assert!(parse("").unwrap_err().message.contains("empty"));
        assert!(
            parse("# only a comment\n")
                .unwrap_err()
                .message
                .contains("empty")
        );
    }
}
