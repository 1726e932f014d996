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

    /// Builds a path from dotted text (`a.b[2].c`). Keys holding dots cannot be
    /// written this way; use [`YamlPath::key`] for those.
    pub fn parse(text: &str) -> Self {
        let mut path = Self::root();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            let (name, mut rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if !name.is_empty() {
                path.0.push(Segment::Key(name.to_string()));
            }
            while let Some(end) = rest.find(']') {
                if let Ok(i) = rest[1..end].parse() {
                    path.0.push(Segment::Index(i));
                }
                rest = &rest[end + 1..];
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
    }
}
