//! The text form of the vendor tables beside this file: `#` comment lines first, among
//! them `# source:`, `# version:` and `# read:` (where the facts come from, which edition
//! of them, and when it was read), then a CSV header and one row per line.
//!
//! CSV as RFC 4180 writes it, without line breaks inside a field: fields are separated by
//! commas, a field holding a comma or a quote is quoted, and a quote inside is doubled. A
//! row must have exactly the header's columns. The tables are embedded in the binary and
//! parsed once; a row that does not parse is a test failure naming its line.

use std::fmt;

/// Where a table's facts come from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Meta {
    /// The name the table goes by in messages (`nvidia-xid.csv`).
    pub name: &'static str,
    pub source: String,
    pub version: String,
    /// When the facts were read from the source.
    pub read: String,
}

/// One data row: its line in the file (1-based) and its fields, in header order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    pub fields: Vec<String>,
}

impl Row {
    /// The field of column `index` (the caller's header order, checked at parse time).
    pub fn field(&self, index: usize) -> &str {
        self.fields.get(index).map_or("", String::as_str)
    }

    /// An error about this row of the table `meta` describes.
    pub fn error(&self, meta: &Meta, message: String) -> TableError {
        TableError {
            table: meta.name.to_owned(),
            line: self.line,
            message,
        }
    }

    /// The field of column `index` parsed as a `T`; else "`{what}` `…` is not {expected}".
    pub fn parsed<T: std::str::FromStr>(
        &self,
        meta: &Meta,
        index: usize,
        what: &str,
        expected: &str,
    ) -> Result<T, TableError> {
        let v = self.field(index);
        v.parse()
            .map_err(|_| self.error(meta, format!("{what} `{v}` is not {expected}")))
    }
}

/// A table that does not parse: which one, the line, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    pub table: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.table, self.line, self.message)
    }
}

impl std::error::Error for TableError {}

/// Parses a table whose header must be exactly `columns`.
pub fn parse(
    name: &'static str,
    text: &str,
    columns: &[&str],
) -> Result<(Meta, Vec<Row>), TableError> {
    let err = |line: usize, message: String| TableError {
        table: name.to_owned(),
        line,
        message,
    };
    let mut source = None;
    let mut version = None;
    let mut read = None;
    let mut header_seen = false;
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if !header_seen && raw.starts_with('#') {
            let comment = raw.trim_start_matches('#').trim();
            for (key, slot) in [
                ("source:", &mut source),
                ("version:", &mut version),
                ("read:", &mut read),
            ] {
                if let Some(value) = comment.strip_prefix(key)
                    && slot.is_none()
                {
                    *slot = Some(value.trim().to_owned());
                }
            }
            continue;
        }
        if raw.trim().is_empty() {
            continue;
        }
        let fields = split(raw).map_err(|m| err(line, m))?;
        if !header_seen {
            if fields != columns {
                return Err(err(
                    line,
                    format!(
                        "the header is `{}`, expected `{}`",
                        fields.join(","),
                        columns.join(",")
                    ),
                ));
            }
            header_seen = true;
            continue;
        }
        if fields.len() != columns.len() {
            return Err(err(
                line,
                format!(
                    "{} fields, the header has {} ({})",
                    fields.len(),
                    columns.len(),
                    columns.join(",")
                ),
            ));
        }
        rows.push(Row { line, fields });
    }
    let missing = |what: &str| err(1, format!("no `# {what}` line before the header"));
    let meta = Meta {
        name,
        source: source.ok_or_else(|| missing("source:"))?,
        version: version.ok_or_else(|| missing("version:"))?,
        read: read.ok_or_else(|| missing("read:"))?,
    };
    if !header_seen {
        return Err(err(text.lines().count(), "no header line".to_owned()));
    }
    Ok((meta, rows))
}

/// One CSV line into its fields.
fn split(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        match c {
            '"' if at_start && field.is_empty() => {
                quoted = true;
                at_start = false;
            }
            '"' if quoted => {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    quoted = false;
                    if !matches!(chars.peek(), None | Some(',')) {
                        return Err(format!(
                            "text after the closing quote of field {}",
                            fields.len() + 1
                        ));
                    }
                }
            }
            '"' => {
                return Err(format!(
                    "a quote inside unquoted field {}",
                    fields.len() + 1
                ));
            }
            ',' if !quoted => {
                fields.push(std::mem::take(&mut field));
                at_start = true;
            }
            c => {
                field.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return Err(format!("field {} has no closing quote", fields.len() + 1));
    }
    fields.push(field);
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "# source: s\n# version: v\n# read: r\n";

    #[test]
    fn quoted_fields_and_metadata() {
        let (meta, rows) = parse(
            "t.csv",
            &format!("{HEAD}# more words\na,b\n1,\"x, \"\"y\"\"\"\n2,\n"),
            &["a", "b"],
        )
        .unwrap();
        assert_eq!((meta.source.as_str(), meta.version.as_str()), ("s", "v"));
        assert_eq!(rows[0].fields, vec!["1", "x, \"y\""]);
        assert_eq!(rows[0].line, 6);
        assert_eq!(rows[1].fields, vec!["2", ""]);
    }

    #[test]
    fn a_bad_row_names_its_line() {
        let e = parse("t.csv", &format!("{HEAD}a,b\n1,2\n3\n"), &["a", "b"]).unwrap_err();
        assert_eq!((e.line, e.table.as_str()), (6, "t.csv"));
        let e = parse("t.csv", &format!("{HEAD}a,b\n1,\"2\n"), &["a", "b"]).unwrap_err();
        assert!(e.message.contains("no closing quote"), "{e}");
        let e = parse("t.csv", &format!("{HEAD}a,c\n"), &["a", "b"]).unwrap_err();
        assert!(e.message.contains("header"), "{e}");
        let e = parse("t.csv", "a,b\n", &["a", "b"]).unwrap_err();
        assert!(e.message.contains("source"), "{e}");
    }
}
