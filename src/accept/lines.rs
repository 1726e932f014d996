//! Numbered lines of a tool's output, as the text parsers see them.
//!
//! Outputs reach `nodeimg accept` through `kubectl logs`, `mpirun --tag-output`,
//! `srun --label` and copy/paste, so a line may carry a launcher prefix, a carriage return
//! or a byte-order mark that the tool never printed. [`numbered`] strips those once, keeps
//! the 1-based line number of the original file for error messages, and hands each parser
//! the text the tool wrote. A parser reports what it cannot read as a
//! [`LineError`](crate::line_error::LineError).

/// One line of output with its number in the original file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub number: usize,
    /// The text without launcher prefix, trailing `\r` or byte-order mark.
    pub text: &'a str,
}

/// The lines of `text`, numbered from 1, without launcher prefixes.
pub fn numbered(text: &str) -> Vec<Line<'_>> {
    each(text).collect()
}

/// [`numbered`] one line at a time: for parsers that read a large log once and keep
/// nothing of most of its lines (a 48 MiB `NCCL_DEBUG=INFO` log has 600,000 of them).
pub fn each(text: &str) -> impl Iterator<Item = Line<'_>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.split('\n').enumerate().map(|(i, raw)| Line {
        number: i + 1,
        text: strip_launcher_prefix(raw.strip_suffix('\r').unwrap_or(raw)),
    })
}

/// Removes the prefix a launcher adds to every line of a rank's output:
/// `[1,0]<stdout>:` (Open MPI `--tag-output`) or `0: ` (Slurm `srun --label`).
pub fn strip_launcher_prefix(line: &str) -> &str {
    if let Some((tag, after)) = line.strip_prefix('[').and_then(|r| r.split_once(']')) {
        let ranks = tag
            .split(',')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if ranks {
            for stream in ["<stdout>:", "<stderr>:"] {
                if let Some(body) = after.strip_prefix(stream) {
                    return body;
                }
            }
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && line[digits..].starts_with(": ") {
        return &line[digits + 2..];
    }
    line
}

/// Whitespace-separated fields of a line.
pub fn fields(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

/// A finite, non-negative decimal number as the tools print them (`276.07`, `1e-05`).
pub fn number(token: &str) -> Option<f64> {
    let value: f64 = token.parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_prefixes_are_removed() {
        assert_eq!(
            strip_launcher_prefix("[1,0]<stdout>:# Avg bus bandwidth"),
            "# Avg bus bandwidth"
        );
        assert_eq!(strip_launcher_prefix("12: #  Rank  0"), "#  Rank  0");
        // A result row is not a label: its first field is followed by spaces, not ": ".
        assert_eq!(
            strip_launcher_prefix("    8388608   2097152 float"),
            "    8388608   2097152 float"
        );
        assert_eq!(strip_launcher_prefix("[x]<stdout>:a"), "[x]<stdout>:a");
        assert_eq!(strip_launcher_prefix("1024: x"), "x");
    }

    #[test]
    fn numbering_survives_bom_and_crlf() {
        let lines = numbered("\u{feff}first\r\nsecond\n");
        assert_eq!(lines[0].text, "first");
        assert_eq!(lines[1].number, 2);
        assert_eq!(lines[1].text, "second");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn numbers_refuse_nonsense() {
        assert_eq!(number("276.07"), Some(276.07));
        assert_eq!(number("N/A"), None);
        assert_eq!(number("-1"), None);
        assert_eq!(number("inf"), None);
        assert_eq!(number("NaN"), None);
    }
}
