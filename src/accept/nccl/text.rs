//! nccl-tests and rccl-tests text output (`all_reduce_perf`, `all_gather_perf`, ...).
//!
//! Three generations of the format are read (see the corpus notes): the old one
//! (`#   Rank  0 Pid ... [0x00] A100-SXM4-40GB`, no `root` column, an `error` column that
//! is `N/A` without validation), the middle one (`Group`, `root`, `#wrong`) and the new one
//! (`# nccl-tests version ...`, `# Collective test starting: ...`). rccl-tests prints the
//! same table with its own preamble. Lines of `NCCL_DEBUG=INFO`, MPI warnings and other
//! noise may appear anywhere, also inside the table; launcher prefixes are removed by
//! [`lines`](crate::accept::lines).
//!
//! A run is complete when its table is closed by the `# Avg bus bandwidth` line. The parser
//! refuses, with the line number: a table that never closes (truncated output), a row with
//! the wrong number of fields or a field that is not a number (mangled), a damaged line
//! inside the table, an average that does not agree with the rows (nccl-tests prints the
//! mean of every bus bandwidth in the table), and fewer rows than the run's own size
//! parameters promise. What a run means for acceptance (enough ranks, large enough
//! messages) is the judge's business, not the parser's.

use super::{Check, Measure, NcclRun, OutOfBounds, Params, Rank, Row, Step, Suite};
use crate::accept::lines::{Line, each, fields, number};
use crate::line_error::LineError;

/// Collectives nccl-tests and rccl-tests ship, longest name first so that a file name
/// `reduce_scatter_perf.log` is not taken for `reduce`.
const COLLECTIVES: &[&str] = &[
    "reduce_scatter",
    "all_reduce",
    "all_gather",
    "alltoallv",
    "alltoall",
    "broadcast",
    "sendrecv",
    "hypercube",
    "scatter",
    "gather",
    "reduce",
];

/// Normalises `all_reduce_perf`, `all_reduce_perf_mpi` to `all_reduce`.
fn collective_name(binary: &str) -> String {
    let name = binary.rsplit('/').next().unwrap_or(binary);
    let name = name.strip_suffix("_mpi").unwrap_or(name);
    name.strip_suffix("_perf").unwrap_or(name).to_owned()
}

/// A collective named in a file name (`..._all_reduce-8xA100.log`), if exactly one fits.
fn collective_from_hint(hint: &str) -> Option<String> {
    let hint = hint.to_ascii_lowercase().replace('-', "_");
    COLLECTIVES
        .iter()
        .find(|c| hint.contains(*c))
        .map(|c| (*c).to_owned())
}

/// The column layout of a table, from its header line.
#[derive(Debug, Clone, PartialEq)]
struct Layout {
    /// Columns before the first `time`: `size count type [redop] [root]`.
    left: Vec<String>,
    /// 1 (out-of-place only) or 2 (out-of-place and in-place).
    groups: usize,
    line: usize,
}

impl Layout {
    fn from_header(body: &str, line: usize) -> Option<Layout> {
        let cols = fields(body);
        let has = |c: &str| cols.contains(&c);
        if !(has("size") && has("count") && has("type") && has("busbw") && has("time")) {
            return None;
        }
        let first_time = cols.iter().position(|c| *c == "time")?;
        let left: Vec<String> = cols[..first_time].iter().map(|c| (*c).to_owned()).collect();
        if left.first().map(String::as_str) != Some("size") {
            return None;
        }
        let groups = cols.iter().filter(|c| **c == "time").count();
        if !(1..=2).contains(&groups) || cols.len() != first_time + 4 * groups {
            return None;
        }
        Some(Layout { left, groups, line })
    }

    fn width(&self) -> usize {
        self.left.len() + 4 * self.groups
    }

    fn has(&self, column: &str) -> bool {
        self.left.iter().any(|c| c == column)
    }
}

struct Preamble {
    tests_version: Option<String>,
    library_version: Option<String>,
    collective: Option<String>,
    params: Option<Params>,
    ranks: Vec<Rank>,
}

struct OpenTable {
    layout: Layout,
    rows: Vec<Row>,
    out_of_bounds: Option<OutOfBounds>,
}

/// Parses every run in an nccl-tests or rccl-tests output. `hint` (the file name) names
/// the collective when the output does not.
pub fn parse(text: &str, hint: Option<&str>) -> Result<Vec<NcclRun>, LineError> {
    let mut suite = Suite::NcclTests;
    let mut pre = Preamble {
        tests_version: None,
        library_version: None,
        collective: None,
        params: None,
        ranks: Vec::new(),
    };
    let mut table: Option<OpenTable> = None;
    let mut runs = Vec::new();
    let mut last = 0;

    for line in each(text) {
        let line = &line;
        let text = line.text.trim();
        if text.is_empty() {
            continue;
        }
        last = line.number;
        if let Some(body) = text.strip_prefix('#') {
            let body = body.trim();
            let words = fields(body);
            let starts = |w: &[&str]| words.len() >= w.len() && words[..w.len()] == *w;
            if starts(&["nccl-tests", "version"]) || starts(&["rccl-tests", "version"]) {
                refuse_open(&table, line, "a new run starts")?;
                if words[0] == "rccl-tests" {
                    suite = Suite::RcclTests;
                }
                pre.tests_version = words.get(2).map(|v| (*v).to_owned());
                if let Some(lib) = words.iter().find_map(|w| w.strip_prefix("nccl-library=")) {
                    pre.library_version = nccl_code_version(lib).or(pre.library_version.take());
                }
            } else if starts(&["Collective", "test", "starting:"]) {
                refuse_open(&table, line, "a new run starts")?;
                pre.collective = words.get(3).map(|b| collective_name(b));
            } else if starts(&["Collective", "test", "concluded:"]) {
            } else if starts(&["nThread"]) {
                refuse_open(&table, line, "a new run starts")?;
                pre.params = Some(params(body, line.number)?);
                pre.ranks.clear();
            } else if starts(&["Rank"]) {
                match &table {
                    Some(open) if !open.rows.is_empty() => {
                        return Err(LineError::new(
                            line.number,
                            "a `# Rank` line inside the result table: damaged or interleaved output",
                        ));
                    }
                    _ => pre.ranks.push(rank(&words, line.number)?),
                }
            } else if let Some(layout) = Layout::from_header(body, line.number) {
                match &table {
                    Some(open) if open.rows.is_empty() && open.layout.left == layout.left => {}
                    Some(_) => refuse_open(&table, line, "a new table header appears")?,
                    None => {
                        table = Some(OpenTable {
                            layout,
                            rows: Vec::new(),
                            out_of_bounds: None,
                        });
                    }
                }
            } else if starts(&["Out", "of", "bounds", "values"]) {
                let open = table.as_mut().ok_or_else(|| {
                    LineError::new(line.number, "`Out of bounds values` outside a result table")
                })?;
                open.out_of_bounds = Some(out_of_bounds(body, line.number)?);
            } else if starts(&["Avg", "bus", "bandwidth"]) {
                let open = table.take().ok_or_else(|| {
                    LineError::new(line.number, "`Avg bus bandwidth` without a result table")
                })?;
                let avg = body
                    .split_once(':')
                    .map(|(_, v)| v.trim())
                    .and_then(|v| fields(v).first().copied())
                    .and_then(number)
                    .ok_or_else(|| {
                        LineError::new(line.number, format!("`{text}`: no bandwidth value"))
                    })?;
                runs.push(close(open, &pre, suite, avg, line.number, hint)?);
            }
            continue;
        }
        // Most lines of a large log are NCCL INFO lines outside any table: each is
        // dismissed by one substring test and one prefix test, without allocating.
        if text.contains("CCL version")
            && let Some(version) = library_version(text)
        {
            if text.contains("RCCL") {
                suite = Suite::RcclTests;
            }
            pre.library_version.get_or_insert(version);
            continue;
        }
        if text.starts_with("rccl-tests:") || text.starts_with("Librccl path") {
            suite = Suite::RcclTests;
            continue;
        }
        let Some(open) = table.as_mut() else {
            continue;
        };
        let first_is_size = text
            .split_whitespace()
            .next()
            .is_some_and(|t| t.bytes().all(|b| b.is_ascii_digit()));
        if first_is_size {
            let row = row(&open.layout, &fields(text), line.number)?;
            open.rows.push(row);
        } else if damaged_row(&open.layout, text) {
            return Err(LineError::new(
                line.number,
                format!("`{text}`: looks like a damaged result row"),
            ));
        }
    }
    if let Some(open) = table {
        return Err(LineError::new(
            last.max(open.layout.line),
            format!(
                "the output ends inside the result table that starts at line {} (no `# Avg bus bandwidth` line): truncated?",
                open.layout.line
            ),
        ));
    }
    if runs.is_empty() {
        return Err(LineError::new(
            last,
            "no nccl-tests/rccl-tests result table (header and `# Avg bus bandwidth` line) found",
        ));
    }
    Ok(runs)
}

fn refuse_open(table: &Option<OpenTable>, line: &Line<'_>, what: &str) -> Result<(), LineError> {
    match table {
        Some(open) if !open.rows.is_empty() => Err(LineError::new(
            line.number,
            format!(
                "{what} before the result table that starts at line {} ended (no `# Avg bus bandwidth` line): truncated run?",
                open.layout.line
            ),
        )),
        _ => Ok(()),
    }
}

/// `NCCL version 2.18.5+cuda12.2` (NCCL INFO) or `RCCL version : 2.20.5-...`.
fn library_version(text: &str) -> Option<String> {
    for key in ["NCCL version", "RCCL version"] {
        if let Some(pos) = text.find(key) {
            let rest = text[pos + key.len()..].trim_start();
            let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
            let version = fields(rest).first().copied()?;
            if version.starts_with(|c: char| c.is_ascii_digit()) {
                return Some(version.to_owned());
            }
        }
    }
    None
}

/// `22501` → `2.25.1` (NCCL_VERSION_CODE = major×10000 + minor×100 + patch).
fn nccl_code_version(code: &str) -> Option<String> {
    let n: u32 = code.parse().ok()?;
    (n >= 10000).then(|| format!("{}.{}.{}", n / 10000, (n / 100) % 100, n % 100))
}

fn params(body: &str, line: usize) -> Result<Params, LineError> {
    let words = fields(body);
    let after = |key: &str| -> Option<&str> {
        let key_words = fields(key);
        words
            .windows(key_words.len() + 1)
            .find(|w| w[..key_words.len()] == *key_words)
            .map(|w| w[key_words.len()])
    };
    let int = |key: &str| -> Result<u64, LineError> {
        after(key)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| LineError::new(line, format!("`# {body}`: no number after `{key}`")))
    };
    let step_text =
        after("step:").ok_or_else(|| LineError::new(line, format!("`# {body}`: no `step:`")))?;
    let step = if let Some(f) = step_text.strip_suffix("(factor)") {
        f.parse().ok().map(Step::Factor)
    } else if let Some(b) = step_text.strip_suffix("(bytes)") {
        b.parse().ok().map(Step::Bytes)
    } else {
        None
    };
    let step = step
        .filter(|s| !matches!(s, Step::Factor(0 | 1) | Step::Bytes(0)))
        .ok_or_else(|| LineError::new(line, format!("`step: {step_text}`: not a step")))?;
    let small = |v: u64, key: &str| {
        u32::try_from(v).map_err(|_| LineError::new(line, format!("`{key} {v}`: too large")))
    };
    let params = Params {
        threads: small(int("nThread")?, "nThread")?,
        gpus_per_thread: small(int("nGpus")?, "nGpus")?,
        min_bytes: int("minBytes")?,
        max_bytes: int("maxBytes")?,
        step,
        iters: words
            .iter()
            .enumerate()
            .find(|(i, w)| {
                **w == "iters:" && (*i == 0 || !matches!(words[i - 1], "warmup" | "agg"))
            })
            .and_then(|(i, _)| words.get(i + 1))
            .and_then(|v| v.parse().ok()),
        validation: after("validation:").and_then(|v| match v {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }),
    };
    if params.min_bytes > params.max_bytes {
        return Err(LineError::new(
            line,
            format!(
                "minBytes {} is above maxBytes {}",
                params.min_bytes, params.max_bytes
            ),
        ));
    }
    Ok(params)
}

fn rank(words: &[&str], line: usize) -> Result<Rank, LineError> {
    let bad = || LineError::new(line, format!("`# {}`: not a rank line", words.join(" ")));
    let after = |key: &str| {
        words
            .iter()
            .position(|w| *w == key)
            .and_then(|i| words.get(i + 1))
    };
    let rank = after("Rank").and_then(|v| v.parse().ok()).ok_or_else(bad)?;
    let host = after("on").ok_or_else(bad)?;
    let device_at = words.iter().position(|w| *w == "device").ok_or_else(bad)?;
    let device = words
        .get(device_at + 1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(bad)?;
    let bus = words
        .get(device_at + 2)
        .and_then(|b| b.strip_prefix('[')?.strip_suffix(']'))
        .ok_or_else(bad)?;
    let name = words[(device_at + 3).min(words.len())..].join(" ");
    Ok(Rank {
        rank,
        host: (*host).to_owned(),
        device,
        bus: bus.to_owned(),
        name: (!name.is_empty()).then_some(name),
    })
}

fn out_of_bounds(body: &str, line: usize) -> Result<OutOfBounds, LineError> {
    let value = body
        .split_once(':')
        .map(|(_, v)| fields(v))
        .unwrap_or_default();
    match value.as_slice() {
        [count, verdict] => {
            let count = count.parse().map_err(|_| {
                LineError::new(line, format!("`# {body}`: `{count}` is not a count"))
            })?;
            let ok = match *verdict {
                "OK" => true,
                "FAILED" => false,
                other => {
                    return Err(LineError::new(
                        line,
                        format!("`# {body}`: `{other}` is neither OK nor FAILED"),
                    ));
                }
            };
            Ok(OutOfBounds { count, ok })
        }
        _ => Err(LineError::new(
            line,
            format!("`# {body}`: expected `: N OK|FAILED`"),
        )),
    }
}

fn row(layout: &Layout, tokens: &[&str], line: usize) -> Result<Row, LineError> {
    let measures = 4 * layout.groups;
    let text = tokens.join(" ");
    if tokens.len() < 3 + measures || tokens.len() > layout.width() {
        return Err(LineError::new(
            line,
            format!(
                "`{text}`: {} fields, the table header (line {}) has {}: damaged or truncated row",
                tokens.len(),
                layout.line,
                layout.width()
            ),
        ));
    }
    let left = &tokens[..tokens.len() - measures];
    // Old alltoall rows leave `redop` blank; anything else missing is damage.
    let blank_redop = left.len() + 1 == layout.left.len() && layout.has("redop");
    if left.len() != layout.left.len() && !blank_redop {
        return Err(LineError::new(
            line,
            format!(
                "`{text}`: {} fields, the table header (line {}) has {}",
                tokens.len(),
                layout.line,
                layout.width()
            ),
        ));
    }
    let int = |t: &str, what: &str| -> Result<u64, LineError> {
        t.parse().map_err(|_| {
            LineError::new(
                line,
                format!("`{text}`: {what} `{t}` is not a whole number"),
            )
        })
    };
    let mut redop = None;
    let mut root = None;
    let columns: Vec<&str> = layout
        .left
        .iter()
        .map(String::as_str)
        .filter(|c| !(blank_redop && *c == "redop"))
        .collect();
    for (column, value) in columns.iter().zip(left).skip(3) {
        match *column {
            "redop" => redop = Some((*value).to_owned()),
            "root" => {
                root = Some(value.parse().map_err(|_| {
                    LineError::new(line, format!("`{text}`: root `{value}` is not a number"))
                })?);
            }
            _ => {}
        }
    }
    let measure = |at: usize| -> Result<Measure, LineError> {
        let t = &tokens[at..at + 4];
        let num = |v: &str, what: &str| {
            number(v).ok_or_else(|| {
                LineError::new(line, format!("`{text}`: {what} `{v}` is not a number"))
            })
        };
        Ok(Measure {
            time_us: num(t[0], "time")?,
            algbw: num(t[1], "algbw")?,
            busbw: num(t[2], "busbw")?,
            check: check(t[3]).ok_or_else(|| {
                LineError::new(
                    line,
                    format!(
                        "`{text}`: `{}` is not a result check (`N/A`, a count or an error)",
                        t[3]
                    ),
                )
            })?,
        })
    };
    let first = tokens.len() - measures;
    Ok(Row {
        line,
        size: int(left[0], "size")?,
        count: int(left[1], "count")?,
        dtype: left[2].to_owned(),
        redop,
        root,
        out_of_place: measure(first)?,
        in_place: if layout.groups == 2 {
            Some(measure(first + 4)?)
        } else {
            None
        },
    })
}

fn check(token: &str) -> Option<Check> {
    if token == "N/A" {
        return Some(Check::NotChecked);
    }
    if token.bytes().all(|b| b.is_ascii_digit()) {
        return token.parse().ok().map(Check::Wrong);
    }
    let (value, exceeded) = match token.strip_suffix('*') {
        Some(v) => (v, true),
        None => (token, false),
    };
    number(value).map(|value| Check::Error { value, exceeded })
}

/// A line in the table that is not a row but has a row's shape: most fields numbers.
fn damaged_row(layout: &Layout, text: &str) -> bool {
    let width = layout.width();
    let count = text.split_whitespace().count();
    if count + 1 < width || count > width + 1 {
        return false;
    }
    let numeric = text
        .split_whitespace()
        .filter(|t| t.parse::<f64>().is_ok() || *t == "N/A")
        .count();
    numeric * 2 >= count
}

fn close(
    open: OpenTable,
    pre: &Preamble,
    suite: Suite,
    avg: f64,
    avg_line: usize,
    hint: Option<&str>,
) -> Result<NcclRun, LineError> {
    let OpenTable {
        layout,
        rows,
        out_of_bounds,
    } = open;
    if rows.is_empty() {
        return Err(LineError::new(
            avg_line,
            format!(
                "the result table that starts at line {} has no rows",
                layout.line
            ),
        ));
    }
    // nccl-tests' average is the mean of every bus bandwidth printed (out-of-place and
    // in-place), each rounded to 2 decimals.
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|r| {
            std::iter::once(r.out_of_place.busbw).chain(r.in_place.as_ref().map(|m| m.busbw))
        })
        .collect();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if (mean - avg).abs() > 0.01 + avg * 1e-3 {
        return Err(LineError::new(
            avg_line,
            format!(
                "`Avg bus bandwidth` {avg} does not match the {} rows above (their mean is {mean:.4}): rows missing or numbers damaged",
                rows.len()
            ),
        ));
    }
    if let Some(p) = &pre.params {
        let expected = p.expected_sizes();
        if rows.len() as u64 != expected {
            return Err(LineError::new(
                avg_line,
                format!(
                    "the table has {} rows, its parameters (minBytes {}, maxBytes {}, {}) make {expected}: rows missing or damaged",
                    rows.len(),
                    p.min_bytes,
                    p.max_bytes,
                    match p.step {
                        Step::Factor(f) => format!("factor {f}"),
                        Step::Bytes(b) => format!("step {b} bytes"),
                    }
                ),
            ));
        }
    }
    let collective = pre
        .collective
        .clone()
        .or_else(|| hint.and_then(collective_from_hint))
        .or_else(|| infer_collective(&rows, pre.ranks.len()));
    Ok(NcclRun {
        suite,
        tests_version: pre.tests_version.clone(),
        library_version: pre.library_version.clone(),
        collective,
        params: pre.params.clone(),
        ranks: pre.ranks.clone(),
        rows,
        out_of_bounds,
        avg_busbw: avg,
        lines: (layout.line, avg_line),
    })
}

/// The collective, from the reduction column and the ratio of bus to algorithm
/// bandwidth nccl-tests applies: 2(n-1)/n for all_reduce, (n-1)/n for reduce_scatter,
/// all_gather and alltoall, 1 for broadcast, reduce and sendrecv. Only unambiguous cases.
fn infer_collective(rows: &[Row], ranks: usize) -> Option<String> {
    // With 2 ranks all_reduce, reduce and broadcast all have a ratio of 1.
    if ranks < 3 {
        return None;
    }
    let row = rows
        .iter()
        .filter(|r| r.out_of_place.algbw >= 1.0)
        .max_by_key(|r| r.size)?;
    let ratio = row.out_of_place.busbw / row.out_of_place.algbw;
    let n = ranks as f64;
    let near = |want: f64| (ratio - want).abs() < 0.02 * want;
    let reduces = row.redop.as_deref().is_some_and(|op| op != "none");
    if reduces && near(2.0 * (n - 1.0) / n) {
        Some("all_reduce".to_owned())
    } else if reduces && near((n - 1.0) / n) {
        Some("reduce_scatter".to_owned())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made by this project in the new nccl-tests format (2.17), 2 GPUs, three sizes.
    const NEW: &str = "\
# nccl-tests version 2.17.6 nccl-headers=22501 nccl-library=22501
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  4242 on     node-a device  0 [0000:0f:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  4243 on     node-a device  1 [0000:2f:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
node-a:4242:4250 [0] NCCL INFO Channel 00/24 : 0 1
     1048576        262144     float     sum      -1    20.00   52.43   52.43       0    20.00   52.43   52.43       0
     2097152        524288     float     sum      -1    30.00   69.91   69.91       0    30.00   69.91   69.91       0
     4194304       1048576     float     sum      -1    40.00  104.86  104.86       0    40.00  104.86  104.86       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 75.7333 
#
# Collective test concluded: all_reduce_perf
";

    #[test]
    fn new_format_reads_every_part() {
        let runs = parse(NEW, None).unwrap();
        assert_eq!(runs.len(), 1);
        let run = &runs[0];
        assert_eq!(run.tests_version.as_deref(), Some("2.17.6"));
        assert_eq!(run.library_version.as_deref(), Some("2.25.1"));
        assert_eq!(run.collective.as_deref(), Some("all_reduce"));
        assert_eq!(run.ranks.len(), 2);
        assert_eq!(run.ranks[1].bus, "0000:2f:00");
        assert_eq!(run.ranks[1].name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(run.rows.len(), 3);
        assert_eq!(run.peak_busbw(), Some(104.86));
        assert_eq!(run.avg_busbw, 75.7333);
        assert_eq!(run.params.as_ref().unwrap().expected_sizes(), 3);
        assert_eq!(run.data_errors(), 0);
        assert_eq!(run.lines, (10, 17));
    }

    #[test]
    fn truncated_output_is_refused_with_its_line() {
        let cut: String = NEW.lines().take(14).map(|l| format!("{l}\n")).collect();
        let err = parse(&cut, None).unwrap_err();
        assert_eq!(err.line, 14);
        assert!(err.message.contains("truncated"), "{err}");
        // Cut in the middle of a row.
        let cut = &NEW[..NEW.find("   69.91       0    30.00").unwrap()];
        let err = parse(cut, None).unwrap_err();
        assert_eq!(err.line, 14, "{err}");
    }

    #[test]
    fn mangled_numbers_are_refused() {
        let bad = NEW.replace(
            "104.86  104.86       0    40.00",
            "1o4.86  104.86       0    40.00",
        );
        let err = parse(&bad, None).unwrap_err();
        assert_eq!(err.line, 15);
        assert!(err.message.contains("algbw"), "{err}");
        // A changed number that still parses: the average no longer agrees.
        let bad = NEW.replace(
            "52.43   52.43       0    20.00",
            "52.43   12.43       0    20.00",
        );
        let err = parse(&bad, None).unwrap_err();
        assert_eq!(err.line, 17);
        // A dropped row.
        let dropped: String = NEW
            .lines()
            .filter(|l| !l.contains("2097152"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(parse(&dropped, None).is_err());
        // A damaged row that no longer starts with a digit.
        let bad = NEW.replace("     2097152        524288", "     x097152        524288");
        assert!(parse(&bad, None).unwrap_err().message.contains("damaged"));
    }

    #[test]
    fn wrong_results_are_counted() {
        let bad = NEW
            .replace("104.86       0    40.00", "104.86       3    40.00")
            .replace(
                "# Out of bounds values : 0 OK",
                "# Out of bounds values : 3 FAILED",
            );
        let run = &parse(&bad, None).unwrap()[0];
        assert_eq!(run.data_errors(), 3);
        assert_eq!(
            run.out_of_bounds,
            Some(OutOfBounds {
                count: 3,
                ok: false
            })
        );
    }

    #[test]
    fn collective_comes_from_the_hint_or_the_table() {
        let no_name = NEW.replace("# Collective test starting: all_reduce_perf\n", "");
        let run = &parse(&no_name, None).unwrap()[0];
        // 2 ranks: busbw = algbw × 2(n-1)/n = algbw.
        assert_eq!(
            run.collective.as_deref(),
            None,
            "ratio 1 with 2 ranks is ambiguous"
        );
        let run = &parse(&no_name, Some("node-a_reduce_scatter.log")).unwrap()[0];
        assert_eq!(run.collective.as_deref(), Some("reduce_scatter"));
        assert_eq!(
            collective_from_hint("x-all-reduce-8x.log").as_deref(),
            Some("all_reduce")
        );
    }

    #[test]
    fn rccl_preamble_is_recognised() {
        let text = format!(
            "rccl-tests: Version develop:a7809b3\nRCCL version : 2.20.5-HEAD:0c8ed4c\nHIP version  : 6.2.41133\n{}",
            NEW.lines()
                .skip(2)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
        let run = &parse(&text, None).unwrap()[0];
        assert_eq!(run.suite, Suite::RcclTests);
        assert_eq!(run.library_version.as_deref(), Some("2.20.5-HEAD:0c8ed4c"));
    }

    #[test]
    fn rank_lines_of_every_generation() {
        let old = rank(
            &fields("Rank  0 Pid 112424 on localhost device  0 [0x00] A100-SXM4-40GB"),
            1,
        )
        .unwrap();
        assert_eq!(old.host, "localhost");
        assert_eq!(old.name.as_deref(), Some("A100-SXM4-40GB"));
        let mi355 = rank(
            &fields("Rank  3 Group  0 Pid 77 on mi-01 device  3 [0000:05:00.0]"),
            1,
        )
        .unwrap();
        assert_eq!(mi355.device, 3);
        assert_eq!(mi355.name, None);
        assert!(rank(&fields("Rank x on"), 7).is_err());
    }

    #[test]
    fn linear_steps_count_their_sizes() {
        let p = params("nThread 1 nGpus 1 minBytes 1048576 maxBytes 4294967296 step: 2147483648(bytes) warmup iters: 5 iters: 20 validation: 1", 1).unwrap();
        assert_eq!(p.expected_sizes(), 2);
        assert_eq!(p.iters, Some(20));
        assert!(params("nThread 1 nGpus 1 minBytes 1 maxBytes 2 step: 1(factor)", 1).is_err());
    }
}
