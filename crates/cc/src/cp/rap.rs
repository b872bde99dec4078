//! A RAP-like rate AIMD, the second congestion control an aggregation point can run on an
//! aggregate (slides, "COORDINATION PROTOCOL (CP)": "a rate-based congestion control algorithm
//! (e.g., TFRC or RAP)").
//!
//! Rate-based additive increase, multiplicative decrease, in bytes/s:
//!
//! - **increase**: each RTT without a loss event, one more packet per RTT: X += s / R;
//! - **decrease**: on each loss event, X = X / 2; losses within one RTT form one loss event
//!   (the grouping of RFC 5348 section 5.2, done by the loss history that feeds it);
//! - **no feedback**: when no report arrives for max(4R, 2s/X) (RFC 5348 section 4.4's
//!   nofeedback interval, 2 s before the first report), X = X / 2;
//! - X never falls below s / t_mbi (RFC 5348 section 4.3); there is no slow start: X starts at
//!   one packet per RTT (one packet per second while R is unknown).

use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};

/// The smallest RTT RAP computes with, in seconds (1 us).
const MIN_RTT_SECS: f64 = 1e-6;

/// The nofeedback interval before the first report (RFC 5348 section 4.2: 2 s).
const INITIAL_NOFEEDBACK: Duration = Duration::from_secs(2);

/// A rate AIMD controller.
#[derive(Clone, Debug)]
pub struct Rap {
    /// s, the packet size, in bytes.
    s: f64,
    /// X, the rate, in bytes/s.
    x: f64,
    /// s / t_mbi, the floor of X, in bytes/s.
    min_rate: f64,
    /// R, the latest RTT, in seconds.
    rtt: Option<f64>,
    /// When the current increase period started.
    period_start: Option<Instant>,
    /// When the nofeedback timer expires.
    deadline: Instant,
}

impl Rap {
    /// A controller for packets of `segment_size` bytes (0 is taken as 1), with the floor
    /// s / `t_mbi` (a zero `t_mbi` is taken as 64 s), starting at `now` at one packet per
    /// `initial_rtt` (one per second without it).
    pub fn new(
        segment_size: Bytes,
        t_mbi: Duration,
        initial_rtt: Option<Duration>,
        now: Instant,
    ) -> Rap {
        let s = segment_size.max(1) as f64;
        let t_mbi = if t_mbi.is_zero() {
            64.0
        } else {
            t_mbi.as_secs_f64()
        };
        let rtt = initial_rtt.map(|r| r.as_secs_f64().max(MIN_RTT_SECS));
        Rap {
            s,
            x: s / rtt.unwrap_or(1.0),
            min_rate: s / t_mbi,
            rtt,
            period_start: None,
            deadline: now + INITIAL_NOFEEDBACK,
        }
    }

    /// X, the rate.
    pub fn rate(&self) -> Rate {
        Rate::from_bps_f64(self.x * 8.0)
    }

    /// X in bytes/s, unrounded.
    pub fn rate_bytes_per_sec(&self) -> f64 {
        self.x
    }

    /// A report arrived at `now` with RTT estimate `rtt` and `loss_events` new loss events:
    /// X is halved once per loss event; without one, X grows by s/R for each whole RTT since
    /// the current increase period began. The nofeedback timer restarts.
    pub fn on_feedback(&mut self, now: Instant, rtt: Duration, loss_events: u32) {
        let r = rtt.as_secs_f64().max(MIN_RTT_SECS);
        self.rtt = Some(r);
        if loss_events > 0 {
            for _ in 0..loss_events.min(64) {
                self.x = (self.x / 2.0).max(self.min_rate);
            }
            self.period_start = Some(now);
        } else {
            match self.period_start {
                None => self.period_start = Some(now),
                Some(start) => {
                    let periods = ((now - start).as_secs_f64() / r).floor();
                    if periods >= 1.0 {
                        self.x += periods * self.s / r;
                        self.period_start = Some(start + Duration::from_secs_f64(periods * r));
                    }
                }
            }
        }
        self.deadline = now + self.nofeedback_interval();
    }

    /// When the nofeedback timer expires.
    pub fn poll_timeout(&self) -> Instant {
        self.deadline
    }

    /// Expires the nofeedback timer if `now` has reached it: X is halved, the increase period
    /// restarts and so does the timer.
    pub fn handle_timeout(&mut self, now: Instant) {
        if now < self.deadline {
            return;
        }
        self.x = (self.x / 2.0).max(self.min_rate);
        self.period_start = Some(now);
        self.deadline = now + self.nofeedback_interval();
    }

    /// max(4R, 2s/X), or 2s/X while R is unknown.
    fn nofeedback_interval(&self) -> Duration {
        let by_rate = 2.0 * self.s / self.x;
        Duration::from_secs_f64(self.rtt.map_or(by_rate, |r| (4.0 * r).max(by_rate)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    const R: Duration = Duration::from_millis(100);

    #[test]
    fn rap_adds_one_packet_per_rtt_and_halves_on_a_loss_event() {
        let mut rap = Rap::new(1000, Duration::from_secs(64), Some(R), ms(0));
        // One packet per RTT: 10_000 bytes/s.
        assert_eq!(rap.rate_bytes_per_sec(), 10_000.0);
        rap.on_feedback(ms(0), R, 0);
        rap.on_feedback(ms(50), R, 0);
        assert_eq!(rap.rate_bytes_per_sec(), 10_000.0);
        // One RTT: +1000 / 0.1 = +10_000 bytes/s; three more RTTs at once: +30_000.
        rap.on_feedback(ms(100), R, 0);
        assert_eq!(rap.rate_bytes_per_sec(), 20_000.0);
        rap.on_feedback(ms(430), R, 0);
        assert_eq!(rap.rate_bytes_per_sec(), 50_000.0);
        rap.on_feedback(ms(440), R, 1);
        assert_eq!(rap.rate_bytes_per_sec(), 25_000.0);
        // The increase period restarted at the loss.
        rap.on_feedback(ms(530), R, 0);
        assert_eq!(rap.rate_bytes_per_sec(), 25_000.0);
        rap.on_feedback(ms(540), R, 0);
        assert_eq!(rap.rate_bytes_per_sec(), 35_000.0);
        assert_eq!(rap.rate(), Rate::from_bps(280_000));
    }

    #[test]
    fn rap_halves_without_feedback_down_to_one_packet_per_t_mbi() {
        let mut rap = Rap::new(1000, Duration::from_secs(64), Some(R), ms(0));
        rap.on_feedback(ms(0), R, 0);
        // max(4R, 2s/X) = max(0.4 s, 0.2 s).
        assert_eq!(rap.poll_timeout(), ms(400));
        rap.handle_timeout(ms(399));
        assert_eq!(rap.rate_bytes_per_sec(), 10_000.0);
        rap.handle_timeout(ms(400));
        assert_eq!(rap.rate_bytes_per_sec(), 5_000.0);
        for _ in 0..20 {
            rap.handle_timeout(rap.poll_timeout());
        }
        assert_eq!(rap.rate_bytes_per_sec(), 1000.0 / 64.0);
    }
}
