//! Versions as vendors write them (`550.127.05`, `1.31.4`, `5.15.0-126-generic`,
//! `96.00.74.00.01`, `v25.3.4`) and constraints over them (`>=550.54, <560`).
//!
//! Vendor versions are not semver: components can have leading zeros, four or
//! five parts, or a distro suffix. Ordering is therefore "natural": the text
//! is split into runs of digits and other characters; digit runs compare as
//! numbers, other runs as text, and a missing trailing component counts as 0,
//! so `550.54` equals `550.54.0` and precedes `550.54.14`.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use super::text_value;

/// One version, kept as written.
#[derive(Debug, Clone)]
pub struct Version {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Num(u64),
    Text(String),
}

impl Version {
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The first `n` numeric components (`1.31.4` → `[1, 31]` for n = 2).
    pub fn numbers(&self) -> Vec<u64> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Num(n) => Some(*n),
                Part::Text(_) => None,
            })
            .collect()
    }

    pub fn major(&self) -> u64 {
        self.numbers().first().copied().unwrap_or(0)
    }

    pub fn minor(&self) -> u64 {
        self.numbers().get(1).copied().unwrap_or(0)
    }

    /// True when every component of `prefix` equals the same component here
    /// (`12.4` is a prefix of `12.4.1`).
    pub fn starts_with(&self, prefix: &Version) -> bool {
        prefix.parts.len() <= self.parts.len()
            && self.parts[..prefix.parts.len()] == prefix.parts[..]
    }
}

impl FromStr for Version {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let body = s.strip_prefix('v').unwrap_or(s);
        if body.is_empty() {
            return Err("a version must not be empty".into());
        }
        if !body.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "version `{s}` must start with a digit (or `v` and a digit)"
            ));
        }
        if let Some(c) = body
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_' | '~')))
        {
            return Err(format!(
                "version `{s}` contains `{c}`; use digits, letters, `.`, `-`, `+`, `_`, `~`"
            ));
        }
        let mut parts = Vec::new();
        let mut chars = body.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_digit() {
                let mut digits = String::new();
                while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(d);
                    chars.next();
                }
                let n = digits
                    .parse()
                    .map_err(|_| format!("version component `{digits}` in `{s}` is too large"))?;
                parts.push(Part::Num(n));
            } else if c.is_ascii_alphabetic() {
                let mut word = String::new();
                while let Some(&d) = chars.peek().filter(|d| d.is_ascii_alphabetic()) {
                    word.push(d);
                    chars.next();
                }
                parts.push(Part::Text(word));
            } else {
                chars.next();
            }
        }
        Ok(Self {
            text: s.to_string(),
            parts,
        })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.parts.len().max(other.parts.len());
        let zero = Part::Num(0);
        for i in 0..n {
            let a = self.parts.get(i).unwrap_or(&zero);
            let b = other.parts.get(i).unwrap_or(&zero);
            let ord = match (a, b) {
                (Part::Num(x), Part::Num(y)) => x.cmp(y),
                // A release (number) sorts after a pre-release word (`1.0` > `1.0rc1`).
                (Part::Num(_), Part::Text(_)) => Ordering::Greater,
                (Part::Text(_), Part::Num(_)) => Ordering::Less,
                (Part::Text(x), Part::Text(y)) => x.cmp(y),
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

text_value!(
    Version,
    "version",
    "A version as the vendor writes it, e.g. 550.127.05, 1.31.4, 5.15.0-126-generic.",
    numbers = false
);

/// A comparison operator in a constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Ge,
    Gt,
    Le,
    Lt,
    /// `=1.31` written bare as `1.31.*`-style prefix match: `~1.31` matches 1.31.x.
    Prefix,
}

/// A conjunction of comparisons: `>=550.54, <560`. A bare version means `=`.
#[derive(Debug, Clone)]
pub struct VersionReq {
    text: String,
    clauses: Vec<(Op, Version)>,
}

impl VersionReq {
    pub fn matches(&self, v: &Version) -> bool {
        self.clauses.iter().all(|(op, want)| match op {
            Op::Eq => v == want,
            Op::Ne => v != want,
            Op::Ge => v >= want,
            Op::Gt => v > want,
            Op::Le => v <= want,
            Op::Lt => v < want,
            Op::Prefix => v.starts_with(want),
        })
    }

    /// The single version when the constraint is an exact pin (`=X` or `X`).
    pub fn exact(&self) -> Option<&Version> {
        match self.clauses.as_slice() {
            [(Op::Eq, v)] => Some(v),
            _ => None,
        }
    }

    /// True when some version satisfies both constraints, judged on the
    /// versions the two name (enough for ranges written by people).
    pub fn overlaps(&self, other: &VersionReq) -> bool {
        let candidates = self
            .clauses
            .iter()
            .chain(other.clauses.iter())
            .map(|(_, v)| v);
        candidates
            .clone()
            .any(|v| self.matches(v) && other.matches(v))
            || (self
                .clauses
                .iter()
                .all(|(op, _)| matches!(op, Op::Ge | Op::Gt | Op::Ne))
                && other
                    .clauses
                    .iter()
                    .all(|(op, _)| matches!(op, Op::Ge | Op::Gt | Op::Ne)))
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `=v`.
    pub fn exactly(v: &Version) -> Self {
        Self {
            text: format!("={v}"),
            clauses: vec![(Op::Eq, v.clone())],
        }
    }

    /// `v` written bare, which means `=v` (how a blueprint pins a release).
    pub fn pinned(v: &Version) -> Self {
        Self {
            text: v.to_string(),
            clauses: vec![(Op::Eq, v.clone())],
        }
    }

    /// `>=v`.
    pub fn at_least(v: &Version) -> Self {
        Self {
            text: format!(">={v}"),
            clauses: vec![(Op::Ge, v.clone())],
        }
    }

    /// The tightest lower and upper bounds the clauses give, each with
    /// whether it is inclusive. `~1.31` is bounded by 1.31 below and by
    /// the versions that still start with 1.31 above (kept as a prefix).
    fn bounds(&self) -> (Option<(&Version, bool)>, Option<Upper<'_>>) {
        let mut lo: Option<(&Version, bool)> = None;
        let mut hi: Option<Upper<'_>> = None;
        fn raise<'v>(lo: &mut Option<(&'v Version, bool)>, v: &'v Version, inc: bool) {
            let tighter = match *lo {
                None => true,
                Some((cur, cur_inc)) => v > cur || (v == cur && cur_inc && !inc),
            };
            if tighter {
                *lo = Some((v, inc));
            }
        }
        for (op, v) in &self.clauses {
            match op {
                Op::Ge => raise(&mut lo, v, true),
                Op::Gt => raise(&mut lo, v, false),
                Op::Eq => {
                    raise(&mut lo, v, true);
                    hi = Some(Upper::min(hi, Upper::Le(v, true)));
                }
                Op::Le => hi = Some(Upper::min(hi, Upper::Le(v, true))),
                Op::Lt => hi = Some(Upper::min(hi, Upper::Le(v, false))),
                Op::Prefix => {
                    raise(&mut lo, v, true);
                    hi = Some(Upper::min(hi, Upper::Prefix(v)));
                }
                Op::Ne => {}
            }
        }
        (lo, hi)
    }

    /// True when every version `self` admits is admitted by `other`, judged
    /// on bounds (`>=570.26, <580` is within `>=570`; `>=550, <580` is not
    /// within `>=570.26`). `!=` clauses of `other` must not fall inside.
    pub fn is_within(&self, other: &VersionReq) -> bool {
        let (lo, hi) = self.bounds();
        other.clauses.iter().all(|(op, w)| match op {
            Op::Ge => lo.is_some_and(|(v, _)| v >= w),
            Op::Gt => lo.is_some_and(|(v, inc)| v > w || (v == w && !inc)),
            Op::Le => hi.as_ref().is_some_and(|h| h.at_most(w, true)),
            Op::Lt => hi.as_ref().is_some_and(|h| h.at_most(w, false)),
            Op::Eq => self.exact() == Some(w),
            Op::Prefix => {
                lo.is_some_and(|(v, _)| v.starts_with(w))
                    && hi.as_ref().is_some_and(|h| h.within_prefix(w))
            }
            Op::Ne => !self.matches(w),
        })
    }
}

/// An upper bound: a version (inclusive or not), or "still starts with".
#[derive(Debug, Clone)]
enum Upper<'a> {
    Le(&'a Version, bool),
    Prefix(&'a Version),
}

impl<'a> Upper<'a> {
    fn min(a: Option<Upper<'a>>, b: Upper<'a>) -> Upper<'a> {
        match a {
            None => b,
            Some(a) => {
                if a.at_most_upper(&b) {
                    a
                } else {
                    b
                }
            }
        }
    }

    fn at_most_upper(&self, other: &Upper<'_>) -> bool {
        match other {
            Upper::Le(v, inc) => self.at_most(v, *inc),
            Upper::Prefix(p) => self.within_prefix(p),
        }
    }

    /// Every version below this bound is `<= w` (or `< w` when not inclusive).
    fn at_most(&self, w: &Version, inclusive: bool) -> bool {
        match self {
            Upper::Le(v, inc) => *v < w || (*v == w && (inclusive || !inc)),
            // Versions starting with `p` can be arbitrarily far above `p`
            // only within the prefix; they are below `w` when `w` sorts
            // after everything that starts with `p`.
            Upper::Prefix(p) => p < &w && !w.starts_with(p),
        }
    }

    /// Every version below this bound that is also above it starts with `p`.
    fn within_prefix(&self, p: &Version) -> bool {
        match self {
            Upper::Prefix(q) => q.starts_with(p),
            Upper::Le(v, _) => v.starts_with(p),
        }
    }
}

impl FromStr for VersionReq {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut clauses = Vec::new();
        for raw in s.split(',') {
            let clause = raw.trim();
            if clause.is_empty() {
                return Err(format!("constraint `{s}` has an empty clause"));
            }
            let (op, rest) = [
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("!=", Op::Ne),
                ("==", Op::Eq),
                (">", Op::Gt),
                ("<", Op::Lt),
                ("=", Op::Eq),
                ("~", Op::Prefix),
            ]
            .iter()
            .find_map(|(p, op)| clause.strip_prefix(p).map(|r| (*op, r.trim())))
            .unwrap_or((Op::Eq, clause));
            let v: Version = rest
                .parse()
                .map_err(|e| format!("in constraint `{s}`: {e}"))?;
            clauses.push((op, v));
        }
        Ok(Self {
            text: s.to_string(),
            clauses,
        })
    }
}

impl fmt::Display for VersionReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

text_value!(
    VersionReq,
    "version-constraint",
    "A version, or comma-separated comparisons: `550.127.05`, `>=550.54, <560`, `~1.31`.",
    numbers = false
);

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn natural_order() {
        assert!(v("550.54.14") > v("550.54"));
        assert_eq!(v("550.54"), v("550.54.0"));
        assert!(v("96.00.74.00.01") > v("96.00.5.00.01"));
        assert!(v("v1.31.10") > v("1.31.9"));
        assert!(v("5.15.0-126-generic") > v("5.15.0-91-generic"));
        assert!(v("1.0") > v("1.0rc1"));
    }

    #[test]
    fn constraints() {
        let r: VersionReq = ">=550.54, <560".parse().unwrap();
        assert!(r.matches(&v("550.127.05")));
        assert!(!r.matches(&v("560.28.03")));
        assert!(!r.matches(&v("535.216.01")));
        let p: VersionReq = "~1.31".parse().unwrap();
        assert!(p.matches(&v("1.31.4")) && !p.matches(&v("1.32.0")));
        assert_eq!(r.exact(), None);
        assert_eq!(
            "550.127.05".parse::<VersionReq>().unwrap().exact(),
            Some(&v("550.127.05"))
        );
    }

    #[test]
    fn bad_versions_explain_themselves() {
        assert!(
            "abc"
                .parse::<Version>()
                .unwrap_err()
                .contains("must start with a digit")
        );
        assert!(
            ">=".parse::<VersionReq>()
                .unwrap_err()
                .contains("in constraint `>=`")
        );
        assert!(
            "1.0 beta"
                .parse::<Version>()
                .unwrap_err()
                .contains("contains ` `")
        );
    }

    #[test]
    fn within() {
        let r = |s: &str| s.parse::<VersionReq>().unwrap();
        assert!(r(">=570.26, <580").is_within(&r(">=570.26")));
        assert!(r(">=575").is_within(&r(">=570.26")));
        assert!(!r(">=570.0, <580").is_within(&r(">=570.26")));
        assert!(!r(">=550, <580").is_within(&r(">=570.26")));
        assert!(!r("<580").is_within(&r(">=525")));
        assert!(r(">=1.30, <1.33").is_within(&r(">=1.29, <1.34")));
        assert!(!r(">=1.30").is_within(&r(">=1.29, <1.34")));
        assert!(r("~1.31").is_within(&r(">=1.31, <1.32")));
        assert!(r("~1.31").is_within(&r("~1.31")));
        assert!(!r("~1.31").is_within(&r("~1.31.2")));
        assert!(r("570.124.06").is_within(&r(">=570.26")));
        assert_eq!(VersionReq::at_least(&v("570.26")).as_str(), ">=570.26");
        assert!(VersionReq::at_least(&v("570.26")).matches(&v("570.26")));
    }

    #[test]
    fn overlap() {
        let a: VersionReq = ">=1.30, <1.33".parse().unwrap();
        let b: VersionReq = ">=1.32".parse().unwrap();
        let c: VersionReq = ">=1.34".parse().unwrap();
        assert!(a.overlaps(&b));
        assert!(!a.overlaps(&c));
    }
}
