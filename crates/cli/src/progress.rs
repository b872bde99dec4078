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

/// One bar per experiment of `concord reproduce`, redrawn in place on a terminal, with a line
/// for the whole run below; on anything else, one line as each experiment finishes.
pub struct Board {
    tty: bool,
    watch: Stopwatch,
    rows: Vec<Row>,
    /// Lines drawn last time (to move back over them).
    drawn: usize,
    /// When the board was last drawn, seconds since the start.
    last_draw: f64,
    finished: usize,
}

struct Row {
    label: String,
    /// Simulated seconds the experiment took in the previous report, if known.
    expected_s: Option<f64>,
    state: State,
}

enum State {
    Queued,
    Running {
        /// Seconds since the start of the whole run.
        started: f64,
        /// Scenario runs finished.
        runs: usize,
        /// Simulated seconds done, including the current run.
        simulated_s: f64,
        /// Fraction of the current run done.
        run_fraction: f64,
    },
    Done {
        /// Wall seconds it took.
        secs: f64,
        status: String,
        runs: usize,
    },
}

/// An estimate of the time left, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Eta {
    /// Nothing left.
    Done,
    /// Every experiment left has an estimate: the longest.
    Known(f64),
    /// Some experiments left have none: at least the longest of those that do.
    AtLeast(f64),
    /// No experiment left has one.
    Unknown,
}

impl std::fmt::Display for Eta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Eta::Done => Ok(()),
            Eta::Known(s) => write!(f, "eta {s:.0} s"),
            Eta::AtLeast(s) => write!(f, "eta >= {s:.0} s"),
            Eta::Unknown => write!(f, "eta ?"),
        }
    }
}

/// Bar width, characters.
const BAR: usize = 20;
/// Longest line drawn, characters.
const LINE: usize = 118;

fn bar(frac: f64) -> String {
    let filled = ((frac.clamp(0.0, 1.0) * BAR as f64).round() as usize).min(BAR);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(BAR - filled))
}

impl Board {
    /// A board for experiments `(label, simulated seconds expected)`.
    pub fn new(experiments: Vec<(String, Option<f64>)>) -> Board {
        Board {
            tty: std::io::stderr().is_terminal(),
            watch: Stopwatch::start(),
            rows: experiments
                .into_iter()
                .map(|(label, expected_s)| Row {
                    label,
                    expected_s: expected_s.filter(|s| *s > 0.0),
                    state: State::Queued,
                })
                .collect(),
            drawn: 0,
            last_draw: f64::NEG_INFINITY,
            finished: 0,
        }
    }

    /// Experiment `i` started.
    pub fn started(&mut self, i: usize) {
        let now = self.watch.secs();
        if let Some(r) = self.rows.get_mut(i) {
            r.state = State::Running {
                started: now,
                runs: 0,
                simulated_s: 0.0,
                run_fraction: 0.0,
            };
        }
        self.draw(true);
    }

    /// Experiment `i` finished `runs` runs and simulated `simulated_s` seconds so far; its
    /// current run is `run_fraction` done.
    pub fn advanced(&mut self, i: usize, runs: usize, simulated_s: f64, run_fraction: f64) {
        if let Some(Row {
            state:
                State::Running {
                    runs: r,
                    simulated_s: s,
                    run_fraction: f,
                    ..
                },
            ..
        }) = self.rows.get_mut(i)
        {
            (*r, *s, *f) = (runs, simulated_s, run_fraction);
        }
        self.draw(false);
    }

    /// Experiment `i` finished with `status` after `runs` runs.
    pub fn finished(&mut self, i: usize, runs: usize, status: String) {
        let now = self.watch.secs();
        self.finished += 1;
        let total = self.rows.len();
        if let Some(r) = self.rows.get_mut(i) {
            let started = match r.state {
                State::Running { started, .. } => started,
                _ => now,
            };
            r.state = State::Done {
                secs: now - started,
                status,
                runs,
            };
            if !self.tty {
                let line = format!(
                    "[{}/{}] {} {}",
                    self.finished,
                    total,
                    r.label,
                    Self::detail(r, now)
                );
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
        }
        self.draw(true);
    }

    /// The text after an experiment's bar.
    fn detail(r: &Row, now: f64) -> String {
        match &r.state {
            State::Queued => "queued".into(),
            State::Running {
                started,
                runs,
                simulated_s,
                run_fraction,
            } => {
                let elapsed = now - started;
                let eta = match Self::row_eta(r, now) {
                    Some(e) => Eta::Known(e),
                    None => Eta::Unknown,
                };
                match r.expected_s {
                    Some(total) => format!(
                        "{:3.0}%  run {}  {elapsed:.0} s  {eta}",
                        (simulated_s / total).clamp(0.0, 0.99) * 100.0,
                        runs + 1
                    ),
                    None => format!(
                        "run {} at {:3.0}%  {elapsed:.0} s  {eta}",
                        runs + 1,
                        run_fraction * 100.0
                    ),
                }
            }
            State::Done { secs, status, runs } => {
                format!("{status}  {runs} runs  {secs:.1} s")
            }
        }
    }

    /// The fraction of experiment `r` done, for its bar.
    fn fraction(r: &Row) -> f64 {
        match &r.state {
            State::Queued => 0.0,
            State::Running {
                simulated_s,
                run_fraction,
                ..
            } => match r.expected_s {
                Some(total) => (simulated_s / total).clamp(0.0, 0.99),
                None => *run_fraction,
            },
            State::Done { .. } => 1.0,
        }
    }

    /// The estimate of the time left for the whole run, from the running experiments' measured
    /// progress: the longest of their estimates (they run side by side), as a lower bound
    /// while any experiment is queued or has no estimate, unknown while none has one.
    fn eta(&self, now: f64) -> Eta {
        let mut longest: Option<f64> = None;
        let mut unknown = false;
        for r in &self.rows {
            match &r.state {
                State::Queued => unknown = true,
                State::Done { .. } => {}
                State::Running { .. } => match Self::row_eta(r, now) {
                    Some(e) => longest = Some(longest.map_or(e, |l: f64| l.max(e))),
                    None => unknown = true,
                },
            }
        }
        match (longest, unknown) {
            (None, false) => Eta::Done,
            (None, true) => Eta::Unknown,
            (Some(e), false) => Eta::Known(e),
            (Some(e), true) => Eta::AtLeast(e),
        }
    }

    /// A running experiment's time left, from its simulated seconds against those of the
    /// previous report; none without a previous report or before any progress.
    fn row_eta(r: &Row, now: f64) -> Option<f64> {
        let State::Running {
            started,
            simulated_s,
            ..
        } = &r.state
        else {
            return None;
        };
        let total = r.expected_s?;
        let frac = (simulated_s / total).clamp(0.0, 0.99);
        (frac > 0.0).then(|| (now - started) * (1.0 - frac) / frac)
    }

    /// The line for the whole run: experiments done, elapsed time and an estimate of the rest.
    fn total_line(&self, now: f64) -> String {
        let n = self.rows.len().max(1);
        let done: f64 = self.rows.iter().map(Self::fraction).sum::<f64>() / n as f64;
        format!(
            "{:<28} {}  {}/{} done  {now:.0} s  {}",
            "all",
            bar(done),
            self.finished,
            self.rows.len(),
            self.eta(now)
        )
    }

    /// Redraws the board on a terminal, at most ten times a second unless `force`.
    fn draw(&mut self, force: bool) {
        let now = self.watch.secs();
        if !self.tty || (!force && now - self.last_draw < 0.1) {
            return;
        }
        self.last_draw = now;
        let mut text = String::new();
        if self.drawn > 0 {
            text.push_str(&format!("\x1b[{}A", self.drawn));
        }
        let mut lines: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                format!(
                    "{:<28} {}  {}",
                    r.label,
                    bar(Self::fraction(r)),
                    Self::detail(r, now)
                )
            })
            .collect();
        lines.push(self.total_line(now));
        for l in &lines {
            let l: String = l.chars().take(LINE).collect();
            text.push_str("\r\x1b[2K");
            text.push_str(&l);
            text.push('\n');
        }
        self.drawn = lines.len();
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_fills_with_the_fraction_done_and_stays_in_bounds() {
        assert_eq!(bar(0.0), format!("[{}]", ".".repeat(BAR)));
        assert_eq!(bar(0.5), format!("[{}{}]", "#".repeat(10), ".".repeat(10)));
        assert_eq!(bar(7.0), format!("[{}]", "#".repeat(BAR)));
        assert_eq!(bar(f64::NAN).len(), BAR + 2);
    }

    #[test]
    fn an_experiment_with_an_earlier_report_shows_its_share_and_an_eta() {
        let mut b = Board::new(vec![("x/a".into(), Some(100.0)), ("x/b".into(), None)]);
        b.tty = false;
        b.rows[0].state = State::Running {
            started: 0.0,
            runs: 2,
            simulated_s: 25.0,
            run_fraction: 0.5,
        };
        let text = Board::detail(&b.rows[0], 10.0);
        assert!(text.starts_with(" 25%  run 3"), "{text}");
        assert!(text.ends_with("eta 30 s"), "{text}");
        b.rows[1].state = State::Running {
            started: 0.0,
            runs: 0,
            simulated_s: 5.0,
            run_fraction: 0.5,
        };
        assert!((Board::fraction(&b.rows[1]) - 0.5).abs() < 1e-12);
        assert!(Board::detail(&b.rows[1], 1.0).contains("eta ?"));
    }

    #[test]
    fn the_whole_runs_eta_is_the_longest_running_estimate_and_a_lower_bound_while_work_is_unknown()
    {
        let mut b = Board::new(vec![
            ("x/short".into(), Some(10.0)),
            ("x/long".into(), Some(100.0)),
            ("x/new".into(), None),
        ]);
        b.tty = false;
        assert_eq!(b.eta(0.0), Eta::Unknown, "nothing has started");
        // x/short: 5 of 10 s simulated in 2 s, 2 s left; x/long: 10 of 100 in 5 s, 45 s left.
        b.rows[0].state = State::Running {
            started: 0.0,
            runs: 0,
            simulated_s: 5.0,
            run_fraction: 0.5,
        };
        b.rows[1].state = State::Running {
            started: -3.0,
            runs: 0,
            simulated_s: 10.0,
            run_fraction: 0.1,
        };
        assert_eq!(
            b.eta(2.0),
            Eta::AtLeast(45.0),
            "x/new is queued with no estimate"
        );
        b.rows[2].state = State::Done {
            secs: 1.0,
            status: "1/1 claims pass".into(),
            runs: 1,
        };
        assert_eq!(b.eta(2.0), Eta::Known(45.0));
        assert_eq!(b.eta(2.0).to_string(), "eta 45 s");
        assert_eq!(Eta::AtLeast(44.6).to_string(), "eta >= 45 s");
    }
}
