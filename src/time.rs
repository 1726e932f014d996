//! Wall-clock time, in one place: the clock edge (the only read of the system
//! clock, replaceable in tests) and UTC timestamps in RFC 3339
//! (`2026-11-15T08:30:00Z`) for reports, records, capture manifests and image
//! `created` times, without a calendar dependency.
//!
//! Durations (timeouts, elapsed time) use `std::time::Instant` where they are
//! measured; only calendar time lives here.

use std::time::{SystemTime, UNIX_EPOCH};

/// Where "now" comes from.
pub trait Clock {
    /// Seconds since 1970-01-01T00:00:00Z.
    fn unix_seconds(&self) -> u64;

    /// Now, as RFC 3339 UTC with second precision.
    fn rfc3339(&self) -> String {
        rfc3339(self.unix_seconds())
    }
}

/// The machine's clock. A clock set before 1970 reads as the epoch.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn unix_seconds(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

/// A clock stopped at one instant (tests, replays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn unix_seconds(&self) -> u64 {
        self.0
    }
}

/// Seconds since the Unix epoch as RFC 3339 UTC, e.g. `1970-01-01T00:00:00Z`.
pub fn rfc3339(seconds: u64) -> String {
    let days = seconds / 86_400;
    let rest = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// RFC 3339 without `-` and `:`, for file names: `20261115T083000Z`.
pub fn compact(rfc3339: &str) -> String {
    rfc3339.chars().filter(|c| *c != '-' && *c != ':').collect()
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day);
/// Howard Hinnant's `civil_from_days`
/// (<https://howardhinnant.github.io/date_algorithms.html#civil_from_days>),
/// for the non-negative day counts a `u64` of seconds gives.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        // `date -u -d @951782400` → 2000-02-29 00:00:00 (a leap day).
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(1_794_738_600), "2026-11-15T10:30:00Z");
        // 2100 is not a leap year: 28 February is followed by 1 March.
        assert_eq!(rfc3339(4_107_456_000), "2100-02-28T00:00:00Z");
        assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(compact("2026-11-15T09:50:00Z"), "20261115T095000Z");
        assert_eq!(FixedClock(0).rfc3339(), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn every_day_follows_the_previous_one() {
        // Walk 1970..2400 day by day: the date advances by exactly one calendar day.
        let month_len = |y: u64, m: u64| match m {
            2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut prev = civil_from_days(0);
        assert_eq!(prev, (1970, 1, 1));
        for days in 1..157_000 {
            let next = civil_from_days(days);
            let (y, m, d) = prev;
            let expected = if d < month_len(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            assert_eq!(next, expected, "day {days}");
            prev = next;
        }
    }
}
