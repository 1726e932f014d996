//! Progress of a long build: bytes and files packed so far, the rate, and
//! the time left.
//!
//! The packager reports to a [`Progress`]; what the user sees is decided by
//! the caller: [`Silent`] when stderr is not a terminal or with `-q`, a
//! [`Meter`] that redraws one status line at most ten times a second
//! otherwise. Totals are known before the first byte is written (the plan
//! lists every file and its size), so the ETA is a straight division.

use std::io::Write;
use std::time::{Duration, Instant};

/// Receives progress from the packager.
pub trait Progress {
    /// A layer starts: its name and what it will hold.
    fn start(&mut self, layer: &str, bytes: u64, files: u64);
    /// `bytes` more content bytes and `files` more entries were packed.
    fn advance(&mut self, bytes: u64, files: u64);
    /// The layer is complete; `reused` when it came from the cache.
    fn finish(&mut self, reused: bool);
}

/// Reports nothing.
pub struct Silent;

impl Progress for Silent {
    fn start(&mut self, _: &str, _: u64, _: u64) {}
    fn advance(&mut self, _: u64, _: u64) {}
    fn finish(&mut self, _: bool) {}
}

/// One status line on a terminal, redrawn in place.
pub struct Meter<W: Write> {
    out: W,
    layer: String,
    total_bytes: u64,
    total_files: u64,
    bytes: u64,
    files: u64,
    started: Instant,
    last_draw: Option<Instant>,
    /// Below this the line is not drawn at all (a config layer of a few
    /// KiB finishes before anyone could read it).
    min_bytes: u64,
}

const REDRAW: Duration = Duration::from_millis(100);

impl<W: Write> Meter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            layer: String::new(),
            total_bytes: 0,
            total_files: 0,
            bytes: 0,
            files: 0,
            started: Instant::now(),
            last_draw: None,
            min_bytes: 8 << 20,
        }
    }

    /// Draws even tiny layers (tests).
    pub fn always(mut self) -> Self {
        self.min_bytes = 0;
        self
    }

    fn draw(&mut self, now: Instant, last: bool) {
        let elapsed = now.duration_since(self.started).as_secs_f64();
        let rate = if elapsed > 0.0 {
            self.bytes as f64 / elapsed
        } else {
            0.0
        };
        let eta = if last {
            "done".to_string()
        } else if rate > 0.0 {
            let left = self.total_bytes.saturating_sub(self.bytes) as f64 / rate;
            format!("ETA {}", seconds(left))
        } else {
            "ETA …".to_string()
        };
        let _ = write!(
            self.out,
            "\r\x1b[2K{} layer: {} / {}, {} / {} files, {}/s, {}",
            self.layer,
            size(self.bytes),
            size(self.total_bytes),
            self.files,
            self.total_files,
            size(rate as u64),
            eta
        );
        if last {
            let _ = writeln!(self.out);
        }
        let _ = self.out.flush();
        self.last_draw = Some(now);
    }

    /// What the meter has written (tests).
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Progress for Meter<W> {
    fn start(&mut self, layer: &str, bytes: u64, files: u64) {
        self.layer = layer.to_string();
        self.total_bytes = bytes;
        self.total_files = files;
        self.bytes = 0;
        self.files = 0;
        self.started = Instant::now();
        self.last_draw = None;
    }

    fn advance(&mut self, bytes: u64, files: u64) {
        self.bytes += bytes;
        self.files += files;
        if self.total_bytes < self.min_bytes {
            return;
        }
        let now = Instant::now();
        if self
            .last_draw
            .is_none_or(|t| now.duration_since(t) >= REDRAW)
        {
            self.draw(now, false);
        }
    }

    fn finish(&mut self, reused: bool) {
        if reused && self.total_bytes >= self.min_bytes {
            let _ = writeln!(
                self.out,
                "\r\x1b[2K{} layer: {} in {} files, unchanged (reused)",
                self.layer,
                size(self.total_bytes),
                self.total_files
            );
        } else if self.last_draw.is_some() {
            self.bytes = self.total_bytes;
            self.files = self.total_files;
            self.draw(Instant::now(), true);
        }
    }
}

/// `1.4 GiB`, `512.0 MiB`, `980 B`.
fn size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// `42 s`, `3 min 05 s`.
fn seconds(s: f64) -> String {
    let s = s.ceil() as u64;
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_carries_bytes_files_rate_and_eta() {
        let mut m = Meter::new(Vec::new()).always();
        m.start("overlay", 3 << 30, 1200);
        m.advance(1 << 30, 400);
        m.finish(false);
        let text = String::from_utf8(m.into_inner()).unwrap();
        assert!(
            text.contains("overlay layer: 1.0 GiB / 3.0 GiB, 400 / 1200 files"),
            "{text}"
        );
        assert!(text.contains("/s, ETA "), "{text}");
        assert!(
            text.contains("3.0 GiB / 3.0 GiB, 1200 / 1200 files"),
            "{text}"
        );
        assert!(text.ends_with("done\n"), "{text}");
    }

    #[test]
    fn small_layers_and_reused_ones_stay_quiet_or_say_so() {
        let mut m = Meter::new(Vec::new());
        m.start("config", 4096, 30);
        m.advance(4096, 30);
        m.finish(false);
        assert!(m.into_inner().is_empty());
        let mut m = Meter::new(Vec::new());
        m.start("overlay", 2 << 30, 10);
        m.finish(true);
        let text = String::from_utf8(m.into_inner()).unwrap();
        assert!(
            text.contains("overlay layer: 2.0 GiB in 10 files, unchanged (reused)"),
            "{text}"
        );
    }

    #[test]
    fn units() {
        assert_eq!(size(980), "980 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(seconds(4.2), "5 s");
        assert_eq!(seconds(185.0), "3 min 05 s");
    }
}
