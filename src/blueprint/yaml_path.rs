//! A location inside a YAML document, written the way users read it:
//! `kubernetes.kubelet.kubeReserved.memory` or `network.nics[0].speedGbps`.
//!
//! Every diagnostic names one; the source map turns it into a line and column.

use std::fmt;

/// One step into a document: a mapping key or a sequence index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A path from the document root. The empty path is the root itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct YamlPath(Vec<Segment>);

impl YamlPath {
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// Builds a path from the text [`Display`](fmt::Display) writes: dotted keys
    /// (`a.b[2].c`), indexes, and quoted keys for the rest (`labels["a/b"]`,
    /// `evictionHard["memory.available"]`), so `parse(p.to_string()) == p`.
    /// Malformed brackets are skipped rather than refused: this reads paths
    /// written by the program and its tests, not user input.
    pub fn parse(text: &str) -> Self {
        let mut path = Self::root();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            match c {
                '.' => rest = &rest[1..],
                '[' if rest[1..].starts_with('"') => {
                    let (key, after) = unquote(&rest[2..]);
                    path.0.push(Segment::Key(key));
                    rest = after.strip_prefix(']').unwrap_or(after);
                }
                '[' => {
                    let end = rest.find(']').unwrap_or(rest.len());
                    if let Ok(i) = rest[1..end].parse() {
                        path.0.push(Segment::Index(i));
                    }
                    rest = rest.get(end + 1..).unwrap_or("");
                }
                _ => {
                    let end = rest.find(['.', '[']).unwrap_or(rest.len());
                    path.0.push(Segment::Key(rest[..end].to_string()));
                    rest = &rest[end..];
                }
            }
        }
        path
    }

    pub fn key(&self, key: impl Into<String>) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Key(key.into()));
        next
    }

    pub fn index(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Index(index));
        next
    }

    pub fn parent(&self) -> Option<Self> {
        if self.0.is_empty() {
            return None;
        }
        Some(Self(self.0[..self.0.len() - 1].to_vec()))
    }

    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    pub fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Segment::Key(k)) => Some(k),
            _ => None,
        }
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for YamlPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(document)");
        }
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Segment::Key(k) => {
                    let plain = !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    match (i, plain) {
                        (0, true) => write!(f, "{k}")?,
                        (_, true) => write!(f, ".{k}")?,
                        (_, false) => write!(f, "[{k:?}]")?,
                    }
                }
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// Reads a key quoted the way `{:?}` quotes a string, from after its opening `"`:
/// the key, and the text after its closing `"`.
fn unquote(text: &str) -> (String, &str) {
    let mut key = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (key, &text[i + 1..]),
            '\\' => match chars.next().map(|(_, e)| e) {
                Some('n') => key.push('\n'),
                Some('r') => key.push('\r'),
                Some('t') => key.push('\t'),
                Some('0') => key.push('\0'),
                Some('u') => {
                    let hex: String = chars
                        .by_ref()
                        .map(|(_, h)| h)
                        .skip_while(|&h| h == '{')
                        .take_while(|&h| h != '}')
                        .collect();
                    if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        key.push(c);
                    }
                }
                Some(other) => key.push(other),
                None => {}
            },
            c => key.push(c),
        }
    }
    (key, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_text_round_trips() {
        for text in ["a.b.c", "network.nics[0].speedGbps", "a[1][2].b"] {
            assert_eq!(YamlPath::parse(text).to_string(), text);
        }
    }

    #[test]
    fn keys_with_dots_are_quoted() {
        let p = YamlPath::root().key("evictionHard").key("memory.available");
        assert_eq!(p.to_string(), "evictionHard[\"memory.available\"]");
        assert_eq!(YamlPath::parse(&p.to_string()), p);
    }

    #[test]
    fn quoted_keys_read_back() {
        let p = YamlPath::root()
            .key("kubernetes")
            .key("labels")
            .key("nvidia.com/gpu.\"product\"\n\u{301}")
            .index(3);
        assert_eq!(YamlPath::parse(&p.to_string()), p);
    }
}
