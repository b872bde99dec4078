//! A progress bar on stderr for runs longer than a second, shown only on a terminal.

use crate::clock::Stopwatch;
use std::io::{IsTerminal, Write};

/// Draws `[#####.....] 45%  27.0/60.0 s simulated  eta 3 s` in place.
pub struct Progress {
    enabled: bool,
    watch: Stopwatch,
    shown: bool,
    label: String,
}

impl Progress {
    /// A bar labelled `label`; silent unless stderr is a terminal.
    pub fn new(label: &str) -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            watch: Stopwatch::start(),
            shown: false,
            label: label.to_string(),
        }
    }

    /// Reports that `done` of `total` simulated seconds are done.
    pub fn update(&mut self, done: f64, total: f64) {
        let elapsed = self.watch.secs();
        if !self.enabled || elapsed < 1.0 || total <= 0.0 {
            return;
        }
        let frac = (done / total).clamp(0.0, 1.0);
        let width = 30;
        let filled = (frac * width as f64).round() as usize;
        let eta = if frac > 0.0 {
            elapsed * (1.0 - frac) / frac
        } else {
            0.0
        };
        let bar: String = "#".repeat(filled) + &".".repeat(width - filled);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{} [{bar}] {:3.0}%  {done:.1}/{total:.1} s simulated  eta {eta:.0} s ",
            self.label,
            frac * 100.0
        );
        let _ = err.flush();
        self.shown = true;
    }

    /// Clears the bar.
    pub fn finish(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(100));
            let _ = err.flush();
        }
    }
}
