//! The break-glass file: an operator's written decision to let a node whose
//! verification failed start kubelet anyway — with a reason, and only until
//! an expiry, so an override made during an incident cannot silently stay
//! in force for the node's lifetime.
//!
//! ```text
//! # /etc/nodeimg/break-glass
//! reason: INC-1234 replacing GPU 3, fabric degraded until then
//! expires: 2026-12-24T18:00:00Z
//! ```
//!
//! `expires` is RFC 3339 in UTC (`Z` or `+00:00`). A file without a reason
//! or without an expiry, with an expiry in the past, or one that cannot be
//! parsed does not apply; why is reported and recorded.

use std::fmt;

/// A break-glass that applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakGlass {
    pub reason: String,
    /// Unix seconds.
    pub expires: u64,
}

impl fmt::Display for BreakGlass {
    /// How the report and the record name it: `<reason> (until <expiry>)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (until {})",
            self.reason,
            crate::time::rfc3339(self.expires)
        )
    }
}

/// What a failed boot verification prints on stderr (the journal), so the on-call
/// engineer has the way out at hand instead of in the README: where the evidence and the
/// record went, and the command that writes a break-glass file valid for a day (with
/// `REASON` to replace) and restarts verify and kubelet.
pub fn instructions(
    path: &std::path::Path,
    now: u64,
    evidence: Option<&std::path::Path>,
    record: Option<&str>,
) -> String {
    let mut out = String::from("verification failed at boot: kubelet stays down on this node.\n");
    match evidence {
        Some(e) => out.push_str(&format!("  evidence: {}\n", e.display())),
        None => out.push_str("  evidence: none kept (--evidence-on-fail DIR keeps a capture)\n"),
    }
    if let Some(r) = record {
        out.push_str(&format!("  record: {r}\n"));
    }
    out.push_str(&format!(
        "  break glass (start kubelet anyway; recorded as overridden, until the expiry):\n    printf 'reason: %s\\nexpires: %s\\n' 'INC-…: REASON' '{}' > {} && systemctl restart nodeimg-verify kubelet\n",
        crate::time::rfc3339(now + 86_400),
        path.display()
    ));
    out
}

/// The longest reason kept.
const MAX_REASON: usize = 500;

/// Reads the file's text at `now` (Unix seconds).
pub fn parse(text: &str, now: u64) -> Result<BreakGlass, String> {
    let mut reason = None;
    let mut expires = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "line {}: expected `reason: …` or `expires: <RFC 3339 time>`",
                i + 1
            ));
        };
        let value = value.trim();
        match key.trim() {
            "reason" if !value.is_empty() => {
                reason = Some(value.chars().take(MAX_REASON).collect())
            }
            "reason" => return Err(format!("line {}: the reason is empty", i + 1)),
            "expires" => {
                expires = Some(
                    parse_rfc3339(value).map_err(|e| format!("line {}: expires: {e}", i + 1))?,
                )
            }
            other => return Err(format!("line {}: unknown key `{other}`", i + 1)),
        }
    }
    let reason: String = reason.ok_or("no `reason:` line; say why the node may start")?;
    let expires = expires.ok_or("no `expires:` line; say until when it applies (RFC 3339, UTC)")?;
    if expires <= now {
        return Err(format!(
            "expired at {} (reason was: {reason})",
            crate::time::rfc3339(expires)
        ));
    }
    Ok(BreakGlass { reason, expires })
}

/// `YYYY-MM-DDTHH:MM:SS` followed by `Z` or `+00:00`, as Unix seconds.
fn parse_rfc3339(s: &str) -> Result<u64, String> {
    let bad = || format!("`{s}` is not an RFC 3339 UTC time like 2026-12-24T18:00:00Z");
    let body = s
        .strip_suffix('Z')
        .or_else(|| s.strip_suffix("+00:00"))
        .ok_or_else(bad)?;
    let (date, time) = body.split_once(['T', 't', ' ']).ok_or_else(bad)?;
    let num = |t: &str| t.parse::<u64>().map_err(|_| bad());
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    let ([y, mo, da], [h, mi, se]) = (d.as_slice(), t.as_slice()) else {
        return Err(bad());
    };
    let (year, month, day) = (num(y)?, num(mo)?, num(da)?);
    let (hour, minute, second) = (num(h)?, num(mi)?, num(se)?);
    if !(1970..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(bad());
    }
    let days = days_from_civil(year as i64, month as i64, day as i64);
    Ok(days as u64 * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days since 1970-01-01 (H. Hinnant's algorithm, the inverse of
/// `time::civil_from_days`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::rfc3339;

    const NOW: u64 = 1_794_738_600; // 2026-11-15T10:30:00Z

    #[test]
    fn a_reason_and_a_future_expiry_apply() {
        let b = parse(
            "# INC-1234\nreason: replacing GPU 3\nexpires: 2026-12-24T18:00:00Z\n",
            NOW,
        )
        .unwrap();
        assert_eq!(b.reason, "replacing GPU 3");
        assert_eq!(rfc3339(b.expires), "2026-12-24T18:00:00Z");
        assert_eq!(
            b.to_string(),
            "replacing GPU 3 (until 2026-12-24T18:00:00Z)"
        );
        assert!(parse("reason: x\nexpires: 2026-11-15T10:30:01+00:00", NOW).is_ok());
    }

    #[test]
    fn expired_reasonless_or_unbounded_files_do_not_apply() {
        let err = parse("reason: r\nexpires: 2026-11-15T10:30:00Z", NOW).unwrap_err();
        assert!(err.contains("expired at 2026-11-15T10:30:00Z"), "{err}");
        assert!(err.contains("reason was: r"), "{err}");
        assert!(
            parse("expires: 2027-01-01T00:00:00Z", NOW)
                .unwrap_err()
                .contains("reason")
        );
        assert!(parse("reason: r", NOW).unwrap_err().contains("expires"));
        // The old format (a bare reason) has no expiry: refused.
        assert!(parse("INC-1234: replacing GPU 3", NOW).is_err());
        for bad in [
            "2027-01-01",
            "2027-13-01T00:00:00Z",
            "2027-01-01T00:00:00+02:00",
            "soon",
        ] {
            let err = parse(&format!("reason: r\nexpires: {bad}"), NOW).unwrap_err();
            assert!(err.contains("RFC 3339"), "{bad}: {err}");
        }
        assert!(parse("reason: \nexpires: 2027-01-01T00:00:00Z", NOW).is_err());
        assert!(
            parse("color: red", NOW)
                .unwrap_err()
                .contains("unknown key")
        );
    }

    #[test]
    fn the_calendar_round_trips() {
        for t in [0, 951_782_400, NOW, 4_102_444_800, 253_402_300_799] {
            assert_eq!(parse_rfc3339(&rfc3339(t)).unwrap(), t);
        }
    }
}
