//! The time-weighted mean of a piecewise-constant quantity over a window, for the figures the
//! CP test bed logs per run (TFRC's X, p and R at the aggregation point and at the competing
//! TFRC sender): each sample holds from its time until the next sample's.

use concord_cc::time::Instant;

/// A time-weighted mean over `[from, to)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeAverage {
    /// The window, `[from, to)`.
    window: (Instant, Instant),
    /// The last sample and its time.
    last: Option<(Instant, f64)>,
    /// The integral of the quantity over the window so far, value * seconds.
    integral: f64,
    /// The seconds of the window covered so far.
    covered: f64,
}

impl TimeAverage {
    /// An empty mean over `[from, to)`.
    pub fn new(from: Instant, to: Instant) -> TimeAverage {
        TimeAverage {
            window: (from, to),
            last: None,
            integral: 0.0,
            covered: 0.0,
        }
    }

    /// The quantity is `value` from `now` on (the previous sample held until `now`). A `now`
    /// before the last sample's is ignored.
    pub fn sample(&mut self, now: Instant, value: f64) {
        if let Some((t, v)) = self.last {
            if now < t {
                return;
            }
            let (a, b) = (t.max(self.window.0), now.min(self.window.1));
            if b > a {
                let secs = b.saturating_since(a).as_secs_f64();
                self.integral += v * secs;
                self.covered += secs;
            }
        }
        if value.is_finite() {
            self.last = Some((now, value));
        }
    }

    /// The mean over the part of the window covered so far; `None` before any of it is.
    pub fn mean(&self) -> Option<f64> {
        (self.covered > 0.0).then(|| self.integral / self.covered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Instant {
        Instant::from_secs(x)
    }

    #[test]
    fn each_sample_holds_until_the_next_and_only_the_window_counts() {
        let mut m = TimeAverage::new(s(10), s(20));
        assert_eq!(m.mean(), None);
        // 100 from 0 s to 12 s: only 10-12 s counts (2 s), then 400 from 12 s to 20 s (8 s).
        m.sample(s(0), 100.0);
        m.sample(s(12), 400.0);
        assert_eq!(m.mean(), Some(100.0));
        m.sample(s(25), 0.0);
        // (100 * 2 + 400 * 8) / 10 = 340.
        assert_eq!(m.mean(), Some(340.0));
        // A sample from the past changes nothing.
        m.sample(s(1), 1e9);
        assert_eq!(m.mean(), Some(340.0));
    }
}
